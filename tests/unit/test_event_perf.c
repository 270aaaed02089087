/*
 * test_event_perf.c: unit tests of the spellings perf's own parse-events
 * tests use that perfscript took later (numeric TYPE:CONFIG, named groups,
 * the P and W modifiers, generic names inside a core PMU's terms, rNNN in
 * any PMU, quoted values, the call-graph/time/no-inherit/... terms, glob
 * classes), of dynamic probes (kprobe, uprobe, USDT through the fixture
 * kprobe and uprobe PMUs), and of the byte-level errors (non-ASCII,
 * control characters, periods of 2^63 and more). Each valid row names the
 * attr fields perf sets for that string; what an attr cannot show (flags,
 * group names, probe targets) is checked through the accessors. Runs from
 * the repository root against tests/fixtures.
 */
#include "event_cases.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define P	  4 /* the fixture cpu PMU */
#define KP	  6 /* the fixture kprobe PMU */
#define UP	  7 /* the fixture uprobe PMU */
#define CALLCHAIN PERF_SAMPLE_CALLCHAIN
#define TRAW	  PERF_SAMPLE_RAW
#define DWARF	  (CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
#define NAME_C	  "COMPLEX_CYCLES_NAME:orig=cycles,desc=chip-clock-ticks"
/* a probe's samples carry registers: s:arg(n), s.retval */
#define UREGS PERF_SAMPLE_REGS_USER
#define KREGS PERF_SAMPLE_REGS_INTR

