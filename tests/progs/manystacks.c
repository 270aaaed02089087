/*
 * manystacks.c: a program with a great many distinct call stacks, for the
 * memory of profiles: 16 functions that call each other 5 deep along a path
 * a random number picks (16^5 paths), each leaf spinning a little. Built
 * with frame pointers, so fp and DWARF stacks both reach main.
 *   manystacks [SECONDS]      (default 10)
 */
#include <stdlib.h>
#include <time.h>

typedef void (*fn_t)(unsigned path, int depth);
static volatile unsigned long sink;
extern fn_t table[16];

#define F(n)                                                                                       \
	__attribute__((noinline)) void f##n(unsigned path, int depth)                              \
	{                                                                                          \
		if (depth == 0) {                                                                  \
			for (int k = 0; k < 2000; k++)                                             \
				sink += (unsigned long)k;                                          \
			return;                                                                    \
		}                                                                                  \
		table[path & 15](path >> 4, depth - 1);                                            \
		sink++;                                                                            \
	}
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15)

fn_t table[16] = {f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 10);
	unsigned x = 12345;

	do {
		for (int i = 0; i < 1000; i++) {
			x = x * 1103515245u + 12345u;
			table[x & 15](x >> 4, 5);
		}
	} while (now() < end);
	return 0;
}
