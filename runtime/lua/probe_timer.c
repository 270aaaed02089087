/*
 * probe_timer.c: timer.s/ms/us/ns/hz(N) probes. Each becomes a timerfd on
 * the session's loop (CLOCK_MONOTONIC) when the session starts, or at once
 * when registered later (at the REPL). Ticks missed while a handler ran
 * collapse into one call, as timerfd reports them.
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

static int on_timer(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	struct timer *t = ctx;

	(void)loop;
	(void)expirations;
	if (ps_lua_script__stopping(t->sc))
		return 0;
	lua_rawgeti(t->sc->L, LUA_REGISTRYINDEX, t->ref);
	ps_lua__call(t->sc, 0, 0, 0, t->where);
	fflush(stdout);
	return 0;
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

	if (!ts && !(ts = sc->timers = calloc(1, sizeof(*ts))))
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
