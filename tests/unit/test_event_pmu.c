/*
 * test_event_pmu.c: unit tests of the event forms that read sysfs or have
 * their own grammar: PMU format terms, events/ aliases with scale and unit,
 * uncore cpumasks (tests/fixtures/sysfs: Intel core, uncore IMC, RAPL; and
 * tests/fixtures/sysfs-amd: AMD core, L3, DF, IOMMU), malformed sysfs files
 * (tests/fixtures/sysfs-bad), breakpoints and tracepoint globs. Bit
 * positions are the ones the kernel publishes for those PMUs, and the
 * breakpoint defaults follow perf's parse-events tests. Runs from the
 * repository root.
 */
#include "event_cases.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define P	     4	/* the fixture cpu PMU's type */
#define IMC	     17 /* uncore_imc_0 */
#define PWR	     23 /* power */
#define BP	     PERF_TYPE_BREAKPOINT
#define R_	     1 /* HW_BREAKPOINT_R */
#define W_	     2
#define RW_	     3
#define X_	     4
#define IMC_CPUS     "0,18"
#define MIB_SCALE    6.103515625e-5
#define JOULES_SCALE 2.3283064365386962890625e-10

static const struct vcase intel[] = {
    /* format terms of the Intel core PMU */
    {"cpu/event=0x3c/", P, 0x3c},
    {"cpu/event=0x3c,umask=0x0,cmask=1/", P, 0x100003c},
    {"cpu/event=0xc0,umask=0x01/", P, 0x1c0},
    {"cpu/event=0xc2,umask=0x02,inv,cmask=1/", P, 0x18002c2},
    {"cpu/event=0x3c,edge/", P, 0x4003c},
    {"cpu/event=0x3c,edge=1,any=1/", P, 0x24003c},
    {"cpu/event=0x3c,pc/", P, 0x8003c},
    {"cpu/event=60/", P, 0x3c},
    {"cpu/event=0xcd,umask=0x1,ldlat=3/", P, 0x1cd, .config1 = 3},
    {"cpu/event=0xcd,umask=0x1,ldlat=0xffff/", P, 0x1cd, .config1 = 0xffff},
    {"cpu/event=0xc6,umask=0x1,frontend=0x400406/", P, 0x1c6, .config1 = 0x400406},
    {"cpu/event=0xff,umask=0xff,cmask=0xff/", P, 0xff00ffff},
    {"cpu/in_tx,in_tx_cp,event=0x3c/", P, 0x30000003c},
    {"cpu/event=0x3c,event=0xc0/", P, 0xc0},
    {"cpu/umask=1,event=0xd1/k", P, 0x1d1, XU | XH},
    {"cpu/config=0x3c,umask=1/", P, 0x13c},
    {"cpu/event=0x3c,config1=5/", P, 0x3c, .config1 = 5},
    {"cpu/event=0x3c/D", P, 0x3c, PIN},
    {"cpu/event=0x3c,inherit/", P, 0x3c, INH},
    {"cpu/event=0x3c,period=100000/u", P, 0x3c, XK | XH, 0, 100000, 0, ST},
    {"cpu/event=0x3c,name=cyc/", P, 0x3c, .name = "cyc"},
    {"cpu/event=0x3c/,cpu/event=0xc0/", P, 0xc0, .idx = 1, .n = 2, .name = "cpu/event=0xc0/"},
    {"{cpu/event=0x3c/,cpu/event=0xc0/}", P, 0xc0, MEMBER, 0, 0, RF, 0, .idx = 1, .n = 2,
     .name = "cpu/event=0xc0/"},
    {"{cpu/event=0x3c/,cpu/event=0xc0/}:u", P, 0x3c, XK | XH, 0, 0, RFG, 0, .n = 2,
     .name = "cpu/event=0x3c/:u"},
    /* raw config as a term, as perf spells cpu/r1a8/ */
    {"cpu/r1a8/", P, 0x1a8},
    {"cpu/r01c2/u", P, 0x1c2, XK | XH},
    {"cpu/r1a8,period=1000/", P, 0x1a8, 0, 0, 1000, 0, ST},
    /* a generic name in a core PMU's terms is perf's legacy encoding, not the alias */
    {"cpu/cpu-cycles/", HW, PERF_COUNT_HW_CPU_CYCLES},
    {"cpu/instructions/", HW, PERF_COUNT_HW_INSTRUCTIONS},
    {"cpu/branch-instructions/", HW, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"cpu/ref-cycles/", HW, PERF_COUNT_HW_REF_CPU_CYCLES},
    /* events/ aliases, case-insensitive, overridable after */
    {"cpu/mem-loads/", P, 0x1cd, .config1 = 3},
    {"cpu/mem-loads,ldlat=30/", P, 0x1cd, .config1 = 30},
    {"cpu/mem-loads,ldlat=30/pp", P, 0x1cd, 0, 2, .config1 = 30},
    {"cpu/MEM-LOADS/", P, 0x1cd, .config1 = 3},
    {"cpu/mem-stores/", P, 0x82d0},
    {"cpu/mem-loads-aux/", P, 0x8203},
    {"cpu/topdown-total-slots/", P, 0x20003c, .scale = 2},
    {"cpu/topdown-slots-retired/", P, 0x2c2},
    {"cpu/tx-start/", P, 0x1c9},
    {"cpu/el-start/", P, 0x1c8},
    {"cpu/cycles-ct/", P, 0x30000003c},
    {"cpu/ldlat-loads/", P, 0x1cd},
    {"cpu/ldlat-loads,ldlat=50/", P, 0x1cd, .config1 = 50},
    /* uncore: the cpumask travels with the event; scale and unit too */
    {"uncore_imc_0/event=0x04,umask=0x03/", IMC, 0x304, .cpus = IMC_CPUS},
    {"uncore_imc_0/cas_count_read/", IMC, 0x304, .scale = MIB_SCALE, .unit = "MiB",
     .cpus = IMC_CPUS},
    {"uncore_imc_0/cas_count_write/", IMC, 0xc04, .scale = MIB_SCALE, .unit = "MiB",
     .cpus = IMC_CPUS},
    {"uncore_imc_0/clockticks/", IMC, 0, .cpus = IMC_CPUS},
    {"uncore_imc_0/event=0x1,thresh=0xff,edge,inv/", IMC, 0xff840001, .cpus = IMC_CPUS},
    {"uncore_imc_0/cas_count_read,name=rd/", IMC, 0x304, .name = "rd", .scale = MIB_SCALE,
     .unit = "MiB", .cpus = IMC_CPUS},
    {"{uncore_imc_0/cas_count_read/,uncore_imc_0/cas_count_write/}", IMC, 0xc04, MEMBER, 0, 0, RF,
     0, .idx = 1, .n = 2, .name = "uncore_imc_0/cas_count_write/", .scale = MIB_SCALE,
     .unit = "MiB", .cpus = IMC_CPUS},
    {"power/energy-pkg/", PWR, 2, .scale = JOULES_SCALE, .unit = "Joules", .cpus = "0"},
    {"power/energy-ram/", PWR, 3, .scale = JOULES_SCALE, .unit = "Joules", .cpus = "0"},
    {"power/event=0x2/", PWR, 2, .cpus = "0"},
    /* breakpoints: perf's defaults (rw, 4 bytes; sizeof(long) for x) */
    {"mem:0", BP, 0, .config2 = 4, .bp_type = RW_},
    {"mem:0x1000", BP, 0, .config1 = 0x1000, .config2 = 4, .bp_type = RW_},
    {"mem:0x1000:r", BP, 0, .config1 = 0x1000, .config2 = 4, .bp_type = R_},
    {"mem:0x1000:w", BP, 0, .config1 = 0x1000, .config2 = 4, .bp_type = W_},
    {"mem:0x1000:rw", BP, 0, .config1 = 0x1000, .config2 = 4, .bp_type = RW_},
    {"mem:0x1000:wr", BP, 0, .config1 = 0x1000, .config2 = 4, .bp_type = RW_},
    {"mem:0x1000:x", BP, 0, .config1 = 0x1000, .config2 = sizeof(long), .bp_type = X_},
    {"mem:0x1000/8:w", BP, 0, .config1 = 0x1000, .config2 = 8, .bp_type = W_},
    {"mem:0x1000/1:r", BP, 0, .config1 = 0x1000, .config2 = 1, .bp_type = R_},
    {"mem:0x1000/2", BP, 0, .config1 = 0x1000, .config2 = 2, .bp_type = RW_},
    {"mem:0:u", BP, 0, XK | XH, .config2 = 4, .bp_type = RW_},
    {"mem:0:x:k", BP, 0, XU | XH, .config2 = sizeof(long), .bp_type = X_},
    {"mem:0:r:hp", BP, 0, XU | XK, 1, .config2 = 4, .bp_type = R_},
    {"mem:0:rw:kp", BP, 0, XU | XH, 1, .config2 = 4, .bp_type = RW_},
    {"mem:0/1:rw", BP, 0, .config2 = 1, .bp_type = RW_},
    {"mem:0/4:rw:u", BP, 0, XK | XH, .config2 = 4, .bp_type = RW_},
    {"mem:4096:w", BP, 0, .config1 = 0x1000, .config2 = 4, .bp_type = W_},
    {"mem:0x7fff0000/8:rw/period=1/", BP, 0, 0, 0, 1, 0, ST, .config1 = 0x7fff0000, .config2 = 8,
     .bp_type = RW_},
    {"mem:0xffffffffffffffff:r", BP, 0, .config1 = UINT64_MAX, .config2 = 4, .bp_type = R_},
    {"mem:0x1000:w,cycles", HW, 0, .idx = 1, .n = 2, .name = "cycles"},
    {"{mem:0x1000:w,cycles}", BP, 0, 0, 0, 0, RFG, 0, .n = 2, .name = "mem:0x1000:w",
     .config1 = 0x1000, .config2 = 4, .bp_type = W_},
    /* tracepoint globs: one event per match, sorted */
    {"sched:*", TP, 311, .n = 3, .name = "sched:sched_process_exec"},
    {"sched:*", TP, 318, .idx = 2, .n = 3, .name = "sched:sched_wakeup"},
    {"syscalls:sys_enter_*", TP, 700, .idx = 2, .n = 3, .name = "syscalls:sys_enter_read"},
    {"syscalls:sys_enter_*:u", TP, 180, XK | XH, .n = 3, .name = "syscalls:sys_enter_getppid:u"},
    {"syscalls:sys_*_getppid", TP, 179, .idx = 1, .n = 2, .name = "syscalls:sys_exit_getppid"},
    {"sched:sched_?witch", TP, 316, .name = "sched:sched_switch"},
    {"s*:sched_switch", TP, 316, .name = "sched:sched_switch"},
    {"{sched:sched_s*,sched:sched_w*}", TP, 318, MEMBER, 0, 0, RF, 0, .idx = 1, .n = 2,
     .name = "sched:sched_wakeup"},
    {"{sched:*}:u", TP, 318, MEMBER | XK | XH, 0, 0, RF, 0, .idx = 2, .n = 3,
     .name = "sched:sched_wakeup:u"},
    {"{sched:*}", TP, 311, 0, 0, 0, RFG, 0, .n = 3, .name = "sched:sched_process_exec"},
    {"cycles,sched:*", TP, 318, .idx = 3, .n = 4, .name = "sched:sched_wakeup"},
    {"syscalls:sys_enter_*/period=1/", TP, 700, 0, 0, 1, 0, ST | PERF_SAMPLE_RAW, .idx = 2, .n = 3,
     .name = "syscalls:sys_enter_read/period=1/"},
    {"sched:*/name=s/", TP, 316, .idx = 1, .n = 3, .name = "s"},
    {"*:*", TP, 699, .idx = 10, .n = 11, .name = "syscalls:sys_exit_read"},
};