static const struct vcase valid[] = {
    /* numeric TYPE:CONFIG */
    {"1:1", SW, 1},
    {"1:1:hp", SW, 1, XU | XK, 1},
    {"4:0x6530160/name=numpmu/", 4, 0x6530160, .name = "numpmu"},
    {"r1,syscalls:sys_enter_getppid:k,1:1:hp", SW, 1, XU | XK, 1, .idx = 2, .n = 3,
     .name = "1:1:hp"},
    {"{cycles,1:3}", SW, 3, MEMBER, 0, 0, RF, 0, .idx = 1, .n = 2, .name = "1:3"},
    /* perf's parse-events strings */
    {"r1a", RAW, 0x1a},
    {"r1a:kp", RAW, 0x1a, XU | XH, 1},
    {"cycles/period=100000,config2/", HW, 0, 0, 0, 100000, 0, ST, .config2 = 1},
    {"L1-dcache-load-miss", HC, 1 << 16},
    {"L1-dcache-load-miss:kp", HC, 1 << 16, XU | XH, 1},
    {"instructions:uDp", HW, 1, XK | XH | PIN, 1},
    {"instructions:kIG", HW, 1, XU | XH | XHOST | XIDLE},
    {"task-clock:P,cycles", SW, 1, 0, 3, .n = 2, .name = "task-clock:P"},
    {"cycles/name='" NAME_C "'/Duk", HW, 0, XH | PIN, .name = NAME_C},
    {"cpu/name='" NAME_C "',period=0x1,event=0x2/ukp", P, 2, XH, 1, 1, 0, ST, .name = NAME_C},
    {"cycles/name=\"a:b=c,d\"/", HW, 0, .name = "a:b=c,d"},
    {"cycles//u", HW, 0, XK | XH},
    /* generic names inside a core PMU's terms: the legacy encoding */
    {"cpu/cycles/", HW, 0},
    {"cpu/instructions/u", HW, 1, XK | XH},
    {"cpu/L1-dcache-load-miss/kp", HC, 1 << 16, XU | XH, 1},
    {"cpu/cycles,period=100000,config2/", HW, 0, 0, 0, 100000, 0, ST, .config2 = 1},
    {"{cpu/cycles/,cpu/instructions/}:u", HW, 1, MEMBER | XK | XH, 0, 0, RF, 0, .idx = 1, .n = 2,
     .name = "cpu/instructions/:u"},
    /* raw config in any PMU's terms, with or without 0x */
    {"software/r1a/", SW, 0x1a},
    {"software/r0x1a/", SW, 0x1a},
    {"cpu/r0x1a8/", P, 0x1a8},
    /* call-graph, time, raw, no-inherit */
    {"cpu/config=1,call-graph=fp,time,period=100000/,cpu/config=2,call-graph=no,time=0,"
     "period=2000/",
     P, 1, 0, 0, 100000, 0, ST | CALLCHAIN, .n = 2,
     .name = "cpu/config=1,call-graph=fp,time,period=100000/"},
    {"cpu/config=1,call-graph=fp,time,period=100000/,cpu/config=2,call-graph=no,time=0,"
     "period=2000/",
     P, 2, 0, 0, 2000, 0, ST & ~(uint64_t)PERF_SAMPLE_TIME, .idx = 1, .n = 2,
     .name = "cpu/config=2,call-graph=no,time=0,period=2000/"},
    {"cycles/callchain,call-graph=no,period=1/", HW, 0, 0, 0, 1, 0, ST},
    {"syscalls:sys_enter_getppid/period=1/", TP, 180, 0, 0, 1, 0, ST | TRAW},
    {"syscalls:sys_enter_getppid/period=1,raw=0/", TP, 180, 0, 0, 1, 0, ST},
    {"syscalls:sys_enter_getppid/freq=10,time=0/", TP, 180, FREQ, 0, 10, 0,
     (ST & ~(uint64_t)PERF_SAMPLE_TIME) | TRAW},
    {"cycles/no-inherit/", HW, 0},
    {"cycles/inherit,no-inherit/", HW, 0},
    {"cycles/no-overwrite,percore,metric-id=m1/", HW, 0},
    {"cycles/max-stack=10,period=1/", HW, 0, 0, 0, 1, 0, ST | CALLCHAIN},
    {"cycles/aux-sample-size=4096/", HW, 0, 0, 0, 0, 0, PERF_SAMPLE_AUX},
    /* named groups, weak groups */
    {"group1{syscalls:sys_enter_getppid:H,cycles:kppp},group2{cycles,1:3}:G,instructions:u", TP,
     180, XGUEST, 0, 0, RFG, 0, .n = 5, .name = "syscalls:sys_enter_getppid:H"},
    {"group1{syscalls:sys_enter_getppid:H,cycles:kppp},group2{cycles,1:3}:G,instructions:u", HW, 0,
     MEMBER | XU | XH, 3, 0, RF, 0, .idx = 1, .n = 5, .name = "cycles:kppp"},
    {"group1{syscalls:sys_enter_getppid:H,cycles:kppp},group2{cycles,1:3}:G,instructions:u", SW, 3,
     MEMBER | XHOST, 0, 0, RF, 0, .idx = 3, .n = 5, .leader = 2, .name = "1:3:G"},
    {"group1{syscalls:sys_enter_getppid:H,cycles:kppp},group2{cycles,1:3}:G,instructions:u", HW, 1,
     XK | XH, 0, 0, RF, 0, .idx = 4, .n = 5, .name = "instructions:u"},
    {"{cycles,instructions}:W", HW, 0, 0, 0, 0, RFG, 0, .n = 2, .name = "cycles:W"},
    {"{cycles,cache-misses}:W,task-clock", SW, 1, 0, 0, 0, RF, 0, .idx = 2, .n = 3,
     .name = "task-clock"},
    /* glob classes */
    {"syscalls:sys_enter_[gr]*", TP, 700, .idx = 1, .n = 2, .name = "syscalls:sys_enter_read"},
    {"syscalls:sys_enter_[!g]*", TP, 700, .idx = 1, .n = 2, .name = "syscalls:sys_enter_read"},
    {"sched:sched_[sw]*:u", TP, 318, XK | XH, .idx = 1, .n = 2, .name = "sched:sched_wakeup:u"},
    /* dynamic probes: the kprobe and uprobe PMUs' type and retprobe bit */
    {"kprobe:do_sys_openat2", KP, 0, 0, 0, 0, 0, KREGS},
    {"kprobe:do_sys_openat2+8/period=1/", KP, 0, 0, 0, 1, 0, ST | KREGS},
    {"kprobe:0xffffffff81000000", KP, 0, 0, 0, 0, 0, KREGS},
    {"kretprobe:do_sys_openat2:k", KP, 1, XU | XH, 0, 0, 0, KREGS},
    {"uprobe:/bin/true:main", UP, 0, 0, 0, 0, 0, UREGS},
    {"uprobe:/bin/true:main+0x10:u", UP, 0, XK | XH, 0, 0, 0, UREGS},
    {"uprobe:/bin/true:0x1234", UP, 0, 0, 0, 0, 0, UREGS},
    {"uprobe:'/opt/a,b:c/x':main", UP, 0, 0, 0, 0, 0, UREGS},
    {"uretprobe:/lib/x86_64-linux-gnu/libc.so.6:malloc/period=1/", UP, 1, 0, 0, 1, 0, ST | UREGS},
    {"usdt:/usr/lib/libfoo.so:prov:mark", UP, 0, 0, 0, 0, 0, UREGS},
    {"usdt:./a.out:prov:mark:u", UP, 0, XK | XH, 0, 0, 0, UREGS},
    {"{uprobe:/bin/true:main,uretprobe:/bin/true:main}", UP, 1, MEMBER, 0, 0, RF, UREGS, .idx = 1,
     .n = 2, .name = "uretprobe:/bin/true:main"},
    /* an ftrace record with an id opens like any tracepoint */
    {"ftrace:function", TP, 1},
};

