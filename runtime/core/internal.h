/*
 * internal.h: the private layout of a session and its counter slots,
 * shared by counter*.c (handles, open, read) and core/target.c (what a session
 * counts: itself, a held command, a pid's threads or a CPU list), plus the
 * open-failure explainer in core/explain.c that the Lua binding may call too. A
 * handle is tag<<48 | generation<<24 | (slot+1): the tag tells sessions
 * apart, the generation tells a slot's lives apart, and slot+1 keeps every
 * handle non-zero. The sampling state (rings, carriers, the id -> counter
 * map, sample ops and stats) lives in struct ps_sampling, run by sample/sampling.c.
 * Nothing here is part of the public ABI.
 */
#ifndef PS_COUNTER_INTERNAL_H
#define PS_COUNTER_INTERNAL_H

#include "perfscript.h"
#include "sample/perf/ring.h"

#define PS_HANDLE_SLOT_MASK 0xffffffull
#define PS_HANDLE_GEN_SHIFT 24
#define PS_HANDLE_GEN_MASK  0xffffffu
#define PS_HANDLE_TAG_SHIFT 48
/* Counters a session may hold at once; ps_session__allocate gives -EMFILE past it. */
#define PS_SESSION_MAX_COUNTERS (1u << 20)
#define PS_NO_SLOT		UINT32_MAX

struct ps_counter {
	/* Hot fields first: ps_session__read touches only these. */
	uint32_t gen;	/* this life of the slot; part of the handle */
	bool live;	/* allocated and not freed */
	bool open;	/* fds[] are open */
	bool group_fmt; /* own fd reads in PERF_FORMAT_GROUP layout */
	bool running;	/* enabled by us (or armed by enable_on_exec) */
	int nfds;	/* one per thread or CPU of the target */
	int *fds;	/* -1 until opened */
	uint64_t *ids;	/* PERF_EVENT_IOC_ID of each fd */
	pid_t *tasks;	/* the pid each fd was opened on, -1 for a whole CPU; the
			 * fds of one task on several CPUs are adjacent (core/read.c) */
	struct perf_event_mmap_page *user_page; /* self, one fd: rdpmc reads (core/read.c) */

	bool stopped;	   /* ps_session__stop()ed explicitly: open leaves it off */
	bool open_failed;  /* leader: ps_session__open_counter failed; ps_session__open skips it */
	int cpu;	   /* the event's cpu= term, or -1 */
	uint32_t leader;   /* slot of the group leader (its own slot when it leads) */
	uint32_t nmembers; /* leader only: group size including itself */
	uint32_t *members; /* leader only: slots, leader first */
	uint64_t *rbuf;	   /* leader only: scratch for one group read() */
	size_t rbuf_words;
	uint32_t next_free;	     /* free-list link while !live */
	char *spec;		     /* the string it was allocated from */
	char *name;		     /* display name from the parser */
	double scale;		     /* sysfs .scale of the event (1.0 without one)... */
	char *unit;		     /* ...and its .unit ("" without one) */
	struct perf_event_attr attr; /* as it will be opened on this target */
	bool sampling;		     /* period= or freq=: its fds write into the session's rings */
	bool ids_mapped;	     /* its ids are in the session's id map */
	struct ps_sample_stats st;
	int bpf_term; /* event string: 1 bpf, -1 nobpf, 0 neither */
	struct ps_bpf_counter
	    *bpf;	 /* in-kernel handling (sample/bpf/load.c), NULL when never asked */
	char *bp_symbol; /* mem:SYMBOL[+OFF]: looked up at first open; NULL otherwise */
	uint64_t bp_offset;
	bool bp_resolved; /* attr.bp_addr holds the symbol's address + offset */
};

/* One id -> counter entry; slot PS_NO_SLOT marks a ring carrier. */
struct ps_id_slot {
	uint64_t id;
	uint32_t slot;
};

struct ps_sampling {
	struct ps_ring *rings; /* one per CPU that has one, in creation order */
	int *ring_fds;	       /* the carriers' fds, parallel to rings */
	int nrings, cap;       /* cap: online CPUs; the arrays never move */
	int *ring_of_cpu;      /* CPU number -> index in rings, or -1 */
	int ncpu_slots;
	size_t ring_pages; /* data pages of rings mapped next; 0 means the default */
	struct ps_sample_ops ops;
	struct ps_id_slot *ids; /* sorted by id */
	size_t nids, idcap;
	struct ps_id_slot last; /* the last id looked up: samples come in runs */
	struct ps_sample_stats total;
};

struct ps_session {
	struct ps_counter *slots;
	uint32_t nslots, cap;
	uint32_t free_head; /* PS_NO_SLOT when empty */
	size_t live;
	uint16_t tag; /* never 0 */

	enum ps_target_kind kind;
	pid_t pid;	  /* command child or -p pid; 0 otherwise */
	int pidfd;	  /* -1 when none */
	bool has_command; /* a forked child we own (COMMAND, or CPUS with argv) */
	bool held;	  /* the child waits for ps_session__release() */
	bool reaped;
	int wstatus;
	int go_fd;     /* write end of the hold pipe, -1 once released */
	int status_fd; /* read end of the exec status pipe, -1 when done */
	char *argv0;   /* the command as given to execvp (breakpoints on its symbols) */
	int *cpus;     /* CPUS target: the CPU list */
	int ncpus;
	struct ps_sampling smp;
	enum ps_backend backend; /* default for sampling counters */
	struct ps_bpf_session
	    *bpf; /* BPF ring buffer and state (sample/bpf/load.c), NULL until used */
};

/* Where a counter opens its fds: one (pid, cpu) pair per fd. */
struct ps_position {
	pid_t pid;
	int cpu;
};