static const struct vcase amd[] = {
    /* AMD core: the event select is split over config:0-7 and 32-35 */
    {"cpu/event=0xc0/", P, 0xc0},
    {"cpu/event=0x1c0/", P, 0x1000000c0},
    {"cpu/event=0xfff/", P, 0xf000000ff},
    {"cpu/event=0x76,umask=0/", P, 0x76},
    {"cpu/event=0xc2,umask=0,cmask=1,inv/", P, 0x18000c2},
    {"cpu/event=0x29,umask=0x07,edge/u", P, 0x40729, XK | XH},
    {"cpu/r76/", P, 0x76},
    {"amd_l3/event=0x4,umask=0xff,slicemask=0xf,threadmask=0xff/", 11, 0xff0f00000000ff04,
     .cpus = "0,8"},
    {"amd_df/event=0x7,umask=0x38/", 12, 0x3807, .cpus = "0"},
    {"amd_df/event=0x1f07/", 12, 0x0800000f00000007, .cpus = "0"},
    {"amd_df/event=0x3fff/", 12, 0x1800000f000000ff, .cpus = "0"},
    {"amd_iommu_0/mem_pass_untrans/", 13, 1, .cpus = "0"},
    {"amd_iommu_0/cmd_processed/", 13, 0x11, .cpus = "0"},
    {"amd_iommu_0/csource=0x11,devid=0xffff/", 13, 0xffff11, .cpus = "0"},
};

