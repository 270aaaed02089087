/*
 * helpers.c: the small global functions a SystemTap user reaches for:
 * printf, exit, pid, tid, cpu, execname, gettimeofday_ns and target. Inside
 * a perfmon.sample handler pid, tid, cpu and execname describe the sample,
 * as in a SystemTap probe; elsewhere perfscript's own process. target()
 * names the process being measured. os.execute is replaced by one that
 * keeps SIGINT working while the command runs.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>

#include "lua/internal.h"

static struct ps_script *script_of(lua_State *L)
{
	return lua_touserdata(L, lua_upvalueindex(1));
}

/* printf(fmt, ...): string.format written to the script's output. */
static int l_printf(lua_State *L)
{
	size_t len;
	const char *s;

	lua_pushvalue(L, lua_upvalueindex(2)); /* string.format */
	lua_insert(L, 1);
	lua_call(L, lua_gettop(L) - 1, 1);
	s = lua_tolstring(L, -1, &len);
	fwrite(s, 1, len, stdout);
	return 0;
}

/* Inside a perfmon.sample handler, the helpers describe the sample. */
static const struct ps_sample *sample_of(lua_State *L)
{
	return ps_lua_sample_object__current(script_of(L));
}

/* exit([status]): end the session once the current probe returns. */
static int l_exit(lua_State *L)
{
	struct ps_script *sc = script_of(L);

	lua_Integer status = luaL_optinteger(L, 1, sc->exit_status);

	/* a process exit status is 8 bits: exit(256) would look like success */
	luaL_argcheck(L, status >= 0 && status <= 255, 1, "exit status must be 0 to 255");
	if (!lua_isnoneornil(L, 1))
		sc->exit_given = true;
	ps_lua_script__exit(sc, (int)status);
	return 0;
}

static int l_pid(lua_State *L)
{
	const struct ps_sample *s = sample_of(L);

	lua_pushinteger(L, s ? (lua_Integer)s->pid : getpid());
	return 1;
}

static int l_tid(lua_State *L)
{
	const struct ps_sample *s = sample_of(L);

	lua_pushinteger(L, s ? (lua_Integer)s->tid : gettid());
	return 1;
}

static int l_cpu(lua_State *L)
{
	const struct ps_sample *s = sample_of(L);

	lua_pushinteger(L, s ? (lua_Integer)s->cpu : sched_getcpu());
	return 1;
}

static int l_execname(lua_State *L)
{
	const struct ps_sample *s = sample_of(L);
	char comm[17] = "";

	if (s) {
		lua_pushstring(L,
			       ps_driver__comm(script_of(L)->driver, (pid_t)s->pid, (pid_t)s->tid));
		return 1;
	}
	prctl(PR_GET_NAME, comm);
	lua_pushstring(L, comm);
	return 1;
}

static int l_gettimeofday_ns(lua_State *L)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	lua_pushinteger(L, (lua_Integer)ts.tv_sec * 1000000000 + ts.tv_nsec);
	return 1;
}

/* target(): the pid of the -c command or -p process; perfscript's own pid
 * when it measures itself; 0 when system-wide with no command. */
static int l_target(lua_State *L)
{
	struct ps_session *s = script_of(L)->session;
	enum ps_target_kind kind = ps_session__target_kind(s);

	lua_pushinteger(L, kind == PS_TARGET_SELF ? getpid() : ps_session__target_pid(s));
	return 1;
}

