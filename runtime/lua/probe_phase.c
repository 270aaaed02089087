/*
 * probe_phase.c: the phase probes, begin, end and error. Their handlers
 * live in a registry table, one array per phase, in priority order: as in
 * SystemTap, "end(100)" runs after every end probe of a lower number
 * (default 0), and probes of one priority run in registration order. begin
 * stops at the first exit() or error; end and error run every handler.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lua/probe.h"

static const char PHASES_KEY[] = "perfscript.phases";
static const char *const names[] = {"begin", "end", "error"};

/* The phases table, created on first use; pushes it. */
static void push_phases(lua_State *L)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, PHASES_KEY) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setfield(L, LUA_REGISTRYINDEX, PHASES_KEY);
	}
}

/* "begin", "end", "error", optionally with "(N)". */
static int parse(lua_State *L, const char *point, struct ps_lua_point *pt)
{
	(void)L;
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(names[i]);
		char *end;

		if (strncmp(point, names[i], n) != 0)
			continue;
		if (point[n] == '(') {
			errno = 0;
			pt->prio = strtoll(point + n + 1, &end, 10);
			if (errno || end == point + n + 1 || strcmp(end, ")") != 0)
				return 0; /* an unknown point: "did you mean end(N)" */
		} else if (point[n]) {
			return 0;
		}
		pt->kind = i;
		return 1;
	}
	return 0;
}

/* Insert the handler at 2 into the phase's list, after every handler of a
 * priority <= prio. */
static int attach(lua_State *L, struct ps_script *sc, const char *point,
		  const struct ps_lua_point *pt)
{
	char key[16];
	lua_Integer n, at;

	(void)sc;
	(void)point;
	snprintf(key, sizeof(key), "%s.prio", names[pt->kind]);
	push_phases(L);
	for (int k = 0; k < 2; k++) {
		if (lua_getfield(L, -1 - k, k ? key : names[pt->kind]) != LUA_TTABLE) {
			lua_pop(L, 1);
			lua_newtable(L);
			lua_pushvalue(L, -1);
			lua_setfield(L, -3 - k, k ? key : names[pt->kind]);
		}
	}
	/* stack: phases, fns, prios */
	n = luaL_len(L, -1);
	for (at = n; at >= 1; at--) {
		lua_rawgeti(L, -1, at);
		if (lua_tointeger(L, -1) <= pt->prio) {
			lua_pop(L, 1);
			break;
		}
		lua_pop(L, 1);
	}
	at++; /* the new handler's index */
	for (lua_Integer i = n; i >= at; i--) {
		lua_rawgeti(L, -1, i);
		lua_rawseti(L, -2, i + 1);
		lua_rawgeti(L, -2, i);
		lua_rawseti(L, -3, i + 1);
	}
	lua_pushinteger(L, pt->prio);
	lua_rawseti(L, -2, at);
	lua_pushvalue(L, 2);
	lua_rawseti(L, -3, at);
	lua_pop(L, 3);
	return 0;
}

void ps_lua_phase__run(struct ps_script *sc, enum ps_lua_phase phase, const char *arg)
{
	lua_State *L = sc->L;
	char where[32];
	lua_Integer n;

	snprintf(where, sizeof(where), "%s probe", names[phase]);
	push_phases(L);
	if (lua_getfield(L, -1, names[phase]) != LUA_TTABLE) {
		lua_pop(L, 2);
		return;
	}
	n = luaL_len(L, -1);
	for (lua_Integer i = 1; i <= n; i++) {
		/* begin stops at exit() or an error; end and error always run all */
		if (phase == PS_PHASE_BEGIN && ps_lua_script__stopping(sc))
			break;
		lua_rawgeti(L, -1, i);
		if (arg)
			lua_pushstring(L, arg);
		ps_lua__call(sc, arg ? 1 : 0, 0, phase == PS_PHASE_ERROR ? PS_CALL_ERROR_PROBE : 0,
			     where);
	}
	lua_pop(L, 2);
	fflush(stdout);
}

static size_t count(const struct ps_script *sc)
{
	lua_State *L = sc->L;
	size_t n = 0;

	push_phases(L);
	for (int i = 0; i < 3; i++) {
		if (lua_getfield(L, -1, names[i]) == LUA_TTABLE)
			n += (size_t)lua_rawlen(L, -1);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return n;
}

static void detach(struct ps_script *sc)
{
	(void)sc; /* the table goes with the Lua state */
}

static const char *const points[] = {"begin",  "end",	   "error", "begin(N)",
				     "end(N)", "error(N)", NULL};

const struct ps_lua_provider ps_lua_phase_provider = {
    .name = "phase",
    .points = points,
    .source = false,
    .parse = parse,
    .attach = attach,
    .detach = detach,
    .count = count,
};
