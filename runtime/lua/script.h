/*
 * script.h: the Lua 5.4 binding as the CLI sees it. A ps_script is one run
 * of one probe script: its lua_State, its counter session driven by the
 * session driver (loop/), and the probes it registered. Its fields are the
 * binding's own (lua/internal.h); the CLI sets what it knows through
 * struct ps_script_opts and reaches the rest through the calls below. Every
 * call into Lua runs through ps_lua__call, the one protected path.
 */
#ifndef PS_LUA_SCRIPT_H
#define PS_LUA_SCRIPT_H

#include <lua.h>
#include <stdbool.h>
#include <stdio.h>

#include "loop/loop.h"

struct ps_script;

struct ps_script_opts {
	size_t sz;		  /* sizeof(struct ps_script_opts) */
	int verbose;		  /* say what the session does, on stderr */
	double duration;	  /* end the session after this many seconds; 0: never */
	const char *command;	  /* the target command as the user wrote it, or NULL */
	const char *const *paths; /* tapset directories searched first, in order */
	size_t npaths;
	bool raw_names;		/* symbol names as the tables spell them, not demangled */
	bool debuginfod_set;	/* else the symbolizer's default (2 s) */
	double debuginfod_wait; /* ps_symbols__set_debuginfod's wait_s */
};

/* A script on session (not owned); NULL + errno (the reason printed). */
struct ps_script *ps_lua_script__new(struct ps_session *session, const struct ps_script_opts *o);
void ps_lua_script__free(struct ps_script *sc);
/* Load and run the main chunks (a file, or code when is_code: each -e its
 * own chunk, in order) with the script arguments, then begin probes, the
 * session, end probes. pre[0..npre) are arg[-npre..-1] (the interpreter's
 * own arguments). Returns the exit status. */
int ps_lua_script__run(struct ps_script *sc, const char *const *chunks, int nchunks, bool is_code,
		       char **args, int nargs, char **pre, int npre);

/* Set the global arg as lua(1) does: arg[0] script, arg[1..nargs] args,
 * arg[-npre..-1] pre. 0, or -1 (reported). */
int ps_lua_script__args(struct ps_script *sc, const char *script, char **args, int nargs,
			char **pre, int npre);
/* The pieces of a run, for the REPL: start the session (-1 when it cannot
 * start, the reason printed and counted as an error), and end it (drain, end probes, the lost
 * report, the command; returns the exit status). */
int ps_lua_script__start(struct ps_script *sc);
int ps_lua_script__end(struct ps_script *sc);
/* After a chunk typed at the REPL: open what it allocated, resolve the
 * sample probes it registered; failures are said, the session goes on. */
void ps_lua_script__settle(struct ps_script *sc);
/* The REPL's input ended. */
void ps_lua_script__input_ended(struct ps_script *sc);
bool ps_lua_script__stopping(const struct ps_script *sc);
/* SIGINT goes to fn (which returns true when it took it) before it ends
 * the session. */
void ps_lua_script__on_interrupt(struct ps_script *sc, bool (*fn)(void *ctx), void *ctx);
lua_State *ps_lua_script__state(const struct ps_script *sc);
struct ps_loop *ps_lua_script__loop(const struct ps_script *sc);

/* How ps_lua__call reports a failure. */
enum ps_call_flags {
	PS_CALL_REPL = 1u << 0,	       /* a REPL chunk: the message as lua(1) prints it; the
					* session goes on and the exit status is kept */
	PS_CALL_ERROR_PROBE = 1u << 1, /* an error probe: its failure runs no error probe */
	PS_CALL_SILENT = 1u << 2,      /* TAB completion: a failure says nothing */
	PS_CALL_SETUP = 1u << 3,       /* before the script runs: reported, counted, no probe */
	PS_CALL_REQUEST = 1u << 4,     /* a request from outside (HTTP): one line on stderr, the
					* session goes on and the exit status is kept */
};

/* The one protected-call path: the function and its nargs arguments are on
 * the stack. Runs it with a traceback handler and keeps the stack balanced
 * (nresults results left on success, nothing on failure). A failure is
 * reported and, unless flags say otherwise, counted: the error probes run
 * with the message and the session ends. Returns 0, or -1 after an error. */
int ps_lua__call(struct ps_script *sc, int nargs, int nresults, unsigned flags, const char *where);
/* The message handler every ps_lua__call uses lives at the bottom of the
 * script's stack, pushed once as the state is made (no call pushes and
 * removes it): nothing may pop the main stack below it. */
#define PS_LUA_MSGH 1
void ps_lua__call_init(lua_State *L);
/* Run fn(L) protected, with ud as its one argument (a light userdata),
 * through ps_lua__call. */
int ps_lua__protect(struct ps_script *sc, lua_CFunction fn, void *ud, unsigned flags,
		    const char *where);

#endif /* PS_LUA_SCRIPT_H */
