/*
 * libhot.c: a shared library whose hot code has no symbol once stripped
 * (the test build strips it): samples in it can only be named as
 * libhot.so+0xOFF, the file offset perf report prints too.
 */
volatile unsigned long hot_lib_sink;

static __attribute__((noinline)) void hidden_work(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		hot_lib_sink += i ^ (i >> 3);
}

void hot_lib_entry(unsigned long n)
{
	hidden_work(n);
	hot_lib_sink++;
}
