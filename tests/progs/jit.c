/*
 * jit.c: a tiny JIT. It writes a counting loop as x86-64 machine code
 * into anonymous memory (written, then made executable, as JITs do), lists
 * it in /tmp/perf-PID.map as "START SIZE jit_hot_loop", and calls it for
 * the milliseconds given (default 300). Like a real JIT it leaves the map
 * behind, for the profiler to read after it exited. With "nomap" it writes
 * no map (a test puts something else there); with "atexit" it writes it
 * only when it is done, as a JVM's -XX:+DumpPerfMapAtExit does. It prints
 * "ready PID" once its code is in place. On other architectures it exits
 * 77 (nothing to test).
 *   jit [MS [nomap|atexit]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The perf map, "START SIZE name" (perf's jit interface). */
static int write_map(const char *path, void *code, size_t size)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "%lx %zx jit_hot_loop\n", (unsigned long)code, size);
	return fclose(f);
}

int main(int argc, char **argv)
{
#if defined(__x86_64__)
	/* unsigned long f(unsigned long n): xor eax,eax; 1: add rax,rdi;
	 * dec rdi; jnz 1b; ret */
	static const unsigned char code[] = {0x31, 0xc0, 0x48, 0x01, 0xf8, 0x48,
					     0xff, 0xcf, 0x75, 0xf8, 0xc3};
	double end = now_ms() + (argc > 1 ? atof(argv[1]) : 300);
	volatile unsigned long sink = 0;
	unsigned long (*fn)(unsigned long);
	char path[64];
	void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED)
		return 1;
	memcpy((char *)mem + 64, code, sizeof(code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	const char *when = argc > 2 ? argv[2] : "now";

	if (!strcmp(when, "now") && write_map(path, (char *)mem + 64, sizeof(code)))
		return 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	fn = (unsigned long (*)(unsigned long))((char *)mem + 64);
	while (now_ms() < end)
		sink += fn(1000000);
	if (!strcmp(when, "atexit") && write_map(path, (char *)mem + 64, sizeof(code)))
		return 1;
	return 0;
#else
	(void)argc;
	(void)argv;
	(void)now_ms;
	return 77;
#endif
}
