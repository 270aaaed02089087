/*
 * gone.c: what the symbolizer keeps of processes that exited. A process's
 * mappings outlive its EXIT record: samples taken just before it may still
 * sit in a ring or in the time-order queue, and profiles name the addresses
 * they counted at the end of the session. But a host forks without end,
 * and keeping every process ever seen grows by about half a KiB each (a
 * pid_max of 4194304 makes that gigabytes). So: the last PS_GONE_RECENT
 * processes to exit are kept whole; an older one goes, unless a sample
 * named it (ps_symbols__seen), for then a profile may hold its addresses:
 * it stays among the last PS_GONE_SAMPLED such processes. A pid that comes
 * back (FORK, exec, /proc) is a live process again, and the old entries
 * that named it are ignored by their sequence number.
 */
#include <errno.h>
#include <stdlib.h>

#include "symbols/internal.h"
#include "symbols/python.h"

#define PS_GONE_RECENT	4096
#define PS_GONE_SAMPLED 16384

/* Under a memory budget (symbols/budget.c), exited processes no sample
 * named go before their time, oldest first; those a sample named go last,
 * oldest first, when every file given back was not enough. */

/* Append e; when the FIFO is full, its oldest entry goes to *out and 1 is
 * returned. Without memory for the FIFO nothing is kept track of (the
 * process then stays: a leak only where memory is short anyway). */
static int fifo_push(struct ps_gone_fifo *f, size_t cap, struct ps_gone e, struct ps_gone *out)
{
	if (!f->v && !(f->v = malloc(cap * sizeof(*f->v))))
		return 0;
	if (f->n < cap) {
		f->v[(f->head + f->n++) % cap] = e;
		return 0;
	}
	*out = f->v[f->head];
	f->v[f->head] = e;
	f->head = (f->head + 1) % cap;
	return 1;
}

static struct ps_proc *still(struct ps_symbols *syms, struct ps_gone e)
{
	struct ps_proc *p = ps_procs__find(syms, e.pid);

	return p && p->gone == e.seq ? p : NULL;
}

/* An entry that left the recent FIFO: kept among the sampled ones if a
 * sample named it (which may push their oldest out), else dropped. */
static void retire(struct ps_symbols *syms, struct ps_gone old)
{
	struct ps_proc *p = still(syms, old);

	if (!p)
		return;
	if (p->sampled && fifo_push(&syms->sampled, PS_GONE_SAMPLED, old, &old))
		p = still(syms, old);
	else if (p->sampled)
		return;
	if (p)
		ps_procs__drop(syms, p);
}

void ps_procs__exited(struct ps_symbols *syms, pid_t pid)
{
	struct ps_proc *p = ps_procs__find(syms, pid);
	struct ps_gone e, old;

	if (!p || p->gone)
		return;
	/* its stacks were unwound as they came: the Dwfl (a few hundred KB of
	 * parsed CFI) goes now, not when 64 newer processes pushed it out; a
	 * late sample of a thread that outlived the leader builds it again */
	ps_unwinder__free(syms, p->uw);
	p->gone = ++syms->gone_seq ? syms->gone_seq : ++syms->gone_seq; /* never 0 */
	e = (struct ps_gone){pid, p->gone};
	if (fifo_push(&syms->recent, PS_GONE_RECENT, e, &old))
		retire(syms, old);
}

static size_t proc_bytes(const struct ps_proc *p)
{
	return sizeof(*p) + (p->cap + p->capretired) * sizeof(*p->maps) +
	       64; /* its pidmap entry and heap headers */
}

/* Each valid entry of f, oldest first, to fn; stop when fn says so. */
static void each_gone(struct ps_symbols *syms, struct ps_gone_fifo *f, size_t cap,
		      bool (*fn)(struct ps_symbols *syms, struct ps_proc *p, void *ctx), void *ctx)
{
	for (size_t i = 0; f->v && i < f->n; i++) {
		struct ps_proc *p = still(syms, f->v[(f->head + i) % cap]);

		if (p && !fn(syms, p, ctx))
			break;
	}
}

static bool add_bytes(struct ps_symbols *syms, struct ps_proc *p, void *ctx)
{
	(void)syms;
	*(size_t *)ctx += proc_bytes(p);
	return true;
}

static bool add_one(struct ps_symbols *syms, struct ps_proc *p, void *ctx)
{
	(void)syms, (void)p;
	++*(size_t *)ctx;
	return true;
}

size_t ps_procs__gone_count(struct ps_symbols *syms)
{
	size_t n = 0;

	each_gone(syms, &syms->recent, PS_GONE_RECENT, add_one, &n);
	each_gone(syms, &syms->sampled, PS_GONE_SAMPLED, add_one, &n);
	return n;
}

size_t ps_procs__gone_bytes(struct ps_symbols *syms)
{
	size_t n = 0;

	each_gone(syms, &syms->recent, PS_GONE_RECENT, add_bytes, &n);
	each_gone(syms, &syms->sampled, PS_GONE_SAMPLED, add_bytes, &n);
	return n;
}

static bool shed_one(struct ps_symbols *syms, struct ps_proc *p, void *ctx)
{
	size_t *want = ctx, b = proc_bytes(p);

	if (p->sampled) /* a profile may hold its addresses: they go last */
		return true;
	ps_procs__drop(syms, p); /* its FIFO entry is now stale, and skipped */
	*want = *want > b ? *want - b : 0;
	return *want > 0;
}

static bool shed_sampled(struct ps_symbols *syms, struct ps_proc *p, void *ctx)
{
	size_t *want = ctx, b = proc_bytes(p);

	ps_procs__drop(syms, p);
	*want = *want > b ? *want - b : 0;
	return *want > 0;
}

size_t ps_procs__shed(struct ps_symbols *syms, size_t want)
{
	size_t left = want;

	if (left)
		each_gone(syms, &syms->recent, PS_GONE_RECENT, shed_one, &left);
	return want - left;
}

size_t ps_procs__shed_sampled(struct ps_symbols *syms, size_t want)
{
	size_t left = want;

	if (left)
		each_gone(syms, &syms->recent, PS_GONE_RECENT, shed_sampled, &left);
	if (left)
		each_gone(syms, &syms->sampled, PS_GONE_SAMPLED, shed_sampled, &left);
	return want - left;
}

void ps_python__drop(struct ps_symbols *syms, pid_t pid)
{
	struct ps_proc *p = ps_procs__find(syms, pid);

	ps_python__forget(syms, pid);
	if (p)
		ps_procs__drop(syms, p);
}

void ps_procs__free_gone(struct ps_symbols *syms)
{
	free(syms->recent.v);
	free(syms->sampled.v);
	syms->recent = syms->sampled = (struct ps_gone_fifo){0};
}
