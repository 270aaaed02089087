/*
 * aggregate.c: perfmon.aggregate(), in-kernel counting of a counter's
 * overflows by key. Its options (by, entries, forward, and the filters
 * parsed in lua/bpf_opts.c) are merged into the counter's
 * (ps_session__merge_bpf), which loads a program again only when they
 * change. It returns a "perfscript.aggregate" object; its read() and
 * take() are lua/aggregate_read.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "base/advice.h"
#include "base/array.h"
#include "base/regs.h"
#include "lua/perfmon.h"

#define AGG_MT "perfscript.aggregate"

static const struct {
	const char *name;
	uint32_t bit;
} fields[] = {
    {"pid", PS_AGG_PID},       {"tid", PS_AGG_TID},	{"cpu", PS_AGG_CPU},
    {"comm", PS_AGG_COMM},     {"ip", PS_AGG_IP},	{"ustack", PS_AGG_USTACK},
    {"kstack", PS_AGG_KSTACK}, {"args.", PS_AGG_FIELD}, /* args.NAME: a tracepoint field */
    {"retval", PS_AGG_FIELD},  {"arg", PS_AGG_FIELD},	/* a probe's register */
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))
_Static_assert(NFIELDS <= PS_LUA_AGG_KEYS, "a key per field");

struct ps_aggregates {
	ps_handle *v; /* counters given to perfmon.aggregate */
	bool *told;   /* their full-map drops were reported */
	size_t n, cap;
};

/* The handle of argument idx: an integer or a counter object. */
static ps_handle handle_arg(lua_State *L, int idx)
{
	if (luaL_testudata(L, idx, "perfscript.counter")) {
		ps_handle h;

		lua_getfield(L, idx, "handle");
		lua_pushvalue(L, idx);
		lua_call(L, 1, 1);
		h = (ps_handle)lua_tointeger(L, -1);
		lua_pop(L, 1);
		return h;
	}
	return (ps_handle)luaL_checkinteger(L, idx);
}

/* args.NAME: counter h's tracepoint field NAME, an integer of 1 to 8
 * bytes, as the key's field (the kernel reads it from each hit's record). */
static void field_key(lua_State *L, struct ps_script *sc, ps_handle h, const char *name,
		      struct ps_bpf_opts *o)
{
	const char *tp = ps_session__tracepoint(sc->session, h);
	const struct ps_tp_format *fmt = tp ? ps_tp_format__get(tp, NULL) : NULL;
	const struct ps_tp_field *f = ps_tp_format__find(fmt, name);

	if (!tp)
		luaL_error(L, "aggregation field 'args.%s': '%s' is not a tracepoint", name,
			   ps_session__name(sc->session, h));
	if (!fmt)
		luaL_error(L, "aggregation field 'args.%s': cannot read the format of '%s'", name,
			   tp);
	if (!f)
		luaL_error(L, "aggregation field 'args.%s': tracepoint '%s' has no field '%s'",
			   name, tp, name);
	if (f->kind != PS_TP_INT)
		luaL_error(L,
			   "aggregation field 'args.%s' is a %s, not an integer: only integer "
			   "fields key an aggregate in the kernel",
			   name, f->type);
	if (o->keys & PS_AGG_FIELD)
		luaL_error(L, "aggregation key: one args field at most");
	o->field_offset = f->offset;
	o->field_size = f->size;
	o->field_signed = f->is_signed;
}

/* retval or argN: a probe's register as the key's field (the kernel reads
 * it from the hit's registers). 1 when name is one, 0 when not. */
static int reg_key(lua_State *L, struct ps_script *sc, ps_handle h, const char *name,
		   struct ps_bpf_opts *o)
{
	static const unsigned args[] = PS_ARG_REGS;
	int kind = ps_session__probe_kind(sc->session, h), n = 0, off;
	bool ret = kind == PS_PROBE_URETPROBE || kind == PS_PROBE_KRETPROBE;
	unsigned reg;

