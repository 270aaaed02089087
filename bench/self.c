/*
 * self.c: the cost of self-monitoring calls next to what they replace,
 * measured in one run with interleaved rounds (the machine is shared):
 *   self time N      ps_time() against clock_gettime(CLOCK_MONOTONIC)
 * Prints "name=value" fields for bench/self.sh; medians over the rounds.
 */
#include <stdio.h>
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

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1000000;

	if (argc > 1 && !strcmp(argv[1], "time")) {
		bench_time(n);
		return 0;
	}
	fprintf(stderr, "usage: self time [N]\n");
	return 2;
}
