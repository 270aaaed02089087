/*
 * inline.c: hot code that exists only inlined: mix() is always inlined
 * into crunch(), so a profile's samples sit in crunch's machine code at
 * lines of mix. Runs for the milliseconds given (default 300).
 *   inline [MS]
 */
#include <stdlib.h>
#include <time.h>

volatile unsigned long inline_sink;

static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 64; i++) /* MIX_LOOP */
		x = (x ^ (x >> 7)) * 0x9e3779b97f4a7c15ul + (unsigned long)i; /* MIX_LINE */
	return x;
}

__attribute__((noinline)) unsigned long crunch(unsigned long n)
{
	unsigned long acc = 0;

	for (unsigned long i = 0; i < n; i++)
		acc += mix(i); /* CALL_LINE */
	return acc;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double end = now_ms() + (argc > 1 ? atof(argv[1]) : 300);

	while (now_ms() < end)
		inline_sink += crunch(10000);
	return 0;
}
