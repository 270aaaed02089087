/*
 * perfmon.c: the perfmon module and its counter objects. A counter
 * ("perfscript.counter") wraps a session handle and closes it exactly once,
 * by :close(), <close> or __gc. Groups live in lua/group.c,
 * perfmon.describe in lua/describe.c and the seed API
 * globals of the SystemTap perfmon proposal in lua/seed.c.
 * Misuse (a stale handle, a wrong type) raises; an environment failure (a bad
 * event string, an event this machine cannot count) returns nil or 0 with a
 * message, like io.open.
 */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "base/utf8.h"
#include "lua/output.h"
#include "lua/perfmon.h"

const char *ps_lua__zero_handle_cause(const struct ps_script *sc, lua_Integer h)
{
	return h == 0 && sc && sc->alloc_error[0] ? sc->alloc_error : "";
}

/* Raise for a handle the session does not know. */
int ps_lua__bad_handle(lua_State *L, const char *fn, lua_Integer h, int rc)
{
	char hex[24];

	snprintf(hex, sizeof(hex), "%#llx", (unsigned long long)h); /* Lua's %I has no hex */
	return luaL_error(L, "%s: bad handle %s: %s%s", fn, hex, ps_strerror(rc),
			  ps_lua__zero_handle_cause(ps_lua_script__from(L), h));
}

/* Return nil (or 0), message, code: an environment failure. */
int ps_lua__fail(lua_State *L, bool zero, const char *msg, int rc)
{
	if (zero)
		lua_pushinteger(L, 0);
	else
		lua_pushnil(L);
	lua_pushstring(L, msg);
	lua_pushinteger(L, rc < 0 ? -rc : rc);
	return 3;
}

const char *ps_lua__check_spec(lua_State *L, int arg, char *msg, size_t len, int *rc)
{
	size_t slen;
	const char *spec = luaL_checklstring(L, arg, &slen);

	*rc = ps_text__check(spec, slen, "event string", msg, len);
	return *rc < 0 ? NULL : spec;
}

int ps_lua__allocate(lua_State *L, int arg, ps_handle **hs, char *msg, size_t len)
{
	struct ps_session *s = ps_lua__session(L);
	struct ps_event_error err = {0};
	size_t cap = 256;
	int n = 0;
	const char *spec = ps_lua__check_spec(L, arg, msg, len, &n);

	if (!spec)
		return n;
	for (;;) {
		*hs = lua_newuserdatauv(L, cap * sizeof(**hs), 0);
		n = ps_session__allocate(s, spec, *hs, cap, &err);
		if (n != -ENOSPC)
			break;
		lua_pop(L, 1);
		cap = err.needed; /* the C call says how many it needs */
	}
	if (n >= 0)
		return n;
	lua_pop(L, 1);
	snprintf(msg, len, "%s", err.message[0] ? err.message : ps_strerror(n));
	/* the 0 a seed caller gets back may be used later: say then why it is 0 */
	snprintf(ps_lua_script__from(L)->alloc_error, sizeof(ps_lua_script__from(L)->alloc_error),
		 " (0 is what a failed allocation returns; the last one, of '%.120s', failed: "
		 "%.300s)",
		 spec, msg);
	return n;
}

/* Open one counter (and its group); new sample rings join the loop. */
int ps_lua__open_one(lua_State *L, ps_handle h, char *msg, size_t len)
{
	int rc = ps_session__open_counter(ps_lua__session(L), h, msg, len);

	if (rc == 0)
		ps_lua_script__opened(ps_lua_script__from(L));
	return rc;
}

/* ---- counter objects ---- */

/* Argument 1 as a counter. Methods carry their class's metatable as upvalue
 * 2, so the common case is one raw comparison instead of luaL_checkudata's
 * registry lookup by name; anything else gets luaL_checkudata's message. */
static struct counter_ud *to_counter(lua_State *L)
{
	struct counter_ud *c = lua_touserdata(L, 1);

	if (c && lua_getmetatable(L, 1)) {
		bool same = lua_rawequal(L, -1, lua_upvalueindex(2));

		lua_pop(L, 1);
		if (same)
			return c;
	}
	return luaL_checkudata(L, 1, PS_COUNTER_MT);
}

