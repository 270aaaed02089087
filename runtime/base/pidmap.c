/*
 * pidmap.c: pid -> value hash table (base/pidmap.h). An entry is a pid_t
 * followed by the value, padded to keep values aligned; pid -1 marks a free
 * entry (pid 0 is the idle task, which samples can name). Pids of one process tree are close
 * together, and Fibonacci hashing spreads such runs over the table.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/pidmap.h"

#define FREE	  ((pid_t)-1)
#define VALUE_OFF (alignof(max_align_t) > sizeof(pid_t) ? alignof(max_align_t) : sizeof(pid_t))

void ps_pidmap__init(struct ps_pidmap *m, size_t vsize)
{
	memset(m, 0, sizeof(*m));
	m->vsize = vsize;
	m->stride = (VALUE_OFF + vsize + VALUE_OFF - 1) / VALUE_OFF * VALUE_OFF;
}

void ps_pidmap__free(struct ps_pidmap *m)
{
	free(m->slots);
	ps_pidmap__init(m, m->vsize);
}

static inline pid_t *entry(const struct ps_pidmap *m, size_t i)
{
	return (pid_t *)(m->slots + i * m->stride);
}

static inline void *value(pid_t *e)
{
	return (unsigned char *)e + VALUE_OFF;
}

static inline size_t home(const struct ps_pidmap *m, pid_t pid)
{
	return ((uint32_t)pid * 2654435761u) & (m->cap - 1);
}

/* The entry of pid, or the free one where it would go. */
static pid_t *find(const struct ps_pidmap *m, pid_t pid)
{
	size_t mask = m->cap - 1, i = home(m, pid);

	while (*entry(m, i) != FREE && *entry(m, i) != pid)
		i = (i + 1) & mask;
	return entry(m, i);
}

void *ps_pidmap__get(const struct ps_pidmap *m, pid_t pid)
{
	pid_t *e;

	if (!m->cap || pid < 0)
		return NULL;
	e = find(m, pid);
	return *e != FREE ? value(e) : NULL;
}

static int grow(struct ps_pidmap *m)
{
	struct ps_pidmap bigger = *m;

	bigger.cap = m->cap ? m->cap * 2 : 64;
	bigger.slots = malloc(bigger.cap * m->stride);
	if (!bigger.slots)
		return -ENOMEM;
	for (size_t i = 0; i < bigger.cap; i++)
		*entry(&bigger, i) = FREE;
	for (size_t i = 0; i < m->cap; i++) {
		pid_t *e = entry(m, i);

		if (*e != FREE)
			memcpy(find(&bigger, *e), e, m->stride);
	}
	free(m->slots);
	*m = bigger;
	return 0;
}

void *ps_pidmap__put(struct ps_pidmap *m, pid_t pid)
{
	pid_t *e;

	if (pid < 0)
		return NULL;
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return NULL;
	e = find(m, pid);
	if (*e == FREE) {
		*e = pid;
		memset(value(e), 0, m->vsize);
		m->n++;
	}
	return value(e);
}

void ps_pidmap__del(struct ps_pidmap *m, pid_t pid)
{
	size_t mask = m->cap - 1, hole, j;
	pid_t *e;

	if (!m->cap || pid < 0 || *(e = find(m, pid)) == FREE)
		return;
	/* Walk the run after the hole: an entry whose home is not cyclically
	 * in (hole, j] would be cut off from it by a free slot, so it moves
	 * into the hole, and the hole moves to where it was. */
	hole = (size_t)((unsigned char *)e - m->slots) / m->stride;
	for (j = (hole + 1) & mask; *entry(m, j) != FREE; j = (j + 1) & mask) {
		size_t h = home(m, *entry(m, j));
		bool stays = hole <= j ? hole < h && h <= j : hole < h || h <= j;

		if (!stays) {
			memcpy(entry(m, hole), entry(m, j), m->stride);
			hole = j;
		}
	}
	*entry(m, hole) = FREE;
	m->n--;
}

void ps_pidmap__each(const struct ps_pidmap *m, void (*fn)(pid_t pid, void *value, void *ctx),
		     void *ctx)
{
	for (size_t i = 0; i < m->cap; i++) {
		pid_t *e = entry(m, i);

		if (*e != FREE)
			fn(*e, value(e), ctx);
	}
}
