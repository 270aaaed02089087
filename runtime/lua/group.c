/*
 * group.c: group objects ("perfscript.group"): the members of one
 * {a,b,...} string, opened as one perf group and read with one
 * PERF_FORMAT_GROUP read, so their values are coherent. Closing the group
 * frees every member.
 */
#include <string.h>

#include "lua/perfmon.h"

struct group_ud {
	size_t n;
	ps_handle h[]; /* leader first; all 0 once closed */
};

static struct group_ud *check_group(lua_State *L)
{
	struct group_ud *g = luaL_checkudata(L, 1, PS_GROUP_MT);

	if (!g->n || !g->h[0])
		luaL_error(L, "attempt to use a closed group");
	return g;
}

/* g:read([t]) -> { v1, v2, ..., [name] = v }, enabled, running; into t
 * when given (a reader that reads often makes no table each time) */
static int g_read(lua_State *L)
{
	struct ps_session *s = ps_lua__session(L);
	struct group_ud *g = check_group(L);
	struct ps_value small[PS_SMALL_GROUP];
	struct ps_value *vals =
	    g->n <= PS_SMALL_GROUP ? small : lua_newuserdatauv(L, g->n * sizeof(*vals), 0);
	int n = ps_session__read_group(s, g->h[0], vals, g->n);

	if (n < 0)
		return ps_lua__fail(L, false, ps_strerror(n), n);
	if (lua_istable(L, 2))
		lua_pushvalue(L, 2);
	else
		lua_createtable(L, n, n);
	for (int i = 0; i < n; i++) {
		lua_pushinteger(L, (lua_Integer)vals[i].value);
		lua_pushvalue(L, -1);
		lua_rawseti(L, -3, i + 1);
		if ((size_t)i < g->n)
			lua_setfield(L, -2, ps_session__name(s, g->h[i]));
		else
			lua_pop(L, 1);
	}
	lua_pushinteger(L, n ? (lua_Integer)vals[0].enabled : 0);
	lua_pushinteger(L, n ? (lua_Integer)vals[0].running : 0);
	return 3;
}

static int g_each(lua_State *L, int (*op)(struct ps_session *, ps_handle))
{
	struct group_ud *g = check_group(L);
	int rc = op(ps_lua__session(L), g->h[0]);

	if (rc < 0)
		return ps_lua__fail(L, false, ps_strerror(rc), rc);
	lua_settop(L, 1);
	return 1;
}

static int g_start(lua_State *L)
{
	struct ps_session *s = ps_lua__session(L);
	struct group_ud *g = check_group(L);
	char msg[1024] = "";
	int rc =
	    ps_session__is_open(s, g->h[0]) ? 0 : ps_lua__open_one(L, g->h[0], msg, sizeof(msg));

	if (rc < 0)
		return ps_lua__fail(L, false, msg[0] ? msg : ps_strerror(rc), rc);
	return g_each(L, ps_session__start);
}

static int g_stop(lua_State *L)
{
	return g_each(L, ps_session__stop);
}

static int g_reset(lua_State *L)
{
	return g_each(L, ps_session__reset);
}

static int g_close(lua_State *L)
{
	struct group_ud *g = luaL_checkudata(L, 1, PS_GROUP_MT);

	if (g->n && g->h[0])
		ps_session__free_counter(ps_lua__session(L), g->h[0]); /* frees the members */
	for (size_t i = 0; i < g->n; i++)
		g->h[i] = 0;
	return 0;
}

static int g_len(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)((struct group_ud *)luaL_checkudata(L, 1, PS_GROUP_MT))->n);
	return 1;
}

