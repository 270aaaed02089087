/*
 * test_clock.c: ps_time() is the clock samples carry. It must sit between
 * two CLOCK_MONOTONIC readings taken around it (within 1 us), never go
 * back, say which path read it, and a real sample's time (a getppid
 * tracepoint with PERF_SAMPLE_TIME, use_clockid as every perfscript counter)
 * must fall between ps_time() readings taken around the call.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/perf.h"
#include "perfscript.h"
#include "tap.h"

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void test_agrees(void)
{
	const char *why, *src = ps_time_source(&why);
	uint64_t worst = 0, prev = 0, back = 0;

	tap_ok(!strcmp(src, "tsc") || !strcmp(src, "clock_gettime"), "source is %s%s%s", src,
	       *why ? ": " : "", why);
	for (int i = 0; i < 100000; i++) {
		uint64_t a = mono(), t = ps_time(), b = mono();
		uint64_t err = t < a ? a - t : t > b ? t - b : 0;

		worst = err > worst ? err : worst;
		back += t < prev;
		prev = t;
	}
	tap_ok(worst <= 1000, "%s agrees with CLOCK_MONOTONIC within 1 us (worst %llu ns)", src,
	       (unsigned long long)worst);
	tap_is_u64(back, 0, "never goes back in 100000 readings");
}

static void test_sample_time(void)
{
	struct ps_event_error e;
	struct ps_events *evs = ps_events__parse("syscalls:sys_enter_getppid", &e);
	struct perf_event_attr a;
	struct perf_event_mmap_page *pc;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t t0, t1, ts = 0;
	void *p = MAP_FAILED;
	int fd = -1;

	if (!evs) {
		tap_skip(e.message, "a sample's time lies between ps_time() readings");
		return;
	}
	a = *ps_events__attr(evs, 0);
	ps_events__free(evs);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_TIME;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.disabled = 0;
	fd = ps_perf__open(&a, 0, -1, -1);
	if (fd >= 0)
		p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		tap_skip(strerror(fd < 0 ? -fd : errno), "a sample's time lies between ps_time()");
		goto cleanup;
	}
	pc = p;
	t0 = ps_time();
	syscall(SYS_getppid);
	t1 = ps_time();
	if (__atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE) >= 16) {
		const uint64_t *rec = (const uint64_t *)((char *)p + pc->data_offset);
		struct perf_event_header h;

		memcpy(&h, rec, sizeof(h));
		if (h.type == PERF_RECORD_SAMPLE)
			ts = rec[1];
	}
	if (!tap_ok(ts && t0 <= ts && ts <= t1, "a getppid sample's time lies between ps_time() "
						"readings around the call"))
		tap_diag("  %llu <= %llu <= %llu", (unsigned long long)t0, (unsigned long long)ts,
			 (unsigned long long)t1);
cleanup:
	if (p != MAP_FAILED)
		munmap(p, 2 * page);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	printf("1..4\n");
	test_agrees();
	test_sample_time();
	return tap_failed != 0;
}
