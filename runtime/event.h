/*
 * event.h: internals shared by the event-string parser files (event.c,
 * event_terms.c, event_names.c, event_tracepoint.c, event_pmu.c,
 * event_describe.c, event_util.c). The parser turns a name into an attr by
 * asking a list of resolvers in order (symbolic tables, breakpoints,
 * tracepoints, sysfs PMUs; later libpfm4), so each kind of name lives in its
 * own file and a new kind is one more entry in ps_ev__resolvers. Nothing here
 * is exported from the library.
 */
#ifndef PS_EVENT_H
#define PS_EVENT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfscript.h"

/* One parsed event; ps_events keeps them in spec order, leaders first. */
struct ps_event {
	struct perf_event_attr attr;
	char *name;       /* display name (name= term, else the text as written) */
	size_t leader;    /* index of the group leader, == own index for a leader */
	int cpu;          /* cpu= term, -1 when absent */
	bool sample_read; /* S modifier: the leader samples the group's values */
	bool named;       /* name came from a name= term */
	bool has_mods;    /* the text as written ends in modifiers */
	int bpf;          /* bpf term: 1, nobpf term: -1, neither: 0 (runtime/bpf.c) */
};

struct ps_events {
	char *spec;
	struct ps_event *ev;
	size_t n, cap;
};

/* A name as the parser found it, handed to the resolvers. */
struct ps_ev_ref {
	const char *sys;  /* tracepoint subsystem ("sched" of sched:x), NULL if none */
	size_t sys_len;
	const char *name; /* event name, or the PMU name of PMU/terms/ */
	size_t name_len;
	bool terms;       /* written as NAME/terms/ */
	int column;       /* 1-based column of the first character */
};

/* Tracks the nearest candidate to a misspelt word (case-insensitive
 * Levenshtein); resolvers feed their vocabulary through ps_ev__suggest. */
struct ps_ev_suggest {
	const char *word;
	size_t word_len;
	unsigned best_dist;
	char best[64];
};

struct ps_ev_resolver {
	const char *what;
	/* 1: the name is this resolver's and *attr is filled (type, config);
	 * 0: not this resolver's name; < 0: -PS_ERR_* or -ENOMEM, err filled. */
	int (*resolve)(const struct ps_ev_ref *ref, struct perf_event_attr *attr,
		       struct ps_event_error *err);
	/* Offer the names this resolver knows that could be meant by ref. */
	void (*suggest)(const struct ps_ev_ref *ref, struct ps_ev_suggest *s);
	/* A term the generic table does not know (PMU format terms, later):
	 * 1 applied, 0 unknown here, < 0 error with err filled. May be NULL. */
	int (*term)(const struct ps_ev_ref *ref, const char *key, size_t key_len,
		    const char *val, size_t val_len, int column, struct perf_event_attr *attr,
		    struct ps_event_error *err);
};

extern const struct ps_ev_resolver ps_ev__symbolic;   /* event_names.c */
extern const struct ps_ev_resolver ps_ev__breakpoint; /* event_names.c (stub) */
extern const struct ps_ev_resolver ps_ev__tracepoint; /* event_tracepoint.c */
extern const struct ps_ev_resolver ps_ev__pmu;        /* event_pmu.c */

/* Tried in this order; the first that claims a name wins. */
extern const struct ps_ev_resolver *const ps_ev__resolvers[];
extern const size_t ps_ev__nresolvers;

/* Parse "/term=v,.../" starting at s[*pos] == '/' into ev, for the event
 * that ref names and res resolved (event_terms.c). Advances *pos past the
 * closing '/'. 0 or < 0 with err filled. */
int ps_ev__parse_terms(const char *s, size_t *pos, const struct ps_ev_ref *ref,
		       const struct ps_ev_resolver *res, struct ps_event *ev,
		       struct ps_event_error *err);

/* Fill *err (when not NULL) and return -code. The token is copied (and cut
 * to fit); the message is formatted from fmt. */
__attribute__((format(printf, 6, 7))) int ps_ev__fail(struct ps_event_error *err, int code,
						      int column, const char *tok, size_t toklen,
						      const char *fmt, ...);
/* Out of memory while parsing: returns -ENOMEM with a message. */
int ps_ev__nomem(struct ps_event_error *err);

void ps_ev__suggest_init(struct ps_ev_suggest *s, const char *word, size_t len);
void ps_ev__suggest(struct ps_ev_suggest *s, const char *cand);
void ps_ev__suggest_n(struct ps_ev_suggest *s, const char *cand, size_t len);
/* Case-insensitive edit distance, for tests of the suggestion policy. */
unsigned ps_ev__distance(const char *a, size_t alen, const char *b, size_t blen);

/* Read one unsigned decimal (or 0x hex) number from a small file: 0 or -errno. */
int ps_ev__read_u64_file(const char *path, uint64_t *v);
/* Parse a whole decimal or 0x-hex number; false when it is not one. */
bool ps_ev__parse_u64(const char *s, size_t len, uint64_t *v);
/* A sysfs/tracefs path component we are willing to open: no '/', not ".."
 * or hidden, not empty. Keeps event strings from walking the filesystem. */
bool ps_ev__safe_component(const char *s, size_t len);

#endif /* PS_EVENT_H */
