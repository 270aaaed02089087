/*
 * sample_where.c: the fields of a sample that say where it ran besides its
 * process and thread: s.cgroup and s.container, the task's cgroup (v2 by
 * the sample's id, else its v1 group from /proc, read again when the
 * process execs: a container's first process joins, then execs), and
 * s.epoch, the epoch of its process's mappings, which names its addresses
 * later by what was mapped at the sample (perfmon.symbolize).
 */
#include <string.h>

#include <lauxlib.h>

#include "base/cgroup.h"
#include "lua/internal.h"

void ps_lua_sample_where__epoch(lua_State *L, struct ps_script *sc, const struct ps_sample *s)
{
	struct ps_symbols *syms = ps_lua_sample_object__symbols(sc);
	uint16_t mode = s->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool user = mode == PERF_RECORD_MISC_USER || mode == PERF_RECORD_MISC_GUEST_USER;

	lua_pushinteger(L, syms && user ? ps_symbols__epoch(syms, (pid_t)s->pid) : 0);
}

void ps_lua_sample_where__cgroup(lua_State *L, struct ps_script *sc, const struct ps_sample *s,
				 bool path)
{
	struct ps_cgroups *cg = ps_lua_sample_object__cgroups(sc);
	const char *p;
	char id[65];

	if (!cg || !(s->sample_type & PERF_SAMPLE_CGROUP)) {
		lua_pushnil(L);
		return;
	}
	p = ps_cgroups__path(cg, s->cgroup);
	if (!p || !strcmp(p, "/")) {
		const char *v1 = ps_cgroups__v1_path(
		    cg, (pid_t)s->pid, s->sample_type & PERF_SAMPLE_TIME ? s->time : 0,
		    ps_driver__comm(sc->driver, (pid_t)s->pid, (pid_t)s->pid));

		p = v1 ? v1 : p;
	}
	if (p && path)
		lua_pushstring(L, p);
	else if (p && ps_cgroup__container(p, id))
		lua_pushstring(L, id);
	else
		lua_pushnil(L);
}
