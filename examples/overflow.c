/*
 * overflow.c: perfctr's interrupt mode with libperfscript. A counter on this
 * thread signals every PERIOD events; the handler runs in the signal
 * handler, records where the thread was, and re-arms the counter for one
 * more overflow (perfctr's iresume: PERF_EVENT_IOC_REFRESH). Build and run
 * (after make install; tests/e2e/overflow.sh links build/libperfscript.a):
 *   cc examples/overflow.c -lperfscript -o overflow
 *   ./overflow [SPEC [MS]]     default: task-clock/period=1000000/ for 100 ms
 * With the default, one overflow per millisecond of this thread's CPU time.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "perfscript.h"

#define MAX_IPS 4096

static volatile sig_atomic_t hits;
static uint64_t ips[MAX_IPS];

/* In the signal handler: only async-signal-safe work (docs/c-api.md). */
static void on_overflow(struct ps_overflow *o, uint64_t ip, void *ctx)
{
	(void)ctx;
	if (hits < MAX_IPS)
		ips[hits] = ip;
	hits++;
	ps_overflow__refresh(o, 1); /* iresume: one more overflow */
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	const char *spec = argc > 1 ? argv[1] : "task-clock/period=1000000/";
	double ms = argc > 2 ? atof(argv[2]) : 100, t0;
	volatile unsigned long spin = 0;
	struct ps_overflow *o;
	uint64_t count = 0;
	char msg[512];

	/* a tracepoint needs tracefs: where none is mounted, root gets one of
	 * its own (gone with the process), before any thread starts */
	ps_tracefs__mount_private(NULL, 0);
	if (!(o = ps_overflow__new(spec, on_overflow, NULL, msg, sizeof(msg)))) {
		fprintf(stderr, "overflow: %s\n", msg);
		return 1;
	}
	ps_overflow__refresh(o, 1);
	t0 = cpu_ms();
	while (cpu_ms() - t0 < ms)
		spin++;
	ps_overflow__stop(o);
	ps_overflow__read(o, &count);
	printf("%d overflows of %s, count %llu, over %.0f ms of CPU\n", (int)hits,
	       ps_overflow__name(o), (unsigned long long)count, ms);
	if (hits > 0)
		printf("first at ip %#llx, last at ip %#llx\n", (unsigned long long)ips[0],
		       (unsigned long long)ips[(hits < MAX_IPS ? hits : MAX_IPS) - 1]);
	ps_overflow__free(o);
	return 0;
}
