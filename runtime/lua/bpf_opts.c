/*
 * bpf_opts.c: the in-kernel options a sample probe gives its counter, as
 * probe()'s third argument: backend, pid, tid, cpu (checked against pid_max
 * and the online CPUs), mode, every. Parsed here into a ps_bpf_opts, which
 * the session merges per counter (ps_session__merge_bpf); perfmon.aggregate
 * (lua/aggregate.c) shares the filters.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "base/cpus.h"
#include "lua/perfmon.h"

/* An integer or a list of integers at field `key` of the table at idx. */
static size_t int_list(lua_State *L, int idx, const char *key, long long *out)
{
	size_t n = 0;
	int t = lua_getfield(L, idx, key);

	if (t == LUA_TNUMBER) {
		out[n++] = (long long)luaL_checkinteger(L, -1);
	} else if (t == LUA_TTABLE) {
		for (lua_Integer i = 1; lua_rawgeti(L, -1, i) != LUA_TNIL; i++) {
			if (!lua_isinteger(L, -1) || n == PS_LUA_MAX_LIST)
				luaL_error(L, "option '%s' wants integers (at most %d)", key,
					   PS_LUA_MAX_LIST);
			out[n++] = (long long)lua_tointeger(L, -1);
			lua_pop(L, 1);
		}
		lua_pop(L, 1);
	} else if (t != LUA_TNIL) {
		luaL_error(L, "option '%s' wants an integer or a list of integers, got %s", key,
			   luaL_typename(L, -1));
	}
	lua_pop(L, 1);
	return n;
}

/* The kernel's pid_max: no pid or tid reaches it. */
static long long pid_max;
static pthread_once_t pid_max_once = PTHREAD_ONCE_INIT;

static void read_pid_max(void)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");

	if (f && fscanf(f, "%lld", &pid_max) != 1)
		pid_max = 0;
	if (f)
		fclose(f);
}

static long long pid_limit(void)
{
	pthread_once(&pid_max_once, read_pid_max);
	return pid_max > 0 ? pid_max : 4194304; /* PID_MAX_LIMIT */
}

/* A filter that no sample can pass is a mistake: say which value. */
static void check_ids(lua_State *L, const char *key, const long long *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(key, "cpu")) {
			if (v[i] < 0 || v[i] >= PS_CPUS_MAX || !ps_cpus__is_online((int)v[i]))
				luaL_error(L,
					   "option 'cpu': CPU %I is not online (see "
					   "/sys/devices/system/cpu/online)",
					   (lua_Integer)v[i]);
		} else if (v[i] < 0 || v[i] >= pid_limit()) {
			luaL_error(L,
				   "option '%s': %I is not a %s (they are 0 to %I, "
				   "kernel.pid_max - 1)",
				   key, (lua_Integer)v[i], key, (lua_Integer)(pid_limit() - 1));
		}
	}
}

/* The filter options of the table at idx into c; raises on misuse. */
void ps_lua_bpf_opts__filters(lua_State *L, int idx, struct ps_lua_opts *c)
{
	static const char *const known[] = {"backend", "pid",	 "tid",	    "cpu",     "mode",
					    "every",   "by",	 "entries", "forward", "offcpu",
					    "oncpu",   "min_us", "python",  NULL};
	static const char *const backends[] = {"auto", "perf", "bpf", NULL};
	long long list[PS_LUA_MAX_LIST];
	size_t n;

	luaL_checktype(L, idx, LUA_TTABLE);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
		int i = 0;

		while (known[i] && strcmp(known[i], k))
			i++;
		if (!known[i])
			luaL_error(
			    L,
			    "unknown option '%s' (options: backend pid tid cpu mode every python; "
			    "perfmon.aggregate also: by entries forward offcpu oncpu min_us)",
			    k);
		lua_pop(L, 1);
	}
	if (lua_getfield(L, idx, "backend") != LUA_TNIL) {
		c->o.backend = (enum ps_backend)luaL_checkoption(L, -1, NULL, backends);
	}
	lua_pop(L, 1);
	if ((n = int_list(L, idx, "pid", list)) > 0) {
		check_ids(L, "pid", list, n);
		for (size_t i = 0; i < n; i++)
			c->pids[i] = (pid_t)list[i];
		c->o.npids = n;
	}
	if ((n = int_list(L, idx, "tid", list)) > 0) {
		if (n > 1)
			luaL_error(L, "option 'tid' takes one thread id, not a list (use pid "
				      "for several processes)");
		check_ids(L, "tid", list, n);
		c->o.tid = (pid_t)list[0];
	}
	if ((n = int_list(L, idx, "cpu", list)) > 0) {
		check_ids(L, "cpu", list, n);
		for (size_t i = 0; i < n; i++)
			c->cpus[i] = (int)list[i];
		c->o.ncpus = n;
	}
	if (lua_getfield(L, idx, "mode") != LUA_TNIL) {
		static const char *const modes[] = {"any", "user", "kernel", NULL};

		c->o.priv = (enum ps_bpf_priv)luaL_checkoption(L, -1, NULL, modes);
	}
	lua_pop(L, 1);
	if (lua_getfield(L, idx, "python") != LUA_TNIL && lua_toboolean(L, -1))
		c->o.mode |= PS_BPF_PYTHON;
	lua_pop(L, 1);
	if (lua_getfield(L, idx, "every") != LUA_TNIL) {
		lua_Integer e = luaL_checkinteger(L, -1);

		luaL_argcheck(L, e > 0, idx, "every must be > 0");
		c->o.every = (uint64_t)e;
	}
	lua_pop(L, 1);
}

