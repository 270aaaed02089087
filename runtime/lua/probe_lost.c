/*
 * probe_lost.c: perfmon.lost(NAME) probes: handler(count) whenever samples
 * of the counter NAME names were lost. The counts come from the session's
 * one source of truth for losses, so what the handlers are told adds up to
 * perfmon.lost(h) once the session has ended.
 */
#include <stdlib.h>

#include "base/array.h"
#include "lua/probe.h"

struct lost_probe {
	struct ps_lua_target t;
	int ref; /* handler */
};

struct ps_lost_probes {
	struct lost_probe *v;
	size_t n, cap;
};

static int parse(lua_State *L, const char *point, struct ps_lua_point *pt)
{
	struct ps_lua_target t = {0};

	if (!ps_lua_target__parse(L, point, "perfmon.lost(", &t))
		return 0;
	snprintf(pt->arg, sizeof(pt->arg), "%s", t.name);
	return 1;
}

static int start(struct ps_script *sc);

static int attach(lua_State *L, struct ps_script *sc, const char *point,
		  const struct ps_lua_point *pt)
{
	struct ps_lost_probes *lp = sc->lost;
	struct lost_probe p = {0};

	if (!lua_isnoneornil(L, 3))
		return luaL_error(L, "perfmon.lost takes no options; give them to the "
				     "perfmon.sample probe of the counter");
	if (!lp && !(lp = sc->lost = calloc(1, sizeof(*lp))))
		return luaL_error(L, "out of memory");
	ps_lua_target__parse(L, point, "perfmon.lost(", &p.t);
	snprintf(p.t.where, sizeof(p.t.where), "%s", pt->where);
	if (ps_array__reserve(&lp->v, &lp->cap, lp->n + 1, sizeof(*lp->v)))
		return luaL_error(L, "out of memory");
	lua_pushvalue(L, 2);
	p.ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lp->v[lp->n++] = p;
	if (ps_driver__started(sc->driver) && start(sc) < 0)
		return luaL_error(L, "%s", sc->setup_error);
	return 0;
}

static int start(struct ps_script *sc)
{
	struct ps_lost_probes *lp = sc->lost;

	for (size_t i = 0; lp && i < lp->n; i++)
		if (ps_lua_target__resolve(sc, &lp->v[i].t, "perfmon.lost", false) < 0)
			return -1;
	return 0;
}

void ps_lua_lost__on_record(struct ps_script *sc, const struct ps_record *r)
{
	struct ps_lost_probes *lp = sc->lost;

	if (!lp || !r->handle || !r->lost || sc->ending ||
	    (r->type != PERF_RECORD_LOST && r->type != PERF_RECORD_LOST_SAMPLES))
		return;
	for (size_t i = 0; i < lp->n; i++) {
		if (lp->v[i].t.handle != r->handle)
			continue;
		lua_rawgeti(sc->L, LUA_REGISTRYINDEX, lp->v[i].ref);
		lua_pushinteger(sc->L, (lua_Integer)r->lost);
		if (ps_lua__call(sc, 1, 0, 0, "perfmon.lost probe") < 0)
			break;
	}
}

static void detach(struct ps_script *sc)
{
	struct ps_lost_probes *lp = sc->lost;

	for (size_t i = 0; lp && i < lp->n; i++)
		luaL_unref(sc->L, LUA_REGISTRYINDEX, lp->v[i].ref);
	if (lp)
		free(lp->v);
	free(lp);
	sc->lost = NULL;
}

static void report(struct ps_script *sc)
{
	for (size_t i = 0; sc->lost && i < sc->lost->n; i++)
		ps_lua_script__report_lost(sc, sc->lost->v[i].t.handle);
}

static size_t count(const struct ps_script *sc)
{
	return sc->lost ? sc->lost->n : 0;
}

static const char *const points[] = {"perfmon.lost(NAME)", NULL};

const struct ps_lua_provider ps_lua_lost_provider = {
    .name = "lost",
    .points = points,
    .source = true,
    .parse = parse,
    .attach = attach,
    .start = start,
    .report = report,
    .detach = detach,
    .count = count,
};
