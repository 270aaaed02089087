/*
 * order.c: samples and side-band records of every source in time order.
 * Each CPU's perf ring is in time order, and so is the BPF ring buffer, but
 * a handler that sees them source after source sees a child's samples
 * before its FORK and COMM, and one thread's time go back when it moved
 * between CPUs. When a session has more than one source, what a drain
 * decodes is not delivered at once: it is copied into a queue per source,
 * and delivered in time order up to a watermark, the earliest "safe" time
 * of all sources. A source is safe up to a time when it was read to empty
 * after that time: every source stamps its records with CLOCK_MONOTONIC
 * (the perf fds with use_clockid, BPF with bpf_ktime_get_ns), so a record
 * stamped before we looked is in the ring by then, unless its writer was
 * still at it. PS_ORDER_WINDOW_NS is that allowance (0.5 ms), as perf's
 * rounds are: the newest records of a drain wait at most that long, or
 * until the next drain after it (the drain timer ticks every 5 ms), which
 * bounds the latency ordering adds. A dispatch of one source also drains
 * the others that were not looked at within half a window, so the
 * watermark keeps moving whichever source wakes the loop.
 *
 * A record older than every source's safe time, with nothing queued before
 * it, goes straight through. Queued items are copied whole (the sample or
 * record and every array it
 * points to, since the ring space is given back) into chunks per source,
 * allocated in arrival order and freed when their last item went; a
 * source's queue is a FIFO that stays sorted (the rare record written out
 * of order within a ring is inserted from the back), and sources are merged
 * by runs: the source with the earliest head delivers until it passes the
 * next source's head. A record without a time (no PERF_SAMPLE_TIME) cannot
 * be placed and is delivered as it comes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/array.h"
#include "sample/sampler.h"

#define PS_CHUNK_BYTES	65536
#define PS_SPARE_CHUNKS 64 /* empty chunks kept for reuse: 4 MiB */
/* Read-ahead: while handlers take their time over a long run of queued
 * items, every PS_AHEAD_EVERY deliveries a ring filled past PS_AHEAD_FILL
 * thousandths is copied into its queue, as perf record copies its rings to
 * its file, so a burst the handlers cannot keep up with waits in memory
 * rather than overflowing the ring; up to PS_AHEAD_CHUNKS chunks (256 MiB)
 * are queued so, beyond which the kernel counts the loss. */
#define PS_AHEAD_EVERY	8
#define PS_AHEAD_FILL	500
#define PS_AHEAD_CHUNKS 4096
/* A dispatch delivers for at most this long before the loop gets its turn. */
#define PS_FLUSH_NS 20000000u

struct chunk {
	struct chunk *next;	 /* in the spare list */
	size_t used, size, live; /* live: items in it not yet delivered */
	_Alignas(8) unsigned char data[];
};

struct item {
	uint64_t time;
	struct chunk *chunk;
	const struct ps_backend_ops *from;
	uint32_t slot;
	bool sample;
	union {
		struct ps_sample s;
		struct ps_record r;
	} u;
	_Alignas(8) unsigned char payload[]; /* the arrays u points to */
};

struct source {
	struct item **v; /* a FIFO: head, n items, in a ring of cap (a power of two) */
	size_t head, n, cap;
	uint64_t safe;	    /* every record of it stamped up to here is read */
	uint64_t last;	    /* the latest time queued from it */
	uint64_t drained;   /* when it was last drained */
	struct chunk *fill; /* where its next items go */
};

