/*
 * probe.c: the probe() function and the probe points it knows. Handlers
 * of begin, end and error live in a registry table, one array per point, run
 * in registration order. Timer probes (timer.s/ms/us/ns/hz) become timerfds
 * on the event loop once the session starts. Overflow probes
 * (perfmon.sample) plug in here as one more point kind.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/sample.h"

static const char PROBES_KEY[] = "perfscript.probes";

struct ps_timer_probe {
	struct ps_timer_probe *next;
	struct ps_script *sc;
	int ref; /* handler in the registry */
	int id;	 /* loop timer id, -1 until armed */
	uint64_t interval_ns;
	char point[48];
	char where[56]; /* "timer.ms(10) probe", for error messages */
};

/* The handler arrays table, creating it on first use; pushes it. */
static void push_probes(lua_State *L)
{
	if (lua_getfield(L, LUA_REGISTRYINDEX, PROBES_KEY) != LUA_TTABLE) {
		lua_pop(L, 1);
		lua_newtable(L);
		lua_pushvalue(L, -1);
		lua_setfield(L, LUA_REGISTRYINDEX, PROBES_KEY);
	}
}

static int on_timer(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	struct ps_timer_probe *t = ctx;
	lua_State *L = t->sc->L;

	(void)loop;
	(void)expirations; /* missed ticks collapse into one call, as timerfd reports */
	if (t->sc->stop_asked)
		return 0;
	lua_rawgeti(L, LUA_REGISTRYINDEX, t->ref);
	ps_script__call(t->sc, 0, t->where);
	fflush(stdout);
	return 0;
}

static int arm_timer(struct ps_script *sc, struct ps_timer_probe *t)
{
	t->id = ps_loop__add_timer(sc->loop, t->interval_ns, on_timer, t);
	return t->id < 0 ? t->id : 0;
}

int ps_probe__arm_timers(struct ps_script *sc)
{
	for (struct ps_timer_probe *t = sc->timers; t; t = t->next) {
		int rc = arm_timer(sc, t);

		if (rc < 0) {
			fprintf(stderr, "perfscript: cannot arm %s: %s\n", t->point,
				ps_strerror(rc));
			return rc;
		}
	}
	return 0;
}

size_t ps_probe__timer_count(const struct ps_script *sc)
{
	size_t n = 0;

	for (struct ps_timer_probe *t = sc->timers; t; t = t->next)
		n++;
	return n;
}

void ps_probe__free(struct ps_script *sc)
{
	while (sc->timers) {
		struct ps_timer_probe *t = sc->timers;

		sc->timers = t->next;
		if (t->id >= 0)
			ps_loop__del_timer(sc->loop, t->id);
		luaL_unref(sc->L, LUA_REGISTRYINDEX, t->ref);
		free(t);
	}
}

bool ps_probe__has_point(struct ps_script *sc, const char *point)
{
	lua_State *L = sc->L;
	bool has;

	push_probes(L);
	lua_getfield(L, -1, point);
	has = lua_istable(L, -1) && luaL_len(L, -1) > 0;
	lua_pop(L, 2);
	return has;
}

void ps_probe__run_point(struct ps_script *sc, const char *point, const char *arg)
{
	lua_State *L = sc->L;
	lua_Integer n;
	char where[32];

	snprintf(where, sizeof(where), "%s probe", point);
	push_probes(L);
	if (lua_getfield(L, -1, point) != LUA_TTABLE) {
		lua_pop(L, 2);
		return;
	}
	n = luaL_len(L, -1);
	for (lua_Integer i = 1; i <= n; i++) {
		/* begin stops at exit() or an error; end and error always run all. */
		if (!strcmp(point, "begin") && sc->stop_asked)
			break;
		lua_rawgeti(L, -1, i);
		if (arg)
			lua_pushstring(L, arg);
		ps_script__call(sc, arg ? 1 : 0, where);
	}
	lua_pop(L, 2);
	fflush(stdout);
}

/* Parse "N)" of "timer.ms(N)"; returns the number or -1. */
static double parse_count(const char *s)
{
	char *end;
	double v;

	if (!isdigit((unsigned char)*s))
		return -1;
	v = strtod(s, &end);
	if (end == s || strcmp(end, ")") != 0 || v <= 0)
		return -1;
	return v;
}

static const struct {
	const char *unit;
	double ns; /* nanoseconds per unit; 0 = frequency in hertz */
} timer_units[] = {
    {"s", 1e9},	   {"sec", 1e9}, {"ms", 1e6}, {"msec", 1e6}, {"us", 1e3},
    {"usec", 1e3}, {"ns", 1},	 {"nsec", 1}, {"hz", 0},
};

static const char *const known_points[] = {
    "begin",
    "end",
    "error",
    "begin(N)",
    "end(N)",
    "timer.s(N)",
    "timer.ms(N)",
    "timer.us(N)",
    "timer.ns(N)",
    "timer.hz(N)",
    "perfmon.sample(NAME)",
    "kernel.perfmon.sample(NAME)",
    "perfmon.lost(NAME)",
};

