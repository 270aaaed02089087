/*
 * regions.c: code regions from C with libperfscript. Build and run (after
 * make install; tests/e2e/regions.sh links build/libperfscript.a instead):
 *   cc examples/regions.c $(pkg-config --cflags --libs perfscript) -o regions
 *   PERFSCRIPT_EVENTS=task-clock,page-faults PERFSCRIPT_REPORT=csv ./regions
 * The report comes out at exit (stderr, or $PERFSCRIPT_REPORT_FILE).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfscript.h"

int main(void)
{
	char msg[512];
	size_t n = 64 << 20;
	char *p;

	if (ps_regions__init(NULL, msg, sizeof(msg)) < 0) { /* $PERFSCRIPT_EVENTS */
		fprintf(stderr, "regions: %s\n", msg);
		return 1;
	}
	ps_region__begin("total");
	ps_region__begin("alloc");
	p = malloc(n);
	if (p)
		memset(p, 1, n);
	ps_region__end("alloc");
	for (int i = 0; i < 3; i++) {
		ps_region__begin("scan");
		for (size_t j = 0; p && j < n; j += 64)
			p[j]++;
		ps_region__end("scan");
	}
	ps_region__end("total");
	free(p);
	printf("done at %llu ns (%s)\n", (unsigned long long)ps_time(), ps_time_source(NULL));
	return 0;
}
