/*
 * deliver.c: the one path from a backend to the user. Whatever decoded it
 * (a perf ring record, a BPF ring buffer record), a sample or a side-band
 * record ends in ps_sampler__deliver, which counts it per counter and per
 * session, applies the user-space version of a counter's filters when the
 * perf ring serves a counter that asked for in-kernel filtering, and calls
 * the session's ps_sample_ops. Lost samples have one source of truth: the
 * count the serving source keeps itself (the fds' PERF_FORMAT_LOST, a BPF
 * program's reserve failures), else what LOST records said; ops->record is
 * told the difference whenever a loss shows (a LOST record, a drain of the
 * BPF ring buffer) and at the end (ps_sampler__flush), so what it was told
 * adds up to ps_sampler__stats(). The public poll API, one set of fds
 * whatever the backend, is here too.
 */
#include <errno.h>
#include <string.h>

#include "sample/sampler.h"

void ps_sampler__malformed(struct ps_sampler *m, uint32_t slot)
{
	struct ps_sampled *c = ps_sampler__counter(m, slot);

	m->total.malformed++;
	if (c)
		c->st.malformed++;
}

/* What slot lost so far by the one count we trust. */
static uint64_t lost_now(struct ps_sampler *m, uint32_t slot, const struct ps_sampled *c)
{
	uint64_t exact;

	if (c->serving && c->serving->lost && c->serving->lost(m, slot, &exact) == 0)
		return exact;
	return c->lost_records > c->st.lost ? c->lost_records : c->st.lost;
}

/* Bring what slot's losses were told up to now; returns the difference. */
static uint64_t settle(struct ps_sampler *m, uint32_t slot, struct ps_sampled *c)
{
	uint64_t now = lost_now(m, slot, c), delta = now > c->st.lost ? now - c->st.lost : 0;

	c->st.lost += delta;
	m->total.lost += delta;
	return delta;
}

static int deliver_sample(struct ps_sampler *m, const struct ps_delivery *d)
{
	struct ps_sampled *c = ps_sampler__counter(m, d->slot);

	if (!c)
		return 0; /* a freed counter's leftovers */
	/* filters asked for in the kernel that the perf ring serves: same rules here */
	if (d->from->filters_in_user && c->conf.configured && !ps_filter__keep(c, d->sample))
		return 0;
	c->st.samples++;
	m->total.samples++;
	return m->ops.sample ? m->ops.sample(d->sample, m->ops.ctx) : 0;
}

static int deliver_record(struct ps_sampler *m, const struct ps_delivery *d)
{
	struct ps_sampled *c = ps_sampler__counter(m, d->slot);
	struct ps_record *r = d->record;

	r->handle = c ? ps_session__handle_of(m->s, d->slot) : 0;
	switch (r->type) {
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		if (!c) {
			m->total.lost += r->lost;
			break;
		}
		c->lost_records += r->lost;
		r->lost = settle(m, d->slot, c);
		break;
	case PERF_RECORD_THROTTLE:
		m->total.throttled++;
		if (c)
			c->st.throttled++;
		break;
	case PERF_RECORD_UNTHROTTLE:
		m->total.unthrottled++;
		if (c)
			c->st.unthrottled++;
		break;
	}
	return m->ops.record ? m->ops.record(r, m->ops.ctx) : 0;
}

int ps_sampler__deliver_now(struct ps_sampler *m, const struct ps_delivery *d)
{
	return d->sample ? deliver_sample(m, d) : deliver_record(m, d);
}

int ps_sampler__deliver(struct ps_sampler *m, const struct ps_delivery *d)
{
	/* with several sources, records wait for their turn in time order */
	if (m->order && ps_order__queue(m, d) == 0)
		return 0;
	return ps_sampler__deliver_now(m, d);
}

