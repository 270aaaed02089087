/*
 * call.c: the one path from C into Lua, and the way a signal stops it. Probes, sample handlers,
 * timers, the main chunk, REPL chunks, TAB completion and the binding's own setup all run through
 * ps_lua__call: under lua_pcall with a message handler that adds a traceback (as lua.c's msghandler
 * does), with the stack left as it was plus the results asked for. A failure is reported, counted
 * and, for a probe, runs the error probes and ends the session; flags say when it is the REPL
 * (which goes on), an error probe (which must not recurse), TAB completion (silent) or setup.
 * ps_lua__protect runs a C function the same way, for C code that touches the Lua API where a
 * metamethod could raise: global lookups under a strict _G, for one.
 */
#include <string.h>

#include "base/suggest.h"
#include "lua/internal.h"
#include "lua/probe.h"

/* The string keys of the table at idx, and of its metatable's __index
 * table (a counter's methods), as candidates. */
static void try_members(lua_State *L, int idx, struct ps_suggest *s)
{
	idx = lua_absindex(L, idx);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			if (!lua_getmetatable(L, idx))
				return;
			lua_getfield(L, -1, "__index");
			lua_remove(L, -2);
		} else {
			lua_pushvalue(L, idx);
		}
		if (lua_type(L, -1) == LUA_TTABLE) {
			lua_pushnil(L);
			while (lua_next(L, -2)) {
				if (lua_type(L, -2) == LUA_TSTRING)
					ps_suggest__try(s, lua_tostring(L, -2));
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1);
	}
}

/* "... (global 'perfmn')": the nearest global's name, NULL when none is
 * near. Plain reads of _G: a strict _G's __index (a function) is not run here. */
static const char *near_global(lua_State *L, const char *msg, struct ps_suggest *s)
{
	const char *g = strstr(msg, "(global '"), *end;

	if (!g || !strstr(msg, "attempt to") || !(end = strchr(g + 9, '\'')))
		return NULL;
	ps_suggest__init(s, g + 9, (size_t)(end - g - 9));
	lua_pushglobaltable(L);
	try_members(L, -1, s);
	lua_pop(L, 1);
	return s->best[0] ? s->best : NULL;
}

/* "... (method 'raed')" or "(field 'x')": the nearest member name of the
 * tables and objects the failing function holds (its locals and the
 * temporaries the call or index was built in), NULL when none is near. */
static const char *near_member(lua_State *L, const char *msg, struct ps_suggest *s)
{
	const char *m = strstr(msg, "(method '"), *end;
	size_t skip = 9;
	lua_Debug ar;
	const char *name;

	if (!m && (m = strstr(msg, "(field '")))
		skip = 8;
	if (!m || !strstr(msg, "attempt to") || !(end = strchr(m + skip, '\'')) ||
	    !lua_getstack(L, 1, &ar))
		return NULL;
	ps_suggest__init(s, m + skip, (size_t)(end - m - skip));
	for (int i = 1; (name = lua_getlocal(L, &ar, i)); i++) {
		if (lua_type(L, -1) == LUA_TTABLE || lua_type(L, -1) == LUA_TUSERDATA)
			try_members(L, -1, s);
		lua_pop(L, 1);
	}
	return s->best[0] ? s->best : NULL;
}

/* Whether a message says where it was raised ("file.lua:12: ..."): a bug
 * in the script, or a call that failed, whose traceback helps. A message
 * raised without (error(msg, 0), assert's) is the script's own sentence
 * for its user ("profile.lua: --switch-output wants ..."), and stands on
 * one line. */
static bool has_position(const char *msg)
{
	const char *eol = strchr(msg, '\n');

	for (const char *c = strchr(msg, ':'); c && (!eol || c < eol); c = strchr(c + 1, ':')) {
		size_t digits = strspn(c + 1, "0123456789");

		if (digits && c[1 + digits] == ':')
			return true;
	}
	return false;
}

/* Message handler: a did-you-mean for a misspelt global or member, then a
 * traceback, as lua.c does, for a message that says where it was raised. */
