/*
 * sampler.h: the sampler, the one way overflow samples and side-band records
 * of a session reach the user. It sits on the counter core (which calls it
 * through core/sampler_hooks.h's hooks) and serves each sampling counter through
 * one of its backends (which one: session/session.c, the layer above
 * them), each a small ops table: the perf ring (sample/perf/:
 * one mmap ring per CPU, every record decoded in user space) and BPF
 * (sample/bpf/: a program on the counter's fds that filters, aggregates or
 * forwards through a BPF ring buffer). The perf ring backend is always
 * there, since its rings carry the side-band records every path needs; a
 * counter whose overflows a BPF program takes is "served" by that backend.
 *
 * Whatever the backend, every sample and record ends in ps_sampler__deliver
 * (sample/deliver.c), which counts it, applies the user-space filter of a
 * counter that asked for in-kernel filtering the kernel could not do, and
 * calls the session's ps_sample_ops. A merge that puts records of several
 * sources in time order belongs there, between the backends and the user.
 * Nothing here is part of the public ABI.
 */
#ifndef PS_SAMPLE_SAMPLER_H
#define PS_SAMPLE_SAMPLER_H

#include "core/view.h"

/* 1 MiB of 4 KiB pages (docs/events.md); 8 MiB once a counter copies user
 * stacks (call-graph=dwarf). */
#define PS_RING_PAGES_DEFAULT 256u
#define PS_RING_PAGES_STACKS  2048u

struct ps_sampler;

/* A backend: how one kind of source serves sampling counters. Hooks a
 * backend does not need are NULL. Counter hooks get the counter's slot. */
struct ps_backend_ops {
	const char *name; /* "perf", "bpf" */
	bool
	    filters_in_user; /* the filters a counter asked of the kernel are applied on delivery */
	/* A sampling counter's attr, at allocation (what its fds need). */
	void (*prepare)(struct ps_sampler *m, uint32_t slot, struct perf_event_attr *a);
	/* Before a group with a sampling member, name, opens on pos[]. */
	int (*will_open)(struct ps_sampler *m, const char *name, const struct ps_position *pos,
			 int npos, char *msg, size_t msglen);
	/* Each fd of a sampling counter as it opens on cpu. */
	int (*fd_opened)(struct ps_sampler *m, uint32_t slot, int fd, int cpu);
	/* Take the counter (its fds are open, none enabled). 0, or -errno with
	 * msg filled; on failure nothing of the attach is left. */
	int (*attach)(struct ps_sampler *m, uint32_t slot, char *msg, size_t msglen);
	/* The counter was started (on) or stopped, after attach. */
	void (*switched)(struct ps_sampler *m, uint32_t slot, bool on);
	/* Whether the backend counts the counter's hits itself, after
	 * attach: its fds may then be handed over (ps_counter__hand_over). */
	bool (*counts_hits)(struct ps_sampler *m, uint32_t slot);
	/* A counter whose hits the backend counts itself (its fds were
	 * handed over): its value and times; reset (v NULL) counts from 0
	 * on. 0 or -errno. */
	int (*count)(struct ps_sampler *m, uint32_t slot, struct ps_value *v, bool reset);
	/* Let go of the counter (before its fds close). */
	void (*detach)(struct ps_sampler *m, uint32_t slot);
	/* Decode and deliver at most budget records (0: all) of the source
	 * behind fd, one the backend registered with ps_sampler__watch(). The
	 * count consumed, or a negative code (a callback's stop, -EBADMSG). */
	int (*drain)(struct ps_sampler *m, int fd, size_t budget);
	/* How full the source behind fd is, in thousandths of its buffer;
	 * NULL when the backend cannot tell. */
	unsigned (*fill)(struct ps_sampler *m, int fd);
	/* Before a flush's drain (ps_sampler__flush): records the backend's
	 * programs hold back (an off-CPU wait going on) are written now. */
	void (*settle)(struct ps_sampler *m);
	/* Samples of the counter this source could not deliver, counted at the
	 * source (exact); -ENOENT when the source keeps no such count. */
	int (*lost)(struct ps_sampler *m, uint32_t slot, uint64_t *lost);
	/* The session goes (after every counter was detached). */
	void (*free)(struct ps_sampler *m);
};

extern const struct ps_backend_ops ps_perf_backend; /* sample/perf/backend.c */
extern const struct ps_backend_ops ps_bpf_backend;  /* sample/bpf/load.c */

/* What ps_session__set_bpf asked of a counter: the path, the in-kernel
 * work, and filters (applied in user space when the perf ring serves it). */
struct ps_sample_conf {
	bool configured; /* ps_session__set_bpf was called */
	enum ps_backend backend;
	unsigned mode; /* PS_BPF_FORWARD | PS_BPF_AGGREGATE */
	pid_t *pids;
	size_t npids;
	pid_t tid;
	int *cpus;
	size_t ncpus;
	enum ps_bpf_priv priv;
	uint64_t every;
	uint32_t keys, entries;
	uint32_t field_offset, field_size; /* PS_AGG_FIELD */
	bool field_signed;
	uint64_t offcpu_min_ns; /* PS_BPF_OFFCPU */
	uint32_t usdt_arg;	/* PS_AGG_FIELD: a USDT marker's argument, 1.. */
};

/* The sampler's state of one sampling counter (ps_counter.sampled). */
struct ps_sampled {
	struct ps_sample_stats st; /* lost: as told to ops->record */
	uint64_t lost_records;	   /* what LOST records said of it */
	enum ps_backend term;	   /* the event string's bpf/nobpf term, or AUTO */
	struct ps_sample_conf conf;
	uint64_t passed; /* user-space filter: overflows kept so far, for every= */
	const struct ps_backend_ops *serving; /* whose overflows reach us: perf or bpf */
	void *priv;			      /* the serving backend's own state, when not perf */
};