static const struct vcase bad_ok[] = {
    /* the parseable parts of a PMU with malformed files stay usable */
    {"bad/good=0xf/", 30, 0, .config2 = 0xf},
    {"bad/ok/", 30, 5, .config2 = 1},
    {"bad/overlap_a=1/", 30, 1},
    {"bad/overlap_b=1/", 30, 0x10},
    {"bad/overlap_a=0xff,overlap_a=1/", 30, 1},
    {"bad/wide=0xffffffffffffffff/", 30, 0, .config1 = UINT64_MAX},
    {"bad/blank/", 30, 0},
    {"bad/config=7/", 30, 7},
};

#define OVERLAP_MSG                                                                                \
	"term 'frontend' at column 13 overlaps term 'ldlat' (both set config1 bits 0xffff of PMU " \
	"'cpu')"

static const struct icase intel_bad[] = {
    {"cpu/event=0x100/", PS_ERR_BAD_VALUE, 11, NULL,
     "value '0x100' for term 'event' at column 11 is out of range: 'event' of PMU 'cpu' is 8 "
     "bits wide (config:0-7), at most 0xff"},
    {"cpu/edge=2/", PS_ERR_BAD_VALUE, 10, NULL, NULL},
    {"cpu/cmask=256/", PS_ERR_BAD_VALUE, 11, NULL, NULL},
    {"cpu/ldlat=0x10000/", PS_ERR_BAD_VALUE, 11, NULL, NULL},
    {"cpu/frontend=0x1000000/", PS_ERR_BAD_VALUE, 14, NULL, NULL},
    {"cpu/event=xyz/", PS_ERR_BAD_VALUE, 11, NULL,
     "bad number 'xyz' for term 'event' at column 11"},
    {"cpu/event=/", PS_ERR_BAD_VALUE, 11, NULL, NULL},
    {"cpu/event=-1/", PS_ERR_BAD_VALUE, 11, NULL, NULL},
    {"cpu/evnt=1/", PS_ERR_UNKNOWN_TERM, 5, "event", NULL},
    {"cpu/mem-lods/", PS_ERR_UNKNOWN_TERM, 5, "mem-loads", NULL},
    {"cpu/perod=1/", PS_ERR_UNKNOWN_TERM, 5, "period", NULL},
    {"cpu/ldlat=3,frontend=1/", PS_ERR_BAD_VALUE, 13, NULL, OVERLAP_MSG},
    {"cpu/mem-loads=2/", PS_ERR_BAD_VALUE, 5, NULL,
     "event 'mem-loads' of PMU 'cpu' at column 5 takes no value"},
    {"cpu/event=0x3c", PS_ERR_SYNTAX, 4, NULL, NULL},
    {"cpu/event=0x3c/x", PS_ERR_SYNTAX, 16, NULL, NULL},
    {"cpu/r1g8/", PS_ERR_UNKNOWN_TERM, 5, NULL, NULL},
    {"cpu/event=0x3c,,umask=1/", PS_ERR_SYNTAX, 16, NULL, NULL},
    {"cpu/cpu-cycles,umask=1/u", PS_ERR_SYNTAX, 16, NULL, NULL},
    {"cpu/umask=1,cycles/", PS_ERR_SYNTAX, 13, NULL, NULL},
    {"uncore_imc_0/cas_count_reed/", PS_ERR_UNKNOWN_TERM, 14, "cas_count_read", NULL},
    {"uncore_imc/event=1/", PS_ERR_UNKNOWN_EVENT, 1, "uncore_imc_0", NULL},
    {"power/event=0x100/", PS_ERR_BAD_VALUE, 13, NULL, NULL},
    {"power/energy-pkk/", PS_ERR_UNKNOWN_TERM, 7, "energy-pkg", NULL},
    /* breakpoints */
    {"mem:", PS_ERR_SYNTAX, 5, NULL,
     "breakpoint at column 1 needs an address (mem:ADDR[/LEN][:rwx])"},
    {"mem:1main", PS_ERR_BAD_VALUE, 5, NULL,
     "breakpoint address '1main' at column 5 is neither a number nor a symbol name "
     "(mem:ADDR[/LEN][:rwx] or mem:SYMBOL[+OFF])"},
    {"mem:0x1000/3", PS_ERR_BAD_VALUE, 12, NULL,
     "bad breakpoint length '3' at column 12 (1, 2, 4 or 8)"},
    {"mem:0x1000/16:w", PS_ERR_BAD_VALUE, 12, NULL, NULL},
    {"mem:0x1000/0", PS_ERR_BAD_VALUE, 12, NULL, NULL},
    {"mem:0x1000:rwx", PS_ERR_BAD_VALUE, 12, NULL,
     "breakpoint access 'rwx' at column 12: 'x' cannot be combined with 'r' or 'w'"},
    {"mem:0x1000:rr", PS_ERR_SYNTAX, 13, NULL, "duplicate breakpoint access 'r' at column 13"},
    {"mem:0x1000:q", PS_ERR_SYNTAX, 12, NULL, NULL},
    {"mem:0x1000:rw:uu", PS_ERR_SYNTAX, 16, NULL, NULL},
    {"mem:0xzz", PS_ERR_BAD_VALUE, 5, NULL, NULL},
    {"mem:0x1000:rw/bogus=1/", PS_ERR_UNKNOWN_TERM, 15, NULL, NULL},
    {"cycles,mem:9zz", PS_ERR_BAD_VALUE, 12, NULL, NULL},
    /* globs */
    {"sched:nomatch*", PS_ERR_UNKNOWN_EVENT, 1, NULL,
     "no tracepoint matches 'sched:nomatch*' at column 1"},
    {"nosub*:*", PS_ERR_UNKNOWN_EVENT, 1, NULL, NULL},
    {"cycles,sched:zz*", PS_ERR_UNKNOWN_EVENT, 8, NULL, NULL},
    {"sched:*/raw=2/", PS_ERR_BAD_VALUE, 13, NULL, NULL},
    {"{sched:*,cycels}", PS_ERR_UNKNOWN_EVENT, 10, "cycles", NULL},
};

