/*
 * clockspin.c: reads CLOCK_MONOTONIC in a loop for the milliseconds given
 * (default 300): almost all of its time is in the vDSO.
 *   clockspin [MS]
 */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 300, end = 0;
	struct timespec ts;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (end == 0)
			end = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 + ms;
		if (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 >= end)
			return 0;
	}
}
