/*
 * probe_sample.c: perfmon.sample(NAME) probes (kernel.perfmon.sample is the
 * same). NAME is a global holding a sampling counter (a handle or a counter
 * object), or a handle written out; it is resolved when the session starts,
 * so counters may be allocated in begin. Each overflow reaches the handlers
 * of its counter as the one reused "perfscript.sample" object, whose fields
 * are decoded only when read (lua/sample_object.c). A probe's options (the
 * in-kernel filters) are merged into the counter's BPF configuration
 * (ps_session__merge_bpf).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "event/event.h"
#include "lua/probe.h"

struct sample_probe {
	struct ps_lua_target t;
	int ref;		  /* handler */
	struct ps_lua_opts *opts; /* in-kernel options of the probe, NULL if none */
};

struct ps_samplers {
	struct sample_probe *v;
	size_t n, cap;
	ps_handle last;	   /* one-entry cache: last handle dispatched... */
	size_t last_first; /* ...and its first probe index */
};

static bool is_identifier(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

int ps_lua_target__parse(lua_State *L, const char *point, const char *prefix,
			 struct ps_lua_target *t)
{
	size_t pl = strlen(prefix), n;
	const char *arg = point + pl;
	char *end;

	if (strncmp(point, prefix, pl) != 0)
		return 0;
	n = strlen(arg);
	if (n < 2 || arg[n - 1] != ')' || n - 1 >= sizeof(t->name))
		return 0;
	memcpy(t->name, arg, n - 1);
	t->name[n - 1] = '\0';
	errno = 0;
	t->handle = strtoull(t->name, &end, 0);
	if (!errno && !*end && t->handle) {
		t->name[0] = '\0'; /* a handle written out */
		return 1;
	}
	t->handle = 0;
	if (!is_identifier(t->name))
		return luaL_error(
		    L, "bad probe point '%s': '%s' is neither a global name nor a handle", point,
		    t->name);
	return 1;
}

struct lookup {
	const char *name;
	ps_handle handle; /* 0 unless the global holds a counter or a handle */
	bool nil;
};

/* Protected (a strict _G raises): the global's handle, an integer or a
 * counter object's. */
static int global_handle(lua_State *L)
{
	struct lookup *k = lua_touserdata(L, 1);

	k->nil = lua_getglobal(L, k->name) == LUA_TNIL;
	if (lua_isinteger(L, -1)) {
		k->handle = (ps_handle)lua_tointeger(L, -1);
	} else if (luaL_testudata(L, -1, "perfscript.counter")) {
		lua_getfield(L, -1, "handle");
		lua_pushvalue(L, -2);
		lua_call(L, 1, 1);
		if (lua_isinteger(L, -1))
			k->handle = (ps_handle)lua_tointeger(L, -1);
	}
	return 0;
}

/* The event string name with one more term: "ev/a=1/" -> "ev/a=1,term/",
 * "ev:u" -> "ev/term/u", "ev" -> "ev/term/". */
static void with_term(const char *name, const char *term, char *out, size_t len)
{
	size_t n = strlen(name);
	const char *colon = strrchr(name, ':');

	if (n > 1 && name[n - 1] == '/')
		snprintf(out, len, "%.*s,%s/", (int)(n - 1), name, term);
	else if (colon && !strchr(colon, '/') &&
		 ps_ev__looks_like_mods(colon + 1, strlen(colon + 1)))
		snprintf(out, len, "%.*s/%s/%s", (int)(colon - name), name, term, colon + 1);
	else
		snprintf(out, len, "%s/%s/", name, term);
}

int ps_lua_target__resolve(struct ps_script *sc, struct ps_lua_target *t, const char *kind,
			   bool every)
{
	const char *what = t->name[0] ? t->name : "handle";
	char where[96];
	ps_handle h = t->handle;

	if (t->name[0]) {
		struct lookup k = {.name = t->name};

		snprintf(where, sizeof(where), "%s(%s) probe", kind, t->name);
		if (ps_lua__protect(sc, global_handle, &k, 0, where) < 0)
			return -1; /* a Lua error, reported: the session is ending */
		h = k.handle;
		if (k.nil) {
			snprintf(sc->setup_error, sizeof(sc->setup_error),
				 "%s%s(%s): global '%s' is nil when the context is created; "
				 "allocate the counter at top level or in a begin probe",
				 t->where, kind, t->name, t->name);
			return -1;
		}
	}
	if (ps_session__check(sc->session, h) < 0) {
		snprintf(sc->setup_error, sizeof(sc->setup_error),
			 "%s%s(%s): not a live counter handle (freed, stale or not a counter)%s",
			 t->where, kind, what, ps_lua__zero_handle_cause(sc, (lua_Integer)h));
		return -1;
	}
	/* A tracepoint or probe without period= samples every hit, as in perf record. */
	if (every && !ps_session__is_sampling(sc->session, h) &&
	    (ps_session__flags(sc->session, h) & PS_EVENT_SAMPLE_EVERY) &&
	    !ps_session__is_open(sc->session, h))
		ps_session__sample_every(sc->session, h);
	if (!ps_session__is_sampling(sc->session, h)) {
		const char *name = ps_session__name(sc->session, h);
		char period[128], freq[128];
		size_t n;

		with_term(name, "period=100000", period, sizeof(period));
		with_term(name, "freq=1000", freq, sizeof(freq));
		snprintf(sc->setup_error, sizeof(sc->setup_error),
			 "%s%s(%s): counter '%s' does not sample; give it a period or a "
			 "frequency, ",
			 t->where, kind, what, name);
		n = strlen(sc->setup_error); /* a long name cuts the example, not more */
		snprintf(sc->setup_error + n, sizeof(sc->setup_error) - n, "e.g. '%s' or '%s'",
			 period, freq);
		return -1;
	}
	t->handle = h;
	return 0;
}

static int parse(lua_State *L, const char *point, struct ps_lua_point *pt)
{
	struct ps_lua_target t = {0};

	if (!ps_lua_target__parse(L, point, "perfmon.sample(", &t) &&
	    !ps_lua_target__parse(L, point, "kernel.perfmon.sample(", &t))
		return 0;
	snprintf(pt->arg, sizeof(pt->arg), "%s", t.name);
	return 1;
}

static int start(struct ps_script *sc);

static int attach(lua_State *L, struct ps_script *sc, const char *point,
		  const struct ps_lua_point *pt)
{
	struct ps_samplers *sp = sc->samplers;
	struct sample_probe p = {0};

	if (!sp && !(sp = sc->samplers = calloc(1, sizeof(*sp))))
		return luaL_error(L, "out of memory");
	ps_lua_target__parse(
	    L, point, strncmp(point, "kernel.", 7) ? "perfmon.sample(" : "kernel.perfmon.sample(",
	    &p.t);
	snprintf(p.t.where, sizeof(p.t.where), "%s", pt->where);
	if (!lua_isnoneornil(L, 3))
		p.opts = ps_lua_bpf_opts__parse(L, 3);
	if (ps_array__reserve(&sp->v, &sp->cap, sp->n + 1, sizeof(*sp->v))) {
		free(p.opts);
		return luaL_error(L, "out of memory");
	}
	lua_pushvalue(L, 2);
	p.ref = luaL_ref(L, LUA_REGISTRYINDEX);
	sp->v[sp->n++] = p;
	sp->last = 0;
	if (ps_driver__started(sc->driver) && start(sc) < 0)
		return luaL_error(L, "%s", sc->setup_error);
	return 0;
}

/* Resolve every probe's NAME, merge its options; at the REPL too, after
 * each chunk. */
static int start(struct ps_script *sc)
{
	struct ps_samplers *sp = sc->samplers;

	for (size_t i = 0; sp && i < sp->n; i++) {
		struct sample_probe *p = &sp->v[i];

		if (ps_lua_target__resolve(sc, &p->t, "perfmon.sample", true) < 0 ||
		    ps_lua_bpf_opts__use(sc, p->t.handle, p->opts) < 0)
			return -1;
	}
	if (sp)
		sp->last = 0;
	return 0;
}

int ps_lua_sample__on_sample(const struct ps_sample *s, void *ctx)
{
	struct ps_script *sc = ctx;
	struct ps_samplers *sp = sc->samplers;
	size_t first = 0;
	int rc = 0;

	if (!sp)
		return 0;
	if (sp->last == s->handle) {
		first = sp->last_first;
	} else {
		while (first < sp->n && sp->v[first].t.handle != s->handle)
			first++;
		sp->last = s->handle;
		sp->last_first = first;
	}
	ps_lua_sample_object__push(sc, s);
	for (size_t i = first; i < sp->n && rc == 0; i++) {
		if (sp->v[i].t.handle != s->handle)
			continue;
		lua_rawgeti(sc->L, LUA_REGISTRYINDEX, sp->v[i].ref);
		lua_pushvalue(sc->L, -2);
		rc = ps_lua__call(sc, 1, 0, 0, "perfmon.sample probe");
	}
	ps_lua_sample_object__release(sc);
	lua_pop(sc->L, 1);
	return rc < 0 ? -ECANCELED : 0;
}

static void detach(struct ps_script *sc)
{
	struct ps_samplers *sp = sc->samplers;

	for (size_t i = 0; sp && i < sp->n; i++) {
		luaL_unref(sc->L, LUA_REGISTRYINDEX, sp->v[i].ref);
		free(sp->v[i].opts);
	}
	if (sp)
		free(sp->v);
	free(sp);
	sc->samplers = NULL;
}

/* The session ends, its rings drained: the sampled counters stop, so the
 * end probes (which may take seconds, building a profile) are not run
 * while a -p or -a target fills the rings with samples nobody will read,
 * reported as lost after them (5% of a 20 s profile at 10 kHz). */
static void stop(struct ps_script *sc)
{
	for (size_t i = 0; sc->samplers && i < sc->samplers->n; i++)
		ps_session__stop(sc->session, sc->samplers->v[i].t.handle);
}

static void report(struct ps_script *sc)
{
	for (size_t i = 0; sc->samplers && i < sc->samplers->n; i++)
		ps_lua_script__report_lost(sc, sc->samplers->v[i].t.handle);
}

static size_t count(const struct ps_script *sc)
{
	return sc->samplers ? sc->samplers->n : 0;
}

static const char *const points[] = {"perfmon.sample(NAME)", "kernel.perfmon.sample(NAME)", NULL};

const struct ps_lua_provider ps_lua_sample_provider = {
    .name = "sample",
    .points = points,
    .source = true,
    .parse = parse,
    .attach = attach,
    .start = start,
    .stop = stop,
    .report = report,
    .detach = detach,
    .count = count,
};