static const struct icase amd_bad[] = {
    {"cpu/event=0x1000/", PS_ERR_BAD_VALUE, 11, NULL,
     "value '0x1000' for term 'event' at column 11 is out of range: 'event' of PMU 'cpu' is "
     "12 bits wide (config:0-7,32-35), at most 0xfff"},
    {"amd_df/event=0x4000/", PS_ERR_BAD_VALUE, 14, NULL, NULL},
    {"amd_l3/slicemask=0x10/", PS_ERR_BAD_VALUE, 18, NULL, NULL},
    {"amd_l3/threadmsk=1/", PS_ERR_UNKNOWN_TERM, 8, "threadmask", NULL},
    {"amd_iommu_0/devid=0x10000/", PS_ERR_BAD_VALUE, 19, NULL, NULL},
};

#define MALFORMED(t, why, spec)                                                                    \
	"term '" t "' at column 5: format/" t " of PMU 'bad' does not parse (" why ": '" spec "')"

static const struct icase bad[] = {
    {"bad/backwards=1/", PS_ERR_NOT_SUPPORTED, 5, NULL,
     MALFORMED("backwards", "bit range out of order or past bit 63", "config:9-3")},
    {"bad/empty=1/", PS_ERR_NOT_SUPPORTED, 5, NULL, MALFORMED("empty", "empty file", "")},
    {"bad/selfoverlap=1/", PS_ERR_NOT_SUPPORTED, 5, NULL,
     MALFORMED("selfoverlap", "bit ranges overlap", "config:0-7,4-9")},
    {"bad/badword=1/", PS_ERR_NOT_SUPPORTED, 5, NULL, NULL},
    {"bad/past63=1/", PS_ERR_NOT_SUPPORTED, 5, NULL, NULL},
    {"bad/junk=1/", PS_ERR_NOT_SUPPORTED, 5, NULL, NULL},
    {"bad/toomany=1/", PS_ERR_NOT_SUPPORTED, 5, NULL, NULL},
    {"bad/nocolon=1/", PS_ERR_NOT_SUPPORTED, 5, NULL, NULL},
    {"bad/overlap_a=1,overlap_b=1/", PS_ERR_BAD_VALUE, 17, NULL, NULL},
    {"bad/broken/", PS_ERR_NOT_SUPPORTED, 5, NULL,
     "event 'broken' at column 5: events/broken of PMU 'bad' does not parse ('nosuch=1')"},
    {"bad/badval/", PS_ERR_NOT_SUPPORTED, 5, NULL, NULL},
    {"bad/usesbad/", PS_ERR_NOT_SUPPORTED, 5, NULL, NULL},
    {"bad/good=0x10/", PS_ERR_BAD_VALUE, 10, NULL, NULL},
    {"notype/config=1/", PS_ERR_NOT_SUPPORTED, 1, NULL, NULL},
    {"emptytype/config=1/", PS_ERR_NOT_SUPPORTED, 1, NULL, NULL},
    {"hugetype/config=1/", PS_ERR_NOT_SUPPORTED, 1, NULL, NULL},
    {"nodir/config=1/", PS_ERR_UNKNOWN_EVENT, 1, NULL, NULL},
};

