/*
 * script.h: the Lua 5.4 side of perfscript, shared by the lua_*.c files
 * and the CLI. A ps_script is one run of one probe script: its lua_State,
 * its counter session, its event loop and the probes it registered. The
 * Lua-free core (perfscript.h) knows nothing of it.
 */
#ifndef PS_LUA_SCRIPT_H
#define PS_LUA_SCRIPT_H

#include <lua.h>
#include <stdbool.h>
#include <stdio.h>

#include "perfscript.h"

struct ps_timer_probe;
struct ps_samplers;
struct ps_sample_state;
struct ps_aggregates;

struct ps_script {
	lua_State *L;
	struct ps_session *session;
	struct ps_loop *loop;
	int verbose;

	bool started;	  /* begin probes ran: timers are armed on registration */
	bool ending;	  /* end probes are running or ran */
	bool stop_asked;  /* exit(), a signal, -T or the target ended the session */
	bool exit_called; /* by exit(): no sample handler runs after it */
	char stop_reason[64];
	int errors;	     /* handler errors so far */
	int exit_status;     /* status perfscript exits with when no error occurred */
	double duration;     /* -T, seconds; 0 = none */
	const char *command; /* the -c string, or NULL */

	struct ps_timer_probe *timers;		    /* linked list, in registration order */
	struct ps_samplers *samplers;		    /* perfmon.sample/lost probes (lua/sample.c) */
	struct ps_sample_state *sample_state;	    /* the sample object (lua/sample_object.c) */
	struct ps_aggregates *aggregates;	    /* in-kernel configurations (lua/aggregate.c) */
	bool bpf_told;				    /* the BPF fallback notice was printed */
	char sample_error[512];			    /* why a sample probe could not be resolved */
	int nsignals;				    /* SIGINT/SIGTERM seen */
	void (*on_interrupt)(struct ps_script *sc); /* set by the REPL: SIGINT is its */
	bool target_done;			    /* the -c/-p target exited */
	int target_wstatus;
};

/* Script setup (lua/script.c). */
struct ps_script *ps_script__new(struct ps_session *session, int verbose);
void ps_script__free(struct ps_script *sc);
/* Tapset search path: DIR is prepended to package.path (DIR/?.lua). */
void ps_script__add_path(struct ps_script *sc, const char *dir);
/* Load and run the main chunk (file, or code when is_code), with script
 * arguments; then begin probes, context, loop, end probes. Returns the
 * process exit status. */
int ps_script__run(struct ps_script *sc, const char *chunk, bool is_code, char **args, int nargs,
		   char **argv0, int argv0n);

/* The pieces of ps_script__run, for the REPL: start the session (context,
 * target, timers, signals; -1 when it cannot start, reason printed), and end
 * it (drain, end probes, lost report, the command; returns the exit status). */
int ps_script__start(struct ps_script *sc);
int ps_script__end(struct ps_script *sc);

/* The one protected-call path (lua/script.c): the function and its nargs
 * arguments are on the stack. Runs it with a traceback handler, keeps the
 * stack balanced, counts an error, reports it and ends the session. Returns
 * 0 or -1 when the handler raised an error. */
int ps_script__call(struct ps_script *sc, int nargs, const char *where);
/* End the session from inside (exit(), a signal, the target's end, -T);
 * why is said with -v. The first reason given is the one kept. */
void ps_script__stop(struct ps_script *sc, const char *why);
/* Open the counters allocated and not yet open; report failure as a Lua
 * environment error: returns 0, or -errno after printing nothing (msg holds
 * the explanation). */
int ps_script__create_context(struct ps_script *sc, char *msg, size_t msglen);
/* After any counter was opened: put new ring buffers into the loop. */
void ps_script__opened(struct ps_script *sc);

struct ps_script *ps_script__from(lua_State *L);

/* Probes (lua/probe.c). */
void ps_probe__open(lua_State *L, struct ps_script *sc);
/* Run every probe registered on a point: "begin", "end" or "error". */
void ps_probe__run_point(struct ps_script *sc, const char *point, const char *arg);
bool ps_probe__has_point(struct ps_script *sc, const char *point);
/* Arm the timers registered so far (at session start). */
int ps_probe__arm_timers(struct ps_script *sc);
size_t ps_probe__timer_count(const struct ps_script *sc);
void ps_probe__free(struct ps_script *sc);

/* The perfmon module and the seed globals (lua/perfmon.c). */
int ps_perfmon__open(lua_State *L);

/* package.preload["perfscript.stats_core"], the stats tapset's summary
 * mode in C (lua/stats.c). */
void ps_stats__open(lua_State *L);

/* package.preload["perfscript.pprof"]: pprof profiles to and from tables
 * (lua/pprof.c, lua/pprof_decode.c). */
void ps_pprof__open(lua_State *L);

/* stap-style helpers: printf, exit, pid, ... (lua/helpers.c). */
void ps_helpers__open(lua_State *L, struct ps_script *sc);

#endif
