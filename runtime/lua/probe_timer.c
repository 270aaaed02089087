/*
 * probe_timer.c: timer.s/ms/us/ns/hz(N) probes. Each becomes a timerfd on
 * the session's loop (CLOCK_MONOTONIC) when the session starts, or at once
 * when registered later (at the REPL). Ticks missed while a handler ran
 * collapse into one call, as timerfd reports them. perfmon.after(ms, fn)
 * is a timer that fires once: it leaves the list when it has. Also
 * perfmon.drain_interval and perfmon.drain, how soon records reach
 * handlers (loop/drain.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lua/probe.h"

struct timer {
	struct timer *next;
	struct ps_script *sc;
	int ref; /* handler in the registry */
	int id;	 /* loop timer id, -1 until armed */
	uint64_t interval_ns;
	bool once; /* perfmon.after's */
	char point[48];
	char where[56]; /* "timer.ms(10) probe", for error messages */
};

struct ps_timers {
	struct timer *head; /* in registration order */
	size_t n;
	bool armed; /* the session started: new timers arm at once */
};

static const struct {
	const char *unit;
	double ns; /* nanoseconds per unit; 0 = frequency in hertz */
} units[] = {
    {"s", 1e9},	   {"sec", 1e9}, {"ms", 1e6}, {"msec", 1e6}, {"us", 1e3},
    {"usec", 1e3}, {"ns", 1},	 {"nsec", 1}, {"hz", 0},
};

/* A timer that fired once leaves the list, its handler unreferenced. */
static void drop(struct ps_script *sc, struct timer *t)
{
	struct ps_timers *ts = sc->timers;

	for (struct timer **p = &ts->head; *p; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			ts->n--;
			break;
		}
	}
	if (t->id >= 0)
		ps_loop__del_timer(sc->loop, t->id);
	luaL_unref(sc->L, LUA_REGISTRYINDEX, t->ref);
	free(t);
}

static int on_timer(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	struct timer *t = ctx;
	struct ps_script *sc = t->sc;

	(void)loop;
	(void)expirations;
	if (ps_lua_script__stopping(sc))
		return 0;
	lua_rawgeti(sc->L, LUA_REGISTRYINDEX, t->ref);
	if (t->once) { /* gone before its handler runs: it may set another */
		luaL_unref(sc->L, LUA_REGISTRYINDEX, t->ref);
		t->ref = LUA_NOREF;
		drop(sc, t);
		ps_lua__call(sc, 0, 0, 0, "perfmon.after handler");
	} else {
		ps_lua__call(sc, 0, 0, 0, t->where);
	}
	fflush(stdout);
	return 0;
}

/* The script's timer list, made on first use: armed already when the
 * session runs (a timer set from a handler or at the REPL arms at once). */
static struct ps_timers *new_timers(struct ps_script *sc)
{
	struct ps_timers *ts = calloc(1, sizeof(*ts));

	if (ts)
		ts->armed = ps_driver__started(sc->driver);
	return sc->timers = ts;
}

static int arm(struct ps_script *sc, struct timer *t)
{
	t->id = ps_loop__add_timer(sc->loop, t->interval_ns, on_timer, t);
	if (t->id < 0)
		snprintf(sc->setup_error, sizeof(sc->setup_error), "cannot arm %s: %s", t->point,
			 ps_strerror(t->id));
	return t->id < 0 ? -1 : 0;
}

/* "timer.UNIT(N)": the interval in pt->value (ns). */
static int parse(lua_State *L, const char *point, struct ps_lua_point *pt)
{
	const char *unit = point + strlen("timer."), *paren;
	double ns = -1, n;
	char *end;

	if (strncmp(point, "timer.", 6) != 0 || !(paren = strchr(unit, '(')))
		return 0;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if ((size_t)(paren - unit) == strlen(units[i].unit) &&
		    !strncmp(unit, units[i].unit, (size_t)(paren - unit)))
			ns = units[i].ns;
	if (ns < 0)
		return 0;
	n = isdigit((unsigned char)paren[1]) ? strtod(paren + 1, &end) : -1;
	if (n <= 0 || strcmp(end, ")") != 0)
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
	pt->value = ns;
	return 1;
}

static int attach(lua_State *L, struct ps_script *sc, const char *point,
		  const struct ps_lua_point *pt)
{
	struct ps_timers *ts = sc->timers;
	struct timer *t, **tail;

	if (!ts && !(ts = new_timers(sc)))
		return luaL_error(L, "out of memory");
	t = calloc(1, sizeof(*t));
	if (!t)
		return luaL_error(L, "out of memory");
	t->sc = sc;
	t->id = -1;
	t->interval_ns = (uint64_t)pt->value;
	snprintf(t->point, sizeof(t->point), "%s", point);
	snprintf(t->where, sizeof(t->where), "%s probe", t->point);
	lua_pushvalue(L, 2);
	t->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	for (tail = &ts->head; *tail; tail = &(*tail)->next)
		;
	*tail = t;
	ts->n++;
	if (ts->armed && arm(sc, t) < 0)
		return luaL_error(L, "%s", sc->setup_error);
	return 0;
}

