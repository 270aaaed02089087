/*
 * cuindex.c: which compilation unit holds an address, for files without
 * .debug_aranges. libdw finds a unit through that table, and Go (among
 * others) writes none: every address then has no unit, so no source line.
 * The units' own ranges (DW_AT_low_pc/high_pc or DW_AT_ranges) say the
 * same thing; they are read once per file, sorted, and searched.
 */
#include <errno.h>
#include <stdlib.h>

#include <elfutils/libdw.h>

#include "base/array.h"
#include "symbols/internal.h"

struct cu_range {
	uint64_t lo, hi; /* link-time, [lo, hi) */
	Dwarf_Off off;	 /* the unit's DIE */
};

struct ps_cu_ranges {
	struct cu_range *v;
	size_t n, cap;
};

static int by_lo(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static struct ps_cu_ranges *build(Dwarf *dbg)
{
	struct ps_cu_ranges *r = calloc(1, sizeof(*r));
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (!r)
		return NULL;
	while (dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die die;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t it = 0;

		if (dwarf_offdie(dbg, off + hsize, &die))
			while ((it = dwarf_ranges(&die, it, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (ps_array__reserve(&r->v, &r->cap, r->n + 1, sizeof(*r->v))) {
					ps_cu_ranges__free(r);
					return NULL;
				}
				r->v[r->n++] =
				    (struct cu_range){.lo = lo, .hi = hi, .off = off + hsize};
			}
		off = next;
	}
	if (r->n) /* r->v is NULL without units: qsort(NULL, 0) is undefined */
		qsort(r->v, r->n, sizeof(*r->v), by_lo);
	return r;
}

bool ps_cu_ranges__find(struct ps_cu_ranges **rp, Dwarf *dbg, uint64_t addr, Dwarf_Die *cu)
{
	struct ps_cu_ranges *r = *rp;
	size_t lo = 0, hi;

	if (!r && !(r = *rp = build(dbg)))
		return false;
	hi = r->n;
	while (lo < hi) { /* the last range starting at or below addr */
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && addr < r->v[lo - 1].hi && dwarf_offdie(dbg, r->v[lo - 1].off, cu);
}

size_t ps_cu_ranges__bytes(const struct ps_cu_ranges *r)
{
	return r ? sizeof(*r) + r->cap * sizeof(*r->v) : 0;
}

void ps_cu_ranges__free(struct ps_cu_ranges *r)
{
	if (!r)
		return;
	free(r->v);
	free(r);
}
