/*
 * event.h: internals shared by the event-string parser files (event/event.c,
 * event/terms.c, event/names.c, event/tracepoint.c, event/pmu.c,
 * event/describe.c, event/util.c). The parser turns a name into an attr by
 * asking a list of resolvers in order (symbolic tables, tracepoints, sysfs
 * PMUs, libpfm4), so each kind of name lives in its own file and a new kind
 * is one more entry in ps_ev__resolvers. Breakpoints (mem:ADDR/LEN:rwx) and
 * vendor names with ':' inside them have their own grammar, so the lexer
 * hands them to event/breakpoint.c and event/pfm.c directly. Nothing here is
 * exported from the library.
 */
#ifndef PS_EVENT_H
#define PS_EVENT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/suggest.h"
#include "perfscript.h"

struct ps_ev_format;

/* A kprobe, uprobe or USDT marker as written (event/dynprobe.c). */
struct ps_probe {
	enum ps_probe_kind kind;
	char *path;	       /* uprobes and USDT */
	char *symbol;	       /* NULL: offset is an address */
	uint64_t offset;       /* +OFF, or the address */
	char *provider, *name; /* USDT */
};

/* At most this many distinct format terms are tracked per event for the
 * overlap check; more are still applied, just not compared. */
#define PS_EV_MAX_FMT_USED 16

/* One parsed event; ps_events keeps them in spec order, leaders first. */
struct ps_event {
	struct perf_event_attr attr;
	char *name;	  /* display name (name= term, else the text as written) */
	size_t leader;	  /* index of the group leader, == own index for a leader */
	int cpu;	  /* cpu= term, -1 when absent */
	bool sample_read; /* S modifier: the leader samples the group's values */
	bool named;	  /* name came from a name= term */
	bool has_mods;	  /* the text as written ends in modifiers */
	int bpf;	  /* bpf term: 1, nobpf term: -1, neither: 0 (runtime/sample/bpf/load.c) */
	double scale;	  /* sysfs events/NAME.scale; 0 means none (1.0) */
	const char *unit; /* sysfs events/NAME.unit, NULL if none; owned by the PMU cache */
	const int *cpus;  /* the PMU's cpumask (uncore); owned by the PMU cache */
	char *bp_symbol;  /* mem:SYMBOL: looked up when the session opens it; NULL otherwise */
	uint64_t bp_offset; /* the +OFF after it */
	size_t ncpus;
	char *group_name; /* leader of a named group (group1{...}), NULL otherwise */
	char *metric_id;  /* metric-id= term, NULL when absent */
	char *tp_name;	  /* a tracepoint's "subsys:event" (its format file), NULL otherwise */
	struct ps_probe *probe; /* kprobe/uprobe/usdt (event/dynprobe.c), NULL otherwise */
	unsigned flags;		/* PS_EVENT_* of perfscript.h */
	signed char time_term;	/* time=0|1 as written, -1 when not written */
	signed char raw_term;	/* raw=0|1 as written, -1 when not written */
	uint16_t max_stack;	/* max-stack=N as written (user frames unwound), 0: not */
	bool precise_max;	/* P modifier: the highest precise_ip the PMU takes */
	/* Format terms written in the string, to refuse two that set the same bits. */
	const struct ps_ev_format *fmt_used[PS_EV_MAX_FMT_USED];
	const char *fmt_key[PS_EV_MAX_FMT_USED]; /* as written, for the message */
	unsigned nfmt_used;
};

struct ps_events {
	char *spec;
	struct ps_event *ev;
	size_t n, cap;
};

/* A name as the parser found it, handed to the resolvers. */
struct ps_ev_ref {
	const char *sys; /* tracepoint subsystem ("sched" of sched:x), NULL if none */
	size_t sys_len;
	const char *name; /* event name, or the PMU name of PMU/terms/ */
	size_t name_len;
	bool terms; /* written as NAME/terms/ */
	int column; /* 1-based column of the first character */
};

/* Tracks the nearest candidate to a misspelt word (case-insensitive
 * Levenshtein); resolvers feed their vocabulary through ps_ev__suggest. */
struct ps_ev_resolver {
	const char *what;
	/* 1: the name is this resolver's and ev->attr is filled (type, config);
	 * 0: not this resolver's name; < 0: -PS_ERR_* or -ENOMEM, err filled. */
	int (*resolve)(const struct ps_ev_ref *ref, struct ps_event *ev,
		       struct ps_event_error *err);
	/* Offer the names this resolver knows that could be meant by ref. */
	void (*suggest)(const struct ps_ev_ref *ref, struct ps_suggest *s);
	/* A term the generic table does not know (PMU format terms, later):
	 * 1 applied, 0 unknown here, < 0 error with err filled. May be NULL. */
	int (*term)(const struct ps_ev_ref *ref, const char *key, size_t key_len, const char *val,
		    size_t val_len, int column, struct ps_event *ev, struct ps_event_error *err);
};

