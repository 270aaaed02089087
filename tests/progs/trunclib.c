/*
 * trunclib.c: a shared library of 90 small functions, each with its own
 * FDE, and run(), which spins through them for a while: a library a local
 * user owns, for the tests of what the user can do to a root symbolizer
 * that reads it (tests/e2e/hostile.sh). Built with -DNAME=w to name the
 * functions w10..w99 instead of f10..f99.
 */
#include <time.h>
#ifndef NAME
#define NAME f
#endif
#define CAT(a, b)  CAT2(a, b)
#define CAT2(a, b) a##b
#define F(n)                                                                                       \
	__attribute__((noinline)) long CAT(NAME, n)(long x)                                        \
	{                                                                                          \
		for (int i = 0; i < 2000; i++)                                                     \
			x = x * 31 + i + n;                                                        \
		return x;                                                                          \
	}
#define F10(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
F10(1)
F10(2) F10(3) F10(4) F10(5) F10(6) F10(7) F10(8) F10(9)
#define R(n)   CAT(NAME, n),
#define R10(n) R(n##0) R(n##1) R(n##2) R(n##3) R(n##4) R(n##5) R(n##6) R(n##7) R(n##8) R(n##9)
    long (*fns[])(long) = {R10(1) R10(2) R10(3) R10(4) R10(5) R10(6) R10(7) R10(8) R10(9)};
/* spin through the functions for ms milliseconds */
long run(long x, int ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned i = 0;; i++) {
		x = fns[(i * 7919u) % 90](x);
		if ((i & 255) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &b);
			if ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 >= ms)
				return x;
		}
	}
}
