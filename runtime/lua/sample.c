/*
 * sample.c: the perfmon.sample(NAME) and perfmon.lost(NAME) probes. A
 * probe names a global (or gives a handle); the name is resolved when the
 * context is created, so counters may be allocated in begin. Overflow
 * samples arrive from the session's ring buffers through the event loop and
 * are handed to the handlers as one reused "perfscript.sample" object whose
 * fields are decoded only when read (lua/sample_object.c).
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include <lauxlib.h>

#include "lua/sample.h"

/* Records per drain call; between calls a pending signal ends draining, so
 * a handler of 1 ms still answers SIGINT within half a second. */
#define DRAIN_BUDGET	  512
#define DRAIN_INTERVAL_NS 50000000u /* low-rate samples still arrive within 50 ms */

struct sample_probe {
	char target[64];	  /* global name, or "" when a handle was given */
	ps_handle handle;	  /* resolved at context creation */
	bool lost;		  /* perfmon.lost(NAME) rather than perfmon.sample(NAME) */
	int ref;		  /* handler */
	char where[128];	  /* "script.lua:12:" of the registration */
	struct ps_bpf_conf *opts; /* in-kernel options of the probe, NULL if none */
};

struct ps_samplers {
	struct sample_probe *probes;
	size_t n, cap;
	int nwatched; /* poll fds already in the loop */
	bool drain_timer;
	ps_handle last;	   /* one-entry cache: last handle dispatched... */
	size_t last_first; /* ...and its first probe index */
};

static struct ps_samplers *samplers(struct ps_script *sc)
{
	if (!sc->samplers)
		sc->samplers = calloc(1, sizeof(*sc->samplers));
	return sc->samplers;
}

/* "perfmon.sample(NAME)" -> target; returns false when it is not that form. */
static bool parse_target(const char *point, const char *prefix, char *out, size_t len)
{
	size_t pl = strlen(prefix), n;
	const char *arg = point + pl;

	if (strncmp(point, prefix, pl) != 0)
		return false;
	n = strlen(arg);
	if (n < 2 || arg[n - 1] != ')' || n - 1 >= len)
		return false;
	memcpy(out, arg, n - 1);
	out[n - 1] = '\0';
	return true;
}