static struct counter_ud *check_counter(lua_State *L)
{
	struct counter_ud *c = to_counter(L);

	if (!c->h)
		luaL_error(L, "attempt to use a closed counter");
	return c;
}

static int push_counter(lua_State *L, ps_handle h)
{
	struct counter_ud *c = lua_newuserdatauv(L, sizeof(*c), 0);

	c->h = h;
	luaL_setmetatable(L, PS_COUNTER_MT);
	return 1;
}

static int c_start(lua_State *L)
{
	struct ps_session *s = ps_lua__session(L);
	struct counter_ud *c = check_counter(L);
	char msg[1024] = "";
	int rc = ps_session__is_open(s, c->h) ? 0 : ps_lua__open_one(L, c->h, msg, sizeof(msg));

	if (rc < 0)
		return ps_lua__fail(L, false, msg[0] ? msg : ps_strerror(rc), rc);
	rc = ps_session__start(s, c->h);
	if (rc < 0)
		return ps_lua__fail(L, false, ps_strerror(rc), rc);
	lua_settop(L, 1);
	return 1;
}

static int c_stop(lua_State *L)
{
	struct counter_ud *c = check_counter(L);
	int rc = ps_session__stop(ps_lua__session(L), c->h);

	if (rc < 0)
		return ps_lua__fail(L, false, ps_strerror(rc), rc);
	lua_settop(L, 1);
	return 1;
}

static int c_reset(lua_State *L)
{
	struct counter_ud *c = check_counter(L);
	int rc = ps_session__reset(ps_lua__session(L), c->h);

	if (rc < 0)
		return ps_lua__fail(L, false, ps_strerror(rc), rc);
	lua_settop(L, 1);
	return 1;
}

/* c:read() -> value, enabled, running, raw; nil and "not supported" (its
 * open failed) or "not counted" (enabled, never running), as perf stat
 * prints <not supported> and <not counted> rather than a 0 */
static int c_read(lua_State *L)
{
	struct counter_ud *c = check_counter(L);
	struct ps_value v;
	int rc = ps_session__read(ps_lua__session(L), c->h, &v);

	if (rc == -PS_ERR_NOT_SUPPORTED)
		return ps_lua__fail(L, false, "not supported", rc);
	if (rc < 0)
		return ps_lua__fail(L, false, ps_strerror(rc), rc);
	if (v.enabled && !v.running)
		return ps_lua__fail(L, false, "not counted", -PS_ERR_STATE);
	lua_pushinteger(L, (lua_Integer)v.value);
	lua_pushinteger(L, (lua_Integer)v.enabled);
	lua_pushinteger(L, (lua_Integer)v.running);
	lua_pushinteger(L, (lua_Integer)v.raw);
	return 4;
}

static int c_close(lua_State *L)
{
	struct counter_ud *c = luaL_checkudata(L, 1, PS_COUNTER_MT);

	if (c->h) {
		ps_session__free_counter(ps_lua__session(L), c->h);
		c->h = 0;
	}
	return 0;
}

/* c:scaled() -> value * the event's sysfs .scale, and its .unit */
static int c_scaled(lua_State *L)
{
	struct counter_ud *c = check_counter(L);
	struct ps_session *s = ps_lua__session(L);
	struct ps_value v;
	double scale = 1.0;
	const char *unit = "";
	int rc = ps_session__read(s, c->h, &v);

	if (rc < 0)
		return ps_lua__fail(L, false, ps_strerror(rc), rc);
	ps_session__scale(s, c->h, &scale, &unit);
	lua_pushnumber(L, (lua_Number)v.value * scale);
	lua_pushstring(L, unit);
	return 2;
}

static int c_handle(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)check_counter(L)->h);
	return 1;
}

static int c_name(lua_State *L)
{
	lua_pushstring(L, ps_session__name(ps_lua__session(L), check_counter(L)->h));
	return 1;
}

static int c_spec(lua_State *L)
{
	lua_pushstring(L, ps_session__spec(ps_lua__session(L), check_counter(L)->h));
	return 1;
}

