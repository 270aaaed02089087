/*
 * usdtargs.c: a USDT marker whose arguments sit where the compiler put
 * them, one of each kind sys/sdt.h's notes name: a register, a stack slot
 * (a volatile local), a global, a constant, and a negative 32-bit value.
 * Each of N passes fires perfscript:args with (3i, 1000i + 35, 7i, 42, -i);
 * and perfscript:twice, inlined at two places (two sites, each with its
 * own register), with i and with 2i or 2i + 1. The sums of each argument over the run are printed
 * at the end, the truth a probe's readings are checked against. usdtargs N
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

volatile long usdt_global;

__attribute__((noinline)) static void pass(long i)
{
	volatile long slot = i * 1000 + 35;
	int neg = (int)-i;

	usdt_global += 7;
	DTRACE_PROBE5(perfscript, args, i * 3, slot, usdt_global, 42, neg);
}

static inline __attribute__((always_inline)) void twice(long v)
{
	DTRACE_PROBE1(perfscript, twice, v);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, s[5] = {0, 0, 0, 0, 0}, t = 0;

	for (long i = 1; i <= n; i++) {
		pass(i);
		long w = i * 2 + usdt_global % 2; /* not a constant: another register */

		twice(i);
		twice(w);
		t += i + w;
		s[0] += i * 3, s[1] += i * 1000 + 35, s[2] += 7 * i, s[3] += 42, s[4] -= i;
	}
	printf("sums %ld %ld %ld %ld %ld twice %ld\n", s[0], s[1], s[2], s[3], s[4], t);
	return 0;
}
