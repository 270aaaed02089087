/*
 * overflow.c: overflow signals for scripts ("perfscript.overflow"), over
 * the C counters of core/overflow.c, same names and meaning as the LuaJIT
 * binding:
 *   local ov = perfmon.overflow(spec [, handler])   on the calling thread
 *   ov:start()  ov:stop()  ov:refresh(n)  ov:set_period(p)
 *   ov:read() -> count   ov:overflows() -> signals   ov:dropped()
 *   ov:take() -> { ip, ... }   ov:close()
 *   perfmon.poll() -> handler calls made
 * Lua cannot run inside a signal handler, so each overflow only queues its
 * ip there; handler(ov, ip) runs at the next safe point: perfmon.poll(),
 * or a region's start or stop. A handler's error goes to the caller of
 * that safe point. The registry keeps each live counter's handler in a
 * table with weak keys: a counter the script drops is closed by the GC,
 * as files are.
 */
#include <errno.h>
#include <string.h>

#include "lua/perfmon.h"

#define PS_OVERFLOW_MT "perfscript.overflow"
#define HANDLERS       "perfscript.overflow.handlers"
#define TAKE_CHUNK     256

struct ov_ud {
	struct ps_overflow *o; /* NULL once closed */
};

static struct ov_ud *check_live(lua_State *L)
{
	struct ov_ud *u = luaL_checkudata(L, 1, PS_OVERFLOW_MT);

	if (!u->o)
		luaL_error(L, "attempt to use a closed overflow counter");
	return u;
}

static int result(lua_State *L, int rc)
{
	if (rc < 0)
		return ps_lua__fail(L, false, ps_strerror(rc), rc);
	lua_settop(L, 1);
	return 1;
}

static int ov_start(lua_State *L)
{
	return result(L, ps_overflow__start(check_live(L)->o));
}

static int ov_stop(lua_State *L)
{
	return result(L, ps_overflow__stop(check_live(L)->o));
}

static int ov_refresh(lua_State *L)
{
	struct ov_ud *u = check_live(L);
	lua_Integer n = luaL_checkinteger(L, 2);

	luaL_argcheck(L, n > 0 && n <= 0x7fffffff, 2, "refresh wants 1 to 2147483647 overflows");
	return result(L, ps_overflow__refresh(u->o, (int)n));
}

static int ov_set_period(lua_State *L)
{
	struct ov_ud *u = check_live(L);
	lua_Integer p = luaL_checkinteger(L, 2);

	luaL_argcheck(L, p > 0, 2, "a period is 1 or more events");
	return result(L, ps_overflow__set_period(u->o, (uint64_t)p));
}

static int ov_read(lua_State *L)
{
	uint64_t v = 0;
	int rc = ps_overflow__read(check_live(L)->o, &v);

	if (rc < 0)
		return ps_lua__fail(L, false, ps_strerror(rc), rc);
	lua_pushinteger(L, (lua_Integer)v);
	return 1;
}

static int ov_overflows(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)ps_overflow__count(check_live(L)->o));
	return 1;
}

static int ov_dropped(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)ps_overflow__dropped(check_live(L)->o));
	return 1;
}

static int ov_name(lua_State *L)
{
	lua_pushstring(L, ps_overflow__name(check_live(L)->o));
	return 1;
}

/* ov:take() -> { ip, ... }: the queued ips, for a counter with no handler. */
static int ov_take(lua_State *L)
{
	struct ov_ud *u = check_live(L);
	uint64_t ips[TAKE_CHUNK];
	lua_Integer k = 0;
	size_t n;

	lua_newtable(L);
	while ((n = ps_overflow__take(u->o, ips, TAKE_CHUNK)) > 0)
		for (size_t i = 0; i < n; i++) {
			lua_pushinteger(L, (lua_Integer)ips[i]);
			lua_rawseti(L, -2, ++k);
		}
	return 1;
}

static int ov_close(lua_State *L)
{
	struct ov_ud *u = luaL_checkudata(L, 1, PS_OVERFLOW_MT);

	ps_overflow__free(u->o);
	u->o = NULL;
	return 0;
}

static int ov_tostring(lua_State *L)
{
	struct ov_ud *u = luaL_checkudata(L, 1, PS_OVERFLOW_MT);

	if (!u->o)
		lua_pushliteral(L, "perfscript.overflow (closed)");
	else
		lua_pushfstring(L, "perfscript.overflow '%s' (%I overflows)",
				ps_overflow__name(u->o), (lua_Integer)ps_overflow__count(u->o));
	return 1;
}

