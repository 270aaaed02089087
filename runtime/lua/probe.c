/*
 * probe.c: probe(point, handler [, options]) and the table of probe kinds.
 * Each kind is a provider (lua/probe.h) in a file of its own: phases
 * (begin, end, error), timers, overflow samples, lost samples. The table
 * is the one list of known points: the "did you mean" of an unknown point
 * and perfmon.points() are made from it.
 */
#include <string.h>

#include "base/suggest.h"
#include "lua/probe.h"

static const struct ps_lua_provider *const providers[] = {
    &ps_lua_phase_provider,
    &ps_lua_timer_provider,
    &ps_lua_sample_provider,
    &ps_lua_lost_provider,
};
#define NPROVIDERS (sizeof(providers) / sizeof(providers[0]))

/* Up to and including '(': the argument does not say which point was meant. */
static size_t head(const char *point)
{
	const char *paren = strchr(point, '(');

	return paren ? (size_t)(paren - point) + 1 : strlen(point);
}

static int unknown_point(lua_State *L, const char *point)
{
	const char *near = NULL;
	struct ps_suggest s;
	luaL_Buffer b;

	ps_suggest__init(&s, point, head(point));
	for (size_t i = 0; i < NPROVIDERS; i++) {
		for (const char *const *p = providers[i]->points; *p; p++) {
			unsigned before = s.best_dist;

			ps_suggest__try_n(&s, *p, head(*p));
			if (s.best_dist < before)
				near = *p;
		}
	}
	luaL_buffinit(L, &b);
	lua_pushfstring(L, "unknown probe point '%s' (", point);
	luaL_addvalue(&b);
	if (near) {
		lua_pushfstring(L, "did you mean '%s'?; ", near);
		luaL_addvalue(&b);
	}
	luaL_addstring(&b, "points:");
	for (size_t i = 0; i < NPROVIDERS; i++) {
		for (const char *const *p = providers[i]->points; *p; p++) {
			luaL_addstring(&b, i || p != providers[i]->points ? ", " : " ");
			luaL_addstring(&b, *p);
		}
	}
	luaL_addchar(&b, ')');
	luaL_pushresult(&b);
	return luaL_error(L, "%s", lua_tostring(L, -1));
}

/* The probe point of probe()'s first argument: a string, or a sampling
 * counter object, which names perfmon.sample(ITS HANDLE). The probe keeps
 * the object alive: a counter held by nothing else (a local of a function
 * that returned) would otherwise be collected, and freed, under its probe. */
static const char *point_arg(lua_State *L)
{
	if (luaL_testudata(L, 1, "perfscript.counter")) {
		lua_Integer h;

		if (lua_getfield(L, LUA_REGISTRYINDEX, "perfscript.probed") != LUA_TTABLE) {
			lua_pop(L, 1);
			lua_newtable(L);
			lua_pushvalue(L, -1);
			lua_setfield(L, LUA_REGISTRYINDEX, "perfscript.probed");
		}
		lua_pushvalue(L, 1);
		lua_pushboolean(L, 1);
		lua_rawset(L, -3);
		lua_pop(L, 1);

		lua_getfield(L, 1, "handle");
		lua_pushvalue(L, 1);
		lua_call(L, 1, 1);
		h = lua_tointeger(L, -1);
		lua_pop(L, 1);
		lua_pushfstring(L, "perfmon.sample(%I)", h);
		lua_replace(L, 1);
	}
	if (lua_type(L, 1) != LUA_TSTRING)
		luaL_argerror(L, 1,
			      lua_pushfstring(L,
					      "a probe point (\"begin\", \"timer.ms(100)\", ...) "
					      "or a sampling counter, got %s",
					      luaL_typename(L, 1)));
	return lua_tostring(L, 1);
}

/* probe(point | counter, handler [, options]) */
static int l_probe(lua_State *L)
{
	struct ps_script *sc = lua_touserdata(L, lua_upvalueindex(1));
	const char *point = point_arg(L);
	struct ps_lua_point pt;

	luaL_checktype(L, 2, LUA_TFUNCTION);
	for (size_t i = 0; i < NPROVIDERS; i++) {
		memset(&pt, 0, sizeof(pt));
		if (!providers[i]->parse(L, point, &pt))
			continue;
		luaL_where(L, 1);
		snprintf(pt.where, sizeof(pt.where), "%s", lua_tostring(L, -1));
		lua_pop(L, 1);
		return providers[i]->attach(L, sc, point, &pt);
	}
	return unknown_point(L, point);
}

/* perfmon.points() -> { "begin", "end", ... }: every probe point known. */
static int l_points(lua_State *L)
{
	lua_Integer n = 0;

	lua_newtable(L);
	for (size_t i = 0; i < NPROVIDERS; i++) {
		for (const char *const *p = providers[i]->points; *p; p++) {
			lua_pushstring(L, *p);
			lua_rawseti(L, -2, ++n);
		}
	}
	return 1;
}

void ps_lua_probe__open(lua_State *L, struct ps_script *sc)
{
	lua_pushlightuserdata(L, sc);
	lua_pushcclosure(L, l_probe, 1);
	lua_setglobal(L, "probe");
	if (lua_getglobal(L, "perfmon") == LUA_TTABLE) {
		lua_pushcfunction(L, l_points);
		lua_setfield(L, -2, "points");
	}
	lua_pop(L, 1);
}

int ps_lua_probe__start(struct ps_script *sc)
{
	for (size_t i = 0; i < NPROVIDERS; i++)
		if (providers[i]->start && providers[i]->start(sc) < 0)
			return -1;
	return 0;
}

void ps_lua_probe__stop(struct ps_script *sc)
{
	for (size_t i = 0; i < NPROVIDERS; i++)
		if (providers[i]->stop)
			providers[i]->stop(sc);
}

void ps_lua_probe__report(struct ps_script *sc)
{
	for (size_t i = 0; i < NPROVIDERS; i++)
		if (providers[i]->report)
			providers[i]->report(sc);
}

void ps_lua_probe__detach(struct ps_script *sc)
{
	for (size_t i = 0; i < NPROVIDERS; i++)
		providers[i]->detach(sc);
}

bool ps_lua_probe__sources(const struct ps_script *sc, bool self)
{
	for (size_t i = 0; i < NPROVIDERS; i++)
		if (providers[i]->source && (!self || providers[i]->source_on_self) &&
		    providers[i]->count(sc) > 0)
			return true;
	return false;
}
