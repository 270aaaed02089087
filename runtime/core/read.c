/*
 * read.c: reading counters. A value is the sum over the counter's fds of
 * what read() returns, scaled by time_enabled/time_running when the kernel
 * multiplexed it (see struct span for which fds scale together). The common
 * case, one fd in the plain read_format,
 * is kept to a handle check, one read() and the scaling, with no allocation,
 * because a script may read a counter in a tight Lua loop. Group reads use
 * PERF_FORMAT_GROUP on the leader (one read() per fd for the whole group)
 * and match values to members by their PERF_EVENT_IOC_ID, summing over fds.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/perf.h"
#include "core/internal.h"

/* raw * enabled / running, in 128 bits: raw * enabled overflows 64. */
static inline uint64_t scaled(uint64_t raw, uint64_t en, uint64_t run)
{
	unsigned __int128 x;

	if (run == 0)
		return 0; /* never scheduled: nothing to extrapolate from */
	if (run >= en)
		return raw;
	x = (unsigned __int128)raw * en / run;
	return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x;
}

static inline void scale(struct ps_value *v, uint64_t raw, uint64_t en, uint64_t run)
{
	v->raw = raw;
	v->enabled = en;
	v->running = run;
	v->value = scaled(raw, en, run);
}

/*
 * Which fds scale together. An fd on a whole CPU (-a, -C) is scaled by its
 * own enabled and running times, as perf stat scales per CPU. A task counted
 * on every CPU (a sampling counter has one fd per CPU, each writing into its
 * CPU's ring) is one count split by where the task ran: every one of those
 * fds reports the task's whole enabled time but only the time it ran on the
 * fd's CPU. Scaled one by one, each CPU's share would be extrapolated to the
 * whole run (N times the truth on N CPUs); so the fds of one task form a
 * span, scaled once by the task's enabled time over their summed running
 * time, which is exact without multiplexing and perf's estimate with it.
 */
struct span {
	uint64_t raw, en, run;
};

/* Whether fd k of c begins a span (the fds of one task are adjacent). */
static inline bool span_starts(const struct ps_counter *c, int k)
{
	return k == 0 || !c->tasks || c->tasks[k] < 0 || c->tasks[k] != c->tasks[k - 1];
}

static inline void span_add(struct span *sp, uint64_t raw, uint64_t en, uint64_t run)
{
	sp->raw += raw;
	sp->en = en > sp->en ? en : sp->en;
	sp->run += run;
}

/*
 * Events of the kernel's software context (software events, tracepoints,
 * breakpoints, kprobes and uprobes) are never multiplexed: a task's fd on
 * a CPU runs whenever the task is there. Their raw sum is the count, and
 * scaling it would only add the skew between enabling (or disabling) one
 * CPU's fd and the next: the task's time in that gap is enabled time no
 * fd ran for (0.6% too much in one run of 1000 close() calls).
 */
static bool one_counter_exact(const struct ps_counter *c)
{
	return c->attr.type == PERF_TYPE_SOFTWARE || c->attr.type == PERF_TYPE_TRACEPOINT ||
	       c->attr.type == PERF_TYPE_BREAKPOINT || c->probe;
}

static bool never_multiplexed(const struct ps_session *s, const struct ps_counter *l)
{
	if (!l->members)
		return one_counter_exact(l);
	for (uint32_t m = 0; m < l->nmembers; m++)
		if (!one_counter_exact(&s->slots[l->members[m]]))
			return false; /* one hardware member takes the group to the PMU */
	return true;
}

/* Add a finished span to v (value, raw and times) and empty it. */
static inline void span_end(struct ps_value *v, struct span *sp, bool exact)
{
	uint64_t value = exact ? sp->raw : scaled(sp->raw, sp->en, sp->run);

	v->value = v->value > UINT64_MAX - value ? UINT64_MAX : v->value + value;
	v->raw += sp->raw;
	v->enabled += sp->en;
	/* an exact count was counting whenever it was enabled, if at all
	 * (one that never ran is perf's <not counted>) */
	v->running += (exact && sp->run) || sp->run > sp->en ? sp->en : sp->run;
	*sp = (struct span){0};
}