struct ps_order {
	struct source *src; /* parallel to the sampler's watch set */
	size_t nsrc;
	int cur;	     /* the source a drain is reading, -1 outside one */
	size_t queued;	     /* items in every queue */
	uint64_t direct;     /* while nothing is queued, records up to here go now */
	struct chunk *spare; /* empty chunks of PS_CHUNK_BYTES kept for the next */
	size_t nspare;
	size_t chunks;	     /* holding items, or some queue's next to fill */
	bool ahead;	     /* reading ahead: every record is queued */
	unsigned direct_run; /* records delivered straight through */
	uint64_t aheads;     /* read-aheads so far */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct ps_order *order_of(struct ps_sampler *m)
{
	struct ps_order *o = m->order;

	if (!o) {
		o = m->order = calloc(1, sizeof(*o));
		if (!o)
			return NULL;
		o->cur = -1;
	}
	if (o->nsrc < m->nwatch) { /* the watch set only grows */
		struct source *v = realloc(o->src, m->nwatch * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + o->nsrc, 0, (m->nwatch - o->nsrc) * sizeof(*v));
		o->src = v;
		o->nsrc = m->nwatch;
	}
	return o;
}

/* Whether source j's buffer is past half full. */
static bool filling(struct ps_sampler *m, int j)
{
	const struct ps_backend_ops *b = j >= 0 ? m->watch[j].backend : NULL;

	return b && b->fill && b->fill(m, m->watch[j].fd) >= PS_AHEAD_FILL;
}

/* ---- chunks ---- */

static void *chunk_alloc(struct ps_order *o, struct source *q, size_t size, struct chunk **owner)
{
	struct chunk *c = q->fill;

	size = (size + 7) & ~(size_t)7;
	if (!c || c->used + size > c->size) {
		size_t want = size > PS_CHUNK_BYTES ? size : PS_CHUNK_BYTES;

		if (o->spare && want == PS_CHUNK_BYTES) {
			c = o->spare;
			o->spare = c->next;
			o->nspare--;
		} else if (!(c = malloc(sizeof(*c) + want))) {
			return NULL;
		} else {
			c->size = want;
		}
		c->used = c->live = 0;
		o->chunks++;
		/* the old chunk goes with its last item */
		if (q->fill && q->fill->live == 0) {
			free(q->fill);
			o->chunks--;
		}
		q->fill = c;
	}
	c->live++;
	c->used += size;
	*owner = c;
	return c->data + c->used - size;
}

static void chunk_release(struct ps_order *o, struct source *q, struct chunk *c)
{
	if (--c->live)
		return;
	if (c == q->fill) {
		c->used = 0; /* empty again: fill it from the start */
		return;
	}
	o->chunks--;
	if (o->nspare < PS_SPARE_CHUNKS && c->size == PS_CHUNK_BYTES) {
		c->next = o->spare;
		o->spare = c;
		o->nspare++;
	} else {
		free(c);
	}
}

/* ---- copying a delivery ---- */

static void copy_in(struct item *it, const struct ps_delivery *d)
{
	it->from = d->from;
	it->slot = d->slot;
	it->sample = d->sample != NULL;
	ps_delivery__copy(d, &it->u.s, &it->u.r, it->payload);
}

/* ---- the queues ---- */

static int fifo_push(struct source *q, struct item *it)
{
	size_t i, mask;

	if (q->n == q->cap) { /* unroll the ring into one twice its size */
		size_t cap = q->cap ? q->cap * 2 : 256;
		struct item **v = malloc(cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (i = 0; i < q->n; i++)
			v[i] = q->v[(q->head + i) & (q->cap - 1)];
		free(q->v);
		q->v = v;
		q->head = 0;
		q->cap = cap;
	}
	mask = q->cap - 1;
	/* sorted from the back: a ring is in time order but for a record
	 * another one interrupted while it was being written */
	for (i = q->n; i > 0 && q->v[(q->head + i - 1) & mask]->time > it->time; i--)
		q->v[(q->head + i) & mask] = q->v[(q->head + i - 1) & mask];
	q->v[(q->head + i) & mask] = it;
	q->n++;
	return 0;
}

static inline struct item *fifo_head(const struct source *q)
{
	return q->n ? q->v[q->head] : NULL;
}

static inline void fifo_pop(struct source *q)
{
	q->head = (q->head + 1) & (q->cap - 1);
	q->n--;
}

int ps_order__queue(struct ps_sampler *m, const struct ps_delivery *d)
{
	struct ps_order *o = m->order;
	struct source *q;
	struct chunk *c;
	struct item *it;
	uint64_t t;

	if (!o || o->cur < 0)
		return 1;
	t = d->sample ? (d->sample->sample_type & PERF_SAMPLE_TIME ? d->sample->time : 0)
		      : d->record->time;
	if (!t)
		return 1; /* nowhere to place it: now */
	q = &o->src[o->cur];
	if (t > q->last)
		q->last = t;
	/* Old enough that no source can still bring an earlier one, and nothing
	 * waits before it: straight through, without a copy. */
	if (!o->queued && !o->ahead && t <= o->direct) {
		if (++o->direct_run % PS_AHEAD_EVERY || !filling(m, o->cur))
			return 1;
		o->direct = 0; /* the ring fills behind the handlers: queue the rest */
	}
	it = chunk_alloc(o, q, sizeof(*it) + ps_delivery__payload_size(d), &c);
	if (!it)
		return 1; /* out of memory: better late order than a lost record */
	it->time = t;
	it->chunk = c;
	copy_in(it, d);
	if (fifo_push(q, it) < 0) {
		chunk_release(o, q, c);
		return 1;
	}
	o->queued++;
	return 0;
}

static void read_ahead(struct ps_sampler *m, struct ps_order *o);

/* Deliver, in time order, everything queued up to time w: 0 when it did,
 * 1 when it stopped after PS_FLUSH_NS with more to deliver (0 deadline:
 * none), or the first negative value a callback returned (delivery stops
 * there). */
static int flush_upto(struct ps_sampler *m, struct ps_order *o, uint64_t w, uint64_t deadline)
{
	for (unsigned done = 0;;) {
		size_t best = o->nsrc;
		uint64_t t1 = UINT64_MAX, t2 = UINT64_MAX, limit;

		for (size_t j = 0; j < o->nsrc; j++) {
			const struct item *h = fifo_head(&o->src[j]);

			if (!h)
				continue;
			if (h->time < t1) {
				t2 = t1;
				t1 = h->time;
				best = j;
			} else if (h->time < t2) {
				t2 = h->time;
			}
		}
		if (best == o->nsrc || t1 > w)
			return 0;
		limit = t2 < w ? t2 : w;
		/* a run of the earliest source, up to the next source's head */
		for (struct source *q = &o->src[best]; q->n && q->v[q->head]->time <= limit;) {
			struct item *h = q->v[q->head];
			int rc;

			fifo_pop(q);
			o->queued--;
			rc = ps_sampler__deliver_now(
			    m, &(struct ps_delivery){.from = h->from,
						     .slot = h->slot,
						     .sample = h->sample ? &h->u.s : NULL,
						     .record = h->sample ? NULL : &h->u.r});
			chunk_release(o, q, h->chunk);
			if (rc < 0)
				return rc;
			/* what read_ahead queues is later than w: it waits */
			if (++done % PS_AHEAD_EVERY == 0) {
				read_ahead(m, o);
				if (deadline && now_ns() >= deadline)
					return 1; /* the loop's turn: a signal may be waiting */
			}
		}
	}
}

/* The earliest time up to which every source was read. */
static uint64_t watermark(const struct ps_order *o)
{
	uint64_t w = UINT64_MAX;

	for (size_t j = 0; j < o->nsrc; j++)
		if (o->src[j].safe < w)
			w = o->src[j].safe;
	return w;
}

/* Drain source j into its queue; a drain that emptied it makes it safe up
 * to the window before t0, when it started. */
static int drain_one(struct ps_sampler *m, struct ps_order *o, size_t j, size_t budget, uint64_t t0)
{
	uint64_t up = t0 > PS_ORDER_WINDOW_NS ? t0 - PS_ORDER_WINDOW_NS : 0;
	int n;

	/* what may pass unqueued: older than every other source's safe time
	 * and than this one's window */
	for (size_t k = 0; k < o->nsrc; k++)
		if (k != j && o->src[k].safe < up)
			up = o->src[k].safe;
	/* a ring filling up is copied out whole before any handler runs: its
	 * space goes back to the kernel at once, not after the batch's calls */
	if (!o->ahead && filling(m, (int)j))
		up = 0;
	o->direct = up;
	o->cur = (int)j;
	n = m->watch[j].backend->drain(m, m->watch[j].fd, budget);
	o->cur = -1;
	o->src[j].drained = t0;
	/* Read to empty: everything stamped before t0 is in, bar the window. A
	 * full budget left some behind: a ring is in time order, so everything
	 * up to the last record read is in, bar the window too. */
	if ((n >= 0 && (budget == 0 || (size_t)n < budget)) || n == -EBADMSG)
		up = t0;
	else
		up = o->src[j].last;
	up = up > PS_ORDER_WINDOW_NS ? up - PS_ORDER_WINDOW_NS : 0;
	if (up > o->src[j].safe)
		o->src[j].safe = up;
	return n;
}

/* Copy the rings that filled past PS_AHEAD_FILL into their queues, while
 * memory allows. Their records are later than the watermark the flush in
 * progress delivers up to (every source was read up to it), so they wait
 * for the next. */
static void read_ahead(struct ps_sampler *m, struct ps_order *o)
{
	if (o->ahead || o->cur >= 0)
		return;
	for (size_t j = 0; j < o->nsrc && o->chunks < PS_AHEAD_CHUNKS; j++) {
		if (!filling(m, (int)j))
			continue;
		o->ahead = true;
		drain_one(m, o, j, 0, now_ns());
		o->ahead = false;
		o->aheads++;
	}
}

int ps_order__dispatch(struct ps_sampler *m, size_t self, size_t budget)
{
	struct ps_order *o = order_of(m);
	uint64_t t0 = now_ns(), aheads;
	int n, rc;

	if (!o) /* no memory to order with: the source alone, as it comes */
		return m->watch[self].backend->drain(m, m->watch[self].fd, budget);
	aheads = o->aheads;
	n = drain_one(m, o, self, budget, t0);
	for (size_t j = 0; j < o->nsrc; j++)
		if (j != self && t0 - o->src[j].drained >= PS_ORDER_WINDOW_NS / 2)
			drain_one(m, o, j, budget, t0);
	rc = flush_upto(m, o, watermark(o), t0 + PS_FLUSH_NS);
	if (rc < 0)
		return rc;
	/* more to deliver, or records read ahead that wait for the next round:
	 * a full budget, so that the loop comes back at once */
	if (budget && (rc == 1 || o->aheads != aheads))
		return (int)budget;
	return n;
}

int ps_order__flush(struct ps_sampler *m)
{
	struct ps_order *o = order_of(m);
	uint64_t t0 = now_ns();
	int total = 0, rc;

	if (!o)
		return -ENOMEM;
	for (size_t j = 0; j < o->nsrc; j++) {
		int n = drain_one(m, o, j, 0, t0);

		if (n < 0 && n != -EBADMSG)
			return n;
		if (n > 0 && total <= __INT_MAX__ - n)
			total += n;
	}
	rc = flush_upto(m, o, UINT64_MAX, 0);
	return rc < 0 ? rc : total;
}

void ps_order__free(struct ps_sampler *m)
{
	struct ps_order *o = m->order;

	if (!o)
		return;
	for (size_t j = 0; j < o->nsrc; j++) {
		struct source *q = &o->src[j];
		struct item *h;

		while ((h = fifo_head(q))) {
			fifo_pop(q);
			o->queued--;
			chunk_release(o, q, h->chunk);
		}
		free(q->fill);
		free(q->v);
	}
	while (o->spare) {
		struct chunk *c = o->spare;

		o->spare = c->next;
		free(c);
	}
	free(o->src);
	free(o);
	m->order = NULL;
}
