/*
 * view.h: what the layers above the counter core (the sampler and its
 * backends, runtime/sample/ and runtime/session/) may see of a session and
 * its counters: accessors over the opaque structs, so that touching the
 * core's private layout (core/internal.h) rebuilds the core only. The
 * pointers a counter gives stay valid while it lives; a slot is its index,
 * the way the sampler's hooks name it.
 */
#ifndef PS_CORE_VIEW_H
#define PS_CORE_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/sampler_hooks.h"
#include "perfscript.h"

#define PS_NO_SLOT UINT32_MAX

struct ps_counter;
struct ps_sampled;

/* ---- the session ---- */
/* core/target.c: a session on its target with no sampler yet; the public
 * ps_session__new (session/session.c) gives it one. NULL + errno. */
struct ps_session *ps_session__create(const struct ps_target_opts *opts);
/* The counter in slot, or NULL past the last slot. */
struct ps_counter *ps_session__counter(const struct ps_session *s, uint32_t slot);
/* The counter of a live handle, or NULL (stale, freed, another session's). */
struct ps_counter *ps_session__counter_of(const struct ps_session *s, ps_handle h);
/* The slot of counter c; of a live handle (PS_NO_SLOT when stale). */
uint32_t ps_session__slot_of(const struct ps_session *s, const struct ps_counter *c);
uint32_t ps_session__slot_of_handle(const struct ps_session *s, ps_handle h);
/* The handle of the counter in slot. */
ps_handle ps_session__handle_of(const struct ps_session *s, uint32_t slot);
uint32_t ps_session__nslots(const struct ps_session *s);
struct ps_sampler *ps_session__sampler(const struct ps_session *s);
void ps_session__set_sampler(struct ps_session *s, struct ps_sampler *m,
			     const struct ps_sampler_hooks *hooks);
/* Whether a command waits for ps_session__release (its exec). The rest of
 * the target (kind, pid, own pid, CPUs) is public: perfscript.h. */
bool ps_session__held(const struct ps_session *s);
/* Whether counters follow the target's threads only, not its children. */
bool ps_session__no_children(const struct ps_session *s);
/* A -G target's cgroup directory, open (ps_target_opts.cgroup), or -1. */
int ps_session__cgroup_fd(const struct ps_session *s);

/* ---- a counter ---- */
const struct perf_event_attr *ps_counter__attr(const struct ps_counter *c);
struct perf_event_attr *ps_counter__attr_mut(struct ps_counter *c); /* at prepare */
int ps_counter__nfds(const struct ps_counter *c);
int ps_counter__fd(const struct ps_counter *c, int k);		     /* -1 when closed */
uint64_t ps_counter__id(const struct ps_counter *c, int k);	     /* PERF_EVENT_IOC_ID */
const char *ps_counter__name(const struct ps_counter *c);	     /* the display name */
const char *ps_counter__spec_text(const struct ps_counter *c);	     /* the string given */
const char *ps_counter__tracepoint_name(const struct ps_counter *c); /* NULL: no tracepoint */
bool ps_counter__live(const struct ps_counter *c);
bool ps_counter__stopped(const struct ps_counter *c);
/* Enabled (or armed for a held command's exec) and not stopped since. */
bool ps_counter__running(const struct ps_counter *c);
unsigned ps_counter__flags(const struct ps_counter *c); /* PS_EVENT_* */
struct ps_sampled *ps_counter__sampled(const struct ps_counter *c);
void ps_counter__set_sampled(struct ps_counter *c, struct ps_sampled *v);
/* A probe's sites (1, or a USDT marker's), 0 for any other counter; the
 * attr of one site. */
size_t ps_counter__probe_sites(const struct ps_counter *c);
/* A USDT counter's sites with their arguments (core/usdt.c; n 0 and NULL
 * for any other counter), and whether any argument is in memory. */
struct ps_usdt_site;
const struct ps_usdt_site *ps_counter__usdt_sites(const struct ps_counter *c, size_t *n);
bool ps_counter__usdt_reads_memory(const struct ps_counter *c);
void ps_counter__probe_attr(const struct ps_counter *c, uint32_t site, struct perf_event_attr *a);

/* Whether its fds are open; whether its own fd reads a group
 * (PERF_FORMAT_GROUP layout), and then the group's size, leader included. */
bool ps_counter__is_open(const struct ps_counter *c);
/* Alone in its group: no leader but itself, no members. */
bool ps_counter__alone(const struct ps_session *s, const struct ps_counter *c);
/* While the sampler attaches counter c (its fds open, none enabled): the
 * sampler counts c's hits itself from now on, so its fds close (an event
 * that is not there costs the kernel nothing) and its reads and resets go
 * to the sampler's read hook, until the counter closes. */
void ps_counter__hand_over(struct ps_session *s, struct ps_counter *c);
/* How many fds c handed over (0: it counts on its own). */
int ps_counter__handed(const struct ps_counter *c);
/* The event's cpu= term, or -1. */
int ps_counter__cpu_term(const struct ps_counter *c);
bool ps_counter__sampling(const struct ps_counter *c); /* period= or freq= */
bool ps_counter__reads_group(const struct ps_session *s, const struct ps_counter *c,
			     uint32_t *nmembers);

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

/* ---- where fds open ---- */
/* One (pid, cpu) pair per fd, and for a probe with several sites (a USDT
 * marker inlined twice) which site. */
struct ps_position {
	pid_t pid;
	int cpu;
	uint32_t site;
};

#endif /* PS_CORE_VIEW_H */