/* ---- rdpmc: reads without a syscall, where the kernel allows them ----
 *
 * A counter this process counts on itself, on one fd, may be read from the
 * mmap'd user page: the kernel publishes the hardware counter's index, an
 * offset and the enabled/running times under a sequence lock, and rdpmc
 * reads the counter in user space (perf_event_open(2), "mmap layout"). Only
 * a hardware counter that is scheduled in has an index; software events,
 * tracepoints and an unscheduled event have index 0, and then read() is the
 * answer. This VM has no PMU, so only that fallback runs in the tests. */

void ps_counter__map_user_page(struct ps_counter *c)
{
	void *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, c->fds[0], 0);

	c->user_page = p == MAP_FAILED ? NULL : p;
}

void ps_counter__unmap_user_page(struct ps_counter *c)
{
	if (c->user_page)
		munmap(c->user_page, (size_t)sysconf(_SC_PAGESIZE));
	c->user_page = NULL;
}

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t rdpmc(uint32_t counter)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* The value and times from the user page: true, or false when the kernel
 * offers no user-space read now (then read() it is). */
bool ps_user_page__read(const struct perf_event_mmap_page *pc, uint64_t *raw, uint64_t *en,
			uint64_t *run)
{
	uint32_t seq, idx;
	uint64_t count, enabled, running;

	do {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		idx = pc->index;
		if (!pc->cap_user_rdpmc || idx == 0)
			return false;
		enabled = pc->time_enabled;
		running = pc->time_running;
		if (pc->cap_user_time && enabled != running) {
			/* times advance since the page was written: scale the TSC */
			uint64_t cyc = rdtsc(), quot, rem, delta;

			quot = cyc >> pc->time_shift;
			rem = cyc & (((uint64_t)1 << pc->time_shift) - 1);
			delta = pc->time_offset + quot * pc->time_mult +
				((rem * pc->time_mult) >> pc->time_shift);
			enabled += delta;
			running += delta;
		}
		count = rdpmc(idx - 1);
		/* sign-extend from the counter's width, then add the kernel's offset */
		count =
		    (uint64_t)((int64_t)(count << (64 - pc->pmc_width)) >> (64 - pc->pmc_width));
		count += (uint64_t)pc->offset;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) != seq);
	*raw = count;
	*en = enabled;
	*run = running;
	return true;
}
#else
bool ps_user_page__read(const struct perf_event_mmap_page *pc, uint64_t *raw, uint64_t *en,
			uint64_t *run)
{
	(void)pc, (void)raw, (void)en, (void)run;
	return false;
}
#endif

/* The members one group read of n bytes holds, or -EIO when it is short.
 * The core asks every counter for both times and its id (core/attr.c). */
static long group_members(const struct ps_read_layout *lay, const uint64_t *buf, ssize_t n)
{
	if (n < (ssize_t)(lay->head * sizeof(*buf)) || lay->id < 0 || lay->running < 0 ||
	    buf[0] > (uint64_t)n || ps_read_layout__words(lay, buf[0]) * sizeof(*buf) > (size_t)n)
		return -EIO;
	return (long)buf[0];
}

/* Read every fd of c into v, span by span (the general path). */
static int read_spans(struct ps_session *s, struct ps_counter *c, struct ps_value *v)
{
	struct ps_counter *l = &s->slots[c->leader];
	bool exact = never_multiplexed(s, c->group_fmt ? l : c);
	struct span sp = {0};
	uint64_t small[5];
	struct ps_read_layout lay;

	ps_read_layout__init(&lay, c->attr.read_format);
	memset(v, 0, sizeof(*v));
	for (int k = 0; k < c->nfds; k++) {
		uint64_t *buf = c->group_fmt ? l->rbuf : small;
		size_t words = c->group_fmt ? l->rbuf_words : 5;
		ssize_t n = ps_counter__read_fd(s, c, k, buf, words * sizeof(*buf));
		uint64_t raw = 0;

		if (n < 0)
			return -errno;
		if (n < 3 * (ssize_t)sizeof(*buf))
			return -EIO;
		if (k > 0 && span_starts(c, k))
			span_end(v, &sp, exact);
		if (!c->group_fmt) {
			span_add(&sp, buf[0], buf[1], buf[2]);
			continue;
		}
		long nr = group_members(&lay, buf, n);

		if (nr < 0)
			return (int)nr;
		for (long j = 0; j < nr; j++) {
			size_t at = ps_read_layout__value(&lay, (size_t)j);

			if (buf[at + (size_t)lay.id] == c->ids[k]) {
				raw = buf[at];
				break;
			}
		}
		span_add(&sp, raw, buf[lay.enabled], buf[lay.running]);
	}
	span_end(v, &sp, exact);
	return 0;
}

