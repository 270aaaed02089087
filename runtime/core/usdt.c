/*
 * usdt.c: a USDT marker's arguments at one of its samples, where the
 * marker's note says they are (symbols/usdt_args.c), not the calling
 * convention's registers. On the BPF path the program read them at the
 * event (the sample's raw bytes hold them, 8 each), which is why `auto`
 * picks it for a marker with arguments in memory. On the perf path a
 * register comes from the sample's registers and a constant is the
 * note's; memory (a stack slot, often below the stack pointer, where no
 * stack copy reaches, or a global) was not read at the event, and saying
 * so is better than a value read later from a process that moved on. The
 * site a sample hit is the one at its ip's file offset.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/regs.h"
#include "core/internal.h"
#include "symbols/resolve.h"

const struct ps_usdt_site *ps_counter__usdt_site(const struct ps_counter *c, uint64_t off)
{
	const struct ps_counter_probe *p = c ? c->probe : NULL;

	if (!p || p->kind != PS_PROBE_USDT || !p->usdt)
		return NULL;
	for (size_t k = 0; k < p->nsites; k++)
		if (p->usdt[k].offset == off || p->nsites == 1)
			return &p->usdt[k];
	return NULL;
}

static bool is_usdt(const struct ps_counter *c)
{
	return c && c->probe && c->probe->kind == PS_PROBE_USDT && c->probe->usdt;
}

/* Whether a USDT counter's marker has an argument in memory: the perf
 * path cannot read it at the event. */
bool ps_counter__usdt_reads_memory(const struct ps_counter *c)
{
	const struct ps_counter_probe *p = c ? c->probe : NULL;

	for (size_t k = 0; p && p->usdt && k < p->nsites; k++)
		for (int i = 0; i < p->usdt[k].nargs; i++)
			if (p->usdt[k].args[i].kind >= PS_USDT_MEM)
				return true;
	return false;
}

const struct ps_usdt_site *ps_counter__usdt_sites(const struct ps_counter *c, size_t *n)
{
	const struct ps_counter_probe *p = c ? c->probe : NULL;

	*n = p && p->usdt ? p->nsites : 0;
	return *n ? p->usdt : NULL;
}

int ps_session__usdt_arg(struct ps_session *s, const struct ps_sample *smp, uint64_t off, int n,
			 int64_t *v, char *why, size_t whylen)
{
	const struct ps_counter *c = ps_session__counter_of(s, smp->handle);
	const struct ps_usdt_site *site = ps_counter__usdt_site(c, off);
	const struct ps_usdt_arg *a;
	uint64_t raw = 0;

	why[0] = '\0';
	if (!is_usdt(c))
		return -ENOENT;
	if (!site && off == PS_USDT_OFF_UNKNOWN)
		return -EAGAIN;
	if (!site) {
		snprintf(why, whylen, "the sample is at none of the marker's sites");
		return -EFAULT;
	}
	if (site->nargs < 0) {
		snprintf(why, whylen,
			 "the marker's note has an operand perfscript cannot read: '%s'",
			 site->bad);
		return -EINVAL;
	}
	if (n < 1 || n > site->nargs) {
		snprintf(why, whylen, "the marker has %d argument%s", site->nargs,
			 site->nargs == 1 ? "" : "s");
		return -ERANGE;
	}
	a = &site->args[n - 1];
	if (smp->raw && smp->raw_size >= (uint32_t)n * 8u) { /* read at the event */
		memcpy(v, (const char *)smp->raw + (size_t)(n - 1) * 8, 8);
		return 0;
	}
	switch (a->kind) {
	case PS_USDT_CONST:
		*v = a->val;
		return 0;
	case PS_USDT_REG:
		if (ps_sample__reg(smp, false, (unsigned)a->reg, &raw) < 0) {
			snprintf(why, whylen, "the sample carries no register for '%s'", a->text);
			return -EFAULT;
		}
		break;
	default:
		snprintf(
		    why, whylen,
		    "'%s' is in the process's memory, which the perf path does not read at the "
		    "event; the BPF path does (the backend auto picks, or --backend=bpf)",
		    a->text);
		return -EFAULT;
	}
	*v = ps_usdt__extend(a, raw);
	return 0;
}

/* A probe that fires at several sites (a USDT marker the compiler
 * inlined twice) is one fd per site and position; a group has one fd per
 * member and position, so such a probe must be a group of its own. */
int ps_counter__check_sites(const struct ps_session *s, uint32_t li, uint32_t m, char *msg,
			    size_t msglen)
{
	const struct ps_counter *l = &s->slots[li], *c = &s->slots[l->members[m]];

	if (!c->probe || c->probe->nsites < 2 || l->nmembers == 1)
		return 0;
	if (msg && msglen)
		snprintf(msg, msglen,
			 "cannot open '%s': the marker is at %zu places in the file, one probe "
			 "each, and a group takes one event per member; count it outside the "
			 "group",
			 c->name, c->probe->nsites);
	return -EINVAL;
}

/* Every position once per site, a task's sites adjacent (core/read.c sums
 * a task's fds in a run). Returns the new count or -ENOMEM. */
int ps_positions__by_site(struct ps_position **pos, int npos, uint32_t nsites)
{
	struct ps_position *v = malloc((size_t)npos * nsites * sizeof(*v));

	if (!v) {
		free(*pos);
		*pos = NULL;
		return -ENOMEM;
	}
	for (int p = 0; p < npos; p++)
		for (uint32_t k = 0; k < nsites; k++) {
			v[(size_t)p * nsites + k] = (*pos)[p];
			v[(size_t)p * nsites + k].site = k;
		}
	free(*pos);
	*pos = v;
	return npos * (int)nsites;
}