	if (kind == PS_PROBE_USDT && sscanf(name, "arg%d", &n) == 1 && n >= 1 && n <= 12) {
		/* where the marker's note says, read by the program at the event */
		if (o->keys & PS_AGG_FIELD)
			luaL_error(L, "aggregation key: one args, argN or retval field at most");
		o->usdt_arg = (uint32_t)n;
		return 1;
	}
	if (!strcmp(name, "retval"))
		reg = PS_RET_REG;
	else if (sscanf(name, "arg%d", &n) == 1 && n >= 1 && n <= PS_NARG_REGS)
		reg = args[n - 1];
	else
		return 0;
	if (kind < 0)
		luaL_error(L, "aggregation field '%s': '%s' is not a probe (uprobe:, kprobe:, ...)",
			   name, ps_session__name(sc->session, h));
	if (kind == PS_PROBE_USDT)
		luaL_error(
		    L, "aggregation field '%s': a USDT marker has arg1 to arg12, no return value",
		    name);
	if (n ? ret : !ret)
		luaL_error(L, "aggregation field '%s': %s", name,
			   n ? "a return probe's arguments are gone at the return: probe the "
			       "entry (uprobe:, kprobe:)"
			     : "only a return probe has a return value (uretprobe:, kretprobe:)");
	if ((off = ps_regs__pt_offset(reg)) < 0)
		luaL_error(L, "aggregation field '%s': no registers for this architecture", name);
	if (o->keys & PS_AGG_FIELD)
		luaL_error(L, "aggregation key: one args, argN or retval field at most");
	o->field_offset = (uint32_t)off;
	o->field_size = 8;
	o->field_signed = true;
	return 1;
}

/* The `by` list of the options at idx: the fields, in order, into order[]. */
static uint32_t parse_by(lua_State *L, int idx, struct ps_lua_agg *u, struct ps_script *sc,
			 ps_handle h, struct ps_bpf_opts *o)
{
	uint32_t keys = 0;

	u->nkeys = 0;
	if (lua_getfield(L, idx, "by") != LUA_TTABLE)
		luaL_error(L,
			   "perfmon.aggregate wants by = { fields... } (fields: pid tid cpu comm "
			   "ip ustack kstack args.NAME retval argN)");
	for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
		const char *f = luaL_checkstring(L, -1);
		size_t k = 0;

		while (k < NFIELDS && fields[k].bit != PS_AGG_FIELD && strcmp(fields[k].name, f))
			k++;
		if (k < NFIELDS && fields[k].bit == PS_AGG_FIELD) {
			if (!strncmp(f, "args.", 5) && f[5])
				field_key(L, sc, h, f + 5, o);
			else if (!reg_key(L, sc, h, f, o))
				k = NFIELDS;
			if (k < NFIELDS)
				o->keys |= PS_AGG_FIELD;
		}
		if (k == NFIELDS)
			luaL_error(L,
				   "unknown aggregation field '%s' (fields: pid tid cpu comm ip "
				   "ustack kstack args.NAME retval argN)",
				   f);
		if (!(keys & fields[k].bit) && u->nkeys < PS_LUA_AGG_KEYS) {
			u->bit[u->nkeys] = fields[k].bit;
			snprintf(u->name[u->nkeys++], sizeof(u->name[0]), "%s", f);
		}
		keys |= fields[k].bit;
		lua_pop(L, 1);
	}
	lua_pop(L, 2);
	if (!u->nkeys)
		luaL_error(L, "perfmon.aggregate: by lists no field");
	return keys;
}

bool ps_lua_aggregate__has(const struct ps_script *sc, ps_handle h)
{
	for (size_t i = 0; sc->aggregates && i < sc->aggregates->n; i++)
		if (sc->aggregates->v[i] == h)
			return true;
	return false;
}

/* Remember h for the end-of-session report. */
static int remember(struct ps_script *sc, ps_handle h)
{
	struct ps_aggregates *a = sc->aggregates;

	if (!a && !(a = sc->aggregates = calloc(1, sizeof(*a))))
		return -ENOMEM;
	for (size_t i = 0; i < a->n; i++)
		if (a->v[i] == h)
			return 0;
	if (ps_array__reserve(&a->v, &a->cap, a->n + 1, sizeof(*a->v)) ||
	    ps_array__reserve_exact(&a->told, a->cap, sizeof(*a->told)))
		return -ENOMEM;
	a->told[a->n] = false;
	a->v[a->n++] = h;
	return 0;
}

