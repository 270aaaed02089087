/*
 * sample_object.c: the "perfscript.sample" object. One userdata is
 * created per script and pointed at each sample in turn, so a handler that
 * reads two fields costs two field decodes and no table. Fields are read
 * from the record only when asked for; symbols come from the session's
 * symbolizer, fed by the kernel's MMAP2/COMM/FORK/EXIT records. After its
 * handler returns the object points at nothing, and reading it raises: a
 * handler that wants to keep a sample takes s:copy(), a plain table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>

#include "base/cgroup.h"
#include "lua/internal.h"

#define SAMPLE_MT "perfscript.sample"

struct ps_sample_state {
	const struct ps_sample *cur;
	int ref;		    /* the userdata, in the registry */
	struct ps_symbols *syms;    /* NULL until first needed */
	struct ps_cgroups *cgroups; /* cgroup ids to paths, the same */
	bool raw_names;		    /* no demangling */
	uint32_t seen_pid;	    /* the last pid handed to ps_symbols__seen */
	uint64_t seq;		    /* samples pushed so far */
	uint64_t unwound_seq;	    /* the sample uips belongs to (seq starts at 1) */
	int upkeep_timer;	    /* the loop's timer of ps_symbols__maintain, or -1 */
	int nuips;
	uint64_t uips[PS_LUA_MAX_USTACK];
	struct ps_lua_scratch scratch;
};

struct sample_ud {
	struct ps_script *sc;
};

static struct ps_sample_state *state(struct ps_script *sc)
{
	if (!sc->sample_state) {
		sc->sample_state = calloc(1, sizeof(*sc->sample_state));
		if (sc->sample_state) {
			sc->sample_state->ref = LUA_NOREF;
			sc->sample_state->raw_names = sc->o.raw_names;
			sc->sample_state->upkeep_timer = -1;
		}
	}
	return sc->sample_state;
}

/* The script's cgroup names, made on first use (lua/sample_where.c). */
struct ps_cgroups *ps_lua_sample_object__cgroups(struct ps_script *sc)
{
	struct ps_sample_state *st = state(sc);

	if (st && !st->cgroups)
		st->cgroups = ps_cgroups__new();
	return st ? st->cgroups : NULL;
}

/* ---- symbols ---- */

/* Once a second from the loop, the symbolizer's upkeep (ps_symbols__maintain)
 * also when no sample comes: a session that went quiet gives back the pages
 * its last samples read. No name handed out is in use between callbacks. */
