/*
 * jitmany.c LINES: a JIT as a profiler sees one: code in anonymous
 * executable memory and a perf map (/tmp/perf-PID.map) of LINES entries,
 * the last of which, "hot_loop", names the loop it then spins in (the
 * newest code, as a JIT's is). Prints "ready" once the map is written.
 * tests/e2e/jitmap.sh runs a few to see what the maps cost the symbolizer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t lines = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000, size = 1u << 24;
	unsigned char *m = mmap(NULL, size, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char path[64];
	FILE *f;

	if (m == MAP_FAILED)
		return 1;
	m[0] = 0xeb; /* jmp . (x86-64) */
	m[1] = 0xfe;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (!(f = fopen(path, "w")))
		return 1;
	for (size_t i = 1; i < lines; i++)
		fprintf(f, "%lx 10 jitted_function_number_%zu\n",
			(unsigned long)(m + 16 + (i * 16) % (size - 16)), i);
	fprintf(f, "%lx 2 hot_loop\n", (unsigned long)m);
	fclose(f);
	printf("ready\n");
	fflush(stdout);
	((void (*)(void))m)();
	return 0;
}