static int c_tostring(lua_State *L)
{
	struct counter_ud *c = luaL_checkudata(L, 1, PS_COUNTER_MT);
	struct ps_session *s = ps_lua__session(L);
	struct ps_value v = {0};

	if (!c->h || ps_session__read(s, c->h, &v) < 0)
		lua_pushfstring(L, PS_COUNTER_MT " (closed): %p", (void *)c);
	else
		lua_pushfstring(L, PS_COUNTER_MT " '%s': %I", ps_session__name(s, c->h),
				(lua_Integer)v.value);
	return 1;
}

static const luaL_Reg counter_methods[] = {
    {"start", c_start}, {"stop", c_stop},     {"read", c_read},	    {"reset", c_reset},
    {"close", c_close}, {"scaled", c_scaled}, {"handle", c_handle}, {"name", c_name},
    {"spec", c_spec},	{NULL, NULL},
};

static const luaL_Reg counter_meta[] = {
    {"__gc", c_close},
    {"__close", c_close},
    {"__tostring", c_tostring},
    {NULL, NULL},
};

/* ---- module functions ---- */

/* perfmon.counter(spec) -> counter... | nil, message, code */
static int m_counter(lua_State *L)
{
	ps_handle *hs;
	char msg[400];
	int n = ps_lua__allocate(L, 1, &hs, msg, sizeof(msg));

	if (n < 0)
		return ps_lua__fail(L, false, msg, n);
	luaL_checkstack(L, n, "too many events");
	for (int i = 0; i < n; i++)
		push_counter(L, hs[i]);
	return n;
}

/* perfmon.open() -> true | nil, message, errno: the context, as
 * perfmon_create_context. */
static int m_open(lua_State *L)
{
	char msg[1024] = "";
	int rc = ps_lua_script__create_context(ps_lua_script__from(L), msg, sizeof(msg));

	if (rc < 0)
		return ps_lua__fail(L, false, msg[0] ? msg : ps_strerror(rc), rc);
	lua_pushboolean(L, 1);
	return 1;
}

/* A handle argument: an integer handle or a counter object. */
static ps_handle handle_arg(lua_State *L, int idx)
{
	struct counter_ud *c = luaL_testudata(L, idx, PS_COUNTER_MT);

	if (c)
		return c->h;
	if (!lua_isinteger(L, idx))
		luaL_typeerror(L, idx, "counter handle or " PS_COUNTER_MT);
	return (ps_handle)lua_tointeger(L, idx);
}

/* perfmon.lost(h) -> lost, throttled: samples of h lost so far. */
static int m_lost(lua_State *L)
{
	struct ps_sample_stats st;
	ps_handle h = handle_arg(L, 1);
	int rc = ps_sampler__stats(ps_lua__session(L), h, &st);

	if (rc < 0)
		return ps_lua__bad_handle(L, "perfmon.lost", (lua_Integer)h, rc);
	lua_pushinteger(L, (lua_Integer)st.lost);
	lua_pushinteger(L, (lua_Integer)st.throttled);
	return 2;
}

/* perfmon.stats(h) -> { samples, lost, throttled, unthrottled, malformed } */
static int m_stats(lua_State *L)
{
	struct ps_sample_stats st;
	ps_handle h = handle_arg(L, 1);
	int rc = ps_sampler__stats(ps_lua__session(L), h, &st);

	if (rc < 0)
		return ps_lua__bad_handle(L, "perfmon.stats", (lua_Integer)h, rc);
	const struct {
		const char *name;
		uint64_t v;
	} f[] = {{"samples", st.samples},
		 {"lost", st.lost},
		 {"throttled", st.throttled},
		 {"unthrottled", st.unthrottled},
		 {"malformed", st.malformed}};

	lua_createtable(L, 0, 5);
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		lua_pushinteger(L, (lua_Integer)f[i].v);
		lua_setfield(L, -2, f[i].name);
	}
	return 1;
}

/* perfmon.time() -> ns: the sample clock, read in user space (core/clock.c). */
static int m_time(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)ps_time());
	return 1;
}

/* perfmon.time_source() -> "tsc" | "clock_gettime", why not tsc */
static int m_time_source(lua_State *L)
{
	const char *why;

	lua_pushstring(L, ps_time_source(&why));
	lua_pushstring(L, why);
	return 2;
}