static int msghandler(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	struct ps_suggest s;
	const char *near = msg ? near_global(L, msg, &s) : NULL;

	if (msg && !near)
		near = near_member(L, msg, &s);

	if (near)
		msg = lua_pushfstring(L, "%s (did you mean '%s'?)", msg, near);

	if (!msg) {
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	}
	if (!has_position(msg)) {
		lua_pushstring(L, msg);
		return 1;
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

/* A signal's hook: every Lua instruction raises until the call that was
 * running returns to C (ps_lua__call clears it), so a script's own pcall
 * cannot swallow the interruption. A coroutine left suspended with the
 * hook set finds the interruption over when it runs again: the hook goes. */
static void interrupted(lua_State *L, lua_Debug *ar)
{
	struct ps_script *sc = ps_lua_script__from(L);

	(void)ar;
	if (!sc->hooked) {
		lua_sethook(L, NULL, 0, 0);
		return;
	}
	sc->hook_fired = true;
	luaL_error(L, "interrupted");
}

void ps_lua__stop_thread(lua_State *T)
{
	lua_sethook(T, interrupted, LUA_MASKCOUNT, 1);
}

/* In the signal handler (loop/signals.c): note the signal and stop the Lua
 * code running now, as lua.c does (lua_sethook is async-signal-safe), on
 * the coroutine that runs (lua/interrupt.c keeps track). The end probes,
 * once begun, are stopped only by a second signal. */
void ps_lua__on_signal(int signo, void *ctx)
{
	struct ps_script *sc = ctx;
	lua_State *running = sc->running;

	sc->signal_pending = signo;
	if (sc->depth > 0 && !sc->ending) {
		sc->hooked = true;
		ps_lua__stop_thread(running ? running : sc->L);
		if (running)
			ps_lua__stop_thread(sc->L);
	}
}

/* A call a signal interrupted: not an error of the script; the session acts
 * on the signal now (it may not be on the loop: the main chunk, begin). */
static void was_interrupted(struct ps_script *sc, unsigned flags, const char *where)
{
	sc->hook_fired = false;
	sc->signal_pending = 0;
	if (flags & PS_CALL_REPL)
		fprintf(stderr, "interrupted\n");
	else if (sc->o.verbose)
		fprintf(stderr, "perfscript: %s interrupted by a signal\n", where);
	ps_driver__take_signal(sc->driver);
}

/* The message on top, reported and acted on as flags say. */
static void failed(struct ps_script *sc, unsigned flags, const char *where)
{
	lua_State *L = sc->L;
	const char *msg = lua_tostring(L, -1), *nl;
	size_t len;

	if (sc->hook_fired) {
		was_interrupted(sc, flags, where);
		return;
	}
	if (flags & PS_CALL_SILENT)
		return;
	fflush(stdout);
	if (flags & PS_CALL_REPL) {
		fprintf(stderr, "%s\n", msg ? msg : "(no message)");
		return;
	}
	/* the message proper: what comes before its traceback */
	nl = msg ? strstr(msg, "\nstack traceback:") : NULL;
	len = msg ? (nl ? (size_t)(nl - msg) : strlen(msg)) : 0;
	if (flags & PS_CALL_REQUEST) {
		/* A client must not end the session nor change its exit
		 * status: the message proper, on one line. */
		fprintf(stderr, "perfscript: error in %s: %.*s\n", where, (int)len, msg ? msg : "");
		return;
	}
	fprintf(stderr, "perfscript: error in %s: %s\n", where, msg ? msg : "(no message)");
	sc->errors++;
	if (sc->ending || (flags & (PS_CALL_ERROR_PROBE | PS_CALL_SETUP)))
		return;
	/* The first error ends the session; error probes see the message
	 * proper. */
	lua_pushlstring(L, msg ? msg : "", len);
	ps_lua_phase__run(sc, PS_PHASE_ERROR, lua_tostring(L, -1));
	lua_pop(L, 1);
	ps_lua_script__stop(sc, PS_STOP_ERROR);
}

void ps_lua__call_init(lua_State *L)
{
	lua_pushcfunction(L, msghandler); /* at PS_LUA_MSGH for good */
}

int ps_lua__call(struct ps_script *sc, int nargs, int nresults, unsigned flags, const char *where)
{
	lua_State *L = sc->L;
	int base = lua_gettop(L) - nargs; /* the function's index */
	int rc;

	/* a signal caught between two calls stops the next before it starts */
	if (sc->signal_pending && !sc->ending && !sc->hooked) {
		sc->hooked = true;
		lua_sethook(L, interrupted, LUA_MASKCOUNT, 1);
	}
	sc->depth++;
	rc = lua_pcall(L, nargs, nresults, PS_LUA_MSGH);
	if (--sc->depth == 0) {
		sc->running = NULL;
		if (sc->hooked) {
			lua_sethook(L, NULL, 0, 0);
			sc->hooked = false;
		}
	}
	if (rc == LUA_OK && !sc->hook_fired)
		return 0;
	if (rc == LUA_OK) { /* interrupted, and a pcall of the script swallowed it */
		lua_settop(L, base - 1);
		was_interrupted(sc, flags, where);
		return -1;
	}
	failed(sc, flags, where);
	lua_settop(L, base - 1); /* the message */
	return -1;
}

int ps_lua__protect(struct ps_script *sc, lua_CFunction fn, void *ud, unsigned flags,
		    const char *where)
{
	if (!lua_checkstack(sc->L, 3))
		return -1;
	lua_pushcfunction(sc->L, fn);
	lua_pushlightuserdata(sc->L, ud);
	return ps_lua__call(sc, 1, 0, flags, where);
}
