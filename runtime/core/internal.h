/*
 * internal.h: the private layout of a session and its counter slots,
 * shared by counter*.c (handles, open, read) and core/target.c (what a session
 * counts: itself, a held command, a pid's threads or a CPU list), plus the
 * open-failure explainer in core/explain.c that the Lua binding may call too. A
 * handle is tag<<48 | generation<<24 | (slot+1): the tag tells sessions
 * apart, the generation tells a slot's lives apart, and slot+1 keeps every
 * handle non-zero. Overflow delivery is the sampler's (runtime/sample/): the
 * core holds one pointer to it and calls it through core/sampler_hooks.h's hooks.
 * Nothing here is part of the public ABI.
 */
#ifndef PS_COUNTER_INTERNAL_H
#define PS_COUNTER_INTERNAL_H

#include <unistd.h>

#include "perfscript.h"
#include "core/sampler_hooks.h"
#include "core/view.h"

#define PS_HANDLE_SLOT_MASK 0xffffffull
#define PS_HANDLE_GEN_SHIFT 24
#define PS_HANDLE_GEN_MASK  0xffffffu
#define PS_HANDLE_TAG_SHIFT 48

/* A process of the command, by pid and start time (core/tree.c). */
struct ps_tree_proc {
	pid_t pid;
	unsigned long long start;
};

/* core/tree.c: whether a live (not zombie) process is in group pgid; send
 * sig (0: none) to every live process of the command and of those seen
 * before, 0 if any was live, else -ESRCH. */
bool ps_tree__group_alive(pid_t pgid);
int ps_tree__signal(struct ps_session *s, int sig);

/* The string a set of counters was allocated from: one copy, however many
 * events it gives (a copy per event made 8000 events cost 700 MB). */
struct ps_spec {
	size_t refs;
	char text[];
};

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
	int *cpus;				/* the CPU each fd counts on, -1 for any */
	struct ps_read_ahead *ahead;		/* reads taken early (core/read_ahead.c) */
	int handed; /* the fds the sampler counts for instead (0: none handed over) */

	bool stopped;	    /* ps_session__stop()ed explicitly: open leaves it off */
	bool open_failed;   /* leader: ps_session__open_counter failed; ps_session__open skips it */
	int cpu;	    /* the event's cpu= term, or -1 */
	unsigned max_stack; /* its max-stack= term: user frames unwound, 0: the default */
	uint32_t leader;    /* slot of the group leader (its own slot when it leads) */
	uint32_t nmembers;  /* leader only: group size including itself */
	uint32_t *members;  /* leader only: slots, leader first */
	uint64_t *rbuf;	    /* leader only: scratch for one group read() */
	size_t rbuf_words;
	uint32_t next_free;	     /* free-list link while !live */
	struct ps_spec *spec;	     /* the string it was allocated from, shared by its events */
	char *name;		     /* display name from the parser */
	double scale;		     /* sysfs .scale of the event (1.0 without one)... */
	char *unit;		     /* ...and its .unit ("" without one) */
	struct perf_event_attr attr; /* as it will be opened on this target */
	bool sampling;		     /* period= or freq=: the sampler delivers its overflows */
	struct ps_sampled *sampled;  /* the sampler's state for it (sample/), NULL if none */
	char *bp_symbol;	     /* mem:SYMBOL[+OFF]: looked up at first open; NULL otherwise */
	uint64_t bp_offset;
	bool bp_resolved;		/* attr.bp_addr holds the symbol's address + offset */
	unsigned flags;			/* PS_EVENT_* of its event string */
	char *tracepoint;		/* "subsys:event" of a tracepoint, NULL otherwise */
	struct ps_counter_probe *probe; /* kprobe/uprobe/USDT (core/dynprobe.c), NULL otherwise */
};

/* A dynamic probe's target, resolved when the counter first opens. */
struct ps_counter_probe {
	enum ps_probe_kind kind;
	char *path;	       /* as written; then the file's absolute path (config1) */
	char *symbol;	       /* the function (config1 of a kprobe); NULL: offset is an address */
	uint64_t offset;       /* as written */
	char *provider, *name; /* USDT */
	bool resolved;
	size_t nsites;		   /* where it fires: 1, or a USDT marker's sites */
	uint64_t *site_off;	   /* config2 of each site */
	uint64_t *site_sem;	   /* each site's semaphore (ref_ctr_offset), 0 for none */
	struct ps_usdt_site *usdt; /* a USDT marker's sites, with their arguments */
};
/* core/usdt.c: the site of a USDT counter at file offset off (NULL: not a
 * USDT counter, or no such site). */
struct ps_usdt_site;
const struct ps_usdt_site *ps_counter__usdt_site(const struct ps_counter *c, uint64_t off);
/* A marker at several sites is one fd per site and position, so it cannot
 * be a member of a larger group: 0, or -EINVAL with msg said. */
int ps_counter__check_sites(const struct ps_session *s, uint32_t li, uint32_t m, char *msg,
			    size_t msglen);
/* Every position once per site (pos replaced): the new count or -ENOMEM. */
struct ps_position;
int ps_positions__by_site(struct ps_position **pos, int npos, uint32_t nsites);

struct ps_session {
	struct ps_counter *slots;
	uint32_t nslots;
	bool user_only;	    /* some counter fell back to :u (kernel.perf_event_paranoid) */
	size_t cap;	    /* slots allocated */
	uint32_t free_head; /* PS_NO_SLOT when empty */
	size_t live;
	uint16_t tag; /* never 0 */