static int on_upkeep(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	struct ps_script *sc = ctx;
	struct timespec ts;

	(void)loop;
	(void)expirations;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (sc->sample_state)
		ps_symbols__maintain(sc->sample_state->syms,
				     (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	return 0;
}

static struct ps_symbols *symbols(struct ps_script *sc)
{
	struct ps_sample_state *st = state(sc);

	if (st && !st->syms) {
		st->syms = ps_symbols__new();
		if (st->syms && sc->loop)
			st->upkeep_timer = ps_loop__add_timer(sc->loop, 1000000000u, on_upkeep, sc);
		ps_symbols__set_raw_names(st->syms, st->raw_names);
		if (sc->o.debuginfod_set)
			ps_symbols__set_debuginfod(st->syms, sc->o.debuginfod_wait);
		if (st->syms && ps_session__target_kind(sc->session) != PS_TARGET_COMMAND) {
			pid_t pid = ps_session__target_pid(sc->session);

			ps_symbols__add_proc(st->syms,
					     pid > 0 ? pid : ps_session__self_pid(sc->session));
		}
	}
	return st ? st->syms : NULL;
}

struct ps_symbols *ps_lua_sample_object__symbols(struct ps_script *sc)
{
	return symbols(sc);
}

struct ps_lua_scratch *ps_lua_sample_object__scratch(struct ps_script *sc)
{
	struct ps_sample_state *st = state(sc);

	return st ? &st->scratch : NULL;
}

void ps_lua_sample_object__give_back(struct ps_script *sc)
{
	if (sc->sample_state)
		ps_symbols__give_back(sc->sample_state->syms);
}

void ps_lua_sample_object__set_raw_names(struct ps_script *sc, bool raw)
{
	struct ps_sample_state *st = state(sc);

	if (!st)
		return;
	st->raw_names = raw;
	ps_symbols__set_raw_names(st->syms, raw); /* NULL until first used */
}

bool ps_lua_sample_object__raw_names(struct ps_script *sc)
{
	struct ps_sample_state *st = state(sc);

	return st ? st->raw_names : sc->o.raw_names;
}

void ps_lua_sample_object__record(struct ps_script *sc, const struct ps_record *r)
{
	struct ps_symbols *syms;

	if ((r->type == PERF_RECORD_MMAP2 || r->type == PERF_RECORD_FORK ||
	     r->type == PERF_RECORD_COMM || r->type == PERF_RECORD_EXIT) &&
	    (syms = symbols(sc)))
		ps_symbols__record(syms, r);
}

static bool is_user(const struct ps_sample *s)
{
	uint16_t mode = s->misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return mode == PERF_RECORD_MISC_USER || mode == PERF_RECORD_MISC_GUEST_USER;
}

static void push_symbol(lua_State *L, struct ps_script *sc, pid_t pid, uint64_t addr, bool kernel,
			bool want_dso)
{
	char buf[1024]; /* a demangled C++ name can be long */
	const char *dso = "";
	struct ps_symbols *syms = symbols(sc);
	int rc =
	    syms ? ps_symbols__resolve(syms, pid, addr, kernel, buf, sizeof(buf), &dso) : -ENOMEM;

	if (rc < 0 && rc != -ENOENT) /* -ENOENT already wrote the hex form */
		snprintf(buf, sizeof(buf), "%#llx", (unsigned long long)addr);
	lua_pushstring(L, want_dso ? (dso ? dso : "") : buf);
}

/* ---- the object ---- */

static const struct ps_sample *check_sample(lua_State *L, struct ps_script **scp)
{
	struct sample_ud *u = luaL_checkudata(L, 1, SAMPLE_MT);
	const struct ps_sample *s = u->sc->sample_state ? u->sc->sample_state->cur : NULL;

	if (!s)
		luaL_error(L, "this sample is gone: its handler returned (copy what you keep "
			      "inside the handler, e.g. local t = s:copy())");
	*scp = u->sc;
	return s;
}

const struct ps_sample *ps_lua_sample_object__check(lua_State *L, struct ps_script **scp)
{
	return check_sample(L, scp);
}

/* s.values: the group read, { v1, v2, ..., [name] = v }. */
static void push_values(lua_State *L, struct ps_script *sc, const struct ps_sample *s)
{
	ps_handle members[256];
	uint64_t v, en, run;
	int n = ps_sample__value(s, 0, &v, &en, &run);
	int nm = ps_session__group(sc->session, s->handle, members, 256);

	lua_createtable(L, n > 0 ? n : 0, n > 0 ? n : 0);
	for (int i = 0; i < n; i++) {
		if (ps_sample__value(s, (size_t)i, &v, &en, &run) < 0)
			break;
		lua_pushinteger(L, (lua_Integer)v);
		lua_pushvalue(L, -1);
		lua_rawseti(L, -3, i + 1);
		if (i < nm)
			lua_setfield(L, -2, ps_session__name(sc->session, members[i]));
		else
			lua_pop(L, 1);
	}
}

int ps_lua_sample_object__unwound(struct ps_script *sc, const struct ps_sample *s,
				  const uint64_t **ips)
{
	struct ps_sample_state *st = sc->sample_state;
	struct ps_symbols *syms;
	size_t max = 127; /* perf's default max-stack, kernel.perf_event_max_stack's too */
	int n;

	if (st->unwound_seq != st->seq) {
		st->unwound_seq = st->seq;
		st->nuips = 0;
		if (ps_session__max_stack(sc->session, s->handle))
			max = ps_session__max_stack(sc->session, s->handle);
		syms = symbols(sc);
		n = syms ? ps_symbols__unwind(syms, s, st->uips,
					      max < PS_LUA_MAX_USTACK ? max : PS_LUA_MAX_USTACK)
			 : 0;
		if (n > 0) {
			st->nuips = n;
		} else if (is_user(s)) { /* no registers: the ip at least */
			st->uips[0] = s->ip;
			st->nuips = 1;
		}
	}
	*ips = st->uips;
	return st->nuips;
}

static int m_ustack(lua_State *L)
{
	struct ps_script *sc;
	const struct ps_sample *s = check_sample(L, &sc);

	ps_lua_sample_stack__chain(L, sc, s, false, 2);
	return 1;
}

static int m_kstack(lua_State *L)
{
	struct ps_script *sc;
	const struct ps_sample *s = check_sample(L, &sc);

	ps_lua_sample_stack__chain(L, sc, s, true, 2);
	return 1;
}

static int m_folded(lua_State *L)
{
	struct ps_script *sc;
	const struct ps_sample *s = check_sample(L, &sc);

	ps_lua_sample_stack__folded(L, sc, s, 2);
	return 1;
}

static int m_packed(lua_State *L)
{
	struct ps_script *sc;
	const struct ps_sample *s = check_sample(L, &sc);

	ps_lua_sample_stack__packed(L, sc, s);
	return 1;
}

static int sample_index(lua_State *L);

/* s.cgroup: the path of the task's cgroup v2 group below the mount, from
 * the id the sample carries (the cgroup term), or where that is the root
 * (a v1 or hybrid host), its process's v1 group; s.container: the
 * container id in that path. nil when not known. */
/* A sample's fields: those every sample has (what s:copy() copies), then
 * those of some events only; and its methods. __fields lists both. */
static const char *const fields[] = {"ip",   "pid",    "tid",	 "time",      "cpu",	 "period",
				     "addr", "user",   "handle", "name",      "comm",	 "process",
				     "sym",  "dso",    "values", "callchain", "srcline", "args",
				     "raw",  "retval", "cgroup", "container", "pyip",	 "epoch"};
#define COMMON_FIELDS 17
static const char *const methods[] = {"ustack", "kstack", "folded",	 "packed",
				      "copy",	"arg",	  "user_string", "kernel_string"};

/* s:copy(): every field as a plain table that outlives the handler. */
static int m_copy(lua_State *L)
{
	struct ps_script *sc;

	check_sample(L, &sc);
	lua_createtable(L, 0, COMMON_FIELDS);
	for (size_t i = 0; i < COMMON_FIELDS; i++) {
		lua_pushcfunction(L, sample_index);
		lua_pushvalue(L, 1);
		lua_pushstring(L, fields[i]);
		lua_call(L, 2, 1);
		lua_setfield(L, -2, fields[i]);
	}
	ps_lua_sample_args__copy(L, sc, ps_lua_sample_object__current(sc));
	return 1;
}

#define IS(key, len, lit) ((len) == sizeof(lit) - 1 && memcmp((key), (lit), (len)) == 0)

static int sample_index(lua_State *L)
{
	struct ps_script *sc;
	const struct ps_sample *s = check_sample(L, &sc);
	size_t len;
	const char *k = luaL_checklstring(L, 2, &len);

	if (IS(k, len, "ip"))
		lua_pushinteger(L, (lua_Integer)s->ip);
	else if (IS(k, len, "pid"))
		lua_pushinteger(L, s->pid);
	else if (IS(k, len, "tid"))
		lua_pushinteger(L, s->tid);
	else if (IS(k, len, "time"))
		lua_pushinteger(L, (lua_Integer)s->time);
	else if (IS(k, len, "cpu"))
		lua_pushinteger(L, s->cpu);
	else if (IS(k, len, "period"))
		lua_pushinteger(L, (lua_Integer)s->period);
	else if (IS(k, len, "addr"))
		lua_pushinteger(L, (lua_Integer)s->addr);
	else if (IS(k, len, "user"))
		lua_pushboolean(L, is_user(s));
	else if (IS(k, len, "handle"))
		lua_pushinteger(L, (lua_Integer)s->handle);
	else if (IS(k, len, "name"))
		lua_pushstring(L, ps_session__name(sc->session, s->handle));
	else if (IS(k, len, "comm"))
		lua_pushstring(L, ps_driver__comm(sc->driver, (pid_t)s->pid, (pid_t)s->tid));
	else if (IS(k, len, "epoch"))
		ps_lua_sample_where__epoch(L, sc, s);
	else if (IS(k, len, "process"))
		lua_pushstring(L, ps_driver__comm(sc->driver, (pid_t)s->pid, (pid_t)s->pid));
	else if (IS(k, len, "sym"))
		push_symbol(L, sc, (pid_t)s->pid, s->ip, !is_user(s), false);
	else if (IS(k, len, "dso"))
		push_symbol(L, sc, (pid_t)s->pid, s->ip, !is_user(s), true);
	else if (IS(k, len, "values"))
		push_values(L, sc, s);
	else if (IS(k, len, "callchain"))
		ps_lua_sample_stack__callchain(L, sc, s);
	else if (IS(k, len, "srcline"))
		ps_lua_sample_stack__srcline(L, sc, s);
	else if (IS(k, len, "cgroup") || IS(k, len, "container"))
		ps_lua_sample_where__cgroup(L, sc, s, len == 6);
	else if (IS(k, len, "pyip"))
		ps_lua_python__push_ip(L, sc, s);
	else if (IS(k, len, "folded"))
		lua_pushcfunction(L, m_folded);
	else if (IS(k, len, "ustack"))
		lua_pushcfunction(L, m_ustack);
	else if (IS(k, len, "kstack"))
		lua_pushcfunction(L, m_kstack);
	else if (IS(k, len, "copy"))
		lua_pushcfunction(L, m_copy);
	else if (IS(k, len, "packed"))
		lua_pushcfunction(L, m_packed);
	else if (!ps_lua_sample_args__index(L, sc, s, k))
		return luaL_error(
		    L,
		    "a sample has no field '%s' (fields: ip pid tid time cpu "
		    "period addr user handle name comm process sym dso srcline values "
		    "callchain args raw retval cgroup container pyip epoch; methods: ustack "
		    "kstack folded packed copy "
		    "arg user_string kernel_string)",
		    k);
	return 1;
}

/* __fields: what a sample has, for the REPL's completion (cli/complete.c):
 * { name = "field" | "method" }. */
static void push_field_names(lua_State *L)
{
	lua_createtable(L, 0, 26);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		lua_pushliteral(L, "field");
		lua_setfield(L, -2, fields[i]);
	}
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		lua_pushliteral(L, "method");
		lua_setfield(L, -2, methods[i]);
	}
}

