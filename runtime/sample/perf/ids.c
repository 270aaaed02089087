/*
 * ids.c: the perf backend's id -> slot map (sample/perf/ids.h). Counters
 * join and leave it as they attach and detach; lookups are a binary search
 * behind the one-entry cache in the header.
 */
#include <errno.h>
#include <string.h>

#include "base/array.h"
#include "sample/perf/ids.h"

int ps_perf_ids__find(const struct ps_perf_ids *m, uint64_t id, size_t *at)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < m->n && m->v[lo].id == id;
}

int ps_perf_ids__add(struct ps_perf_ids *m, uint64_t id, uint32_t slot)
{
	size_t at;

	if (ps_perf_ids__find(m, id, &at)) {
		m->v[at].slot = slot;
		return 0;
	}
	if (ps_array__reserve(&m->v, &m->cap, m->n + 1, sizeof(*m->v)))
		return -ENOMEM;
	memmove(&m->v[at + 1], &m->v[at], (m->n - at) * sizeof(*m->v));
	m->v[at] = (struct ps_perf_id){.id = id, .slot = slot};
	m->n++;
	return 0;
}

void ps_perf_ids__del(struct ps_perf_ids *m, uint64_t id)
{
	size_t at;

	if (!ps_perf_ids__find(m, id, &at))
		return;
	memmove(&m->v[at], &m->v[at + 1], (m->n - at - 1) * sizeof(*m->v));
	m->n--;
	if (m->last.id == id)
		m->last.id = 0; /* the kernel's ids start at 1: 0 never matches */
}