/* One fd a backend wants polled, and who drains it. */
struct ps_watch {
	int fd;
	const struct ps_backend_ops *backend;
};

struct ps_sampler {
	struct ps_session *s;
	struct ps_sample_ops ops;
	struct ps_sample_stats total; /* every counter's, and records of no counter */
	enum ps_backend backend;      /* the session's default path */
	size_t ring_pages;	      /* data pages of rings mapped next; 0: default */
	void *perf;		      /* the perf ring backend's state (sample/perf/backend.c) */
	void *bpf;		      /* the BPF backend's (sample/bpf/load.c), NULL until used */
	struct ps_watch *watch;	      /* the poll set, in the order fds appeared */
	int *fds;		      /* the same fds, for ps_sampler__poll_fds */
	size_t nwatch, capwatch;
	char fallback[320];	/* why AUTO fell back to the perf ring, first reason */
	struct ps_order *order; /* the time-ordering queues (sample/order.c), NULL until used */
	bool unordered;		/* ps_sampler__set_ordered(s, false) */
	bool user_stacks;	/* a counter copies user stacks (call-graph=dwarf) */
};

/* The sampler of a session (never NULL once ps_session__new made it). */
static inline struct ps_sampler *ps_sampler__of(const struct ps_session *s)
{
	return ps_session__sampler(s);
}

/* The sampling state of slot, or NULL for a counter that does not sample. */
static inline struct ps_sampled *ps_sampler__counter(const struct ps_sampler *m, uint32_t slot)
{
	const struct ps_counter *c = ps_session__counter(m->s, slot);

	return c ? ps_counter__sampled(c) : NULL;
}

/* Data pages per ring, and the bytes after which a source wakes its poller:
 * a quarter of it (sample/watch.c). */
size_t ps_sampler__ring_pages(const struct ps_sampler *m);
uint32_t ps_sampler__wakeup_bytes(const struct ps_sampler *m);
/* Add fd to the poll set, drained by backend; 0 or -ENOMEM. */
int ps_sampler__watch(struct ps_sampler *m, int fd, const struct ps_backend_ops *backend);
/* Which backend should serve slot, and whether someone asked for it by name
 * (the event's term, the counter's options or the session's default). */
enum ps_backend ps_sampler__choose(const struct ps_sampler *m, uint32_t slot, bool *named);

/* ---- the one delivery path (sample/deliver.c) ---- */

/* One thing a backend decoded: a sample or a record (exactly one is set), of
 * the counter in slot, or of none (PS_NO_SLOT: a ring carrier's record, a
 * freed counter's leftovers). Pointers inside are valid during the call. */
struct ps_delivery {
	const struct ps_backend_ops *from; /* the backend that decoded it */
	uint32_t slot;
	struct ps_sample *sample;
	struct ps_record *record;
};

/* Count it, filter it, hand it to ops: now, or, while a session with
 * several sources is being drained, in time order (sample/order.c).
 * Returns what the callback returned (< 0 stops the drain), 0 for
 * something dropped or queued. */
int ps_sampler__deliver(struct ps_sampler *m, const struct ps_delivery *d);
/* The same, now, whatever the ordering. */
int ps_sampler__deliver_now(struct ps_sampler *m, const struct ps_delivery *d);
/* A record that did not decode: counted, never delivered. */
void ps_sampler__malformed(struct ps_sampler *m, uint32_t slot);
/* Bring what ops->record was told of each counter's losses up to what its
 * serving source counted (LOST_SAMPLES records for the difference). */
void ps_sampler__settle_lost(struct ps_sampler *m, const struct ps_backend_ops *only);
/* ---- time order across sources (sample/order.c) ---- */

/* The allowance for a record a CPU was still writing when its ring was read
 * empty: the kernel stamps a record a few microseconds before it shows, and
 * 0.5 ms covers that widely (a vCPU its host deschedules for longer within
 * those microseconds could still deliver one late). The newest records of a
 * drain wait that long, or for the loop's next drain: the latency ordering
 * adds (docs/events.md). A longer window costs memory traffic: the queue
 * holds rate x window records. */
#define PS_ORDER_WINDOW_NS 500000ull

/* The bytes d's arrays take when copied (sample/copy.c), and the copy:
 * d's sample into *s or its record into *r, its arrays at payload. */
size_t ps_delivery__payload_size(const struct ps_delivery *d);
void ps_delivery__copy(const struct ps_delivery *d, struct ps_sample *s, struct ps_record *r,
		       unsigned char *payload);

/* Queue d for delivery in time order: 0, or 1 when it cannot be ordered
 * (no time, no drain under way, no memory) and must be delivered now. */
int ps_order__queue(struct ps_sampler *m, const struct ps_delivery *d);
/* Drain the source watch[self] (budget as its backend takes it), and the
 * others not drained within half a window, then deliver in time order what
 * every source has been read up to. The count drained from self, or a
 * negative code (a callback's stop, -EBADMSG). */
int ps_order__dispatch(struct ps_sampler *m, size_t self, size_t budget);
/* Drain every source and deliver everything queued (the session ends). */
int ps_order__flush(struct ps_sampler *m);
void ps_order__free(struct ps_sampler *m);

/* The user-space filter of slot's options (sample/filter.c): false drops. */
bool ps_filter__keep(struct ps_sampled *c, const struct ps_sample *smp);

#endif /* PS_SAMPLE_SAMPLER_H */
