/*
 * region.c: code regions for scripts ("perfscript.regions"), over the C
 * regions of core/region.c, same names and meaning as the LuaJIT binding:
 *   perfmon.region(name, fn, ...) -> fn's results   (begin, call, end)
 *   local r = perfmon.regions([spec])               the process's event set
 *   r:start(name)  r:stop(name)  r:read(name)  r:report([format])
 * Misuse (a bad name, an end that is not the innermost) raises; a set the
 * machine cannot count returns nil, message, like io.open. Each boundary
 * is a safe point: queued overflow handlers run there (lua/overflow.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lua/perfmon.h"

#define PS_REGIONS_MT "perfscript.regions"

static int fail_msg(lua_State *L)
{
	return luaL_error(L, "%s", ps_regions__message());
}

/* The region name at arg; one with a NUL byte is refused, as C would cut it. */
static const char *check_name(lua_State *L, int arg)
{
	size_t len;
	const char *name = luaL_checklstring(L, arg, &len);
	char msg[160];

	if (ps_text__check(name, len, "region name", msg, sizeof(msg)) < 0)
		luaL_argerror(L, arg, msg);
	return name;
}

static int r_start(lua_State *L)
{
	int err;

	luaL_checkudata(L, 1, PS_REGIONS_MT);
	ps_lua_overflow__poll(L); /* a region boundary is a safe point */
	if ((err = ps_region__begin(check_name(L, 2))) < 0)
		return fail_msg(L);
	lua_settop(L, 1);
	return 1;
}

static int r_stop(lua_State *L)
{
	int err;

	luaL_checkudata(L, 1, PS_REGIONS_MT);
	if ((err = ps_region__end(check_name(L, 2))) < 0)
		return fail_msg(L);
	ps_lua_overflow__poll(L);
	lua_settop(L, 1);
	return 1;
}

/* r:read(name) -> { calls = n, [event] = value, ... } or nil when unknown */
static int r_read(lua_State *L)
{
	const char *names[16];
	uint64_t v[16], calls;
	int n;

	luaL_checkudata(L, 1, PS_REGIONS_MT);
	n = ps_region__read(check_name(L, 2), &calls, v, 16);
	if (n < 0) {
		luaL_pushfail(L);
		lua_pushstring(L, ps_regions__message());
		return 2;
	}
	ps_regions__events(names, 16);
	lua_createtable(L, 0, n + 1);
	lua_pushinteger(L, (lua_Integer)calls);
	lua_setfield(L, -2, "calls");
	for (int i = 0; i < n && i < 16; i++) {
		lua_pushinteger(L, (lua_Integer)v[i]);
		lua_setfield(L, -2, names[i]);
	}
	return 1;
}

/* r:report([format]) -> text: "table" (default), "csv" or "json" */
static int r_report(lua_State *L)
{
	const char *fmt = luaL_optstring(L, 2, "table");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	luaL_checkudata(L, 1, PS_REGIONS_MT);
	if (!f)
		return luaL_error(L, "regions: %s", strerror(errno));
	err = ps_regions__report(f, fmt);
	fclose(f);
	if (err < 0) {
		free(buf);
		return luaL_argerror(L, 2, "want \"table\", \"csv\" or \"json\"");
	}
	lua_pushlstring(L, buf, len);
	free(buf);
	return 1;
}

static int r_tostring(lua_State *L)
{
	const char *names[16];
	size_t n = ps_regions__events(names, 16);

	luaL_checkudata(L, 1, PS_REGIONS_MT);
	lua_pushfstring(L, "perfscript.regions (%d events: %s%s)", (int)n, n ? names[0] : "",
			n > 1 ? ", ..." : "");
	return 1;
}

static const luaL_Reg methods[] = {
    {"start", r_start}, {"stop", r_stop}, {"read", r_read}, {"report", r_report}, {NULL, NULL},
};

/* perfmon.regions([spec]) -> regions | nil, message, code */
int ps_lua_regions__new(lua_State *L)
{
	size_t len = 0;
	const char *spec = luaL_optlstring(L, 1, NULL, &len);
	char msg[512] = "";
	int err = spec ? ps_text__check(spec, len, "event string", msg, sizeof(msg)) : 0;

	if (!err)
		err = ps_regions__init(spec, msg, sizeof(msg));
	if (err < 0) {
		luaL_pushfail(L);
		lua_pushstring(L, msg);
		lua_pushinteger(L, -err);
		return 3;
	}
	lua_newuserdatauv(L, 0, 0);
	if (luaL_newmetatable(L, PS_REGIONS_MT)) {
		luaL_newlib(L, methods);
		lua_setfield(L, -2, "__index");
		lua_pushcfunction(L, r_tostring);
		lua_setfield(L, -2, "__tostring");
	}
	lua_setmetatable(L, -2);
	return 1;
}

static int region_done(lua_State *L, int status, lua_KContext name_idx)
{
	int err = ps_region__end(lua_tostring(L, (int)name_idx));

	if (status != LUA_OK && status != LUA_YIELD)
		return lua_error(L); /* fn's error, the region closed */
	if (err < 0)
		return fail_msg(L);
	ps_lua_overflow__poll(L);
	return lua_gettop(L) - 2;
}

/* perfmon.region(name, fn, ...) -> fn's results: fn(...) inside region name;
 * the region ends also when fn raises, and the error goes on. */
int ps_lua_region__call(lua_State *L)
{
	const char *name = check_name(L, 1);
	int err, status;

	luaL_checktype(L, 2, LUA_TFUNCTION);
	ps_lua_overflow__poll(L);
	if ((err = ps_region__begin(name)) < 0)
		return fail_msg(L);
	lua_pushvalue(L, 2);
	lua_rotate(L, 3, 1); /* name, fn, fn, args... */
	status = lua_pcall(L, lua_gettop(L) - 3, LUA_MULTRET, 0);
	return region_done(L, status, 1);
}