static int sample_tostring(lua_State *L)
{
	struct sample_ud *u = luaL_checkudata(L, 1, SAMPLE_MT);
	const struct ps_sample *s = u->sc->sample_state ? u->sc->sample_state->cur : NULL;

	if (!s)
		lua_pushliteral(L, SAMPLE_MT " (gone)");
	else
		lua_pushfstring(L, SAMPLE_MT " '%s' pid %d tid %d cpu %d ip %p",
				ps_session__name(u->sc->session, s->handle), (int)s->pid,
				(int)s->tid, (int)s->cpu, (void *)(uintptr_t)s->ip);
	return 1;
}

void ps_lua_sample_object__open(lua_State *L, struct ps_script *sc)
{
	struct ps_sample_state *st;
	struct sample_ud *u;

	ps_lua_sample_stack__open(L, sc);
	ps_lua_timer__open(L, sc);
	luaL_newmetatable(L, SAMPLE_MT);
	lua_pushcfunction(L, sample_index);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, sample_tostring);
	lua_setfield(L, -2, "__tostring");
	push_field_names(L);
	lua_setfield(L, -2, "__fields");
	lua_pop(L, 1);
	/* the one object, made now (under protection) rather than in a sample
	 * callback, where running out of memory would be a panic */
	st = state(sc);
	if (!st)
		luaL_error(L, "out of memory");
	u = lua_newuserdatauv(L, sizeof(*u), 0);
	u->sc = sc;
	luaL_setmetatable(L, SAMPLE_MT);
	st->ref = luaL_ref(L, LUA_REGISTRYINDEX);
}

