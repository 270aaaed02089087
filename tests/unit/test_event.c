/*
 * test_event.c: unit tests of the event-string parser (runtime/event/):
 * a table of valid strings with the attr fields each must produce, a table
 * of invalid strings with the error code, column and suggestion each must
 * report, the --describe text and JSON output, and one tracepoint against
 * the machine's real tracefs. Tracepoints and PMUs otherwise resolve against
 * the fixture trees in tests/fixtures, so results do not depend on the host.
 * Runs from the repository root.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_cases.h"

static const struct vcase valid[] = {
    /* generic hardware, with perf's aliases */
    {"cycles", HW, PERF_COUNT_HW_CPU_CYCLES},
    {"cpu-cycles", HW, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", HW, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", HW, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", HW, PERF_COUNT_HW_CACHE_MISSES},
    {"branches", HW, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-instructions", HW, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", HW, PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", HW, PERF_COUNT_HW_BUS_CYCLES},
    {"stalled-cycles-frontend", HW, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"idle-cycles-frontend", HW, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", HW, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"idle-cycles-backend", HW, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"ref-cycles", HW, PERF_COUNT_HW_REF_CPU_CYCLES},
    {"CYCLES", HW, PERF_COUNT_HW_CPU_CYCLES},
    /* software */
    {"cpu-clock", SW, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", SW, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", SW, PERF_COUNT_SW_PAGE_FAULTS},
    {"faults", SW, PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", SW, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cs", SW, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", SW, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"migrations", SW, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"minor-faults", SW, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", SW, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"alignment-faults", SW, PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", SW, PERF_COUNT_SW_EMULATION_FAULTS},
    {"dummy", SW, 9},
    {"bpf-output", SW, 10},
    {"cgroup-switches", SW, 11},
    /* hardware cache: type x op x result, aliases, defaults, either order */
    {"L1-dcache-loads", HC, CC(L1D, RD_, ACC)},
    {"L1-dcache-load-misses", HC, CC(L1D, RD_, MISS)},
    {"L1-dcache-stores", HC, CC(L1D, WR_, ACC)},
    {"L1-dcache-store-misses", HC, CC(L1D, WR_, MISS)},
    {"L1-dcache-prefetches", HC, CC(L1D, PF_, ACC)},
    {"L1-dcache-prefetch-misses", HC, CC(L1D, PF_, MISS)},
    {"L1-dcache", HC, CC(L1D, RD_, ACC)},
    {"L1-dcache-misses", HC, CC(L1D, RD_, MISS)},
    {"L1-dcache-misses-store", HC, CC(L1D, WR_, MISS)},
    {"l1d-loads", HC, CC(L1D, RD_, ACC)},
    {"l1-d-load-miss", HC, CC(L1D, RD_, MISS)},
    {"L1-data-read-misses", HC, CC(L1D, RD_, MISS)},
    {"L1-dcache-load-refs", HC, CC(L1D, RD_, ACC)},
    {"L1-dcache-load-accesses", HC, CC(L1D, RD_, ACC)},
    {"L1-dcache-write-ops", HC, CC(L1D, WR_, ACC)},
    {"L1-dcache-speculative-read-misses", HC, CC(L1D, PF_, MISS)},
    {"L1-dcache-speculative-load", HC, CC(L1D, PF_, ACC)},
    {"l1-dcache-LOADS", HC, CC(L1D, RD_, ACC)},
    {"L1-icache-loads", HC, CC(L1I, RD_, ACC)},
    {"L1-icache-load-misses", HC, CC(L1I, RD_, MISS)},
    {"l1i-prefetches", HC, CC(L1I, PF_, ACC)},
    {"L1-instruction-load-misses", HC, CC(L1I, RD_, MISS)},
    {"LLC-loads", HC, CC(LL, RD_, ACC)},
    {"LLC-load-misses", HC, CC(LL, RD_, MISS)},
    {"LLC-stores", HC, CC(LL, WR_, ACC)},
    {"L2-store-misses", HC, CC(LL, WR_, MISS)},
    {"LLC-prefetch-misses", HC, CC(LL, PF_, MISS)},
    {"LLC-load-references", HC, CC(LL, RD_, ACC)},
    {"dTLB-loads", HC, CC(DTLB, RD_, ACC)},
    {"dTLB-load-misses", HC, CC(DTLB, RD_, MISS)},
    {"d-tlb-stores", HC, CC(DTLB, WR_, ACC)},
    {"Data-TLB-store-misses", HC, CC(DTLB, WR_, MISS)},
    {"dTLB-miss", HC, CC(DTLB, RD_, MISS)},
    {"iTLB-loads", HC, CC(ITLB, RD_, ACC)},
    {"iTLB-load-misses", HC, CC(ITLB, RD_, MISS)},
    {"Instruction-TLB-load-misses", HC, CC(ITLB, RD_, MISS)},
    {"branch-loads", HC, CC(BPU, RD_, ACC)},
    {"branch-load-misses", HC, CC(BPU, RD_, MISS)},
    {"bpu-loads", HC, CC(BPU, RD_, ACC)},
    {"btb-load-misses", HC, CC(BPU, RD_, MISS)},
    {"node-loads", HC, CC(NODE, RD_, ACC)},
    {"node-load-misses", HC, CC(NODE, RD_, MISS)},
    {"node-stores", HC, CC(NODE, WR_, ACC)},
    {"node-prefetch-misses", HC, CC(NODE, PF_, MISS)},
    {"L1-dcache-load-misses:u", HC, CC(L1D, RD_, MISS), XK | XH},
    /* raw */
    {"r1a8", RAW, 0x1a8},
    {"r0", RAW, 0},
    {"rC0", RAW, 0xc0},
    {"r01c2:u", RAW, 0x1c2, XK | XH},
    {"r1a8/period=1000/", RAW, 0x1a8, 0, 0, 1000, 0, ST},
    {"rffffffffffffffff", RAW, UINT64_MAX},
    /* modifiers, with perf's semantics */
    {"cycles:u", HW, 0, XK | XH},
    {"cycles:k", HW, 0, XU | XH},
    {"cycles:h", HW, 0, XU | XK},
    {"cycles:uk", HW, 0, XH},
    {"cycles:ku", HW, 0, XH},
    {"cycles:kh", HW, 0, XU},
    {"cycles:uh", HW, 0, XK},
    {"cycles:ukh", HW, 0, 0},
    {"cycles:H", HW, 0, XGUEST},
    {"cycles:G", HW, 0, XHOST},
    {"cycles:GH", HW, 0, 0},
    {"cycles:Gu", HW, 0, XHOST | XK | XH},
    {"cycles:I", HW, 0, XIDLE},
    {"cycles:p", HW, 0, 0, 1},
    {"cycles:pp", HW, 0, 0, 2},
    {"cycles:ppp", HW, 0, 0, 3},
    {"cycles:upp", HW, 0, XK | XH, 2},
    {"cycles:pup", HW, 0, XK | XH, 2},
    {"cycles:S", HW, 0, 0, 0, 0, 0, RD},
    {"cycles:D", HW, 0, PIN},
    {"cycles:e", HW, 0, EXCL},
    {"cycles:uD", HW, 0, XK | XH | PIN},
    {"instructions:k", HW, 1, XU | XH},
    /* terms */
    {"cycles/period=100000/", HW, 0, 0, 0, 100000, 0, ST},
    {"cycles/period=100000/u", HW, 0, XK | XH, 0, 100000, 0, ST},
    {"cycles/period=100000/:u", HW, 0, XK | XH, 0, 100000, 0, ST},
    {"instructions/freq=4000/", HW, 1, FREQ, 0, 4000, 0, ST},
    {"cycles/period=0x1000/", HW, 0, 0, 0, 0x1000, 0, ST},
    {"cycles/period/", HW, 0, 0, 0, 1, 0, ST},
    {"cycles/period=1,period=5/", HW, 0, 0, 0, 5, 0, ST},
    {"task-clock/name=tc/", SW, 1, .name = "tc"},
    {"cycles/inherit/", HW, 0, INH},
    {"cycles/inherit=1/", HW, 0, INH},
    {"cycles/inherit=0/", HW, 0, 0},
    {"cycles/pinned/", HW, 0, PIN},
    {"cycles/exclusive=1/", HW, 0, EXCL},
    {"cycles/cpu=3/", HW, 0, .cpu = 4},
    {"cycles/cpu=0/", HW, 0, .cpu = 1},
    {"cycles/config=0x3c/", HW, 0x3c},
    {"cycles//", HW, 0},
    {"cycles/name=my-cycles,period=10/u", HW, 0, XK | XH, 0, 10, 0, ST, .name = "my-cycles"},
    {"instructions/period=1000/:k", HW, 1, XU | XH, 0, 1000, 0, ST},
    {"cycles/period=1000,inherit,pinned/pp", HW, 0, INH | PIN, 2, 1000, 0, ST},
    {"cpu/config=0x3c/", 4, 0x3c},
    {"cpu/config=0x3c,config1=0x1,config2=2/", 4, 0x3c, .config1 = 1, .config2 = 2},
    {"cpu//", 4, 0},
    {"cpu/config=0xc0/pp", 4, 0xc0, 0, 2},
    {"cpu/config=0x3c,period=1000/u", 4, 0x3c, XK | XH, 0, 1000, 0, ST},
    {"msr/config=1/", 9, 1},
    {"software/config=0x2/", SW, 2},
    /* tracepoints (fixture tracefs) */
    {"syscalls:sys_enter_getppid", TP, 180},
    {"syscalls:sys_exit_getppid", TP, 179},
    {"sched:sched_switch", TP, 316},
    {"sched:sched_switch:k", TP, 316, XU | XH},
    {"syscalls:sys_enter_getppid/period=1/", TP, 180, 0, 0, 1, 0, ST | PERF_SAMPLE_RAW},
    {"sched:sched_wakeup/name=wk/", TP, 318, .name = "wk"},
    {"irq:irq_handler_entry:u", TP, 150, XK | XH},
    /* lists and groups */
    {"cycles,instructions", HW, 1, 0, 0, 0, 0, 0, .idx = 1, .n = 2, .name = "instructions"},
    {" cycles , instructions ", HW, 1, 0, 0, 0, 0, 0, .idx = 1, .n = 2, .name = "instructions"},
    {"{cycles,instructions}", HW, 0, 0, 0, 0, RFG, 0, .n = 2, .name = "cycles"},
    {"{cycles,instructions} ", HW, 1, MEMBER, 0, 0, RF, 0, .idx = 1, .n = 2, .leader = 0,
     .name = "instructions"},
    {"{cycles,instructions}:u", HW, 1, MEMBER | XK | XH, 0, 0, RF, 0, .idx = 1, .n = 2,
     .name = "instructions:u"},
    {"{cycles:u,instructions}:k", HW, 0, XH, 0, 0, RFG, 0, .n = 2, .name = "cycles:uk"},
    {"{cycles/period=1000/,instructions}", HW, 0, 0, 0, 1000, RFG, ST | RD, .n = 2,
     .name = "cycles/period=1000/"},
    {"{cycles,instructions}:S", HW, 0, 0, 0, 0, RFG, RD, .n = 2, .name = "cycles:S"},
    {"{cycles,instructions}:D", HW, 0, PIN, 0, 0, RFG, 0, .n = 2, .name = "cycles:D"},
    {"{cycles,instructions/pinned/}", HW, 0, PIN, 0, 0, RFG, 0, .n = 2, .name = "cycles"},
    {"{cycles,instructions/pinned/}  ", HW, 1, MEMBER, 0, 0, RF, 0, .idx = 1, .n = 2,
     .name = "instructions/pinned/"},
    {"cycles,{instructions,branches}", HW, 4, MEMBER, 0, 0, RF, 0, .idx = 2, .n = 3, .leader = 1,
     .name = "branches"},
    {"cycles,{instructions,branches}:u", HW, 1, XK | XH, 0, 0, RFG, 0, .idx = 1, .n = 3,
     .name = "instructions:u"},
    {"{cycles,instructions}:pp", HW, 1, MEMBER, 2, 0, RF, 0, .idx = 1, .n = 2,
     .name = "instructions:pp"},
    {"{cycles,task-clock,page-faults}:u", SW, 2, MEMBER | XK | XH, 0, 0, RF, 0, .idx = 2, .n = 3,
     .name = "page-faults:u"},
    {"{sched:sched_switch,cycles}", TP, 316, 0, 0, 0, RFG, 0, .n = 2, .name = "sched:sched_switch"},
    {"{cycles,instructions/period=50/}", HW, 1, MEMBER, 0, 50, RF, ST, .idx = 1, .n = 2,
     .name = "instructions/period=50/"},
    /* what a sample carries: callchain, stack=N (implies callchain), addr, raw */
    {"cycles/period=1000,callchain/", HW, 0, 0, 0, 1000, 0, ST | PERF_SAMPLE_CALLCHAIN},
    {"cycles/callchain,period=1000/u", HW, 0, XK | XH, 0, 1000, 0, ST | PERF_SAMPLE_CALLCHAIN},
    {"cycles/period=1000,stack=16/", HW, 0, 0, 0, 1000, 0, ST | PERF_SAMPLE_CALLCHAIN},
    {"cycles/period=1000,callchain=0/", HW, 0, 0, 0, 1000, 0, ST},
    {"cycles/freq=99,addr/", HW, 0, FREQ, 0, 99, 0, ST | PERF_SAMPLE_ADDR},
    {"syscalls:sys_enter_getppid/period=1,raw/", TP, 180, 0, 0, 1, 0, ST | PERF_SAMPLE_RAW},
    {"syscalls:sys_enter_getppid/raw,callchain,addr,period=1/", TP, 180, 0, 0, 1, 0,
     ST | PERF_SAMPLE_RAW | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_ADDR},
    {"cycles/callchain/", HW, 0, 0, 0, 0, 0, PERF_SAMPLE_CALLCHAIN},
    {"{cycles/period=1000,callchain/,instructions}:S", HW, 0, 0, 0, 1000, RFG,
     ST | RD | PERF_SAMPLE_CALLCHAIN, .n = 2, .name = "cycles/period=1000,callchain/:S"},
    {"{cycles/name=c/,instructions}:u", HW, 0, XK | XH, 0, 0, RFG, 0, .n = 2, .name = "c"},
    /* breakpoints on symbols: bp_addr stays 0 until a session looks the name up */
    {"mem:ps_test_var:w", PERF_TYPE_BREAKPOINT, 0, .config2 = 4, .bp_type = 2},
    {"mem:ps_test_var+0x0/8:rw", PERF_TYPE_BREAKPOINT, 0, .config2 = 8, .bp_type = 3},
    {"mem:main:x", PERF_TYPE_BREAKPOINT, 0, .config2 = sizeof(long), .bp_type = 4},
    {"mem:_start+16/1:r:u", PERF_TYPE_BREAKPOINT, 0, XK | XH, .config2 = 1, .bp_type = 1},
    {"mem:counter.1:u", PERF_TYPE_BREAKPOINT, 0, XK | XH, .config2 = 4, .bp_type = 3},
    {"cycles,mem:zz", PERF_TYPE_BREAKPOINT, 0, .idx = 1, .n = 2, .name = "mem:zz", .config2 = 4,
     .bp_type = 3},
};

static const struct icase invalid[] = {
    {"", PS_ERR_SYNTAX, 1, NULL, "empty event at column 1"},
    {"cycels", PS_ERR_UNKNOWN_EVENT, 1, "cycles",
     "unknown event 'cycels' at column 1 (did you mean 'cycles'?)"},
    {"instrctions", PS_ERR_UNKNOWN_EVENT, 1, "instructions", NULL},
    {"task-clok", PS_ERR_UNKNOWN_EVENT, 1, "task-clock", NULL},
    {"L1-dcache-lod-misses", PS_ERR_UNKNOWN_EVENT, 1, "L1-dcache-load-misses", NULL},
    {"xyzzyplugh", PS_ERR_UNKNOWN_EVENT, 1, "", "unknown event 'xyzzyplugh' at column 1"},
    {"cycels:u", PS_ERR_UNKNOWN_EVENT, 1, "cycles", NULL},
    {"cycles:u,instructons", PS_ERR_UNKNOWN_EVENT, 10, "instructions", NULL},
    {"L1-icache-stores", PS_ERR_UNKNOWN_EVENT, 1, "",
     "unknown event 'L1-icache-stores' at column 1 (L1-icache cannot count store events)"},
    {"cycles:x", PS_ERR_SYNTAX, 8, NULL,
     "unknown modifier 'x' at column 8 (valid: u k h H G I p pp ppp P S D e W)"},
    {"cycles:uu", PS_ERR_SYNTAX, 9, NULL, "duplicate modifier 'u' at column 9"},
    {"cycles:pppp", PS_ERR_BAD_VALUE, 8, NULL, NULL},
    {"cycles:", PS_ERR_SYNTAX, 8, NULL, NULL},
    {"cycles/period=1/x", PS_ERR_SYNTAX, 17, NULL, NULL},
    {"sched:sched_switch:q", PS_ERR_SYNTAX, 20, NULL, NULL},
    {"cycles/perod=1/", PS_ERR_UNKNOWN_TERM, 8, "period",
     "unknown term 'perod' at column 8 (did you mean 'period'?; valid terms: period freq "
     "name inherit pinned exclusive cpu config config1 config2 callchain call-graph stack-size "
     "max-stack stack addr raw bpf nobpf no-inherit time overwrite no-overwrite percore "
     "metric-id aux-output aux-sample-size cgroup)"},
    {"cycles/bogus=1/", PS_ERR_UNKNOWN_TERM, 8, "",
     "unknown term 'bogus' at column 8 (valid terms: period freq name inherit pinned "
     "exclusive cpu config config1 config2 callchain call-graph stack-size max-stack stack addr "
     "raw bpf nobpf no-inherit time overwrite no-overwrite percore metric-id aux-output "
     "aux-sample-size cgroup)"},
    {"cycles/period=xyz/", PS_ERR_BAD_VALUE, 15, NULL,
     "bad number 'xyz' for term 'period' at column 15"},
    {"cycles/period=1,freq=2/", PS_ERR_BAD_VALUE, 17, NULL,
     "period and freq both given at column 17"},
    {"cycles/freq=100,period=2/", PS_ERR_BAD_VALUE, 17, NULL, NULL},
    {"cycles/period=0/", PS_ERR_BAD_VALUE, 15, NULL, NULL},
    {"cycles/period=99999999999999999999/", PS_ERR_BAD_VALUE, 15, NULL, NULL},
    {"cycles/inherit=2/", PS_ERR_BAD_VALUE, 16, NULL, NULL},
    {"cycles/cpu=0x100000000/", PS_ERR_BAD_VALUE, 12, NULL, NULL},
    {"cycles/name=/", PS_ERR_BAD_VALUE, 8, NULL, NULL},
    {"cycles/period=1,stack=0/", PS_ERR_BAD_VALUE, 23, NULL, NULL},
    {"cycles/period=1,stack=1025/", PS_ERR_BAD_VALUE, 23, NULL,
     "bad value '1025' for term 'stack' at column 23 (must be 1 to 1024)"},
    {"cycles/stack=x/", PS_ERR_BAD_VALUE, 14, NULL, NULL},
    {"cycles/period=1,max-stack=2000/", PS_ERR_BAD_VALUE, 27, NULL, NULL},
    {"cycles/call-graph=lbr/", PS_ERR_BAD_VALUE, 19, NULL,
     "bad value 'lbr' for term 'call-graph' at column 19 (call-graph is fp, dwarf or no)"},
    {"cycles/call-graph/", PS_ERR_BAD_VALUE, 8, NULL, NULL},
    {"cycles/period=1,stack-size=4096/", PS_ERR_BAD_VALUE, 17, NULL,
     "term 'stack-size' at column 17 needs call-graph=dwarf (the size of the user stack "
     "each sample copies for the DWARF unwinder)"},
    {"cycles/call-graph=dwarf,stack-size=65529/", PS_ERR_BAD_VALUE, 36, NULL,
     "bad value '65529' for term 'stack-size' at column 36 (must be 8 to 65528 bytes)"},
    {"cycles/call-graph=dwarf,stack-size=0/", PS_ERR_BAD_VALUE, 36, NULL, NULL},
    {"cycles/period=1,raw/", PS_ERR_BAD_VALUE, 17, NULL,
     "term 'raw' at column 17 needs a tracepoint (subsys:event)"},
    {"cycles/callchain=2/", PS_ERR_BAD_VALUE, 18, NULL, NULL},
    {"cycles/adr/", PS_ERR_UNKNOWN_TERM, 8, "addr", NULL},
    {"cycles/period=1", PS_ERR_SYNTAX, 7, NULL, "unterminated term list '/' at column 7"},
    {"cycles/,/", PS_ERR_SYNTAX, 8, NULL, NULL},
    {"{cycles,instructions", PS_ERR_SYNTAX, 1, NULL, "unterminated group '{' at column 1"},
    {"{cycles,", PS_ERR_SYNTAX, 1, NULL, NULL},
    {"{}", PS_ERR_SYNTAX, 1, NULL, NULL},
    {"{cycles,{instructions}}", PS_ERR_SYNTAX, 9, NULL, NULL},
    {"{cycles,instructions}:z", PS_ERR_SYNTAX, 23, NULL, NULL},
    {"{cycles,instructions}:uu", PS_ERR_SYNTAX, 24, NULL, NULL},
    {"cycles,", PS_ERR_SYNTAX, 8, NULL, "empty event at column 8"},
    {",cycles", PS_ERR_SYNTAX, 1, NULL, NULL},
    {"cycles,,instructions", PS_ERR_SYNTAX, 8, NULL, NULL},
    {"cycles}", PS_ERR_SYNTAX, 7, NULL, NULL},
    {"cycles#", PS_ERR_SYNTAX, 7, NULL, NULL},
    {"syscalls:sys_enter_getppd", PS_ERR_UNKNOWN_EVENT, 1, "syscalls:sys_enter_getppid",
     "unknown tracepoint 'syscalls:sys_enter_getppd' at column 1 (did you mean "
     "'syscalls:sys_enter_getppid'?)"},
    {"shed:sched_switch", PS_ERR_UNKNOWN_EVENT, 1, "sched", NULL},
    {"cycles,sched:sched_swich", PS_ERR_UNKNOWN_EVENT, 8, "sched:sched_switch", NULL},
    {"cpu/bogus=1/", PS_ERR_UNKNOWN_TERM, 5, "", NULL},
    {"nosuchpmu/config=1/", PS_ERR_UNKNOWN_EVENT, 1, NULL, NULL},
    {"cpux/config=1/", PS_ERR_UNKNOWN_EVENT, 1, "cpu", NULL},
    {"mem:ps_test_var+", PS_ERR_BAD_VALUE, 17, NULL,
     "bad breakpoint offset '' at column 17 (a number after '+')"},
    {"mem:ps_test_var+0xzz:w", PS_ERR_BAD_VALUE, 17, NULL,
     "bad breakpoint offset '0xzz' at column 17 (a number after '+')"},
    {"mem:0x1000+8", PS_ERR_SYNTAX, 11, NULL, NULL},
    {"mem:ps_test_var/3", PS_ERR_BAD_VALUE, 17, NULL,
     "bad breakpoint length '3' at column 17 (1, 2, 4 or 8)"},
};

static void test_describe(void)
{
	static const struct {
		const char *spec;
		bool json;
		const char *want;
	} cases[] = {
	    {"cycles:u", false,
	     "name=cycles:u\nleader=0\ntype=0\nconfig=0x0\nexclude_kernel=1\nexclude_hv=1\n"
	     "disabled=1\nread_format=0x3\n"},
	    {"{cycles/period=100000/,instructions}:u,cpu/config=0x3c/", false,
	     "name=cycles/period=100000/:u\nleader=0\ntype=0\nconfig=0x0\n"
	     "sample_period=100000\nexclude_kernel=1\nexclude_hv=1\ndisabled=1\n"
	     "read_format=0xf\nsample_type=0x197\n"
	     "\n"
	     "name=instructions:u\nleader=0\ntype=0\nconfig=0x1\nexclude_kernel=1\n"
	     "exclude_hv=1\nread_format=0x3\n"
	     "\n"
	     "name=cpu/config=0x3c/\nleader=2\ntype=4\nconfig=0x3c\ndisabled=1\n"
	     "read_format=0x3\n"},
	    {"task-clock/freq=99,cpu=1,name=t\"c/", false,
	     "name=t\"c\nleader=0\ncpu=1\ntype=1\nconfig=0x1\nsample_freq=99\nfreq=1\n"
	     "disabled=1\nread_format=0x3\nsample_type=0x187\n"},
	    {"cycles:u", true,
	     "[\n  {\"name\": \"cycles:u\", \"leader\": 0, \"type\": 0, \"config\": 0, "
	     "\"exclude_kernel\": 1, \"exclude_hv\": 1, \"disabled\": 1, \"read_format\": 3}\n"
	     "]\n"},
	    {"{cycles,instructions/period=1000/}:S,task-clock/name=t\"c/", true,
	     "[\n"
	     "  {\"name\": \"cycles:S\", \"leader\": 0, \"type\": 0, \"config\": 0, "
	     "\"disabled\": 1, \"read_format\": 15, \"sample_type\": 16},\n"
	     "  {\"name\": \"instructions/period=1000/:S\", \"leader\": 0, \"type\": 0, "
	     "\"config\": 1, \"sample_period\": 1000, \"read_format\": 3, "
	     "\"sample_type\": 391},\n"
	     "  {\"name\": \"t\\\"c\", \"leader\": 2, \"type\": 1, \"config\": 1, "
	     "\"disabled\": 1, \"read_format\": 3}\n"
	     "]\n"},
	    {"mem:ps_test_var+0x10/8:w", false,
	     "name=mem:ps_test_var+0x10/8:w\nleader=0\ntype=5\nconfig=0x0\nbp_type=2\n"
	     "bp_addr=0x0\nbp_symbol=ps_test_var+0x10\nbp_len=8\ndisabled=1\nread_format=0x3\n"},
	    {"mem:main:x", true,
	     "[\n  {\"name\": \"mem:main:x\", \"leader\": 0, \"type\": 5, \"config\": 0, "
	     "\"bp_type\": 4, \"bp_addr\": 0, \"bp_symbol\": \"main+0x0\", \"bp_len\": 8, "
	     "\"disabled\": 1, \"read_format\": 3}\n]\n"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = describe(cases[i].spec, cases[i].json);

		tap_is_str(got, cases[i].want, "describe %s '%s'", cases[i].json ? "json" : "text",
			   cases[i].spec);
		free(got);
	}
}

/* stack=N is how deep a user stack is unwound (ps_events__max_stack), and
 * sample_max_stack, the kernel's walk, is N or kernel.perf_event_max_stack,
 * the smaller: the kernel refuses an attr that asks for more. */
static void test_max_stack(void)
{
	static const struct {
		const char *spec;
		unsigned want;
	} cases[] = {
	    {"cycles/period=1,stack=1/", 1},
	    {"cycles/period=1,stack=1024/", 1024},
	    {"cycles/period=1,callchain/", 0},
	};
	unsigned kmax = 127;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "r");

	if (f) {
		if (fscanf(f, "%u", &kmax) != 1)
			kmax = 127;
		fclose(f);
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ps_events *evs = ps_events__parse(cases[i].spec, NULL);
		const struct perf_event_attr *a = ps_events__attr(evs, 0);
		unsigned want = cases[i].want, kern = want < kmax ? want : kmax;

		tap_ok(a && ps_events__max_stack(evs, 0) == want && a->sample_max_stack == kern,
		       "'%s': %u frames unwound, sample_max_stack=%u", cases[i].spec, want, kern);
		ps_events__free(evs);
	}
}

/* call-graph=fp|dwarf|no, stack-size=, max-stack=: the attr fields perf
 * record --call-graph sets. */
static void test_call_graph(void)
{
	static const struct {
		const char *spec;
		uint64_t bits; /* CALLCHAIN, REGS_USER, STACK_USER present */
		unsigned stack, max_stack;
		bool no_user_chain;
	} cases[] = {
	    {"cpu-clock/freq=99,call-graph=dwarf/",
	     PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, 8192, 0, true},
	    {"cpu-clock/call-graph=dwarf,stack-size=100,max-stack=30/",
	     PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, 104, 30, true},
	    {"cpu-clock/stack-size=16384,call-graph=dwarf/",
	     PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, 16384, 0,
	     true},
	    {"cpu-clock/call-graph=fp/", PERF_SAMPLE_CALLCHAIN, 0, 0, false},
	    {"cpu-clock/call-graph=dwarf,call-graph=fp/", PERF_SAMPLE_CALLCHAIN, 0, 0, false},
	    {"cpu-clock/callchain,call-graph=no/", 0, 0, 0, false},
	    {"cpu-clock/max-stack=12/", PERF_SAMPLE_CALLCHAIN, 0, 12, false},
	};
	const uint64_t mask =
	    PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ps_events *evs = ps_events__parse(cases[i].spec, NULL);
		const struct perf_event_attr *a = ps_events__attr(evs, 0);

		tap_ok(a && (a->sample_type & mask) == cases[i].bits &&
			   a->sample_stack_user == cases[i].stack &&
			   a->sample_max_stack == cases[i].max_stack &&
			   a->exclude_callchain_user == cases[i].no_user_chain &&
			   !!a->sample_regs_user == !!(cases[i].bits & PERF_SAMPLE_REGS_USER),
		       "'%s': sample bits, stack size %u, max stack %u", cases[i].spec,
		       cases[i].stack, cases[i].max_stack);
		ps_events__free(evs);
	}
}

static void test_api(void)
{
	struct ps_event_error err;
	struct ps_events *evs = ps_events__parse("cycles,instructions", &err);

	tap_ok(evs && strcmp(ps_events__spec(evs), "cycles,instructions") == 0 &&
		   !ps_events__attr(evs, 2) && !ps_events__name(evs, 2) &&
		   ps_events__cpu(evs, 2) == -1 && ps_events__count(NULL) == 0,
	       "accessors: spec, out-of-range index, NULL set");
	ps_events__free(evs);
	ps_events__free(NULL);
	setenv("PERFSCRIPT_TRACEFS", "tests/fixtures/no-such-tracefs", 1);
	evs = ps_events__parse("sched:sched_switch", &err);
	tap_ok(!evs && err.code == PS_ERR_NOT_SUPPORTED && strstr(err.message, "no tracefs"),
	       "missing tracefs is reported, not mistaken for an unknown name");
	ps_events__free(evs);
	setenv("PERFSCRIPT_TRACEFS", "tests/fixtures/tracefs", 1);
	errno = 0;
	evs = ps_events__parse(NULL, &err);
	tap_ok(!evs && errno == EINVAL && err.code == PS_ERR_SYNTAX, "NULL spec is EINVAL");
	tap_ok(!ps_events__parse("cycels", NULL) && errno == EINVAL, "err may be NULL");
}

/* ps_events__bp_symbol: the name and offset of mem:SYMBOL[+OFF], NULL otherwise. */
static void test_bp_symbol(void)
{
	struct ps_events *evs = ps_events__parse("mem:ps_test_var+0x10:w,mem:0x1000,cycles", NULL);
	uint64_t off = 7;

	tap_is_str(ps_events__bp_symbol(evs, 0, &off), "ps_test_var", "bp_symbol of mem:SYMBOL");
	tap_is_u64(off, 0x10, "and its +OFF");
	tap_ok(ps_events__bp_symbol(evs, 0, NULL) != NULL, "offset may be NULL");
	tap_ok(!ps_events__bp_symbol(evs, 1, &off) && !ps_events__bp_symbol(evs, 2, &off) &&
		   !ps_events__bp_symbol(evs, 3, &off) && !ps_events__bp_symbol(NULL, 0, &off),
	       "NULL for a numeric breakpoint, another event, a bad index, a NULL set");
	ps_events__free(evs);
	evs = ps_events__parse("{mem:a:w,mem:b+4:r}:u", NULL);
	off = 0;
	tap_ok(evs && !strcmp(ps_events__bp_symbol(evs, 1, &off), "b") && off == 4 &&
		   !strcmp(ps_events__name(evs, 1), "mem:b+4:r:u"),
	       "a group member keeps its symbol; group modifiers go to its name");
	ps_events__free(evs);
}

/* The machine's own tracefs: same parser, real ids. */
static void test_real_tracefs(void)
{
	const char *path = "/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id";
	struct ps_event_error err;
	struct ps_events *evs;
	unsigned long long id;
	FILE *f;

	unsetenv("PERFSCRIPT_TRACEFS");
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &id) != 1) {
		tap_skip("tracefs not readable here (need root and tracefs at /sys/kernel/tracing)",
			 "real tracefs syscalls:sys_enter_getppid");
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	evs = ps_events__parse("syscalls:sys_enter_getppid", &err);
	tap_ok(evs && ps_events__attr(evs, 0)->type == PERF_TYPE_TRACEPOINT &&
		   ps_events__attr(evs, 0)->config == id,
	       "real tracefs syscalls:sys_enter_getppid has id %llu", id);
	if (!evs)
		tap_diag("  %s", err.message);
	ps_events__free(evs);
}

int main(void)
{
	setenv("PERFSCRIPT_TRACEFS", "tests/fixtures/tracefs", 1);
	setenv("PERFSCRIPT_SYSFS", "tests/fixtures/sysfs", 1);
	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
		check_valid(&valid[i]);
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
		check_invalid(&invalid[i]);
	test_describe();
	test_max_stack();
	test_call_graph();
	test_api();
	test_bp_symbol();
	test_real_tracefs();
	return tap_done();
}