static const struct icase invalid[] = {
    {"cycles/period=9223372036854775808/", PS_ERR_BAD_VALUE, 15, NULL,
     "bad value '9223372036854775808' for term 'period' at column 15 (must be below 2^63)"},
    {"cycles/period=0xffffffffffffffff/", PS_ERR_BAD_VALUE, 15, NULL, NULL},
    {"cycles/freq=0x8000000000000000/", PS_ERR_BAD_VALUE, 13, NULL, NULL},
    {"cycl\xc3\xa9s", PS_ERR_SYNTAX, 5, NULL,
     "non-ASCII byte 0xc3 at column 5: event names, terms and modifiers are ASCII (a "
     "look-alike character pasted from a document?); quote a value that needs other "
     "characters, as in name='...'"},
    {"cycles,page\xe2\x80\x90"
     "faults",
     PS_ERR_SYNTAX, 12, NULL, NULL},
    {"cycles\x01", PS_ERR_SYNTAX, 7, NULL,
     "control character 0x01 at column 7 in the event string"},
    {"cycles\n", PS_ERR_SYNTAX, 7, NULL, NULL},
    {"cycles:Pp", PS_ERR_SYNTAX, 8, NULL, NULL},
    {"cycles:pP", PS_ERR_SYNTAX, 8, NULL, NULL},
    {"{cycles:P,instructions}:p", PS_ERR_SYNTAX, 25, NULL, NULL},
    {"cycles:PP", PS_ERR_SYNTAX, 9, NULL, "duplicate modifier 'P' at column 9"},
    {"cycles/call-graph=lbr/", PS_ERR_BAD_VALUE, 19, NULL,
     "bad value 'lbr' for term 'call-graph' at column 19 (call-graph is fp, dwarf or no)"},
    {"cycles/call-graph/", PS_ERR_BAD_VALUE, 8, NULL, NULL},
    {"cycles/max-stack=2000/", PS_ERR_BAD_VALUE, 18, NULL, NULL},
    {"cycles/time=2/", PS_ERR_BAD_VALUE, 13, NULL, NULL},
    {"cycles/overwrite/", PS_ERR_NOT_SUPPORTED, 8, NULL, NULL},
    {"cycles/metric-id=/", PS_ERR_BAD_VALUE, 8, NULL, NULL},
    {"cycles/name='abc/", PS_ERR_SYNTAX, 13, NULL, "unterminated quoted value at column 13"},
    {"cycles/nmae=1/", PS_ERR_UNKNOWN_TERM, 8, "name", NULL},
    {"99999999999:1", PS_ERR_BAD_VALUE, 1, NULL, NULL},
    {"1:0xzz", PS_ERR_BAD_VALUE, 3, NULL, NULL},
    {"group1{cycles,instructions", PS_ERR_SYNTAX, 7, NULL, "unterminated group '{' at column 7"},
    {"group1{}", PS_ERR_SYNTAX, 7, NULL, NULL},
    {"sched:sched_[sw*", PS_ERR_SYNTAX, 13, NULL,
     "unterminated '[' at column 13 (a glob class ends with ']', e.g. sys_enter_[a-m]*)"},
    {"kretprobe:do_sys_openat2+4", PS_ERR_SYNTAX, 25, NULL, NULL},
    {"kprobe:", PS_ERR_SYNTAX, 8, NULL, NULL},
    {"kprobe:do_sys_openat2+0xq", PS_ERR_BAD_VALUE, 23, NULL, NULL},
    {"uprobe:/bin/true", PS_ERR_SYNTAX, 8, NULL,
     "probe at column 8 needs a file and what to probe in it (uprobe:PATH:SYMBOL[+OFF] or "
     "uprobe:PATH:0xADDR)"},
    {"uprobe::main", PS_ERR_SYNTAX, 8, NULL, NULL},
    {"uprobe:'/bin/true:main", PS_ERR_SYNTAX, 8, NULL, NULL},
    {"uretprobe:/bin/true:0x10", PS_ERR_SYNTAX, 1, NULL, NULL},
    {"usdt:/x:prov", PS_ERR_SYNTAX, 9, NULL, NULL},
    {"usdt:/x:prov:", PS_ERR_SYNTAX, 9, NULL, NULL},
    {"uprobe:/bin/true:main:q", PS_ERR_SYNTAX, 23, NULL, NULL},
    {"ftrace:bprint", PS_ERR_NOT_SUPPORTED, 1, NULL,
     "'ftrace:bprint' at column 1 has a format but no id in tracefs: it is a record type of "
     "the ftrace ring buffer, not a tracepoint perf can open"},
};

