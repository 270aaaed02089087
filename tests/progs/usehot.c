/*
 * usehot.c: calls libhot.so's code for the milliseconds given (default
 * 300), so that a profile of it is mostly inside the stripped library.
 *   usehot [MS]
 */
#include <stdlib.h>
#include <time.h>

void hot_lib_entry(unsigned long n);

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
		hot_lib_entry(100000);
	return 0;
}
