/*
 * pltcall.c: calls a shared library's one-line function through the PLT
 * for the milliseconds given (default 300), so that a good share of the
 * samples land in the PLT stub itself, which profiles name "step@plt".
 * The library is this file built with -DSTEP_LIB -shared -fPIC.
 *   pltcall [MS]
 */
#ifdef STEP_LIB
int step(int x)
{
	return x + 1;
}
#else
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int step(int x);

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double end = now_ms() + (argc > 1 ? atof(argv[1]) : 300);
	int s = 0;

	while (now_ms() < end)
		for (int i = 0; i < 1000000; i++)
			s = step(s);
	printf("%d\n", s);
	return 0;
}
#endif