static bool is_identifier(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

int ps_sample__probe(lua_State *L, struct ps_script *sc, const char *point)
{
	struct ps_samplers *sp = samplers(sc);
	struct sample_probe p = {0};
	char arg[64];
	char *end;

	if (!sp)
		return luaL_error(L, "out of memory");
	if (parse_target(point, "perfmon.sample(", arg, sizeof(arg)) ||
	    parse_target(point, "kernel.perfmon.sample(", arg, sizeof(arg))) {
		p.lost = false;
	} else if (parse_target(point, "perfmon.lost(", arg, sizeof(arg))) {
		p.lost = true;
	} else {
		return luaL_error(L,
				  "bad probe point '%s' (want perfmon.sample(NAME), where NAME is "
				  "a global holding a counter or handle)",
				  point);
	}
	errno = 0;
	p.handle = strtoull(arg, &end, 0);
	if (errno || *end || !p.handle) {
		if (!is_identifier(arg))
			return luaL_error(L,
					  "bad probe point '%s': '%s' is neither a global name nor "
					  "a handle",
					  point, arg);
		p.handle = 0;
		snprintf(p.target, sizeof(p.target), "%s", arg);
	}
	luaL_where(L, 1);
	snprintf(p.where, sizeof(p.where), "%s", lua_tostring(L, -1));
	lua_pop(L, 1);
	if (!lua_isnoneornil(L, 3)) {
		if (p.lost)
			return luaL_error(L, "perfmon.lost takes no options; give them to the "
					     "perfmon.sample probe of the counter");
		p.opts = ps_aggregate__options(L, 3);
	}
	if (sp->n == sp->cap) {
		size_t cap = sp->cap ? sp->cap * 2 : 8;
		struct sample_probe *grown = realloc(sp->probes, cap * sizeof(*grown));

		if (!grown) {
			free(p.opts);
			return luaL_error(L, "out of memory");
		}
		sp->probes = grown;
		sp->cap = cap;
	}
	lua_pushvalue(L, 2);
	p.ref = luaL_ref(L, LUA_REGISTRYINDEX);
	sp->probes[sp->n++] = p;
	sp->last = 0;
	if (sc->started)
		return ps_sample__resolve(sc) < 0 ? luaL_error(L, "%s", sc->sample_error) : 0;
	return 0;
}

bool ps_sample__any(const struct ps_script *sc)
{
	return sc->samplers && sc->samplers->n > 0;
}

/* The handle a global holds: an integer handle or a counter object. */
static ps_handle global_handle(lua_State *L, const char *name, bool *found)
{
	ps_handle h = 0;

	*found = lua_getglobal(L, name) != LUA_TNIL;
	if (lua_isinteger(L, -1)) {
		h = (ps_handle)lua_tointeger(L, -1);
	} else if (luaL_testudata(L, -1, "perfscript.counter")) {
		lua_getfield(L, -1, "handle");
		lua_pushvalue(L, -2);
		if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_isinteger(L, -1))
			h = (ps_handle)lua_tointeger(L, -1);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return h;
}

int ps_sample__resolve(struct ps_script *sc)
{
	struct ps_samplers *sp = sc->samplers;

	for (size_t i = 0; sp && i < sp->n; i++) {
		struct sample_probe *p = &sp->probes[i];
		const char *kind = p->lost ? "perfmon.lost" : "perfmon.sample";
		bool found = true;
		ps_handle h = p->target[0] ? global_handle(sc->L, p->target, &found) : p->handle;

		if (!found) {
			snprintf(sc->sample_error, sizeof(sc->sample_error),
				 "%s%s(%s): global '%s' is nil when the context is created; "
				 "allocate the counter at top level or in a begin probe",
				 p->where, kind, p->target, p->target);
			return -1;
		}
		if (ps_session__check(sc->session, h) < 0) {
			snprintf(sc->sample_error, sizeof(sc->sample_error),
				 "%s%s(%s): not a live counter handle (freed, stale or not a "
				 "counter)",
				 p->where, kind, p->target[0] ? p->target : "handle");
			return -1;
		}
		/* A tracepoint or probe without period= samples every hit, as in perf record. */
		if (!ps_session__is_sampling(sc->session, h) &&
		    (ps_session__flags(sc->session, h) & PS_EVENT_SAMPLE_EVERY) &&
		    !ps_session__is_open(sc->session, h) && !p->lost)
			ps_session__sample_every(sc->session, h);
		if (!ps_session__is_sampling(sc->session, h)) {
			snprintf(sc->sample_error, sizeof(sc->sample_error),
				 "%s%s(%s): counter '%s' does not sample; give it a period or "
				 "a frequency, e.g. '%s/period=100000/' or '%s/freq=1000/'",
				 p->where, kind, p->target[0] ? p->target : "handle",
				 ps_session__name(sc->session, h), ps_session__name(sc->session, h),
				 ps_session__name(sc->session, h));
			return -1;
		}
		p->handle = h;
		if (!p->lost)
			ps_aggregate__want_samples(sc, h);
		if (p->opts && ps_aggregate__use_options(sc, h, p->opts) < 0) {
			snprintf(sc->sample_error, sizeof(sc->sample_error), "out of memory");
			return -1;
		}
	}
	if (sp)
		sp->last = 0;
	if (ps_aggregate__apply(sc, sc->sample_error, sizeof(sc->sample_error)) < 0)
		return -1;
	return 0;
}

/* Run every handler of kind `lost` registered on h; the argument is on top. */
static int dispatch(struct ps_script *sc, ps_handle h, bool lost, int nargs_pushed)
{
	struct ps_samplers *sp = sc->samplers;
	lua_State *L = sc->L;
	size_t first = 0;
	int rc = 0;

	if (!lost && sp->last == h) {
		first = sp->last_first;
	} else {
		while (first < sp->n &&
		       (sp->probes[first].handle != h || sp->probes[first].lost != lost))
			first++;
		if (!lost) {
			sp->last = h;
			sp->last_first = first;
		}
	}
	for (size_t i = first; i < sp->n && rc == 0; i++) {
		struct sample_probe *p = &sp->probes[i];

		if (p->handle != h || p->lost != lost)
			continue;
		lua_rawgeti(L, LUA_REGISTRYINDEX, p->ref);
		for (int a = 0; a < nargs_pushed; a++)
			lua_pushvalue(L, -1 - nargs_pushed);
		rc = ps_script__call(sc, nargs_pushed,
				     lost ? "perfmon.lost probe" : "perfmon.sample probe");
	}
	return rc;
}

static int on_sample(const struct ps_sample *s, void *ctx)
{
	struct ps_script *sc = ctx;
	int rc;

	if (sc->exit_called || (sc->stop_asked && sc->errors))
		return -1; /* after exit() or an error no more handlers run */
	ps_sample_object__push(sc, s);
	rc = dispatch(sc, s->handle, false, 1);
	ps_sample_object__release(sc);
	lua_pop(sc->L, 1);
	return rc < 0 ? -1 : 0;
}

static int on_record(const struct ps_record *r, void *ctx)
{
	struct ps_script *sc = ctx;

	ps_sample_object__record(sc, r);
	if ((r->type == PERF_RECORD_LOST || r->type == PERF_RECORD_LOST_SAMPLES) && r->handle &&
	    r->lost && !sc->ending) {
		lua_pushinteger(sc->L, (lua_Integer)r->lost);
		dispatch(sc, r->handle, true, 1);
		lua_pop(sc->L, 1);
	}
	return 0;
}

/* Whether SIGINT or SIGTERM waits: a busy ring must not starve them. */
static bool signal_waiting(void)
{
	sigset_t set;

	return sigpending(&set) == 0 && (sigismember(&set, SIGINT) || sigismember(&set, SIGTERM));
}

/* Drain a source until it is empty. The kernel wakes us once per quarter
 * ring written, not again for records already waiting, so a full budget
 * means "go on"; between budgets a pending signal or the end of the session
 * wins, and the drain timer picks up what is left. */
static void drain(struct ps_script *sc, int fd)
{
	while (ps_session__dispatch(sc->session, fd, DRAIN_BUDGET) == DRAIN_BUDGET &&
	       !sc->stop_asked && !signal_waiting())
		;
}

static int on_ready(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	struct ps_script *sc = ctx;

	drain(sc, fd);
	/* A ring's carrier task exited: its fd polls HUP for ever. What its
	 * children still write is drained by the timer. */
	if (events & (EPOLLHUP | EPOLLERR))
		ps_loop__del_fd(loop, fd);
	fflush(stdout);
	return 0;
}

static int on_drain_timer(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	struct ps_script *sc = ctx;
	const int *fds;
	int n = ps_session__poll_fds(sc->session, &fds);

	(void)loop;
	(void)expirations;
	for (int i = 0; i < n && !sc->stop_asked; i++)
		drain(sc, fds[i]);
	fflush(stdout);
	return 0;
}

int ps_sample__setup(struct ps_script *sc)
{
	struct ps_sample_ops ops = {
	    .sz = sizeof(ops),
	    .sample = on_sample,
	    .record = on_record,
	    .ctx = sc,
	};

	return ps_session__set_sample_ops(sc->session, &ops);
}

int ps_sample__sync(struct ps_script *sc)
{
	struct ps_samplers *sp = samplers(sc);
	const int *fds;
	int n = ps_session__poll_fds(sc->session, &fds);

	if (!sp)
		return -ENOMEM;
	for (; sp->nwatched < n; sp->nwatched++) {
		int rc = ps_loop__add_fd(sc->loop, fds[sp->nwatched], EPOLLIN, on_ready, sc);

		if (rc < 0)
			return rc;
	}
	if (n > 0 && !sp->drain_timer) {
		int id = ps_loop__add_timer(sc->loop, DRAIN_INTERVAL_NS, on_drain_timer, sc);

		if (id < 0)
			return id;
		sp->drain_timer = true;
	}
	return 0;
}

void ps_sample__finish(struct ps_script *sc)
{
	/* After an error or exit() no handler runs again; after SIGINT the user
	 * wants out now, and a slow handler could take seconds over a full ring.
	 * The flush also tells perfmon.lost probes of losses no record reported
	 * (the ring still full when the writer went away), so what they were
	 * told adds up to perfmon.lost(h). */
	if (!sc->samplers || sc->errors || sc->nsignals || sc->exit_called)
		return;
	ps_session__flush(sc->session);
	fflush(stdout);
}

void ps_sample__report_lost(struct ps_script *sc)
{
	struct ps_samplers *sp = sc->samplers;

	for (size_t i = 0; sp && i < sp->n; i++) {
		struct ps_sample_stats st;
		bool seen = false;

		for (size_t j = 0; j < i; j++)
			seen |= sp->probes[j].handle == sp->probes[i].handle;
		if (seen || !sp->probes[i].handle ||
		    ps_session__sample_stats(sc->session, sp->probes[i].handle, &st) < 0)
			continue;
		if (st.lost)
			fprintf(stderr,
				"perfscript: %llu of %llu samples of '%s' were lost (the ring "
				"filled up: a handler slower than the sample rate, or a ring too "
				"small; try -b PAGES or a longer period)\n",
				(unsigned long long)st.lost,
				(unsigned long long)(st.lost + st.samples),
				ps_session__name(sc->session, sp->probes[i].handle));
		if (st.throttled)
			fprintf(stderr,
				"perfscript: '%s' was throttled %llu times by the kernel "
				"(kernel.perf_event_max_sample_rate); samples are missing for "
				"those intervals\n",
				ps_session__name(sc->session, sp->probes[i].handle),
				(unsigned long long)st.throttled);
	}
}

void ps_sample__free(struct ps_script *sc)
{
	struct ps_samplers *sp = sc->samplers;

	if (!sp)
		return;
	for (size_t i = 0; i < sp->n; i++) {
		luaL_unref(sc->L, LUA_REGISTRYINDEX, sp->probes[i].ref);
		free(sp->probes[i].opts);
	}
	free(sp->probes);
	free(sp);
	sc->samplers = NULL;
}
