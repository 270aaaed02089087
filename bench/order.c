/*
 * order.c: what time-ordered delivery costs in latency. A session on a
 * command samples cpu-clock at HZ on every CPU the command runs on (one
 * ring per CPU, so the sampler merges sources) and, driven by the session
 * driver as perfscript's own loop drives it, measures for every delivered
 * sample how long after its timestamp it reached the callback
 * (CLOCK_MONOTONIC, the clock every source stamps with), once with time
 * order and once without. Prints one line per mode:
 *   ordered=1 samples=N p50_us=.. p99_us=.. max_us=.. back=B
 * where back counts samples whose thread's time went back.
 * usage: order HZ CMD [ARGS...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loop/loop.h"

#define MAXN (1u << 22)

static uint64_t *lat;
static size_t n;
static uint64_t back, last_time[1 << 16];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int on_sample(const struct ps_sample *s, void *ctx)
{
	uint64_t t = now_ns();
	uint32_t k = s->tid & 0xffff;

	(void)ctx;
	if (n < MAXN)
		lat[n++] = t > s->time ? t - s->time : 0;
	if (s->time < last_time[k])
		back++;
	last_time[k] = s->time;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int run(const char *spec, char **argv, bool ordered)
{
	struct ps_target_opts t = {.sz = sizeof(t), .kind = PS_TARGET_COMMAND, .argv = argv};
	struct ps_session *s = ps_session__new(&t);
	struct ps_loop *loop = ps_loop__new();
	struct ps_driver_opts o = {.sz = sizeof(o)};
	struct ps_sample_ops ops = {.sz = sizeof(ops), .sample = on_sample};
	struct ps_driver *d = s && loop ? ps_driver__new(s, loop, &o) : NULL;
	struct ps_event_error err;
	ps_handle h;
	char msg[512];

	n = back = 0;
	memset(last_time, 0, sizeof(last_time));
	if (!d || ps_session__allocate(s, spec, &h, 1, &err) != 1 ||
	    ps_sampler__set_ordered(s, ordered) || ps_driver__set_sample_ops(d, &ops) ||
	    ps_driver__start(d, msg, sizeof(msg))) {
		fprintf(stderr, "order: cannot start: %s\n", d ? msg : "out of memory");
		return -1;
	}
	ps_driver__run(d);
	ps_driver__finish(d);
	ps_driver__end(d);
	ps_driver__free(d);
	ps_loop__free(loop);
	ps_session__free(s);
	qsort(lat, n, sizeof(*lat), cmp);
	printf("ordered=%d samples=%zu p50_us=%.0f p99_us=%.0f max_us=%.0f back=%llu\n", ordered, n,
	       n ? lat[n / 2] / 1e3 : 0, n ? lat[n * 99 / 100] / 1e3 : 0,
	       n ? lat[n - 1] / 1e3 : 0, (unsigned long long)back);
	return 0;
}

int main(int argc, char **argv)
{
	char spec[64];

	if (argc < 3 || atoi(argv[1]) <= 0) {
		fprintf(stderr, "usage: order HZ CMD [ARGS...]\n");
		return 2;
	}
	lat = malloc(MAXN * sizeof(*lat));
	if (!lat)
		return 1;
	snprintf(spec, sizeof(spec), "cpu-clock/freq=%d/", atoi(argv[1]));
	if (run(spec, argv + 2, true) || run(spec, argv + 2, false))
		return 1;
	free(lat);
	return 0;
}
