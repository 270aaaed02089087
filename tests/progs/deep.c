/*
 * deep.c: a recursion DEPTH calls deep (default 250) that spins MS
 * milliseconds of its CPU time at the bottom, for the tests of stacks
 * deeper than the kernel's 127 frames: every sample's stack goes through
 * main, DEPTH frames of recurse, then spin.
 *   deep [DEPTH [MS]]
 */
#include <stdlib.h>
#include <time.h>

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

__attribute__((noinline)) static void spin(double ms)
{
	volatile unsigned long x = 0;

	for (double end = cpu_ms() + ms; cpu_ms() < end;)
		for (int i = 0; i < 200000; i++)
			x += i;
}

__attribute__((noinline)) static int recurse(int n, double ms)
{
	if (n == 0)
		spin(ms);
	else
		recurse(n - 1, ms);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
	return n;
}

int main(int argc, char **argv)
{
	return recurse(argc > 1 ? atoi(argv[1]) : 250, argc > 2 ? atof(argv[2]) : 300) == 250 ? 0
											      : 0;
}