struct ps_lua_opts *ps_lua_bpf_opts__parse(lua_State *L, int idx)
{
	/* parsed into a userdata, freed by the GC if parsing raises */
	struct ps_lua_opts *c = lua_newuserdatauv(L, sizeof(*c), 0), *copy;

	memset(c, 0, sizeof(*c));
	ps_lua_bpf_opts__filters(L, idx, c);
	lua_getfield(L, idx, "by");
	lua_getfield(L, idx, "entries");
	if (!lua_isnil(L, -1) || !lua_isnil(L, -2))
		luaL_error(L, "options 'by' and 'entries' belong to perfmon.aggregate");
	lua_pop(L, 2);
	copy = malloc(sizeof(*copy));
	if (!copy)
		luaL_error(L, "out of memory");
	*copy = *c;
	lua_pop(L, 1);
	return copy;
}

int ps_lua_bpf_opts__use(struct ps_script *sc, ps_handle h, const struct ps_lua_opts *p)
{
	struct ps_bpf_opts o = p ? p->o : (struct ps_bpf_opts){0};
	int rc;

	if (!p && !ps_lua_aggregate__has(sc, h))
		return 0; /* the perf path, or the options of another probe, serve it */
	o.sz = sizeof(o);
	o.pids = p ? p->pids : NULL;
	o.cpus = p ? p->cpus : NULL;
	o.mode |= PS_BPF_FORWARD; /* a sample probe's: its samples are wanted */
	sc->setup_error[0] = '\0';
	rc = ps_session__merge_bpf(sc->session, h, &o, sc->setup_error, sizeof(sc->setup_error));
	if (rc < 0 && !sc->setup_error[0])
		snprintf(sc->setup_error, sizeof(sc->setup_error), "cannot configure '%s': %s",
			 ps_session__name(sc->session, h), ps_strerror(rc));
	return rc;
}

/* offcpu = true, oncpu = true, min_us = N: sched_switch's intervals off
 * (or slices on) the CPU summed in ns, by the key at the switch-out; only
 * the kernel can, so BPF is asked for by name. */
void ps_lua_bpf_opts__offcpu(lua_State *L, struct ps_script *sc, ps_handle h, struct ps_lua_opts *c)
{
	const char *tp = ps_session__tracepoint(sc->session, h);
	unsigned mode = 0;
	lua_Number us = 1;

	if (lua_getfield(L, 2, "offcpu") != LUA_TNIL && lua_toboolean(L, -1))
		mode |= PS_BPF_OFFCPU;
	if (lua_getfield(L, 2, "oncpu") != LUA_TNIL && lua_toboolean(L, -1))
		mode |= PS_BPF_ONCPU;
	lua_pop(L, 2);
	if (!mode)
		return;
	if (!tp || strcmp(tp, "sched:sched_switch"))
		luaL_error(L,
			   "perfmon.aggregate: %s = true sums the intervals between "
			   "sched:sched_switch's switch-out and switch-in of a thread; '%s' is "
			   "not sched:sched_switch",
			   mode & PS_BPF_OFFCPU ? "offcpu" : "oncpu",
			   ps_session__name(sc->session, h));
	if ((c->o.mode & PS_BPF_FORWARD) && !(mode & PS_BPF_OFFCPU))
		luaL_error(L, "perfmon.aggregate: oncpu = true alone has no samples to forward "
			      "(offcpu = true forwards its intervals)");
	if (lua_getfield(L, 2, "min_us") != LUA_TNIL)
		us = luaL_checknumber(L, -1);
	lua_pop(L, 1);
	luaL_argcheck(L, us >= 0 && us < 1e12, 2, "min_us must be 0 or more microseconds");
	c->o.mode |= mode;
	c->o.offcpu_min_ns = (uint64_t)(us * 1000);
	c->o.backend = PS_BACKEND_BPF; /* the perf path cannot measure it */
}
