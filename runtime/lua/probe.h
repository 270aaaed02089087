/*
 * probe.h: probe kinds as providers. probe(point, handler [, options])
 * (lua/probe.c) asks each provider in turn whether the point is its own; a
 * provider is one small file with the same shape: parse a point, attach a
 * handler, start with the session, stop with it, detach everything. The
 * table of providers also lists the points they know, for "did you mean"
 * and for perfmon.points() (docs/api.md documents each one; a test checks).
 */
#ifndef PS_LUA_PROBE_H
#define PS_LUA_PROBE_H

#include "lua/internal.h"

/* A parsed probe point. */
struct ps_lua_point {
	char arg[64];	  /* the part in parentheses, as written */
	double value;	  /* its number, when it is one */
	lua_Integer prio; /* phases: begin(N), end(N) */
	int kind;	  /* the provider's own */
	char where[128];  /* "script.lua:12:" of the registration */
};

struct ps_lua_provider {
	const char *name;	   /* "timer" */
	const char *const *points; /* the points it knows, as documented; NULL-ended */
	bool source;		   /* its probes fire while the session runs... */
	bool source_on_self;	   /* ...even when the script counts only itself */
	/* 1 with *pt filled when point is this provider's, 0 when it is not;
	 * raises for a malformed point of its own. */
	int (*parse)(lua_State *L, const char *point, struct ps_lua_point *pt);
	/* Register the handler at stack index 2 (options at 3); raises on misuse. */
	int (*attach)(lua_State *L, struct ps_script *sc, const char *point,
		      const struct ps_lua_point *pt);
	/* The session starts (or, at the REPL, a chunk registered more): 0, or
	 * -1 with sc->setup_error saying why. */
	int (*start)(struct ps_script *sc);
	/* The session ends (before the end probes). */
	void (*stop)(struct ps_script *sc);
	/* After the end probes: say what the user should know (losses). */
	void (*report)(struct ps_script *sc);
	/* Forget every probe (the script is freed). */
	void (*detach)(struct ps_script *sc);
	/* How many probes are attached. */
	size_t (*count)(const struct ps_script *sc);
};

extern const struct ps_lua_provider ps_lua_phase_provider;  /* lua/probe_phase.c */
extern const struct ps_lua_provider ps_lua_timer_provider;  /* lua/probe_timer.c */
extern const struct ps_lua_provider ps_lua_sample_provider; /* lua/probe_sample.c */
extern const struct ps_lua_provider ps_lua_lost_provider;   /* lua/probe_lost.c */

/* lua/probe.c: probe() and perfmon.points(); the providers in one table. */
void ps_lua_probe__open(lua_State *L, struct ps_script *sc);
/* Start / stop / detach every provider; start returns -1 at the first failure. */
int ps_lua_probe__start(struct ps_script *sc);
void ps_lua_probe__stop(struct ps_script *sc);
void ps_lua_probe__report(struct ps_script *sc);
void ps_lua_probe__detach(struct ps_script *sc);
/* Whether anything can still fire once begin probes ran; self: the script
 * counts only itself, so nothing happens that its handlers do not do. */
bool ps_lua_probe__sources(const struct ps_script *sc, bool self);

/* lua/probe_phase.c: run every probe of a phase, in order (arg: error's message). */
enum ps_lua_phase { PS_PHASE_BEGIN, PS_PHASE_END, PS_PHASE_ERROR };
void ps_lua_phase__run(struct ps_script *sc, enum ps_lua_phase phase, const char *arg);

/* lua/probe_sample.c: NAME of perfmon.sample(NAME) and perfmon.lost(NAME). */
struct ps_lua_target {
	char name[64];	  /* global name, or "" when a handle was given */
	ps_handle handle; /* given, or resolved at start */
	char where[128];  /* "script.lua:12:" of the registration */
};
/* Parse "PREFIX(NAME)" into t: 1, 0 when point is not that form; raises
 * when NAME is neither a global name nor a handle. */
int ps_lua_target__parse(lua_State *L, const char *point, const char *prefix,
			 struct ps_lua_target *t);
/* Resolve t to a live sampling counter: 0, or -1 with sc->setup_error set
 * (or empty after a Lua error, reported: a strict _G may raise). every: a
 * tracepoint or probe without period= is made to sample every hit. */
int ps_lua_target__resolve(struct ps_script *sc, struct ps_lua_target *t, const char *kind,
			   bool every);
/* lua/probe_sample.c, lua/probe_lost.c: the session's sample ops. */
int ps_lua_sample__on_sample(const struct ps_sample *s, void *ctx);
/* lua/script.c: say on stderr how many samples of h were lost or throttled,
 * once per counter however many probes name it. */
void ps_lua_script__report_lost(struct ps_script *sc, ps_handle h);
void ps_lua_lost__on_record(struct ps_script *sc, const struct ps_record *r);

#endif /* PS_LUA_PROBE_H */