	enum ps_target_kind kind;
	pid_t pid;	  /* command child or -p pid; 0 otherwise */
	pid_t self;	  /* our pid, taken at create: no later getpid() a self counter sees */
	int pidfd;	  /* -1 when none */
	int cgroup_fd;	  /* a CPUS target's cgroup directory (-G), or -1 */
	char *cgroup;	  /* and its path below the cgroup2 mount */
	bool has_command; /* a forked child we own (COMMAND, or CPUS with argv) */
	bool no_children; /* inherit to threads only (ps_target_opts.no_children) */
	bool own_group;	  /* the command leads its own process group */
	bool held;	  /* the child waits for ps_session__release() */
	bool reaped;
	int wstatus;
	uint64_t user_us, sys_us; /* the reaped command's CPU time (wait4) */
	int go_fd;		  /* write end of the hold pipe, -1 once released */
	int status_fd;		  /* read end of the exec status pipe, -1 when done */
	char *argv0;		  /* the command as given to execvp (breakpoints on its symbols) */
	int *cpus;		  /* CPUS target: the CPU list */
	int ncpus;
	const volatile int *cancel; /* ps_session__set_cancel */
	struct ps_tree_proc *tree;  /* the command's processes seen (core/tree.c) */
	size_t ntree, captree;
	struct ps_sampler *sampler;	      /* overflow delivery (sample/), NULL: none */
	const struct ps_sampler_hooks *hooks; /* how the core calls it */
	uint32_t ahead_gen;		      /* the last ps_session__read_ahead (never 0) */
	struct ps_ahead_scratch *ahead;	      /* its scratch (core/read_ahead.c) */
};

/* core/target.c: the positions a counter with cpu= term `cpu` (or -1) opens on;
 * per_cpu (sampling) gives every (task, CPU) pair. *pos is malloc'd;
 * returns the count or -errno. */
int ps_target__positions(const struct ps_session *s, int cpu, bool per_cpu,
			 struct ps_position **pos);
/* core/attr.c: the target's part of c's attr, at allocation. */
void ps_counter__target_attr(const struct ps_session *s, struct ps_counter *c, bool leads,
			     bool grouped);
/* core/attr.c: the attr of one fd of c: its attr, on or off now, at a probe's site. */
void ps_counter__open_attr(const struct ps_session *s, const struct ps_counter *c, bool leads,
			   bool drop_group, uint32_t site, struct perf_event_attr *a);
/* core/counter.c: close and forget every counter (ps_session__free). */
void ps_counters__free_all(struct ps_session *s);
/* core/read.c: map the user page of a self-monitoring counter's one fd,
 * so reads may use rdpmc where the kernel allows it; harmless to skip. */
void ps_counter__map_user_page(struct ps_counter *c);
void ps_counter__unmap_user_page(struct ps_counter *c);
/* The value and times of a self-monitoring fd from its user page (rdpmc
 * under the sequence lock): false when the kernel offers no user read now. */
bool ps_user_page__read(const struct perf_event_mmap_page *pc, uint64_t *raw, uint64_t *en,
			uint64_t *run);
/* core/counter.c: close a group's fds and mark it not open. */
void ps_counter__close_group(struct ps_session *s, uint32_t leader);
/* core/counter.c: enable a group's members, then its leader; 0 or -errno. */
int ps_counter__enable_group(struct ps_session *s, uint32_t leader);

/* core/read_ahead.c: what ps_session__read_ahead read of one counter's fds. */
struct ps_read_ahead {
	size_t words;  /* room per fd */
	uint32_t *gen; /* per fd: the read-ahead that read it; 0 once taken */
	ssize_t *n;    /* per fd: read()'s result, bytes or -errno */
	uint64_t *buf; /* nfds * words */
};
/* Take fd k's early read into buf (at most bytes); read()'s result. */
ssize_t ps_counter__take_ahead(struct ps_counter *c, int k, uint64_t *buf, size_t bytes);
void ps_counter__free_ahead(struct ps_counter *c);
void ps_session__free_ahead(struct ps_session *s);

/* Read fd k of c: what ps_session__read_ahead read for it, if it did and
 * nobody took it since, else now. */
static inline ssize_t ps_counter__read_fd(const struct ps_session *s, struct ps_counter *c, int k,
					  uint64_t *buf, size_t bytes)
{
	if (c->ahead && c->ahead->gen[k] == s->ahead_gen)
		return ps_counter__take_ahead(c, k, buf, bytes);
	return read(c->fds[k], buf, bytes);
}

/* core/breakpoint.c: give a mem:SYMBOL counter its address in the
 * session's target (once; nothing to do for any other counter). 0, or
 * -errno with msg filled, naming the event. */
int ps_counter__resolve_bp(struct ps_session *s, uint32_t slot, char *msg, size_t msglen);

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

/* core/dynprobe.c: copy event i's probe into counter c (allocation); 0 or -ENOMEM. */
int ps_counter__set_probe(struct ps_counter *c, const struct ps_events *evs, size_t i);
void ps_counter__free_probe(struct ps_counter *c);
/* core/dynprobe.c: find where counter slot's probe goes in the session's
 * target (once): the file's path, the function's file offset, a USDT
 * marker's sites. 0, or -errno with msg filled, naming the event. */
int ps_counter__resolve_probe(struct ps_session *s, uint32_t slot, char *msg, size_t msglen);

#endif /* PS_COUNTER_INTERNAL_H */
