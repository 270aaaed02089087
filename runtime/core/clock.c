/*
 * clock.c: ps_time(), the clock perfscript's samples are stamped with
 * (CLOCK_MONOTONIC: every counter sets use_clockid, core/attr.c), read in
 * user space. Where the kernel publishes the TSC-to-perf-clock conversion on
 * a counter's mmap'd user page (cap_user_time_zero: time_zero, time_mult,
 * time_shift), a reading is one rdtsc and a multiply, as perfctr and the
 * Pentium Pro perfmon library read the TSC. That page describes perf_clock
 * (sched_clock), not CLOCK_MONOTONIC, and the kernel publishes it only for
 * an event without use_clockid; the two clocks tick together but may sit
 * apart, so the TSC path is taken only when, measured at start, it agrees
 * with CLOCK_MONOTONIC within 1 us (the offset found is added back). Else,
 * and on every machine whose user page has no time (no PMU, a paravirtual
 * clock such as kvm-clock), ps_time() is clock_gettime(CLOCK_MONOTONIC),
 * which the vDSO also answers without a syscall.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/perf.h"
#include "perfscript.h"

static struct {
	const volatile struct perf_event_mmap_page *pc; /* NULL: clock_gettime */
	int64_t offset;					/* CLOCK_MONOTONIC - perf_clock */
	const char *source;
	char why[96];
} clk = {.source = "clock_gettime"};

static pthread_once_t clk_once = PTHREAD_ONCE_INIT;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* perf_event_open(2), "time_zero": the perf clock from a TSC reading,
 * under the page's sequence lock. */
static uint64_t tsc_ns(const volatile struct perf_event_mmap_page *pc)
{
	uint64_t cyc, zero, quot, rem;
	uint32_t seq, mult;
	uint16_t shift;

	do {
		seq = pc->lock;
		__atomic_signal_fence(__ATOMIC_ACQUIRE);
		zero = pc->time_zero;
		mult = pc->time_mult;
		shift = pc->time_shift;
		cyc = rdtsc();
		__atomic_signal_fence(__ATOMIC_ACQUIRE);
	} while (pc->lock != seq);
	quot = cyc >> shift;
	rem = cyc & (((uint64_t)1 << shift) - 1);
	return zero + quot * mult + ((rem * mult) >> shift);
}
#else
static uint64_t tsc_ns(const volatile struct perf_event_mmap_page *pc)
{
	(void)pc;
	return mono_ns();
}
#endif

static void clk_init(void)
{
	struct perf_event_attr a = {.size = sizeof(a),
				    .type = PERF_TYPE_SOFTWARE,
				    .config = PERF_COUNT_SW_DUMMY,
				    .exclude_kernel = 1,
				    .exclude_hv = 1};
	const volatile struct perf_event_mmap_page *pc;
	int64_t best = INT64_MAX, off = 0;
	void *p;
	int fd;

	snprintf(clk.why, sizeof(clk.why), "no time on the user page (cap_user_time_zero is 0)");
	fd = ps_perf__open(&a, 0, -1, -1);
	if (fd < 0) {
		snprintf(clk.why, sizeof(clk.why), "perf_event_open: %s", strerror(-fd));
		return;
	}
	p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
	close(fd); /* the mapping keeps the event and its page */
	if (p == MAP_FAILED) {
		snprintf(clk.why, sizeof(clk.why), "mmap of the user page: %s", strerror(errno));
		return;
	}
	pc = p;
#if !defined(__x86_64__) && !defined(__i386__)
	snprintf(clk.why, sizeof(clk.why), "no rdtsc on this architecture");
#else
	if (pc->cap_user_time_zero) {
		/* The offset of the narrowest bracket of 16 tries. */
		for (int i = 0; i < 16; i++) {
			uint64_t t0 = mono_ns(), t = tsc_ns(pc), t1 = mono_ns();

			if ((int64_t)(t1 - t0) < best) {
				best = (int64_t)(t1 - t0);
				off = (int64_t)(t0 + (t1 - t0) / 2) - (int64_t)t;
			}
		}
		if (best < 1000) {
			clk.pc = pc;
			clk.offset = off;
			clk.source = "tsc";
			clk.why[0] = '\0';
			return;
		}
		snprintf(clk.why, sizeof(clk.why), "clock_gettime took %lld ns: offset unknown",
			 (long long)best);
	}
#endif
	munmap(p, (size_t)sysconf(_SC_PAGESIZE));
}

uint64_t ps_time(void)
{
	pthread_once(&clk_once, clk_init);
	if (clk.pc)
		return tsc_ns(clk.pc) + (uint64_t)clk.offset;
	return mono_ns();
}

const char *ps_time_source(const char **why)
{
	pthread_once(&clk_once, clk_init);
	if (why)
		*why = clk.why;
	return clk.source;
}
