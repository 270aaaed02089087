/*
 * ids.h: the perf backend's map from a record's id (PERF_SAMPLE_IDENTIFIER,
 * one per fd) to the slot of the counter that owns the fd, a sorted array
 * with a one-entry cache in front, since samples come in runs from one fd
 * (runtime/sample/perf/ids.c).
 */
#ifndef PS_PERF_IDS_H
#define PS_PERF_IDS_H

#include <stddef.h>
#include <stdint.h>

#include "core/view.h"

#define PS_NO_ONE (PS_NO_SLOT - 1) /* an id we do not know */

/* One id -> slot entry; PS_NO_SLOT marks a ring carrier. */
struct ps_perf_id {
	uint64_t id;
	uint32_t slot;
};

struct ps_perf_ids {
	struct ps_perf_id *v; /* sorted by id */
	size_t n, cap;
	struct ps_perf_id last; /* the last id looked up */
};

/* Whether id is in the map; *at is where it is or would go. */
int ps_perf_ids__find(const struct ps_perf_ids *m, uint64_t id, size_t *at);

/* Map id to slot (replacing its slot if it is there); 0 or -ENOMEM. */
int ps_perf_ids__add(struct ps_perf_ids *m, uint64_t id, uint32_t slot);

void ps_perf_ids__del(struct ps_perf_ids *m, uint64_t id);

/* Slot of id; PS_NO_SLOT for a carrier, PS_NO_ONE for no one we know. */
static inline uint32_t ps_perf_ids__slot(struct ps_perf_ids *m, uint64_t id)
{
	size_t at;

	if (id == m->last.id)
		return m->last.slot;
	if (!ps_perf_ids__find(m, id, &at))
		return PS_NO_ONE;
	m->last = m->v[at];
	return m->last.slot;
}

#endif