extern const struct ps_ev_resolver ps_ev__symbolic;   /* event/names.c */
extern const struct ps_ev_resolver ps_ev__tracepoint; /* event/tracepoint.c */
extern const struct ps_ev_resolver ps_ev__pmu;	      /* event/pmu.c */
extern const struct ps_ev_resolver ps_ev__pfm;	      /* event/pfm.c */

/* Tried in this order; the first that claims a name wins. */
extern const struct ps_ev_resolver *const ps_ev__resolvers[];
extern const size_t ps_ev__nresolvers;

/* Parse "/term=v,.../" starting at s[*pos] == '/' into ev, for the event
 * that ref names and res resolved (event/terms.c). Advances *pos past the
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
/* Did you mean: struct ps_suggest and ps_suggest__*() of base/suggest.h. */

/* Read one unsigned decimal (or 0x hex) number from a small file: 0 or -errno. */
int ps_ev__read_u64_file(const char *path, uint64_t *v);
/* Parse a whole decimal or 0x-hex number; false when it is not one. */
bool ps_ev__parse_u64(const char *s, size_t len, uint64_t *v);
/* A sysfs/tracefs path component we are willing to open: no '/', not ".."
 * or hidden, not empty. Keeps event strings from walking the filesystem. */
bool ps_ev__safe_component(const char *s, size_t len);
/* event/util.c: the registers a probe's samples carry: the calling
 * convention's argument and return registers, ip and sp. */
uint64_t ps_ev__probe_regs_mask(void);
/* event/util.c: s as a JSON string (describe and -l --json). */
void ps_ev__json_string(FILE *out, const char *s);

/* Feed the generic term names (period, freq, ...) to a suggester, and the
 * same names as one space-separated string for messages (event/terms.c). */
void ps_ev__suggest_generic_terms(struct ps_suggest *s);
const char *ps_ev__generic_terms(void);

/* event/access.c: free what an event owns (not the event itself). */
void ps_ev__event_release(struct ps_event *ev);
/* event/finalize.c: fill in what every parsed event's attr needs to be
 * opened as a counter of its group. */
void ps_ev__finalize(struct ps_events *evs);

/* ---- modifiers (event/modifiers.c) ---- */

/* Apply the modifier letters s[at..at+len) to ev; 0 or < 0 with err filled. */
int ps_ev__apply_mods(const char *s, size_t at, size_t len, struct ps_event *ev,
		      struct ps_event_error *err);
/* Length of the run of letters and digits at s (what a modifier string may be). */
size_t ps_ev__mods_len(const char *s);
/* Whether every byte of s is a modifier letter ("u", "kp"). */
bool ps_ev__looks_like_mods(const char *s, size_t len);
const char *ps_ev__modifiers_list(void);

/* ---- probes (event/dynprobe.c) ---- */

/* Whether s[0..len) is kprobe, kretprobe, uprobe, uretprobe or usdt. */
bool ps_ev__is_probe_prefix(const char *s, size_t len);
/* The i-th form a user writes for a dynamic probe of the kernel's PMU pmu
 * ("kprobe", "uprobe"), with what it does: true, false past the last. */
bool ps_ev__probe_form(const char *pmu, size_t i, const char **form, const char **what);
/* s[*pos] starts "kprobe:" and friends: parse the probe into ev (attr type
 * and retprobe bit, ev->probe) and ref, advancing *pos past it. */
int ps_ev__parse_probe(const char *s, size_t *pos, struct ps_ev_ref *ref, struct ps_event *ev,
		       struct ps_event_error *err);
void ps_ev__probe_free(struct ps_probe *pr);

/* ---- breakpoints (event/breakpoint.c) ---- */

/* s[*pos] starts "mem:". Parses ADDR[/LEN][:rwx] or SYMBOL[+OFF][/LEN][:rwx],
 * fills ev->attr (and ev->bp_symbol, malloc'd, for a symbol) and ref, and
 * advances *pos past what it took; modifiers after it are left. */
int ps_ev__parse_breakpoint(const char *s, size_t *pos, struct ps_ev_ref *ref, struct ps_event *ev,
			    struct ps_event_error *err);

/* ---- tracepoints (event/tracepoint.c) ---- */

struct ps_ev_tp {
	char *name; /* "subsys:event" */
	uint64_t id;
};

/* The path of a file of "subsys:event" in tracefs (its format): 0 or -errno. */
int ps_ev__tracepoint_path(const char *tracepoint, const char *file, char *buf, size_t len);
/* Whether tracefs has a subsystem directory of that name. */
bool ps_ev__tracepoint_subsys(const char *sys, size_t len);
/* Every tracepoint whose sys and name match the globs of ref (fnmatch), in
 * sorted order; *out is an array of *n to free with ps_ev__tp_free. A glob
 * matching nothing is an error naming it. */