/* perfmon.aggregate(counter, {by = {...}, entries = N, forward = bool, filters...}) */
static int l_aggregate(lua_State *L)
{
	struct ps_script *sc = ps_lua_script__from(L);
	ps_handle h = handle_arg(L, 1);
	struct ps_lua_opts *c;
	struct ps_lua_agg keys = {.sc = sc, .h = h}, *u;
	char msg[512] = "";
	int rc;

	luaL_checktype(L, 2, LUA_TTABLE);
	if (ps_session__check(sc->session, h) < 0)
		return luaL_argerror(L, 1, "not a live counter handle");
	/* a tracepoint or probe without period= counts every hit, as it samples them */
	if ((ps_session__flags(sc->session, h) & PS_EVENT_SAMPLE_EVERY) &&
	    !ps_session__is_open(sc->session, h))
		ps_session__sample_every(sc->session, h);
	c = lua_newuserdatauv(L, sizeof(*c), 0); /* the GC frees it if parsing raises */
	memset(c, 0, sizeof(*c));
	c->o.keys = parse_by(L, 2, &keys, sc, h, &c->o);
	ps_lua_bpf_opts__filters(L, 2, c);
	c->o.mode = PS_BPF_AGGREGATE;
	if (lua_getfield(L, 2, "forward") != LUA_TNIL && lua_toboolean(L, -1))
		c->o.mode |= PS_BPF_FORWARD;
	lua_pop(L, 1);
	ps_lua_bpf_opts__offcpu(L, sc, h, c);
	if (lua_getfield(L, 2, "entries") != LUA_TNIL) {
		lua_Integer e = luaL_checkinteger(L, -1);

		luaL_argcheck(L, e > 0 && e <= (1 << 24), 2, "entries must be 1 to 16777216");
		c->o.entries = (uint32_t)e;
	}
	lua_pop(L, 1);
	c->o.sz = sizeof(c->o);
	c->o.pids = c->pids;
	c->o.cpus = c->cpus;
	rc = ps_session__merge_bpf(sc->session, h, &c->o, msg, sizeof(msg));
	if (!rc)
		rc = remember(sc, h);
	if (rc < 0)
		return ps_lua__fail(L, false, msg[0] ? msg : ps_strerror(rc), rc);
	/* the aggregate keeps its counter object alive: a local counter the
	 * script drops would otherwise be collected, and freed, under it */
	u = lua_newuserdatauv(L, sizeof(*u), 1);
	lua_pushvalue(L, 1);
	lua_setiuservalue(L, -2, 1);
	*u = keys;
	luaL_setmetatable(L, AGG_MT);
	return 1;
}

static struct ps_lua_agg *check_agg(lua_State *L)
{
	return luaL_checkudata(L, 1, AGG_MT);
}

/* Environment failures: nil, message, errno (like io.open). */
static int fail(lua_State *L, struct ps_lua_agg *u, int rc)
{
	const char *why = ps_session__bpf_fallback(u->sc->session);

	lua_pushnil(L);
	if (rc == -EOPNOTSUPP)
		lua_pushfstring(L, "'%s' is not aggregated in the kernel%s%s%s%s",
				ps_session__name(u->sc->session, u->h),
				why[0] ? ": " : " (it is on the perf path",
				why[0] ? "" : ps_advice(PS_ADVICE_BACKEND, ""), why[0] ? "" : ")",
				why);
	else
		lua_pushstring(L, ps_strerror(rc));
	lua_pushinteger(L, rc < 0 ? -rc : rc);
	return 3;
}

