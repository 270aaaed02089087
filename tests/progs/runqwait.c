/*
 * runqwait.c: more running threads than CPUs, so that they wait for one;
 * for the tests of run-queue latency. T threads spin MS milliseconds of
 * wall-clock time each; at the end every thread (the main one too, which
 * waited in join) reads its own run_delay from /proc/thread-self/schedstat,
 * the kernel's sum of the time it spent runnable but not running, and the
 * program prints the sum over its threads in nanoseconds.
 *   runqwait T MS     prints "run_delay_ns N"
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long ms = 300;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long total;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* This thread's run_delay so far: the second field of its schedstat. */
static void add_own_delay(void)
{
	unsigned long long run, delay = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (!f || fscanf(f, "%llu %llu", &run, &delay) != 2) {
		perror("schedstat");
		exit(1);
	}
	fclose(f);
	pthread_mutex_lock(&lock);
	total += delay;
	pthread_mutex_unlock(&lock);
}

static void *spinner(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	for (double end = now_ms() + ms; now_ms() < end;)
		for (int i = 0; i < 1000; i++)
			x += i;
	add_own_delay();
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t *t = calloc(n, sizeof(*t));

	if (argc > 2)
		ms = atol(argv[2]);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, spinner, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	add_own_delay();
	printf("run_delay_ns %llu\n", total);
	return 0;
}