/* core/target.c: the positions a counter with cpu= term `cpu` (or -1) opens on;
 * per_cpu (sampling) gives every (task, CPU) pair. *pos is malloc'd;
 * returns the count or -errno. */
int ps_target__positions(const struct ps_session *s, int cpu, bool per_cpu,
			 struct ps_position **pos);
/* core/target.c: parse "0-3,5" against the online CPUs into a sorted, unique list. */
int ps_cpus__parse(const char *list, int **cpus, int *ncpus);
/* core/counter.c: close and forget every counter (ps_session__free). */
void ps_counters__free_all(struct ps_session *s);
/* core/read.c: map the user page of a self-monitoring counter's one fd,
 * so reads may use rdpmc where the kernel allows it; harmless to skip. */
void ps_counter__map_user_page(struct ps_counter *c);
void ps_counter__unmap_user_page(struct ps_counter *c);
/* core/counter.c: close a group's fds and mark it not open. */
void ps_counter__close_group(struct ps_session *s, uint32_t leader);
/* core/counter.c: enable a group's members, then its leader; 0 or -errno. */
int ps_counter__enable_group(struct ps_session *s, uint32_t leader);

/* core/breakpoint.c: give a mem:SYMBOL counter its address in the
 * session's target (once; nothing to do for any other counter). 0, or
 * -errno with msg filled, naming the event. */
int ps_counter__resolve_bp(struct ps_session *s, uint32_t slot, char *msg, size_t msglen);

/* sample/sampling.c: what a sampling attr needs on top of the parser's (IDENTIFIER,
 * sample_id_all, watermark wakeups). */
void ps_sampling__prepare_attr(const struct ps_session *s, struct perf_event_attr *a);
/* sample/sampling.c: make sure every CPU of pos has a ring; 0 or -errno with msg filled. */
int ps_sampling__ensure_rings(struct ps_session *s, const struct ps_position *pos, int npos,
			      char *msg, size_t msglen);
/* sample/sampling.c: redirect a sampling fd opened on cpu into that CPU's ring. */
int ps_sampling__set_output(struct ps_session *s, int fd, int cpu);
/* sample/sampling.c: add / drop an open sampling counter's ids in the id map. */
int ps_sampling__map_ids(struct ps_session *s, uint32_t slot);
void ps_sampling__unmap_ids(struct ps_session *s, uint32_t slot);
/* sample/sampling.c: unmap the rings and close their carriers (ps_session__free). */
void ps_sampling__free(struct ps_session *s);

/* sample/bpf/load.c: after a sampling counter's fds opened: attach its program when it
 * takes the BPF path. 0 (BPF or perf path) or -errno with msg filled when
 * BPF was required and failed. */
int ps_bpf__attach_counter(struct ps_session *s, uint32_t slot, char *msg, size_t msglen);
/* sample/bpf/load.c: the bpf/nobpf term of event i: 1, -1 or 0. */
int ps_bpf__term(const struct ps_events *evs, size_t i);
/* sample/bpf/load.c: destroy the counter's program and links (before its fds close). */
void ps_bpf__detach_counter(struct ps_session *s, uint32_t slot);
/* sample/bpf/load.c: forget the counter's configuration too (its slot is released). */
void ps_bpf__free_counter(struct ps_session *s, uint32_t slot);
/* sample/bpf/load.c: the ring buffer and everything else (ps_session__free). */
void ps_bpf__free(struct ps_session *s);
/* sample/bpf/load.c: the user-space version of the counter's filters, for a counter on
 * the perf path whose BPF configuration asked for some: false drops it. */
bool ps_bpf__keep(struct ps_session *s, struct ps_counter *c, const struct ps_sample *smp);
/* sample/bpf/load.c: samples the counter's program could not reserve ring space for. */
int ps_bpf__lost(const struct ps_session *s, const struct ps_counter *c, uint64_t *lost);

/* Resolve a handle to its slot, or NULL (fast path of every ps_session__ call). */
static inline struct ps_counter *ps_session__slot(const struct ps_session *s, ps_handle h)
{
	uint64_t slot = (h & PS_HANDLE_SLOT_MASK) - 1;
	struct ps_counter *c;

	if (!s || slot >= s->nslots || (uint16_t)(h >> PS_HANDLE_TAG_SHIFT) != s->tag)
		return NULL;
	c = &s->slots[slot];
	if (!c->live || c->gen != ((h >> PS_HANDLE_GEN_SHIFT) & PS_HANDLE_GEN_MASK))
		return NULL;
	return c;
}

static inline ps_handle ps_session__handle(const struct ps_session *s, uint32_t slot)
{
	return (uint64_t)s->tag << PS_HANDLE_TAG_SHIFT |
	       (uint64_t)(s->slots[slot].gen & PS_HANDLE_GEN_MASK) << PS_HANDLE_GEN_SHIFT |
	       ((uint64_t)slot + 1);
}

/* What went wrong opening one event, for ps_explain_open_error(). */
struct ps_open_failure {
	const char *name;		      /* display name */
	const struct perf_event_attr *attr;   /* as passed to perf_event_open */
	const struct perf_event_attr *leader; /* its group leader's, NULL when it leads */
	int err;			      /* positive errno */
	enum ps_target_kind kind;
	pid_t pid; /* pid argument of the failing call */
	int cpu;   /* cpu argument of the failing call */
};

/* core/explain.c: write "cannot open 'NAME': why; what to do" into msg, with what
 * this machine says (PMUs in sysfs, perf_event_paranoid, RLIMIT_NOFILE).
 * Returns the length it wanted, like snprintf. */
int ps_explain_open_error(const struct ps_open_failure *f, char *msg, size_t msglen);

#endif /* PS_COUNTER_INTERNAL_H */