/* What an attr does not show: flags, group names, probe targets, extra attr fields. */
static void test_accessors(void)
{
	struct ps_events *evs;
	struct ps_probe_info pi;
	const struct perf_event_attr *a;

	evs = ps_events__parse("group1{cycles,instructions}:W,group2{task-clock}", NULL);
	tap_ok(evs &&
		   !strcmp(ps_events__group_name(evs, 0) ? ps_events__group_name(evs, 0) : "",
			   "group1") &&
		   !ps_events__group_name(evs, 1) &&
		   !strcmp(ps_events__group_name(evs, 2) ? ps_events__group_name(evs, 2) : "",
			   "group2"),
	       "named groups: the name sits on the leader");
	tap_ok(evs && (ps_events__flags(evs, 0) & PS_EVENT_WEAK_GROUP) &&
		   !(ps_events__flags(evs, 1) & PS_EVENT_WEAK_GROUP) &&
		   !(ps_events__flags(evs, 2) & PS_EVENT_WEAK_GROUP),
	       "W: the leader is weak, its members and other groups are not");
	ps_events__free(evs);
	evs = ps_events__parse("cycles/no-inherit,percore/,task-clock:P,syscalls:sys_enter_read",
			       NULL);
	tap_ok(evs && ps_events__flags(evs, 0) == (PS_EVENT_NO_INHERIT | PS_EVENT_PERCORE) &&
		   ps_events__flags(evs, 1) == PS_EVENT_PRECISE_MAX &&
		   ps_events__flags(evs, 2) == PS_EVENT_SAMPLE_EVERY &&
		   ps_events__flags(NULL, 0) == 0,
	       "flags: no-inherit, percore, P, a tracepoint samples every hit");
	tap_is_str(ps_events__tracepoint(evs, 2), "syscalls:sys_enter_read",
		   "a tracepoint's subsys:event");
	tap_ok(!ps_events__tracepoint(evs, 0), "no tracepoint name for cycles");
	ps_events__free(evs);
	evs = ps_events__parse("sched:sched_s*/name=x/", NULL);
	tap_is_str(ps_events__tracepoint(evs, 0), "sched:sched_switch",
		   "a glob's match keeps its own tracepoint name under name=");
	ps_events__free(evs);
	evs = ps_events__parse("cycles/call-graph=dwarf,stack-size=4096,period=1/,"
			       "cycles/aux-output,max-stack=7/",
			       NULL);
	a = ps_events__attr(evs, 0);
	tap_ok(a && a->sample_stack_user == 4096 && a->sample_regs_user != 0 &&
		   a->exclude_callchain_user && (a->sample_type & DWARF) == DWARF,
	       "call-graph=dwarf: user registers, stack-size, kernel-only callchain");
	a = ps_events__attr(evs, 1);
	tap_ok(a && a->aux_output && a->sample_max_stack == 7, "aux-output, max-stack");
	ps_events__free(evs);
	evs = ps_events__parse("uprobe:/bin/true:main+0x10,usdt:/x/y:prov:mark,kprobe:0x1000,"
			       "uretprobe:/bin/true:main",
			       NULL);
	tap_ok(ps_events__probe(evs, 0, &pi) == 1 && pi.kind == PS_PROBE_UPROBE &&
		   !strcmp(pi.path, "/bin/true") && !strcmp(pi.symbol, "main") && pi.offset == 0x10,
	       "uprobe: path, symbol, offset");
	tap_ok(ps_events__probe(evs, 1, &pi) == 1 && pi.kind == PS_PROBE_USDT &&
		   !strcmp(pi.path, "/x/y") && !strcmp(pi.provider, "prov") &&
		   !strcmp(pi.name, "mark") && !pi.symbol,
	       "usdt: path, provider, name");
	tap_ok(ps_events__probe(evs, 2, &pi) == 1 && pi.kind == PS_PROBE_KPROBE && !pi.symbol &&
		   pi.offset == 0x1000,
	       "kprobe on an address");
	tap_ok(ps_events__probe(evs, 3, &pi) == 1 && pi.kind == PS_PROBE_URETPROBE &&
		   ps_events__attr(evs, 3)->config == 1 && ps_events__probe(evs, 4, &pi) == 0,
	       "uretprobe: retprobe bit; no probe past the end");
	ps_events__free(evs);
	evs = ps_events__parse("cycles", NULL);
	tap_ok(ps_events__probe(evs, 0, &pi) == 0 && ps_events__probe(NULL, 0, NULL) == 0,
	       "no probe for cycles, nor for a NULL set");
	ps_events__free(evs);
}