int ps_ev__tracepoint_glob(const struct ps_ev_ref *ref, struct ps_ev_tp **out, size_t *n,
			   struct ps_event_error *err);
/* Every tracepoint, sorted (for the listing): 0 or -errno. */
int ps_ev__tracepoint_all(struct ps_ev_tp **out, size_t *n);
void ps_ev__tp_free(struct ps_ev_tp *tp, size_t n);
bool ps_ev__has_glob(const char *s, size_t len);

/* ---- sysfs PMUs (event/sysfs.c) ---- */

/* One format/NAME file: "config1:0-15" or "config:0-7,32-35". A file that
 * does not parse is kept with bad set, so only its use is an error. */
struct ps_ev_format {
	char *name;
	char *spec;	 /* the file's text, trimmed, for messages */
	const char *bad; /* why the file does not parse, or NULL */
	int word;	 /* 0 config, 1 config1, 2 config2 */
	unsigned width;	 /* bits in all ranges */
	uint64_t mask;	 /* those bits within the word */
	unsigned nranges;
	uint8_t lo[8], hi[8];
};

/* One events/NAME alias with its .scale and .unit. */
struct ps_ev_alias {
	char *name;
	char *terms;  /* "event=0x3c,umask=0x0" */
	double scale; /* 0 when there is no .scale file */
	char *unit;   /* NULL when there is no .unit file */
};

struct ps_ev_pmu {
	char *name;
	uint32_t type;
	struct ps_ev_format *fmt;
	size_t nfmt;
	struct ps_ev_alias *alias;
	size_t nalias;
	int *cpus; /* cpumask, NULL when the PMU has none (any CPU) */
	size_t ncpus;
	bool core; /* a core PMU ("cpu", or a hybrid one with a cpus file) */
};

/* The sysfs root ($PERFSCRIPT_SYSFS or /sys) + "/bus/event_source/devices". */
int ps_ev__devices_dir(char *buf, size_t len);
/* Look a PMU up (read once per sysfs root and cached for the process; the
 * cache is never freed, so pointers into it stay valid). 1 found, 0 no such
 * PMU, < 0 error with err filled (unreadable type). */
int ps_ev__pmu_find(const char *name, size_t len, const struct ps_ev_pmu **pmu, int column,
		    struct ps_event_error *err);
/* The PMU names in the devices directory, sorted; free with ps_ev__names_free. */
int ps_ev__pmu_names(char ***names, size_t *n);
void ps_ev__names_free(char **names, size_t n);
const struct ps_ev_format *ps_ev__pmu_format(const struct ps_ev_pmu *pmu, const char *key,
					     size_t len);
const struct ps_ev_alias *ps_ev__pmu_alias(const struct ps_ev_pmu *pmu, const char *key,
					   size_t len);

/* ---- libpfm4 (event/pfm.c) ---- */

/* s[*pos] starts a vendor name that may contain ':' (pmu::EVENT:UMASK:mod).
 * 1 claimed (attr filled, *pos advanced), 0 not a libpfm4 name (nothing
 * touched), < 0 error with err filled (the event exists but the rest does
 * not fit it). */
int ps_ev__parse_vendor(const char *s, size_t *pos, struct ps_ev_ref *ref, struct ps_event *ev,
			struct ps_event_error *err);
/* Forget libpfm4's state so the next use initialises it again (tests that
 * change LIBPFM_FORCE_PMU). Not thread-safe. */
void ps_ev__pfm_reset(void);
/* Why vendor event names cannot be resolved (libpfm4 missing or broken),
 * or NULL if they can or nothing asked for one yet. */
const char *ps_ev__pfm_unavailable(void);

struct ps_ev_pfm_entry {
	const char *pmu, *event, *umask, *desc;
};
/* Call fn for every event and unit mask of the PMUs libpfm4 finds present
 * (not its generic perf/perf_raw tables). 0, or -ENOENT without libpfm4. */
int ps_ev__pfm_foreach(int (*fn)(const struct ps_ev_pfm_entry *e, void *ctx), void *ctx);

/* ---- symbolic names (event/names.c), for the listing ---- */

struct ps_ev_sym_entry {
	const char *group; /* "hardware", "software", "cache" */
	const char *name;
	const char *desc;
	uint32_t type;
	uint64_t config;
};
/* A generic hardware or hardware-cache name (cycles, L1-dcache-load-misses),
 * as written inside a core PMU's terms (cpu/cycles/): 1 with its legacy
 * type and config, 0 when it is none, < 0 for a cache that cannot count
 * that operation. */
int ps_ev__legacy_hw(const char *s, size_t len, uint32_t *type, uint64_t *config);
int ps_ev__symbolic_foreach(int (*fn)(const struct ps_ev_sym_entry *e, void *ctx), void *ctx);

#endif /* PS_EVENT_H */