/* read([{rows = true}]), take(...): the map as { [key] = count }, or as rows */
static bool rows_wanted(lua_State *L)
{
	bool rows;

	if (lua_isnoneornil(L, 2))
		return false;
	if (!lua_istable(L, 2))
		luaL_error(
		    L, "aggregate: read and take take a table of options ({rows = true}), got %s",
		    luaL_typename(L, 2));
	rows = lua_getfield(L, 2, "rows") != LUA_TNIL && lua_toboolean(L, -1);
	lua_pop(L, 1);
	return rows;
}

static int a_read(lua_State *L)
{
	struct ps_lua_agg *u = check_agg(L);
	int rc = ps_lua_aggregate__entries(L, u, false, rows_wanted(L));

	return rc < 0 ? fail(L, u, rc) : 1;
}

static int a_take(lua_State *L)
{
	struct ps_lua_agg *u = check_agg(L);
	int rc = ps_lua_aggregate__entries(L, u, true, rows_wanted(L));

	return rc < 0 ? fail(L, u, rc) : 1;
}

static int a_clear(lua_State *L)
{
	struct ps_lua_agg *u = check_agg(L);
	int rc = ps_aggregate__clear(u->sc->session, u->h);

	if (rc < 0)
		return fail(L, u, rc);
	lua_pushboolean(L, 1);
	return 1;
}

static int a_dropped(lua_State *L)
{
	struct ps_lua_agg *u = check_agg(L);
	uint64_t d = 0;
	int rc = ps_aggregate__dropped(u->sc->session, u->h, &d);

	if (rc < 0)
		return fail(L, u, rc);
	lua_pushinteger(L, (lua_Integer)d);
	return 1;
}

static int a_places(lua_State *L)
{
	struct ps_lua_agg *u = check_agg(L);
	struct ps_agg_places p;
	int rc = ps_aggregate__places(u->sc->session, u->h, &p);

	if (rc < 0)
		return fail(L, u, rc);
	lua_createtable(L, 0, 4);
	lua_pushinteger(L, (lua_Integer)p.used);
	lua_setfield(L, -2, "used");
	lua_pushinteger(L, (lua_Integer)p.checked);
	lua_setfield(L, -2, "checked");
	lua_pushinteger(L, (lua_Integer)p.unstable);
	lua_setfield(L, -2, "unstable");
	lua_pushinteger(L, (lua_Integer)p.walked);
	lua_setfield(L, -2, "walked");
	return 1;
}

static int a_tostring(lua_State *L)
{
	struct ps_lua_agg *u = check_agg(L);

	lua_pushfstring(L, AGG_MT " of '%s'",
			ps_session__check(u->sc->session, u->h) < 0
			    ? "(freed)"
			    : ps_session__name(u->sc->session, u->h));
	return 1;
}

void ps_lua_aggregate__open(lua_State *L, struct ps_script *sc)
{
	static const luaL_Reg methods[] = {
	    {"read", a_read},	    {"take", a_take},	  {"clear", a_clear},
	    {"dropped", a_dropped}, {"places", a_places}, {NULL, NULL},
	};

	(void)sc;
	luaL_newmetatable(L, AGG_MT);
	luaL_newlib(L, methods);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, a_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);
	/* the perfmon module table is on top */
	lua_pushcfunction(L, l_aggregate);
	lua_setfield(L, -2, "aggregate");
}

void ps_lua_aggregate__report(struct ps_script *sc)
{
	struct ps_aggregates *a = sc->aggregates;

	for (size_t i = 0; a && i < a->n; i++) {
		uint64_t d = 0;

		if (a->told[i] || ps_aggregate__dropped(sc->session, a->v[i], &d) < 0 || !d)
			continue;
		a->told[i] = true;
		fprintf(stderr,
			"perfscript: %llu overflows of '%s' were not aggregated: the map was "
			"full (raise entries= in perfmon.aggregate)\n",
			(unsigned long long)d, ps_session__name(sc->session, a->v[i]));
	}
}

void ps_lua_aggregate__free(struct ps_script *sc)
{
	if (!sc->aggregates)
		return;
	free(sc->aggregates->v);
	free(sc->aggregates->told);
	free(sc->aggregates);
	sc->aggregates = NULL;
}