static void test_describe(void)
{
	static const struct {
		const char *spec;
		bool json;
		const char *want;
	} cases[] = {
	    {"mem:0x1000/8:w", false,
	     "name=mem:0x1000/8:w\nleader=0\ntype=5\nconfig=0x0\nbp_type=2\nbp_addr=0x1000\n"
	     "bp_len=8\ndisabled=1\nread_format=0x3\n"},
	    {"mem:0x10:x", true,
	     "[\n  {\"name\": \"mem:0x10:x\", \"leader\": 0, \"type\": 5, \"config\": 0, "
	     "\"bp_type\": 4, \"bp_addr\": 16, \"bp_len\": 8, \"disabled\": 1, "
	     "\"read_format\": 3}\n]\n"},
	    {"uncore_imc_0/cas_count_read/", false,
	     "name=uncore_imc_0/cas_count_read/\nleader=0\ntype=17\nconfig=0x304\ndisabled=1\n"
	     "read_format=0x3\nscale=6.103515625e-05\nunit=MiB\ncpus=0,18\n"},
	    {"power/energy-pkg/", true,
	     "[\n  {\"name\": \"power/energy-pkg/\", \"leader\": 0, \"type\": 23, \"config\": 2, "
	     "\"disabled\": 1, \"read_format\": 3, \"scale\": 2.3283064365386963e-10, "
	     "\"unit\": \"Joules\", \"cpus\": \"0\"}\n]\n"},
	    {"cpu/mem-loads/pp", false,
	     "name=cpu/mem-loads/pp\nleader=0\ntype=4\nconfig=0x1cd\nconfig1=0x3\nprecise_ip=2\n"
	     "disabled=1\nread_format=0x3\n"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = describe(cases[i].spec, cases[i].json);

		tap_is_str(got, cases[i].want, "describe %s '%s'", cases[i].json ? "json" : "text",
			   cases[i].spec);
		free(got);
	}
}

/* The unknown-term message lists the PMU's own vocabulary. */
static void test_term_list(void)
{
	struct ps_event_error err;

	ps_events__parse("cpu/bogus=1/", &err);
	tap_ok(err.code == PS_ERR_UNKNOWN_TERM &&
		   strstr(err.message, "PMU 'cpu' terms: any cmask edge event frontend in_tx "
				       "in_tx_cp inv ldlat pc umask; events: branch-instructions"),
	       "unknown PMU term lists the PMU's format terms and events");
	tap_diag("  %s", err.message);
	tap_ok(ps_events__scale(NULL, 0, NULL, NULL) == -EINVAL &&
		   ps_events__cpus(NULL, 0, NULL) == -EINVAL,
	       "scale/cpus accessors refuse a NULL set");
}

#define RUN(tab, fn)                                                                               \
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)                                  \
	fn(&tab[i])

int main(void)
{
	setenv("PERFSCRIPT_TRACEFS", "tests/fixtures/tracefs", 1);
	setenv("PERFSCRIPT_SYSFS", "tests/fixtures/sysfs", 1);
	RUN(intel, check_valid);
	RUN(intel_bad, check_invalid);
	test_describe();
	test_term_list();
	setenv("PERFSCRIPT_SYSFS", "tests/fixtures/sysfs-amd", 1);
	RUN(amd, check_valid);
	RUN(amd_bad, check_invalid);
	setenv("PERFSCRIPT_SYSFS", "tests/fixtures/sysfs-bad", 1);
	RUN(bad_ok, check_valid);
	RUN(bad, check_invalid);
	return tap_done();
}
