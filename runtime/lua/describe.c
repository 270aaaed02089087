/*
 * describe.c: perfmon.describe(spec), the Lua face of --describe: each
 * event of the string as a table of the perf_event_attr fields it sets
 * (zero fields left out), with its name, PMU, group leader, scale and unit,
 * a breakpoint's symbol and an uncore event's CPU. A bad string gives nil,
 * the parser's message and the code perfmon.counter gives for it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/perfmon.h"

static void set_u64(lua_State *L, const char *field, uint64_t v)
{
	if (!v)
		return;
	lua_pushinteger(L, (lua_Integer)v);
	lua_setfield(L, -2, field);
}

/* bp_symbol = "NAME+0xOFF" for mem:SYMBOL, as --describe prints it. */
static void push_bp_symbol(lua_State *L, const struct ps_events *evs, size_t i)
{
	uint64_t off = 0;
	const char *sym = ps_events__bp_symbol(evs, i, &off);
	char buf[320];

	if (!sym)
		return;
	snprintf(buf, sizeof(buf), "%s+0x%llx", sym, (unsigned long long)off);
	lua_pushstring(L, buf);
	lua_setfield(L, -2, "bp_symbol");
}

/* One describe table: the attr fields the string sets, named as in the
 * kernel's struct perf_event_attr. */
static void push_attr(lua_State *L, const struct ps_events *evs, size_t i)
{
	const struct perf_event_attr *a = ps_events__attr(evs, i);

	lua_createtable(L, 0, 12);
	lua_pushstring(L, ps_events__name(evs, i));
	lua_setfield(L, -2, "name");
	lua_pushinteger(L, (lua_Integer)ps_events__leader(evs, i) + 1);
	lua_setfield(L, -2, "leader");
	lua_pushinteger(L, a->type);
	lua_setfield(L, -2, "type");
	lua_pushinteger(L, (lua_Integer)a->config);
	lua_setfield(L, -2, "config");
	set_u64(L, "config1", a->config1);
	set_u64(L, "config2", a->config2);
	if (a->type == PERF_TYPE_BREAKPOINT) { /* bp_addr/bp_len alias config1/config2 */
		set_u64(L, "bp_type", a->bp_type);
		set_u64(L, "bp_addr", a->bp_addr);
		set_u64(L, "bp_len", a->bp_len);
		push_bp_symbol(L, evs, i);
	}
	set_u64(L, a->freq ? "sample_freq" : "sample_period", a->sample_period);
	set_u64(L, "freq", a->freq);
	set_u64(L, "exclude_user", a->exclude_user);
	set_u64(L, "exclude_kernel", a->exclude_kernel);
	set_u64(L, "exclude_hv", a->exclude_hv);
	set_u64(L, "exclude_host", a->exclude_host);
	set_u64(L, "exclude_guest", a->exclude_guest);
	set_u64(L, "exclude_idle", a->exclude_idle);
	set_u64(L, "precise_ip", a->precise_ip);
	set_u64(L, "pinned", a->pinned);
	set_u64(L, "exclusive", a->exclusive);
	set_u64(L, "inherit", a->inherit);
	set_u64(L, "disabled", a->disabled);
	set_u64(L, "read_format", a->read_format);
	set_u64(L, "sample_type", a->sample_type);
	if (ps_events__cpu(evs, i) >= 0) {
		lua_pushinteger(L, ps_events__cpu(evs, i));
		lua_setfield(L, -2, "cpu");
	}
}

int ps_lua__describe(lua_State *L)
{
	struct ps_event_error err = {0};
	char msg[320];
	int rc = 0;
	const char *spec = ps_lua__check_spec(L, 1, msg, sizeof(msg), &rc);
	struct ps_events *evs = spec ? ps_events__parse(spec, &err) : NULL;
	size_t n;

	if (!spec)
		return ps_lua__fail(L, false, msg, rc);
	/* the code perfmon.counter gives for the same string: the parser's */
	if (!evs)
		return ps_lua__fail(L, false, err.message[0] ? err.message : strerror(errno),
				    err.code > 0 ? -err.code : -errno);
	n = ps_events__count(evs);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		push_attr(L, evs, i);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	ps_events__free(evs);
	return 1;
}
