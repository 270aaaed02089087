/*
 * parse.c: how long the event parser takes. Parses N strings (default
 * 10000) cycling through a fixed mix of every form (generic, cache, raw,
 * modifiers, terms, groups, sysfs format terms and aliases, breakpoints,
 * tracepoints and globs, libpfm4 names) against the fixture trees, then the
 * same count of misspelt strings, whose did-you-mean walks the whole
 * vocabulary. Prints "valid_ms=... error_ms=... n=..." for bench/run.
 * Usage: parse [N]; run from the repository root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "perfscript.h"

static const char *const valid[] = {
	"cycles",
	"instructions:u",
	"L1-dcache-load-misses",
	"r01c2:k",
	"cycles/period=100000/u",
	"{cycles,instructions}:S",
	"cpu/event=0x3c,umask=0x0,cmask=1/",
	"cpu/mem-loads,ldlat=30/pp",
	"uncore_imc_0/cas_count_read/",
	"power/energy-pkg/",
	"cpu/r1a8/",
	"mem:0x1000/8:w",
	"sched:sched_switch",
	"syscalls:sys_enter_*",
	"INST_RETIRED.ANY_P",
	"skx::L2_RQSTS:ALL_DEMAND_MISS:u",
	"INST_RETIRED:ANY_P:c=1:i",
	"{task-clock,page-faults,cpu/event=0xc0/}:u",
};

static const char *const invalid[] = {
	"cycels",
	"cpu/evnt=1/",
	"cpu/event=0x100/",
	"mem:0x1000/3:w", /* (mem:SYMBOL is a valid form) */
	"sched:sched_swich",
	"INST_RETIRED:ANY_Q",
};

static double run(const char *const *tab, size_t ntab, long n, long *bad)
{
	struct timespec t0, t1;
	struct ps_event_error err;

	*bad = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		struct ps_events *evs = ps_events__parse(tab[(size_t)i % ntab], &err);

		*bad += evs == NULL;
		ps_events__free(evs);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000, bad_valid, bad_invalid;
	double v, e;

	setenv("PERFSCRIPT_SYSFS", "tests/fixtures/sysfs", 0);
	setenv("PERFSCRIPT_TRACEFS", "tests/fixtures/tracefs", 0);
	setenv("LIBPFM_FORCE_PMU", "skx", 0);
	ps_events__free(ps_events__parse("INST_RETIRED.ANY_P", NULL)); /* libpfm4's one-time init */
	v = run(valid, sizeof(valid) / sizeof(valid[0]), n, &bad_valid);
	e = run(invalid, sizeof(invalid) / sizeof(invalid[0]), n, &bad_invalid);
	printf("valid_ms=%.1f error_ms=%.1f n=%ld valid_failed=%ld invalid_parsed=%ld\n", v, e, n,
	       bad_valid, n - bad_invalid);
	return bad_valid || bad_invalid != n;
}