static void test_describe(void)
{
	static const struct {
		const char *spec;
		const char *want;
	} cases[] = {
	    {"uprobe:/bin/true:main+0x10:u",
	     "name=uprobe:/bin/true:main+0x10:u\nleader=0\ntype=7\nconfig=0x0\n"
	     "exclude_kernel=1\nexclude_hv=1\ndisabled=1\nread_format=0x3\nsample_type=0x1000\n"
	     "sample_regs_user=0x301bd\nprobe=uprobe\n"
	     "probe_path=/bin/true\nprobe_symbol=main+0x10\n"},
	    {"usdt:/x:p:m", "name=usdt:/x:p:m\nleader=0\ntype=7\nconfig=0x0\ndisabled=1\n"
			    "read_format=0x3\nsample_type=0x1000\nsample_regs_user=0x301bd\n"
			    "probe=usdt\nprobe_path=/x\nprobe_usdt=p:m\n"},
	    {"g{task-clock/no-inherit,metric-id=m/P}:W",
	     "name=task-clock/no-inherit,metric-id=m/PW\nleader=0\ntype=1\nconfig=0x1\n"
	     "precise_ip=3\ndisabled=1\nread_format=0x3\ngroup=g\n"
	     "flags=no-inherit,precise-max,weak-group\nmetric_id=m\n"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = describe(cases[i].spec, false);

#ifndef __x86_64__
		if (strstr(cases[i].want, "sample_regs_user")) { /* the mask is x86-64's */
			tap_skip("x86-64 register mask", "describe '%s'", cases[i].spec);
			free(got);
			continue;
		}
#endif

		tap_is_str(got, cases[i].want, "describe '%s'", cases[i].spec);
		free(got);
	}
}

/* Hybrid core PMUs (cpu_core, cpu_atom): the PMU's type in config's top half. */
static void test_hybrid(void)
{
	static const struct vcase hybrid[] = {
	    {"cpu_core/cycles/", HW, UINT64_C(4) << 32, .cpus = "0,1,2,3,4,5,6,7"},
	    {"cpu_atom/instructions/u", HW, UINT64_C(10) << 32 | 1, XK | XH,
	     .cpus = "8,9,10,11,12,13,14,15"},
	    {"cpu_core/cpu-cycles/", HW, UINT64_C(4) << 32, .cpus = "0,1,2,3,4,5,6,7"},
	    {"cpu_atom/L1-dcache-load-misses/", HC, UINT64_C(10) << 32 | 1 << 16,
	     .cpus = "8,9,10,11,12,13,14,15"},
	};
	static const struct icase hybrid_bad[] = {
	    {"kprobe:x", PS_ERR_NOT_SUPPORTED, 1, NULL,
	     "'kprobe:x' at column 1: this kernel has no kprobe PMU "
	     "(/sys/bus/event_source/devices/kprobe: it needs Linux 4.17 or later built with "
	     "CONFIG_KPROBES and CONFIG_KPROBE_EVENTS)"},
	    {"uprobe:/bin/true:main", PS_ERR_NOT_SUPPORTED, 1, NULL, NULL},
	    /* software is no core PMU: cycles is no term of it */
	    {"software/cycles/", PS_ERR_UNKNOWN_TERM, 10, NULL, NULL},
	};

	setenv("PERFSCRIPT_SYSFS", "tests/fixtures/sysfs-hybrid", 1);
	for (size_t i = 0; i < sizeof(hybrid) / sizeof(hybrid[0]); i++)
		check_valid(&hybrid[i]);
	for (size_t i = 0; i < sizeof(hybrid_bad) / sizeof(hybrid_bad[0]); i++)
		check_invalid(&hybrid_bad[i]);
	setenv("PERFSCRIPT_SYSFS", "tests/fixtures/sysfs", 1);
}

/* More events than any fixed array: every one of them, in order. */
static void test_many(void)
{
	char *spec = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&spec, &len);
	struct ps_events *evs;

	for (int i = 0; i < 1000; i++)
		fprintf(f, "%s1:%d", i ? "," : "", i % 10);
	fclose(f);
	evs = ps_events__parse(spec, NULL);
	tap_ok(evs && ps_events__count(evs) == 1000 && ps_events__attr(evs, 999)->config == 9 &&
		   ps_events__leader(evs, 999) == 999,
	       "1000 events in one string");
	ps_events__free(evs);
	free(spec);
}

int main(void)
{
	setenv("PERFSCRIPT_TRACEFS", "tests/fixtures/tracefs", 1);
	setenv("PERFSCRIPT_SYSFS", "tests/fixtures/sysfs", 1);
	for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
		check_valid(&valid[i]);
	for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
		check_invalid(&invalid[i]);
	test_accessors();
	test_describe();
	test_hybrid();
	test_many();
	return tap_done();
}