static const luaL_Reg methods[] = {
    {"start", ov_start},	   {"stop", ov_stop}, {"refresh", ov_refresh},
    {"set_period", ov_set_period}, {"read", ov_read}, {"overflows", ov_overflows},
    {"dropped", ov_dropped},	   {"name", ov_name}, {"take", ov_take},
    {"close", ov_close},	   {NULL, NULL},
};

static const luaL_Reg meta[] = {
    {"__gc", ov_close},
    {"__close", ov_close},
    {"__tostring", ov_tostring},
    {NULL, NULL},
};

/* The registry's table of handlers, weak in its keys, on the stack. */
/* The registry's table of live counters by their C context (the userdata's
 * address), with weak values: a counter the script drops is collected, and
 * its __gc closes it. Its handler is the userdata's user value. */
static void push_live(lua_State *L)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, HANDLERS) != LUA_TNIL)
		return;
	lua_pop(L, 1);
	lua_newtable(L);
	lua_createtable(L, 0, 1);
	lua_pushliteral(L, "v");
	lua_setfield(L, -2, "__mode");
	lua_setmetatable(L, -2);
	lua_pushvalue(L, -1);
	lua_setfield(L, LUA_REGISTRYINDEX, HANDLERS);
}

/* ps_overflow__new's last resort when 64 counters are alive: collect the
 * ones the script dropped. */
static void reclaim(void *ctx)
{
	lua_gc(ctx, LUA_GCCOLLECT);
}

void ps_lua_overflow__register(lua_State *L)
{
	luaL_newmetatable(L, PS_OVERFLOW_MT);
	luaL_setfuncs(L, meta, 0);
	luaL_newlib(L, methods);
	lua_setfield(L, -2, "__index");
	lua_pop(L, 1);
}

/* perfmon.overflow(spec [, handler]) -> overflow | nil, message, code */
int ps_lua_overflow__new(lua_State *L)
{
	size_t len;
	const char *spec = luaL_checklstring(L, 1, &len);
	bool polled = !lua_isnoneornil(L, 2);
	char msg[512] = "";
	struct ps_overflow *o;
	struct ov_ud *u;
	int rc;

	if (polled)
		luaL_checktype(L, 2, LUA_TFUNCTION);
	if ((rc = ps_text__check(spec, len, "event string", msg, sizeof(msg))) < 0)
		return ps_lua__fail(L, false, msg, rc);
	u = lua_newuserdatauv(L, sizeof(*u), 1);
	u->o = NULL;
	luaL_setmetatable(L, PS_OVERFLOW_MT);
	ps_overflow__set_reclaim(reclaim, L);
	o = ps_overflow__new(spec, NULL, polled ? u : NULL, msg, sizeof(msg));
	ps_overflow__set_reclaim(NULL, NULL);
	if (!o)
		return ps_lua__fail(L, false, msg, -errno);
	u->o = o;
	if (polled) {
		lua_pushvalue(L, 2);
		lua_setiuservalue(L, -2, 1);
		push_live(L);
		lua_pushlightuserdata(L, u);
		lua_pushvalue(L, -3);
		lua_rawset(L, -3);
		lua_pop(L, 1);
	}
	return 1;
}

/* Run the handler of each queued overflow, one at a time, so that after a
 * handler's error the rest stay queued; how many ran. */
int ps_lua_overflow__poll(lua_State *L)
{
	int top = lua_gettop(L), calls = 0;
	void *ctx;
	uint64_t ip;

	while (ps_overflow__next(&ctx, &ip)) {
		push_live(L);
		if (lua_rawgetp(L, -1, ctx) == LUA_TUSERDATA &&
		    lua_getiuservalue(L, -1, 1) == LUA_TFUNCTION) {
			lua_insert(L, -2); /* handler, counter */
			lua_pushinteger(L, (lua_Integer)ip);
			lua_call(L, 2, 0);
			calls++;
		} /* else being collected: its ip goes with it */
		lua_settop(L, top);
	}
	return calls;
}

/* perfmon.poll() -> number of handler calls */
int ps_lua_overflow__poll_fn(lua_State *L)
{
	lua_pushinteger(L, ps_lua_overflow__poll(L));
	return 1;
}