/* perfmon.trim() -> rss_bytes: a full garbage collection, all the
 * symbolizer can give back now (ps_symbols__give_back: under its budget,
 * the file pages it only read back to the page cache, cached answers past
 * 1 MiB), then the heap's free pages back to the system. free() keeps
 * what lies between blocks still in use: after a profile's window was
 * built and dropped, 11 MB of a 37 MB heap was free and still resident.
 * For a script that just dropped large tables; the symbolizer's own upkeep
 * needs no call. */
static int m_trim(lua_State *L)
{
	unsigned long size = 0, rss = 0;
	FILE *f;

	if (!lua_isnoneornil(L, 1))
		return luaL_error(L,
				  "perfmon.trim() takes no argument: the symbolizer gives back its "
				  "pages by itself");
	lua_gc(L, LUA_GCCOLLECT);
	ps_lua_sample_object__give_back(ps_lua_script__from(L));
#ifdef __GLIBC__
	malloc_trim(0);
#endif
	f = fopen("/proc/self/statm", "re");
	if (!f || fscanf(f, "%lu %lu", &size, &rss) != 2) {
		if (f)
			fclose(f);
		lua_pushnil(L);
		lua_pushstring(L, "cannot read /proc/self/statm");
		return 2;
	}
	fclose(f);
	lua_pushinteger(L, (lua_Integer)rss * (lua_Integer)sysconf(_SC_PAGESIZE));
	return 1;
}

void ps_lua__valid_utf8(lua_State *L, int idx)
{
	size_t n;
	const char *s = lua_tolstring(L, idx, &n);
	luaL_Buffer b;

	if (!s || ps_utf8__valid(s, n))
		return;
	idx = lua_absindex(L, idx);
	luaL_pushresultsize(&b, ps_utf8__repair(s, n, luaL_buffinitsize(L, &b, 3 * n)));
	lua_replace(L, idx);
}

/* perfmon.valid_utf8(s) -> s, or a copy with each byte that is not
 * valid UTF-8 replaced by U+FFFD: what every label and name that leaves
 * perfscript goes through (base/utf8.c). */
static int m_valid_utf8(lua_State *L)
{
	luaL_checkstring(L, 1);
	lua_settop(L, 1);
	ps_lua__valid_utf8(L, 1);
	return 1;
}

static const luaL_Reg module_funcs[] = {
    {"counter", m_counter},
    {"group", ps_lua_group__new},
    {"read_many", ps_lua__read_many},
    {"describe", ps_lua__describe},
    {"open", m_open},
    {"lost", m_lost},
    {"stats", m_stats},
    {"time", m_time},
    {"time_source", m_time_source},
    {"regions", ps_lua_regions__new},
    {"region", ps_lua_region__call},
    {"overflow", ps_lua_overflow__new},
    {"poll", ps_lua_overflow__poll_fn},
    {"trim", m_trim},
    {"valid_utf8", m_valid_utf8},
    {"output", ps_lua_output__fn},
    {NULL, NULL},
};

/* A class's metatable; its functions get the session and the metatable
 * itself as upvalues 1 and 2. */
static void new_class(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods,
		      struct ps_session *s)
{
	luaL_newmetatable(L, name);
	lua_pushlightuserdata(L, s);
	lua_pushvalue(L, -2);
	luaL_setfuncs(L, meta, 2);
	lua_createtable(L, 0, 8);
	lua_pushlightuserdata(L, s);
	lua_pushvalue(L, -3);
	luaL_setfuncs(L, methods, 2);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
}

/* require "perfmon": the module table; also sets the seed globals. */
int ps_lua_perfmon__open(lua_State *L)
{
	struct ps_session *s = ps_lua_script__from(L)->session;

	new_class(L, PS_COUNTER_MT, counter_meta, counter_methods, s);
	new_class(L, PS_GROUP_MT, ps_lua_group__meta, ps_lua_group__methods, s);
	ps_lua_overflow__register(L);
	lua_pushglobaltable(L);
	lua_pushlightuserdata(L, s);
	luaL_setfuncs(L, ps_lua_seed__globals, 1);
	lua_pop(L, 1);
	luaL_newlibtable(L, module_funcs);
	lua_pushlightuserdata(L, s);
	luaL_setfuncs(L, module_funcs, 1);
	lua_pushliteral(L, PS_VERSION);
	lua_setfield(L, -2, "version");
	return 1;
}
