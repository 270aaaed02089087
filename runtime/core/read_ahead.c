/*
 * read_ahead.c: reading many counters' CPU-bound fds from their own CPUs.
 * A read() of an fd counting on another CPU, while its event is active
 * there, makes the kernel interrupt that CPU to read it (an IPI, about
 * 18 us on this VM): 100 counters on 2 CPUs read every 10 ms spent 70% of
 * a reader's time so. ps_session__read_ahead instead moves the calling
 * thread to each CPU in turn, as perf stat does, reads there every fd of
 * that CPU into the counter's ahead buffer, and puts the thread's CPU mask
 * back. The reads that follow (ps_session__read, ps_session__read_group,
 * core/read.c) take those values instead of reading again, each once; a
 * later read-ahead makes whatever this one read and nobody took stale.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "core/internal.h"

/* One fd to read: on which CPU, whose, which. */
struct ps_fd_at {
	int cpu;
	uint32_t slot;
	int k;
};

/* A read-ahead's lists, kept for the next: the fds as listed, the same by
 * CPU (a counting sort: qsort's merge buffer cost 7% of a 100-counter
 * interval report), and the count per CPU. */
struct ps_ahead_scratch {
	struct ps_fd_at *list, *by_cpu;
	size_t cap;
	size_t *count;
	size_t ccap;
};

void ps_session__free_ahead(struct ps_session *s)
{
	if (!s->ahead)
		return;
	free(s->ahead->list);
	free(s->ahead->by_cpu);
	free(s->ahead->count);
	free(s->ahead);
	s->ahead = NULL;
}

ssize_t ps_counter__take_ahead(struct ps_counter *c, int k, uint64_t *buf, size_t bytes)
{
	struct ps_read_ahead *a = c->ahead;
	ssize_t n = a->n[k];

	a->gen[k] = 0;
	if (n < 0) {
		errno = (int)-n;
		return -1;
	}
	if ((size_t)n > bytes)
		n = (ssize_t)bytes;
	memcpy(buf, a->buf + (size_t)k * a->words, (size_t)n);
	return n;
}

void ps_counter__free_ahead(struct ps_counter *c)
{
	if (!c->ahead)
		return;
	free(c->ahead->gen);
	free(c->ahead->n);
	free(c->ahead->buf);
	free(c->ahead);
	c->ahead = NULL;
}

/* c's ahead buffers, made at its first read-ahead; 0 or -ENOMEM. */
static int ahead_of(struct ps_session *s, struct ps_counter *c)
{
	struct ps_read_ahead *a = c->ahead;
	size_t nfds = (size_t)c->nfds;

	if (a)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	/* a group-format fd reads the whole group (core/read.c) */
	a->words = c->group_fmt ? s->slots[c->leader].rbuf_words : 5;
	a->gen = calloc(nfds, sizeof(*a->gen));
	a->n = calloc(nfds, sizeof(*a->n));
	a->buf = calloc(nfds * a->words, sizeof(*a->buf));
	c->ahead = a;
	if (!a->gen || !a->n || !a->buf) {
		ps_counter__free_ahead(c);
		return -ENOMEM;
	}
	return 0;
}

/* Put c's CPU-bound fds on the session's list; 0 or -ENOMEM. */
static int list_fds(struct ps_session *s, uint32_t slot, size_t *n, int *top)
{
	struct ps_ahead_scratch *a = s->ahead;
	struct ps_counter *c = &s->slots[slot];
	size_t cap = a->cap;

	if (ps_array__reserve(&a->list, &cap, *n + (size_t)c->nfds, sizeof(*a->list)) ||
	    (cap != a->cap && ps_array__reserve_exact(&a->by_cpu, cap, sizeof(*a->by_cpu))))
		return -ENOMEM;
	a->cap = cap;
	for (int k = 0; k < c->nfds; k++) {
		if (c->cpus[k] < 0) /* a task's fd: read where the task is, later */
			continue;
		a->list[(*n)++] = (struct ps_fd_at){c->cpus[k], slot, k};
		*top = c->cpus[k] > *top ? c->cpus[k] : *top;
	}
	return ahead_of(s, c);
}