void ps_sampler__settle_lost(struct ps_sampler *m, const struct ps_backend_ops *only)
{
	struct ps_session *s = m->s;

	for (uint32_t i = 0; i < ps_session__nslots(s); i++) {
		struct ps_sampled *c = ps_counter__live(ps_session__counter(s, i))
					   ? ps_counter__sampled(ps_session__counter(s, i))
					   : NULL;
		struct ps_record r = {.type = PERF_RECORD_LOST_SAMPLES};

		if (!c || !c->serving || (only && c->serving != only) ||
		    lost_now(m, i, c) <= c->st.lost)
			continue;
		/* a record that says no loss of its own: delivery settles the count */
		ps_sampler__deliver(m, &(struct ps_delivery){.slot = i, .record = &r});
	}
}

int ps_sampler__stats(const struct ps_session *s, ps_handle h, struct ps_sample_stats *st)
{
	struct ps_sampler *m = s ? ps_session__sampler(s) : NULL;
	const struct ps_counter *k;

	if (!m || !st)
		return -EINVAL;
	if (h == 0) {
		uint64_t sum = 0;

		*st = m->total;
		/* the told total may lag what the sources count now */
		for (uint32_t i = 0; i < ps_session__nslots(s); i++)
			if (ps_counter__live(ps_session__counter(s, i)) &&
			    ps_counter__sampled(ps_session__counter(s, i)))
				sum +=
				    lost_now(m, i, ps_counter__sampled(ps_session__counter(s, i)));
		if (sum > st->lost)
			st->lost = sum;
		return 0;
	}
	k = ps_session__counter_of(s, h);
	if (!k)
		return -PS_ERR_HANDLE;
	if (!ps_counter__sampled(k)) {
		memset(st, 0, sizeof(*st));
		return 0;
	}
	*st = ps_counter__sampled(k)->st;
	st->lost = lost_now(m, ps_session__slot_of(s, k), ps_counter__sampled(k));
	return 0;
}

/* ---- polling: one set of fds, whatever serves them ---- */

int ps_sampler__poll_fds(const struct ps_session *s, const int **fds)
{
	if (!s || !ps_session__sampler(s))
		return -EINVAL;
	if (fds)
		*fds = ps_session__sampler(s)->fds;
	return (int)ps_session__sampler(s)->nwatch;
}

int ps_sampler__dispatch(struct ps_session *s, int fd, size_t budget)
{
	struct ps_sampler *m = s ? ps_session__sampler(s) : NULL;

	if (!m)
		return -EINVAL;
	for (size_t i = 0; i < m->nwatch; i++) {
		if (m->watch[i].fd != fd)
			continue;
		/* one source is in time order by itself */
		if (m->nwatch > 1 && !m->unordered)
			return ps_order__dispatch(m, i, budget);
		return m->watch[i].backend->drain(m, fd, budget);
	}
	return -EBADF;
}

int ps_sampler__set_ordered(struct ps_session *s, bool on)
{
	struct ps_sampler *m = s ? ps_session__sampler(s) : NULL;

	if (!m)
		return -EINVAL;
	m->unordered = !on;
	return 0;
}

bool ps_sampler__ordered(const struct ps_session *s)
{
	return s && ps_session__sampler(s) && !ps_session__sampler(s)->unordered;
}

int ps_sampler__flush(struct ps_session *s)
{
	struct ps_sampler *m = s ? ps_session__sampler(s) : NULL;
	int total = 0;

	if (!m)
		return -EINVAL;
	for (size_t i = 0; i < m->nwatch; i++)
		if (m->watch[i].backend->settle)
			m->watch[i].backend->settle(m);
	if (m->order || (m->nwatch > 1 && !m->unordered)) {
		total = ps_order__flush(m);
		if (total < 0)
			return total;
		ps_sampler__settle_lost(m, NULL);
		return total;
	}
	for (size_t i = 0; i < m->nwatch; i++) {
		int n = m->watch[i].backend->drain(m, m->watch[i].fd, 0);

		if (n < 0 && n != -EBADMSG)
			return n;
		if (n > 0 && total <= __INT_MAX__ - n)
			total += n;
	}
	ps_sampler__settle_lost(m, NULL);
	return total;
}
