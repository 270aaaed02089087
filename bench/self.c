/*
 * self.c: the cost of self-monitoring calls next to what they replace,
 * measured in one run with interleaved rounds (the machine is shared):
 *   self time N      ps_time() against clock_gettime(CLOCK_MONOTONIC)
 *   self region N    a ps_region__begin/end pair on {task-clock,page-faults}
 *                    against two read()s of the same group opened bare
 * Prints "name=value" fields for bench/self.sh; medians over the rounds.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perfscript.h"

#define ROUNDS 7

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v)
{
	qsort(v, ROUNDS, sizeof(*v), cmp);
	return v[ROUNDS / 2];
}

static volatile uint64_t sink;

static void bench_time(long n)
{
	double a[ROUNDS], b[ROUNDS], t;
	struct timespec ts;

	ps_time(); /* the user page is mapped on the first call */
	for (int r = 0; r < ROUNDS; r++) {
		t = now();
		for (long i = 0; i < n; i++)
			sink += ps_time();
		a[r] = (now() - t) / n;
		t = now();
		for (long i = 0; i < n; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += (uint64_t)ts.tv_nsec;
		}
		b[r] = (now() - t) / n;
	}
	printf("source=%s ps_time_ns=%.1f clock_gettime_ns=%.1f ratio=%.2f\n", ps_time_source(NULL),
	       median(a), median(b), median(a) / median(b));
}

/* The reference: the same two events opened as one group by hand, with
 * the region's read_format, read twice per pair. */
static int bare_group(void)
{
	struct perf_event_attr a = {.size = sizeof(a),
				    .type = PERF_TYPE_SOFTWARE,
				    .config = PERF_COUNT_SW_TASK_CLOCK,
				    .read_format = PERF_FORMAT_GROUP |
						   PERF_FORMAT_TOTAL_TIME_ENABLED |
						   PERF_FORMAT_TOTAL_TIME_RUNNING};
	int lead = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);

	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	if (lead >= 0 && syscall(SYS_perf_event_open, &a, 0, -1, lead, 0) < 0)
		return -1;
	return lead;
}

static int bench_region(long n)
{
	double a[ROUNDS], b[ROUNDS], t;
	uint64_t buf[8];
	char msg[512];
	int fd = bare_group();

	if (fd < 0 || ps_regions__init("task-clock,page-faults", msg, sizeof(msg)) < 0) {
		fprintf(stderr, "self region: cannot open the counters: %s\n",
			fd < 0 ? "perf_event_open" : msg);
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++) {
		t = now();
		for (long i = 0; i < n; i++) {
			ps_region__begin("bench");
			ps_region__end("bench");
		}
		a[r] = (now() - t) / n;
		t = now();
		for (long i = 0; i < n; i++) {
			sink += (uint64_t)read(fd, buf, sizeof(buf));
			sink += (uint64_t)read(fd, buf, sizeof(buf));
		}
		b[r] = (now() - t) / n;
	}
	printf("pair_ns=%.1f two_reads_ns=%.1f ratio=%.2f\n", median(a), median(b),
	       median(a) / median(b));
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1000000;

	if (argc > 1 && !strcmp(argv[1], "time")) {
		bench_time(n);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "region")) {
		setenv("PERFSCRIPT_REPORT", "none", 1);
		return bench_region(n);
	}
	fprintf(stderr, "usage: self time|region [N]\n");
	return 2;
}