/* The fds that reading handle h reads: its own, and, for a group whose
 * leader reads its members one by one, theirs. */
static int list_handle(struct ps_session *s, ps_handle h, size_t *n, int *top)
{
	struct ps_counter *c = ps_session__slot(s, h), *l;
	int err;

	if (!c || !c->open)
		return 0; /* its read says why, or reads 0 */
	l = &s->slots[c->leader];
	err = list_fds(s, (uint32_t)(c - s->slots), n, top);
	for (uint32_t m = 1; !err && l == c && !l->group_fmt && m < l->nmembers; m++)
		err = list_fds(s, l->members[m], n, top);
	return err;
}

/* The list by CPU, in the order listed within a CPU; 0 or -ENOMEM. */
static int sort_by_cpu(struct ps_ahead_scratch *a, size_t n, int top)
{
	size_t at = 0;

	if (ps_array__reserve(&a->count, &a->ccap, (size_t)top + 1, sizeof(*a->count)))
		return -ENOMEM;
	memset(a->count, 0, ((size_t)top + 1) * sizeof(*a->count));
	for (size_t i = 0; i < n; i++)
		a->count[a->list[i].cpu]++;
	for (int cpu = 0; cpu <= top; cpu++) {
		size_t k = a->count[cpu];

		a->count[cpu] = at;
		at += k;
	}
	for (size_t i = 0; i < n; i++)
		a->by_cpu[a->count[a->list[i].cpu]++] = a->list[i];
	return 0;
}

/* Read the fds from..to of the sorted list, moving to each one's CPU. */
static bool read_range(struct ps_session *s, size_t from, size_t to, const cpu_set_t *was)
{
	const struct ps_fd_at *list = s->ahead->by_cpu;
	bool moved = false;
	cpu_set_t one;

	for (size_t i = from; i < to; i++) {
		const struct ps_fd_at *at = &list[i];
		struct ps_counter *c = &s->slots[at->slot];
		struct ps_read_ahead *a = c->ahead;
		ssize_t got;

		if ((i == from || at->cpu != at[-1].cpu) && at->cpu < CPU_SETSIZE &&
		    at->cpu != sched_getcpu() && CPU_COUNT(was)) {
			/* a CPU the thread may not run on is read from afar */
			CPU_ZERO(&one);
			CPU_SET(at->cpu, &one);
			moved |= sched_setaffinity(0, sizeof(one), &one) == 0;
		}
		got = read(c->fds[at->k], a->buf + (size_t)at->k * a->words,
			   a->words * sizeof(*a->buf));
		a->n[at->k] = got < 0 ? -errno : got;
		a->gen[at->k] = s->ahead_gen;
	}
	return moved;
}

int ps_session__read_ahead(struct ps_session *s, const ps_handle *h, size_t nh)
{
	size_t n = 0, first = 0;
	int err = 0, top = -1, here;
	cpu_set_t was;
	bool moved;

	if (!s || (nh && !h))
		return -EINVAL;
	if (!s->ahead && !(s->ahead = calloc(1, sizeof(*s->ahead))))
		return -ENOMEM;
	s->ahead_gen = s->ahead_gen + 1 ? s->ahead_gen + 1 : 1;
	for (size_t i = 0; i < nh && !err; i++)
		err = list_handle(s, h[i], &n, &top);
	if (err || !n || (err = sort_by_cpu(s->ahead, n, top)))
		return err;
	if (sched_getaffinity(0, sizeof(was), &was))
		CPU_ZERO(&was);
	/* the CPU the thread is on first, then round from there: one move
	 * fewer, and the last CPU is where the next read-ahead starts */
	here = sched_getcpu();
	while (first < n && s->ahead->by_cpu[first].cpu < here)
		first++;
	moved = read_range(s, first, n, &was);
	moved |= read_range(s, 0, first, &was);
	if (moved && sched_setaffinity(0, sizeof(was), &was))
		return -errno;
	return 0;
}