/* target_cpus(): the CPUs of -a or -C as a sorted list, nil for other targets. */
static int l_target_cpus(lua_State *L)
{
	const int *cpus;
	int n = ps_session__target_cpus(script_of(L)->session, &cpus);

	if (n <= 0) {
		lua_pushnil(L);
		return 1;
	}
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushinteger(L, cpus[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* target_times() -> user, sys: the -c command's CPU seconds (wait4's, to the
 * microsecond) once it has exited, nil before or without one. */
static int l_target_times(lua_State *L)
{
	uint64_t user, sys;

	if (ps_session__cpu_times(script_of(L)->session, &user, &sys) < 0) {
		lua_pushnil(L);
		return 1;
	}
	lua_pushnumber(L, (double)user / 1e6);
	lua_pushnumber(L, (double)sys / 1e6);
	return 2;
}

/* target_command(): the -c string as given, or nil without -c. */
static int l_target_command(lua_State *L)
{
	const char *cmd = script_of(L)->o.command;

	if (cmd)
		lua_pushstring(L, cmd);
	else
		lua_pushnil(L);
	return 1;
}

/* os.execute(cmd), as Lua's, but without system(3)'s signal handling:
 * system() ignores SIGINT and SIGQUIT while the command runs, so a SIGINT
 * sent to perfscript alone then was lost. Here it is caught as always (the
 * handler that called os.execute stops when the command is back), and
 * passed on to the command's process group. */
static int l_execute(lua_State *L)
{
	static const int reset[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT};
	struct ps_script *sc = script_of(L);
	const char *cmd = luaL_optstring(L, 1, NULL);
	char *argv[] = {"sh", "-c", (char *)cmd, NULL};
	posix_spawnattr_t at;
	sigset_t dfl, none;
	int err, st = 0, passed = 0;
	pid_t pid;

	if (!cmd) {
		lua_pushboolean(L, access("/bin/sh", X_OK) == 0);
		return 1;
	}
	/* a Ctrl-C that came before (between two commands of a loop) is not
	 * lost: the command does not start, as if the signal had ended it */
	if (sc->signal_pending && sc->signal_pending != SIGPIPE) {
		lua_pushnil(L);
		lua_pushliteral(L, "signal");
		lua_pushinteger(L, sc->signal_pending);
		return 3;
	}
	fflush(NULL); /* as system() does, in effect: our buffered output first */
	sigemptyset(&dfl);
	sigemptyset(&none);
	for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
		sigaddset(&dfl, reset[i]);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setsigmask(&at, &none);
	/* a group of its own, so the signal reaches what the shell started too */
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK |
					  POSIX_SPAWN_SETPGROUP);
	err = posix_spawn(&pid, "/bin/sh", NULL, &at, argv, environ);
	posix_spawnattr_destroy(&at);
	if (err) {
		errno = err;
		return luaL_execresult(L, -1);
	}
	/* a signal that came while the command was being started is passed on
	 * before the wait, one that comes during it interrupts the wait */
	for (;;) {
		if (sc->signal_pending && sc->signal_pending != passed &&
		    sc->signal_pending != SIGPIPE)
			killpg(pid, passed = sc->signal_pending);
		if (waitpid(pid, &st, 0) >= 0)
			break;
		if (errno != EINTR)
			return luaL_execresult(L, -1);
	}
	errno = 0; /* luaL_execresult reads a non-zero errno as the failure */
	return luaL_execresult(L, st);
}

static const luaL_Reg helpers[] = {
    {"exit", l_exit},
    {"pid", l_pid},
    {"tid", l_tid},
    {"cpu", l_cpu},
    {"execname", l_execname},
    {"gettimeofday_ns", l_gettimeofday_ns},
    {"target", l_target},
    {"target_command", l_target_command},
    {"target_cpus", l_target_cpus},
    {"target_times", l_target_times},
    {NULL, NULL},
};

void ps_lua_helpers__open(lua_State *L, struct ps_script *sc)
{
	lua_pushglobaltable(L);
	lua_pushlightuserdata(L, sc);
	luaL_setfuncs(L, helpers, 1);
	lua_pushlightuserdata(L, sc);
	lua_getglobal(L, "string");
	lua_getfield(L, -1, "format");
	lua_remove(L, -2);
	lua_pushcclosure(L, l_printf, 2);
	lua_setfield(L, -2, "printf");
	lua_pop(L, 1);
	lua_getglobal(L, "os");
	lua_pushlightuserdata(L, sc);
	lua_pushcclosure(L, l_execute, 1);
	lua_setfield(L, -2, "execute");
	lua_pop(L, 1);
}
