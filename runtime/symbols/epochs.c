/*
 * epochs.c: what a process had mapped at each of its samples. A mapping
 * that another replaces (a library dlclose'd and another loaded at its
 * address) or that an exec unmaps is retired, with the epochs it lived in;
 * each replacement starts a new epoch of the process (an added mapping
 * does not: no earlier sample can be inside it). A sample taken at epoch e
 * is named by the live mapping if it was there at e, else by the retired
 * one that lived at e. A process keeps its newest PS_RETIRED_MAPS.
 */
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "symbols/internal.h"

/* Keep e, which the next epoch no longer maps; the oldest retired one
 * goes when PS_RETIRED_MAPS are kept. */
void ps_proc__retire(struct ps_proc *p, const struct ps_map *e)
{
	/* grown as needed: an exec retires the dozen mappings of the old
	 * image, and a host's thousands of exited processes hold theirs */
	if (p->nretired < PS_RETIRED_MAPS &&
	    ps_array__reserve(&p->retired, &p->capretired, p->nretired + 1, sizeof(*p->retired)))
		return; /* then earlier samples are named by the live mappings */
	if (p->nretired == PS_RETIRED_MAPS)
		memmove(p->retired, p->retired + 1, --p->nretired * sizeof(*p->retired));
	p->retired[p->nretired] = *e;
	p->retired[p->nretired++].died = p->epoch + 1;
}

/* Whether m over e changes what e's addresses are named: not when it maps
 * the same file at the same place (ld.so mapping a library's segments
 * over its first mapping of the whole file). */
bool ps_map__renames(const struct ps_map *e, const struct ps_map *m)
{
	return e->dso != m->dso || e->label != m->label ||
	       e->start - e->pgoff != m->start - m->pgoff;
}

struct ps_map *ps_procs__lookup_at(struct ps_symbols *syms, struct ps_proc *p, uint64_t addr,
				   uint32_t epoch)
{
	struct ps_map *m = ps_procs__lookup_now(syms, p, addr);

	if (epoch == PS_EPOCH_NOW || epoch >= p->epoch || (m && m->born <= epoch))
		return m;
	for (size_t i = p->nretired; i-- > 0;) {
		struct ps_map *r = &p->retired[i];

		if (addr >= r->start && addr < r->end && r->born <= epoch && epoch < r->died)
			return r;
	}
	return m;
}

uint32_t ps_symbols__epoch(struct ps_symbols *syms, pid_t pid)
{
	struct ps_proc *p = syms && pid > 0 ? ps_procs__find(syms, pid) : NULL;

	return p ? p->epoch : 0;
}
