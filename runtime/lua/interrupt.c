/*
 * interrupt.c: a signal stops Lua code wherever it runs. The signal handler
 * (lua/call.c) sets a hook on the Lua thread that is running, and the hook
 * raises "interrupted" at its next instruction; Lua has no call that says
 * which thread is running, so this file keeps track of it:
 *
 *  - coroutine.resume, coroutine.wrap's functions and coroutine.close are
 *    perfscript's own: they note the coroutine they run in sc->running
 *    before Lua switches to it, and when it hands control back while an
 *    interruption is under way, its resumer is stopped too, so a loop that
 *    catches the coroutine's error and resumes another cannot go on;
 *  - Lua runs finalizers (__gc) with hooks off, so a __gc function a script
 *    gives setmetatable runs in a coroutine of its own, where hooks work.
 *    getmetatable(x).__gc is then that trampoline, not the script's
 *    function; a __gc set on a metatable after setmetatable is not covered.
 *
 * A resume costs two stores more than Lua's; a finalizer of a script's own
 * object costs one coroutine.
 */
#include "lua/internal.h"

/* Each function here keeps the script as its last upvalue. */
static struct ps_script *script(lua_State *L, int up)
{
	return lua_touserdata(L, lua_upvalueindex(up));
}

/* Resume co from L, with co noted as the running thread meanwhile. */
static int resume(struct ps_script *sc, lua_State *L, lua_State *co, int narg, int *nres)
{
	lua_State *outer = sc->running;
	int status;

	sc->running = co;
	if (sc->hooked)
		ps_lua__stop_thread(co);
	status = lua_resume(co, L, narg, nres);
	sc->running = outer;
	if (sc->hooked)
		ps_lua__stop_thread(L); /* whatever L does with co's error */
	return status;
}

/* Move co's results (or its error) to L: their count, or -1 for an error
 * now on top of L. */
static int take_results(lua_State *L, lua_State *co, int status, int nres)
{
	if (status != LUA_OK && status != LUA_YIELD) {
		lua_xmove(co, L, 1);
		return -1;
	}
	if (!lua_checkstack(L, nres + 1)) {
		lua_pop(co, nres);
		lua_pushliteral(L, "too many results to resume");
		return -1;
	}
	lua_xmove(co, L, nres);
	return nres;
}

static int run(struct ps_script *sc, lua_State *L, lua_State *co, int narg)
{
	int nres = 0, status;

	if (!lua_checkstack(co, narg)) {
		lua_pushliteral(L, "too many arguments to resume");
		return -1;
	}
	lua_xmove(L, co, narg);
	status = resume(sc, L, co, narg, &nres);
	return take_results(L, co, status, nres);
}

/* coroutine.resume(co, ...) -> true, results | false, error */
static int co_resume(lua_State *L)
{
	lua_State *co = lua_tothread(L, 1);
	int n;

	luaL_argexpected(L, co, 1, "coroutine");
	n = run(script(L, 1), L, co, lua_gettop(L) - 1);
	lua_pushboolean(L, n >= 0);
	lua_insert(L, n >= 0 ? -(n + 1) : -2);
	return n >= 0 ? n + 1 : 2;
}

/* A function of coroutine.wrap: resumes its coroutine and raises its
 * errors, with the caller's position added to a string error, and the
 * coroutine's pending to-be-closed variables closed. */
static int co_wrapped(lua_State *L)
{
	lua_State *co = lua_tothread(L, lua_upvalueindex(1));
	int n = run(script(L, 2), L, co, lua_gettop(L)), status;

	if (n >= 0)
		return n;
	status = lua_status(co);
	if (status != LUA_OK && status != LUA_YIELD) { /* it died of the error */
		status = lua_resetthread(co);
		lua_pop(L, 1);
		lua_xmove(co, L, 1);
	}
	if (status != LUA_ERRMEM && lua_type(L, -1) == LUA_TSTRING) {
		luaL_where(L, 1);
		lua_insert(L, -2);
		lua_concat(L, 2);
	}
	return lua_error(L);
}

/* coroutine.wrap(f) -> function */
static int co_wrap(lua_State *L)
{
	lua_State *co;

	luaL_checktype(L, 1, LUA_TFUNCTION);
	co = lua_newthread(L);
	lua_pushvalue(L, 1);
	lua_xmove(L, co, 1);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_pushcclosure(L, co_wrapped, 2);
	return 1;
}

/* coroutine.close(co): Lua's, with co noted as running while its
 * to-be-closed variables' __close functions run. */
static int co_close(lua_State *L)
{
	struct ps_script *sc = script(L, 2);
	lua_State *outer = sc->running, *co = lua_tothread(L, 1);
	int n;

	sc->running = co ? co : outer;
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
	sc->running = outer;
	n = lua_gettop(L);
	return n;
}

/* A script's finalizer, run in a coroutine of its own (upvalue 1). An
 * interruption there ends the finalizer quietly and stops the thread that
 * collected once hooks are allowed on it again. */
static int gc_trampoline(lua_State *L)
{
	struct ps_script *sc = script(L, 2);
	lua_State *co = lua_newthread(L);
	int nres = 0, status;

	lua_pushvalue(L, lua_upvalueindex(1));
	lua_pushvalue(L, 1);
	lua_xmove(L, co, 2);
	status = resume(sc, L, co, 1, &nres);
	if (status == LUA_YIELD)
		return luaL_error(L, "attempt to yield from a __gc metamethod");
	if (status != LUA_OK && !sc->hooked) {
		lua_xmove(co, L, 1);
		return lua_error(L); /* Lua makes it a warning, as for any __gc error */
	}
	return 0;
}

/* setmetatable(t, mt): Lua's, with a Lua __gc function of mt put in a
 * trampoline first. */
static int set_metatable(lua_State *L)
{
	int t = lua_type(L, 2);

	/* checked here, where Lua can name this function in the message */
	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
	if (t == LUA_TTABLE) {
		if (lua_getfield(L, 2, "__gc") == LUA_TFUNCTION && !lua_iscfunction(L, -1)) {
			lua_pushvalue(L, lua_upvalueindex(2));
			lua_pushcclosure(L, gc_trampoline, 2);
			lua_setfield(L, 2, "__gc");
		} else
			lua_pop(L, 1);
	}
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, 1);
	return 1;
}

/* Replace field name of the table on top by fn, closing over the old value
 * (when keep_old) and the script. */
static void replace(lua_State *L, struct ps_script *sc, const char *name, lua_CFunction fn,
		    bool keep_old)
{
	if (keep_old)
		lua_getfield(L, -1, name);
	lua_pushlightuserdata(L, sc);
	lua_pushcclosure(L, fn, keep_old ? 2 : 1);
	lua_setfield(L, -2, name);
}

void ps_lua_interrupt__open(lua_State *L)
{
	struct ps_script *sc = ps_lua_script__from(L);

	lua_getglobal(L, "coroutine");
	replace(L, sc, "resume", co_resume, false);
	replace(L, sc, "wrap", co_wrap, false);
	replace(L, sc, "close", co_close, true);
	lua_pop(L, 1);
	lua_pushglobaltable(L);
	replace(L, sc, "setmetatable", set_metatable, true);
	lua_pop(L, 1);
}
