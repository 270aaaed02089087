/*
 * regs.c: one register out of a sample's sampled registers. It sits in
 * base/, below everything, because the sample decoder (sample/perf/) fills
 * the registers while the DWARF unwinder (symbols/) and the probe argument
 * readers read them.
 */
#include <errno.h>

#include "perfscript.h"

int ps_sample__reg(const struct ps_sample *s, bool intr, unsigned reg, uint64_t *value)
{
	const struct ps_regs *r;
	uint64_t below;

	if (!s || reg >= 64)
		return -ENOENT;
	r = intr ? &s->regs_intr : &s->regs_user;
	if (!r->regs || !(r->mask & (1ull << reg)))
		return -ENOENT;
	below = r->mask & ((1ull << reg) - 1);
	if (value)
		*value = r->regs[__builtin_popcountll(below)];
	return 0;
}