void ps_lua_sample_object__push(struct ps_script *sc, const struct ps_sample *s)
{
	struct ps_sample_state *st = sc->sample_state;

	if (st) {
		st->cur = s;
		st->seq++;
		/* Learn the process while it runs: profiles name addresses at
		 * the end, when a -p target or a short-lived child may be gone. */
		if (s->pid != st->seen_pid && s->pid > 0 && s->pid != UINT32_MAX) {
			ps_symbols__seen(symbols(sc), (pid_t)s->pid);
			st->seen_pid = s->pid; /* samples come in runs of one process */
		}
	}
	lua_rawgeti(sc->L, LUA_REGISTRYINDEX, st ? st->ref : LUA_NOREF);
}

void ps_lua_sample_object__maintain(struct ps_script *sc)
{
	if (sc->sample_state)
		ps_symbols__maintain(sc->sample_state->syms, 0);
}

void ps_lua_sample_object__settle(struct ps_script *sc)
{
	if (sc->sample_state && sc->sample_state->syms)
		ps_symbols__settle(sc->sample_state->syms);
}

void ps_lua_sample_object__tell(struct ps_script *sc)
{
	char line[256];

	while (sc->sample_state && ps_symbols__notice(sc->sample_state->syms, line, sizeof(line)))
		fprintf(stderr, "perfscript: %s\n", line);
}

void ps_lua_sample_object__release(struct ps_script *sc)
{
	if (sc->sample_state)
		sc->sample_state->cur = NULL;
	/* no name or frame handed out is in use between samples */
	ps_lua_sample_object__maintain(sc);
}

const struct ps_sample *ps_lua_sample_object__current(const struct ps_script *sc)
{
	return sc->sample_state ? sc->sample_state->cur : NULL;
}

void ps_lua_sample_object__free(struct ps_script *sc)
{
	struct ps_sample_state *st = sc->sample_state;

	if (!st)
		return;
	if (st->upkeep_timer >= 0)
		ps_loop__del_timer(sc->loop, st->upkeep_timer);
	ps_symbols__free(st->syms);
	ps_cgroups__free(st->cgroups);
	free(st);
	sc->sample_state = NULL;
}
