/*
 * perfmon.h: what the files of the perfmon module share: the class
 * names, the counter userdata, and the helpers that turn session results into
 * Lua's conventions (misuse raises; an environment failure returns nil or 0,
 * a message and a code). lua/perfmon.c has the module and counter objects,
 * lua/group.c the group objects, lua/seed.c the seed API globals. Every
 * function of the module carries the session as upvalue 1.
 */
#ifndef PS_LUA_PERFMON_H
#define PS_LUA_PERFMON_H

#include <lauxlib.h>

#include "lua/internal.h"

#define PS_COUNTER_MT "perfscript.counter"
#define PS_GROUP_MT   "perfscript.group"
/* Handles kept on the C stack for a group read; larger groups use the heap. */
#define PS_SMALL_GROUP 64

struct counter_ud {
	ps_handle h; /* 0 once closed */
};

static inline struct ps_session *ps_lua__session(lua_State *L)
{
	return lua_touserdata(L, lua_upvalueindex(1));
}

/* Raise for a handle the session does not know. */
int ps_lua__bad_handle(lua_State *L, const char *fn, lua_Integer h, int rc);
/* Push nil (or 0 when zero), message, code: an environment failure; returns 3. */
int ps_lua__fail(lua_State *L, bool zero, const char *msg, int rc);
/* Allocate the counters of the event string at stack index arg, however
 * many it gives: *hs points into a userdata pushed on the stack (the GC
 * frees it) and the count is returned; or a negative code, nothing pushed,
 * with msg saying why (the parser's sentence; a NUL byte inside the Lua
 * string, which C would silently cut there, is refused with its column). */
int ps_lua__allocate(lua_State *L, int arg, ps_handle **hs, char *msg, size_t len);
/* Open one counter (and its group); new sample rings join the loop. */
int ps_lua__open_one(lua_State *L, ps_handle h, char *msg, size_t len);
/* The event string at arg, or NULL with msg said and the code in *rc: a
 * NUL byte inside the Lua string, which C would silently cut there. */
const char *ps_lua__check_spec(lua_State *L, int arg, char *msg, size_t len, int *rc);

/* lua/describe.c: perfmon.describe(spec) -> { {type=, config=, ...}, ... }
 * | nil, message, code */
int ps_lua__describe(lua_State *L);

/* lua/group.c */
extern const luaL_Reg ps_lua_group__methods[], ps_lua_group__meta[];
int ps_lua_group__new(lua_State *L);   /* perfmon.group(spec) */
int ps_lua__read_many(lua_State *L);   /* perfmon.read_many(list[, into]) */
int ps_lua_regions__new(lua_State *L); /* perfmon.regions([spec]), lua/region.c */
int ps_lua_region__call(lua_State *L); /* perfmon.region(name, fn, ...) */
/* lua/overflow.c: perfmon.overflow(spec [, handler]) and perfmon.poll();
 * ps_lua_overflow__poll runs the queued handlers (a safe point) and
 * returns how many ran. */
void ps_lua_overflow__register(lua_State *L); /* its metatable, at require */
int ps_lua_overflow__new(lua_State *L);
int ps_lua_overflow__poll_fn(lua_State *L);
int ps_lua_overflow__poll(lua_State *L);

/* lua/seed.c */
extern const luaL_Reg ps_lua_seed__globals[];

#endif