/* Case-insensitive edit distance, for "did you mean". */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64];

	if (lb >= 64)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], cost = tolower((unsigned char)a[i - 1]) !=
						   tolower((unsigned char)b[j - 1]);
			size_t best = diag + cost;

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static int unknown_point(lua_State *L, const char *point)
{
	const char *best = known_points[0];
	size_t bestd = (size_t)-1;

	for (size_t i = 0; i < sizeof(known_points) / sizeof(known_points[0]); i++) {
		size_t d = distance(point, known_points[i]);

		if (d < bestd) {
			bestd = d;
			best = known_points[i];
		}
	}
	return luaL_error(
	    L,
	    "unknown probe point '%s' (did you mean '%s'?; points: begin, end, "
	    "error, timer.s/ms/us/ns/hz(N), perfmon.sample(NAME), perfmon.lost(NAME))",
	    point, best);
}

static int add_timer(lua_State *L, struct ps_script *sc, const char *point)
{
	const char *unit = point + strlen("timer."), *paren = strchr(unit, '(');
	struct ps_timer_probe *t, **tail;
	double n, ns = -1;

	if (!paren)
		return unknown_point(L, point);
	for (size_t i = 0; i < sizeof(timer_units) / sizeof(timer_units[0]); i++) {
		if ((size_t)(paren - unit) == strlen(timer_units[i].unit) &&
		    !strncmp(unit, timer_units[i].unit, (size_t)(paren - unit)))
			ns = timer_units[i].ns;
	}
	if (ns < 0)
		return unknown_point(L, point);
	n = parse_count(paren + 1);
	if (n < 0)
		return luaL_error(L,
				  "bad interval in probe point '%s' (want a positive number, "
				  "e.g. timer.ms(100))",
				  point);
	ns = ns > 0 ? ns * n : 1e9 / n;
	if (ns < 1000)
		return luaL_error(L,
				  "probe point '%s' fires more often than every microsecond; "
				  "use a sampling counter (perfmon.sample) for that rate",
				  point);
	t = calloc(1, sizeof(*t));
	if (!t)
		return luaL_error(L, "out of memory");
	t->sc = sc;
	t->id = -1;
	t->interval_ns = (uint64_t)ns;
	snprintf(t->point, sizeof(t->point), "%s", point);
	snprintf(t->where, sizeof(t->where), "%s probe", t->point);
	lua_pushvalue(L, 2);
	t->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	for (tail = &sc->timers; *tail; tail = &(*tail)->next)
		;
	*tail = t;
	if (sc->started && arm_timer(sc, t) < 0)
		return luaL_error(L, "cannot arm %s: %s", point, strerror(errno));
	return 0;
}

/* "begin", "end", "error", optionally with a priority as in SystemTap:
 * "end(100)" runs after every end probe of a lower number (default 0). */
static bool phase_point(const char *point, char name[8], lua_Integer *prio)
{
	static const char *const phases[] = {"begin", "end", "error"};

	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(phases[i]);
		char *end;

		if (strncmp(point, phases[i], n) != 0)
			continue;
		*prio = 0;
		if (point[n] == '(') {
			errno = 0;
			*prio = strtoll(point + n + 1, &end, 10);
			if (errno || end == point + n + 1 || strcmp(end, ")") != 0)
				return false;
		} else if (point[n]) {
			return false;
		}
		strcpy(name, phases[i]);
		return true;
	}
	return false;
}

/* Insert the handler at 2 into the point's list, after every handler of a
 * priority <= prio: registration order within one priority. */
static void add_phase_probe(lua_State *L, const char *name, lua_Integer prio)
{
	char key[16];
	lua_Integer n, at;

	snprintf(key, sizeof(key), "%s.prio", name);
	push_probes(L);
	for (int k = 0; k < 2; k++) {
		if (lua_getfield(L, -1 - k, k ? key : name) != LUA_TTABLE) {
			lua_pop(L, 1);
			lua_newtable(L);
			lua_pushvalue(L, -1);
			lua_setfield(L, -3 - k, k ? key : name);
		}
	}
	/* stack: probes, fns, prios */
	n = luaL_len(L, -1);
	for (at = n; at >= 1; at--) {
		lua_rawgeti(L, -1, at);
		if (lua_tointeger(L, -1) <= prio) {
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
	lua_pushinteger(L, prio);
	lua_rawseti(L, -2, at);
	lua_pushvalue(L, 2);
	lua_rawseti(L, -3, at);
	lua_pop(L, 3);
}

/* probe(point, handler [, options]) */
static int l_probe(lua_State *L)
{
	struct ps_script *sc = lua_touserdata(L, lua_upvalueindex(1));
	const char *point = luaL_checkstring(L, 1);
	char name[8];
	lua_Integer prio;

	luaL_checktype(L, 2, LUA_TFUNCTION);
	if (phase_point(point, name, &prio)) {
		add_phase_probe(L, name, prio);
		return 0;
	}
	if (!strncmp(point, "timer.", 6))
		return add_timer(L, sc, point);
	if (!strncmp(point, "perfmon.", 8) || !strncmp(point, "kernel.perfmon.", 15))
		return ps_sample__probe(L, sc, point);
	return unknown_point(L, point);
}

void ps_probe__open(lua_State *L, struct ps_script *sc)
{
	lua_pushlightuserdata(L, sc);
	lua_pushcclosure(L, l_probe, 1);
	lua_setglobal(L, "probe");
}
