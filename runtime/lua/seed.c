/*
 * seed.c: the globals of the SystemTap perfmon proposal:
 * perfmon_allocate_counter, perfmon_free_counter, perfmon_create_context,
 * perfmon_get_counter, perfmon_start_counter, perfmon_stop_counter and
 * perfmon_handle_to_string. Thin wrappers over the session with bare handles:
 * a bad handle raises, an environment failure returns 0 and a message.
 * perfmon_get_counter is the hot path: one handle check, one read(), one
 * scale.
 */
#include "lua/perfmon.h"

/* perfmon_allocate_counter(spec) -> handle... | 0, message, code */
static int g_allocate_counter(lua_State *L)
{
	ps_handle *hs;
	char msg[400];
	int n = ps_lua__allocate(L, 1, &hs, msg, sizeof(msg));

	if (n < 0)
		return ps_lua__fail(L, true, msg, n);
	luaL_checkstack(L, n, "too many events");
	for (int i = 0; i < n; i++)
		lua_pushinteger(L, (lua_Integer)hs[i]);
	return n;
}

/* perfmon_free_counter(h) -> h | 0, message */
static int g_free_counter(lua_State *L)
{
	lua_Integer h = luaL_checkinteger(L, 1);
	int rc = ps_session__free_counter(ps_lua__session(L), (ps_handle)h);

	if (rc < 0)
		return ps_lua__fail(L, true, ps_strerror(rc), rc);
	lua_pushinteger(L, h);
	return 1;
}

/* perfmon_create_context() -> 0 | errno, message */
static int g_create_context(lua_State *L)
{
	char msg[1024] = "";
	int rc = ps_lua_script__create_context(ps_lua_script__from(L), msg, sizeof(msg));

	lua_pushinteger(L, rc < 0 ? -rc : 0);
	if (rc >= 0)
		return 1;
	lua_pushstring(L, msg[0] ? msg : ps_strerror(rc));
	return 2;
}

/* perfmon_get_counter(h) -> value. The hot path: one handle check, one
 * read(), one scale. */
static int g_get_counter(lua_State *L)
{
	lua_Integer h = luaL_checkinteger(L, 1);
	struct ps_value v;
	int rc = ps_session__read(ps_lua__session(L), (ps_handle)h, &v);

	if (rc < 0)
		return ps_lua__bad_handle(L, "perfmon_get_counter", h, rc);
	lua_pushinteger(L, (lua_Integer)v.value);
	return 1;
}

/* perfmon_start_counter(h) / perfmon_stop_counter(h) -> value | 0, message */
static int start_stop(lua_State *L, bool start)
{
	struct ps_session *s = ps_lua__session(L);
	lua_Integer h = luaL_checkinteger(L, 1);
	struct ps_value v;
	char msg[1024] = "";
	int rc = ps_session__check(s, (ps_handle)h);

	if (rc < 0)
		return ps_lua__bad_handle(
		    L, start ? "perfmon_start_counter" : "perfmon_stop_counter", h, rc);
	if (start && !ps_session__is_open(s, (ps_handle)h)) {
		rc = ps_lua__open_one(L, (ps_handle)h, msg, sizeof(msg));
		if (rc < 0)
			return ps_lua__fail(L, true, msg[0] ? msg : ps_strerror(rc), rc);
	}
	rc = start ? ps_session__start(s, (ps_handle)h) : ps_session__stop(s, (ps_handle)h);
	if (rc >= 0)
		rc = ps_session__read(s, (ps_handle)h, &v);
	if (rc < 0)
		return ps_lua__fail(L, true, ps_strerror(rc), rc);
	lua_pushinteger(L, (lua_Integer)v.value);
	return 1;
}

static int g_start_counter(lua_State *L)
{
	return start_stop(L, true);
}

static int g_stop_counter(lua_State *L)
{
	return start_stop(L, false);
}

/* perfmon_handle_to_string(h) -> spec */
static int g_handle_to_string(lua_State *L)
{
	lua_Integer h = luaL_checkinteger(L, 1);
	const char *spec = ps_session__spec(ps_lua__session(L), (ps_handle)h);

	if (!spec)
		return ps_lua__bad_handle(L, "perfmon_handle_to_string", h, -PS_ERR_HANDLE);
	lua_pushstring(L, spec);
	return 1;
}

const luaL_Reg ps_lua_seed__globals[] = {
    {"perfmon_allocate_counter", g_allocate_counter}, {"perfmon_free_counter", g_free_counter},
    {"perfmon_create_context", g_create_context},     {"perfmon_get_counter", g_get_counter},
    {"perfmon_start_counter", g_start_counter},	      {"perfmon_stop_counter", g_stop_counter},
    {"perfmon_handle_to_string", g_handle_to_string}, {NULL, NULL},
};