static int g_names(lua_State *L)
{
	struct ps_session *s = ps_lua__session(L);
	struct group_ud *g = check_group(L);

	lua_createtable(L, (int)g->n, 0);
	for (size_t i = 0; i < g->n; i++) {
		lua_pushstring(L, ps_session__name(s, g->h[i]));
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

static int g_tostring(lua_State *L)
{
	struct group_ud *g = luaL_checkudata(L, 1, PS_GROUP_MT);

	if (!g->n || !g->h[0])
		lua_pushstring(L, PS_GROUP_MT " (closed)");
	else
		lua_pushfstring(L, PS_GROUP_MT " '%s' (%d counters)",
				ps_session__spec(ps_lua__session(L), g->h[0]), (int)g->n);
	return 1;
}

const luaL_Reg ps_lua_group__methods[] = {
    {"read", g_read},	{"start", g_start}, {"stop", g_stop}, {"reset", g_reset},
    {"close", g_close}, {"names", g_names}, {NULL, NULL},
};

const luaL_Reg ps_lua_group__meta[] = {
    {"__gc", g_close}, {"__close", g_close}, {"__tostring", g_tostring},
    {"__len", g_len},  {NULL, NULL},
};

/* perfmon.group(spec) -> group | nil, message, code. The string must be one
 * group ("{a,b}") or one event. */
int ps_lua_group__new(lua_State *L)
{
	struct ps_session *s = ps_lua__session(L);
	ps_handle *hs, *members;
	char msg[400];
	int n = ps_lua__allocate(L, 1, &hs, msg, sizeof(msg));
	int nm;
	struct group_ud *g;

	if (n < 0)
		return ps_lua__fail(L, false, msg, n);
	members = lua_newuserdatauv(L, (size_t)n * sizeof(*members), 0);
	nm = ps_session__group(s, hs[0], members, (size_t)n);
	if (nm != n) {
		for (int i = 0; i < n; i++)
			ps_session__free_counter(s, hs[i]);
		return luaL_argerror(
		    L, 1, "perfmon.group wants one group, e.g. '{task-clock,page-faults}'");
	}
	g = lua_newuserdatauv(L, sizeof(*g) + (size_t)n * sizeof(ps_handle), 0);
	g->n = (size_t)n;
	memcpy(g->h, hs, (size_t)n * sizeof(ps_handle));
	luaL_setmetatable(L, PS_GROUP_MT);
	return 1;
}

/* Read the CPU-bound fds of the counters and groups of the list at index
 * idx now, each from its CPU (ps_session__read_ahead), for the reads that
 * follow. Anything else in the list (a table with its own read method) is
 * left to its read. */
static int read_ahead(lua_State *L, int idx)
{
	lua_Integer n = luaL_len(L, idx);
	ps_handle *hs = lua_newuserdatauv(L, (size_t)(n > 0 ? n : 1) * sizeof(*hs), 0);
	size_t k = 0;
	int rc;

	for (lua_Integer i = 1; i <= n; i++) {
		struct counter_ud *c;
		struct group_ud *g;

		lua_geti(L, idx, i);
		if ((c = luaL_testudata(L, -1, PS_COUNTER_MT)) && c->h)
			hs[k++] = c->h;
		else if ((g = luaL_testudata(L, -1, PS_GROUP_MT)) && g->n && g->h[0])
			hs[k++] = g->h[0];
		lua_pop(L, 1);
	}
	rc = ps_session__read_ahead(ps_lua__session(L), hs, k);
	lua_pop(L, 1);
	return rc;
}

/* Each item's read: into[i] = { item:read() } (its values by index, n =
 * how many), reusing into[i] and, for a group, its values table. */
static int read_each(lua_State *L)
{
	lua_Integer n = luaL_len(L, 1);

	for (lua_Integer i = 1; i <= n; i++) {
		int top = lua_gettop(L), got;

		if (lua_geti(L, 2, i) != LUA_TTABLE) {
			lua_pop(L, 1);
			lua_createtable(L, 3, 1);
			lua_pushvalue(L, -1);
			lua_seti(L, 2, i);
		}
		lua_geti(L, 1, i);
		if (lua_getfield(L, -1, "read") == LUA_TNIL)
			return luaL_error(L, "perfmon.read_many: item %d has no read method",
					  (int)i);
		lua_insert(L, -2);
		lua_geti(L, top + 1, 1); /* the last values table, which a group's read refills */
		if (!lua_istable(L, -1)) {
			lua_pop(L, 1);
			lua_pushnil(L);
		}
		lua_call(L, 2, LUA_MULTRET);
		got = lua_gettop(L) - top - 1;
		for (int k = got; k >= 1; k--)
			lua_seti(L, top + 1, k);
		for (int k = got + 1; k <= 3; k++) {
			lua_pushnil(L);
			lua_seti(L, top + 1, k);
		}
		lua_pushinteger(L, got);
		lua_setfield(L, top + 1, "n");
		lua_settop(L, top);
	}
	lua_settop(L, 2);
	return 1;
}

/* perfmon.read_many(list[, into]) -> into: every counter and group of the
 * list read at one moment (those that count on CPUs each from its CPU, as
 * perf stat reads), into[i] = { list[i]:read() }. A table in the list with
 * a read method of its own is read by it. Nothing is left behind: a read
 * later is live. */
int ps_lua__read_many(lua_State *L)
{
	int rc;

	luaL_checktype(L, 1, LUA_TTABLE);
	if (lua_isnoneornil(L, 2)) {
		lua_settop(L, 1);
		lua_newtable(L);
	}
	luaL_checktype(L, 2, LUA_TTABLE);
	lua_settop(L, 2);
	rc = read_ahead(L, 1);
	if (rc < 0)
		return ps_lua__fail(L, false, ps_strerror(rc), rc);
	lua_pushcfunction(L, read_each);
	lua_pushvalue(L, 1);
	lua_pushvalue(L, 2);
	rc = lua_pcall(L, 2, 1, 0);
	/* what was read ahead and not taken (a read that raised) is dropped */
	ps_session__read_ahead(ps_lua__session(L), NULL, 0);
	if (rc != LUA_OK)
		return lua_error(L);
	return 1;
}