static int start(struct ps_script *sc)
{
	struct ps_timers *ts = sc->timers;

	if (!ts || ts->armed)
		return 0;
	ts->armed = true;
	for (struct timer *t = ts->head; t; t = t->next)
		if (t->id < 0 && arm(sc, t) < 0)
			return -1;
	return 0;
}

static void detach(struct ps_script *sc)
{
	struct ps_timers *ts = sc->timers;

	while (ts && ts->head) {
		struct timer *t = ts->head;

		ts->head = t->next;
		if (t->id >= 0)
			ps_loop__del_timer(sc->loop, t->id);
		luaL_unref(sc->L, LUA_REGISTRYINDEX, t->ref);
		free(t);
	}
	free(ts);
	sc->timers = NULL;
}

static size_t count(const struct ps_script *sc)
{
	return sc->timers ? sc->timers->n : 0;
}

static const char *const points[] = {"timer.s(N)",  "timer.ms(N)", "timer.us(N)",
				     "timer.ns(N)", "timer.hz(N)", NULL};

const struct ps_lua_provider ps_lua_timer_provider = {
    .name = "timer",
    .points = points,
    .source = true,
    .source_on_self = true,
    .parse = parse,
    .attach = attach,
    .start = start,
    .detach = detach,
    .count = count,
};

/* perfmon.after(ms, fn): fn runs once, ms milliseconds from now (from the
 * session's start when called before it). */
static int l_after(lua_State *L)
{
	struct ps_script *sc = lua_touserdata(L, lua_upvalueindex(1));
	lua_Number ms = luaL_checknumber(L, 1);
	struct ps_timers *ts;
	struct timer *t;

	luaL_argcheck(L, ms >= 0.001 && ms <= 1e9, 1, "a delay from 0.001 to 1e9 milliseconds");
	luaL_checktype(L, 2, LUA_TFUNCTION);
	if (!(ts = sc->timers) && !(ts = new_timers(sc)))
		return luaL_error(L, "out of memory");
	if (!(t = calloc(1, sizeof(*t))))
		return luaL_error(L, "out of memory");
	t->sc = sc;
	t->id = -1;
	t->once = true;
	t->interval_ns = (uint64_t)(ms * 1e6);
	snprintf(t->point, sizeof(t->point), "perfmon.after(%g)", (double)ms);
	lua_pushvalue(L, 2);
	t->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	t->next = ts->head;
	ts->head = t;
	ts->n++;
	if (ts->armed && arm(sc, t) < 0) {
		drop(sc, t);
		return luaL_error(L, "%s", sc->setup_error);
	}
	return 0;
}

/* perfmon.drain_interval([ms]) -> ms: how soon records reach handlers at
 * the latest, setting it when ms is given (the driver's shortest drain
 * interval, 5 ms by default). */
static int l_drain_interval(lua_State *L)
{
	struct ps_script *sc = lua_touserdata(L, lua_upvalueindex(1));

	if (!lua_isnoneornil(L, 1)) {
		lua_Number ms = luaL_checknumber(L, 1);

		luaL_argcheck(L, ms >= 1 && ms <= 1000, 1,
			      "an interval from 1 to 1000 milliseconds");
		ps_driver__set_drain_interval(sc->driver, (uint64_t)(ms * 1e6));
	}
	uint64_t ns = ps_driver__drain_interval(sc->driver);

	if (ns % 1000000u == 0)
		lua_pushinteger(L, (lua_Integer)(ns / 1000000u));
	else
		lua_pushnumber(L, (lua_Number)ns / 1e6);
	return 1;
}

/* perfmon.ring_pages([pages]) -> pages, asked: the data pages of each
 * sample ring mapped from now on (-b), setting them when pages is given
 * (a power of two); asked says whether -b or a call chose them. */
static int l_ring_pages(lua_State *L)
{
	struct ps_script *sc = lua_touserdata(L, lua_upvalueindex(1));
	struct ps_session *s = sc->session;
	bool asked;

	if (!lua_isnoneornil(L, 1)) {
		lua_Integer n = luaL_checkinteger(L, 1);

		luaL_argcheck(L, n > 0 && n <= (lua_Integer)PS_RING_PAGES_MAX && !(n & (n - 1)), 1,
			      "a power of two of pages from 1 to 1048576");
		ps_session__set_ring_pages(s, (size_t)n);
	}
	lua_pushinteger(L, (lua_Integer)ps_session__ring_pages(s, &asked));
	lua_pushboolean(L, asked);
	return 2;
}

/* perfmon.drain(): deliver what the rings hold now (nothing from a sample
 * handler, which a drain is running). */
static int l_drain(lua_State *L)
{
	struct ps_script *sc = lua_touserdata(L, lua_upvalueindex(1));

	ps_driver__drain_now(sc->driver);
	return 0;
}

void ps_lua_timer__open(lua_State *L, struct ps_script *sc)
{
	static const luaL_Reg fns[] = {{"after", l_after},
				       {"drain_interval", l_drain_interval},
				       {"ring_pages", l_ring_pages},
				       {"drain", l_drain},
				       {NULL, NULL}};

	if (lua_getglobal(L, "perfmon") == LUA_TTABLE) {
		lua_pushlightuserdata(L, sc);
		luaL_setfuncs(L, fns, 1);
	}
	lua_pop(L, 1);
}