int ps_session__read(struct ps_session *s, ps_handle h, struct ps_value *v)
{
	struct ps_counter *c = ps_session__slot(s, h);
	uint64_t raw, en, run;

	if (!c)
		return -PS_ERR_HANDLE;
	if (!v)
		return -EINVAL;
	if (c->handed) /* counted by the sampler */
		return s->hooks->read(s, (uint32_t)(c - s->slots), v, false);
	if (c->nfds == 1 && !c->group_fmt) {
		/* value, time_enabled, time_running, id (core/attr.c asked for all) */
		uint64_t buf[5];
		ssize_t n;

		if (c->user_page && ps_user_page__read(c->user_page, &raw, &en, &run)) {
			scale(v, raw, en, run);
			return 0;
		}
		n = ps_counter__read_fd(s, c, 0, buf, sizeof(buf));

		if (n < 3 * (ssize_t)sizeof(*buf))
			return n < 0 ? -errno : -EIO;
		/* one span, as read_spans makes them: a cpu= term's fd of a
		 * software event runs less than it is enabled only because the
		 * task was elsewhere, which scaling would count as if it had run
		 * there (48889 for 20006 calls) */
		struct span sp = {0};

		memset(v, 0, sizeof(*v));
		span_add(&sp, buf[0], buf[1], buf[2]);
		span_end(v, &sp, never_multiplexed(s, c));
		return 0;
	}
	memset(v, 0, sizeof(*v));
	if (!c->open) /* a failed open counted nothing: not 0, perf's <not supported> */
		return s->slots[c->leader].open_failed ? -PS_ERR_NOT_SUPPORTED : 0;
	return read_spans(s, c, v);
}

/* A group's span ends: every member's part of it is scaled by the span's times. */
static void end_group_span(struct ps_value *vals, size_t nm, uint64_t *part, struct span *sp,
			   bool exact)
{
	for (size_t m = 0; m < nm; m++) {
		struct span one = {.raw = part[m], .en = sp->en, .run = sp->run};

		span_end(&vals[m], &one, exact);
		part[m] = 0;
	}
	*sp = (struct span){0};
}

int ps_session__read_group(struct ps_session *s, ps_handle h, struct ps_value *vals, size_t max)
{
	struct ps_counter *c = ps_session__slot(s, h), *l;
	size_t nm;

	if (!c)
		return -PS_ERR_HANDLE;
	l = &s->slots[c->leader];
	nm = l->nmembers;
	if (nm > max || !vals)
		return -ENOSPC;
	memset(vals, 0, nm * sizeof(*vals));
	if (!l->open)
		return (int)nm;
	if (!l->group_fmt) {
		/* no group read (single event, or an old kernel refused inherit+GROUP) */
		for (size_t m = 0; m < nm; m++) {
			int err =
			    ps_session__read(s, ps_session__handle(s, l->members[m]), &vals[m]);

			if (err)
				return err;
		}
		return (int)nm;
	}
	uint64_t *part = l->rbuf + l->rbuf_words; /* each member's raw in this span */
	struct ps_read_layout lay;
	struct span sp = {0};
	bool exact = never_multiplexed(s, l);

	ps_read_layout__init(&lay, l->attr.read_format);
	for (int k = 0; k < l->nfds; k++) {
		ssize_t n = ps_counter__read_fd(s, l, k, l->rbuf, l->rbuf_words * sizeof(*l->rbuf));
		uint64_t *buf = l->rbuf;
		long nr;

		if (n < 0)
			return -errno;
		nr = group_members(&lay, buf, n);
		if (nr < 0)
			return (int)nr;
		if (k > 0 && span_starts(l, k))
			end_group_span(vals, nm, part, &sp, exact);
		span_add(&sp, 0, buf[lay.enabled], buf[lay.running]);
		for (long j = 0; j < nr; j++) {
			size_t at = ps_read_layout__value(&lay, (size_t)j);

			for (size_t m = 0; m < nm; m++) {
				struct ps_counter *mc = &s->slots[l->members[m]];

				if (k < mc->nfds && mc->ids[k] == buf[at + (size_t)lay.id]) {
					part[m] += buf[at];
					break;
				}
			}
		}
	}
	end_group_span(vals, nm, part, &sp, exact);
	return (int)nm;
}
