/*
 * region.h: the state code regions share between core/region.c (begin,
 * end, the per-thread counters) and core/region_report.c (the event set,
 * the report at exit). One event set per process; one of these per thread
 * that ever began a region, kept after the thread ends for the report.
 */
#ifndef PS_CORE_REGION_H
#define PS_CORE_REGION_H

#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "perfscript.h"

#define PS_REGION_MAX_EVENTS 16
#define PS_REGION_MAX_DEPTH  64

struct ps_region_read {
	uint64_t v[PS_REGION_MAX_EVENTS], en[PS_REGION_MAX_EVENTS], run[PS_REGION_MAX_EVENTS];
};

struct ps_region {
	char *name;
	uint64_t calls;
	unsigned active;	     /* open activations (a region may recurse) */
	struct ps_region_read start; /* at the outermost begin */
	uint64_t sum[];		     /* inclusive, per event */
};

struct ps_region_thread {
	pid_t tid;
	size_t n; /* events */
	int *fds;
	struct perf_event_mmap_page **pages; /* user pages of hardware events, or NULL */
	bool grouped, open;
	struct ps_region **regions;
	size_t nregions, cap;
	struct ps_region *stack[PS_REGION_MAX_DEPTH];
	size_t depth;
	struct ps_region_thread *next;
};

struct ps_regions_global {
	pthread_mutex_t lock;
	struct ps_events *evs; /* the set, NULL until the first init */
	size_t n;
	struct ps_region_thread *threads;
};

extern struct ps_regions_global ps_regions_g;

/* A region's calls and sums are written by its thread alone and read by
 * the report from any thread: relaxed atomic loads and stores (plain moves
 * on x86-64 and arm64) keep those reads whole and race-free without a lock
 * at every boundary. Adding regions to a thread's array takes the lock the
 * report holds. */
static inline uint64_t ps_region__get(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void ps_region__add(uint64_t *p, uint64_t d)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + d, __ATOMIC_RELAXED);
}

/* The calling thread's message buffer (what ps_regions__message returns). */
char *ps_region__msgbuf(size_t *len);
/* Open the set on the calling thread now: 0 or -errno, message set. */
int ps_region__open_self(void);

#endif /* PS_CORE_REGION_H */
