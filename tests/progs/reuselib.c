/*
 * reuselib.c: built twice, as libreuse_a.so (LEAF a_leaf) and
 * libreuse_b.so (LEAF b_leaf): two libraries of the same size, so that
 * the second one dlopen'd after the first is dlclose'd takes its address.
 */
#include <time.h>

#ifndef LEAF
#define LEAF a_leaf
#endif

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Spin ms milliseconds of this thread's CPU time in this function, so
 * that each library gets as many samples however busy the machine is. */
__attribute__((noinline)) void LEAF(double ms)
{
	volatile unsigned long x = 0;

	for (double end = now_ms() + ms; now_ms() < end;)
		for (int i = 0; i < 200000; i++) /* the CPU clock is a system call */
			x += i;
}
