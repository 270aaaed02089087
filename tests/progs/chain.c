/*
 * chain.c: a known call chain for stack tests, built with -O2 and
 * -fomit-frame-pointer as distribution code is: main -> chain_outer ->
 * chain_middle -> chain_leaf, where chain_leaf burns CPU for the
 * milliseconds given (default 300). Each level does work after its call so
 * the compiler keeps the frames (no tail calls).
 *   chain [MS]
 */
#include <stdlib.h>
#include <time.h>

volatile unsigned long chain_sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void chain_leaf(double ms)
{
	double end = now_ms() + ms;

	while (now_ms() < end)
		for (int i = 0; i < 20000; i++)
			chain_sink += (unsigned long)i * i;
}

__attribute__((noinline)) void chain_middle(double ms)
{
	chain_leaf(ms);
	chain_sink++;
}

__attribute__((noinline)) void chain_outer(double ms)
{
	chain_middle(ms);
	chain_sink++;
}

int main(int argc, char **argv)
{
	chain_outer(argc > 1 ? atof(argv[1]) : 300);
	return 0;
}
