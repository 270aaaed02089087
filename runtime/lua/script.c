/*
 * script.c: one run of a probe script. It owns the lua_State, wires the
 * perfmon module, probes and helpers into it, and drives the lifecycle:
 * top-level chunk, begin probes, the counter context, the event loop, end
 * probes exactly once, then every counter closed. Every call from C into Lua
 * goes through ps_script__call, so a failing handler is reported with a
 * traceback, runs the error and end probes, and never kills the process.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "lua/sample.h"

static const char SCRIPT_KEY[] = "perfscript.script";

struct ps_script *ps_script__from(lua_State *L)
{
	struct ps_script *sc;

	lua_getfield(L, LUA_REGISTRYINDEX, SCRIPT_KEY);
	sc = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return sc;
}

/* Message handler: append a traceback, as lua.c does. */
static int msghandler(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);

	if (!msg) {
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

void ps_script__stop(struct ps_script *sc, const char *why)
{
	if (!sc->stop_asked)
		snprintf(sc->stop_reason, sizeof(sc->stop_reason), "%s", why);
	sc->stop_asked = true;
	ps_loop__stop(sc->loop, 0);
}

int ps_script__call(struct ps_script *sc, int nargs, const char *where)
{
	lua_State *L = sc->L;
	int base = lua_gettop(L) - nargs; /* the function's index */
	int rc;

	lua_pushcfunction(L, msghandler);
	lua_insert(L, base);
	rc = lua_pcall(L, nargs, 0, base);
	if (rc == LUA_OK) {
		lua_remove(L, base);
		return 0;
	}
	fflush(stdout);
	fprintf(stderr, "perfscript: error in %s: %s\n", where,
		lua_tostring(L, -1) ? lua_tostring(L, -1) : "(no message)");
	sc->errors++;
	if (!sc->ending && strcmp(where, "error probe") != 0) {
		/* The first error ends the session; error probes see the message
		 * without the traceback. */
		const char *msg = lua_tostring(L, -1);
		const char *nl = msg ? strstr(msg, "\nstack traceback:") : NULL;

		lua_pushlstring(L, msg ? msg : "",
				nl ? (size_t)(nl - msg) : (msg ? strlen(msg) : 0));
		ps_probe__run_point(sc, "error", lua_tostring(L, -1));
		lua_pop(L, 1);
		ps_script__stop(sc, "a handler raised an error");
	}
	lua_pop(L, 2); /* message, handler */
	return -1;
}

int ps_script__create_context(struct ps_script *sc, char *msg, size_t msglen)
{
	int rc = ps_session__open(sc->session, msg, msglen);

	if (rc == 0)
		ps_script__opened(sc);
	return rc;
}

void ps_script__opened(struct ps_script *sc)
{
	const char *why = ps_session__bpf_fallback(sc->session);
	int rc = ps_sample__sync(sc);

	if (rc < 0)
		fprintf(stderr, "perfscript: cannot watch the sample rings: %s\n", ps_strerror(rc));
	if (why[0] && !sc->bpf_told) {
		/* auto: one line, then the perf ring does the work */
		fprintf(stderr,
			"perfscript: in-kernel handling unavailable, using the perf ring "
			"buffer: %s\n",
			why);
		sc->bpf_told = true;
	}
}

/* Prepend DIR/?.lua;DIR/?/init.lua to package.path. */
void ps_script__add_path(struct ps_script *sc, const char *dir)
{
	lua_State *L = sc->L;

	lua_getglobal(L, "package");
	lua_getfield(L, -1, "path");
	lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;%s", dir, dir, lua_tostring(L, -1));
	lua_setfield(L, -3, "path");
	lua_pop(L, 2);
}

/* The tapsets beside the binary (a build tree) and the installed ones. */
static void add_default_paths(struct ps_script *sc)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 32);
	const char *env = getenv("PERFSCRIPT_PATH");

	ps_script__add_path(sc, PS_TAPSET_DIR);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			/* An install tree wherever it was put (PREFIX/bin/perfscript
			 * beside PREFIX/share/perfscript/tapsets, DESTDIR included),
			 * or a build tree: tapsets/ beside the binary, or one level
			 * up for a binary in a build directory (make asan). */
			static const char *const rel[] = {"/../share/perfscript/tapsets",
							  "/../tapsets", "/tapsets"};

			for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
				strcpy(slash, rel[i]);
				if (access(exe, R_OK) == 0)
					ps_script__add_path(sc, exe);
			}
		}
	}
	if (env && *env) {
		/* PERFSCRIPT_PATH is colon-separated; the first entry wins. */
		char *copy = strdup(env), *save = NULL, *dirs[64];
		int nd = 0;

		for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && nd < 64;
		     d = strtok_r(NULL, ":", &save))
			dirs[nd++] = d;
		while (nd > 0)
			ps_script__add_path(sc, dirs[--nd]);
		free(copy);
	}
}

struct ps_script *ps_script__new(struct ps_session *session, int verbose)
{
	struct ps_script *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return NULL;
	sc->session = session;
	sc->verbose = verbose;
	sc->loop = ps_loop__new();
	sc->L = luaL_newstate();
	if (!sc->loop || !sc->L) {
		ps_script__free(sc);
		errno = ENOMEM;
		return NULL;
	}
	luaL_openlibs(sc->L);
	lua_pushlightuserdata(sc->L, sc);
	lua_setfield(sc->L, LUA_REGISTRYINDEX, SCRIPT_KEY);
	add_default_paths(sc);
	luaL_requiref(sc->L, "perfmon", ps_perfmon__open, 1);
	ps_aggregate__open(sc->L, sc);
	lua_pop(sc->L, 1);
	ps_probe__open(sc->L, sc);
	ps_helpers__open(sc->L, sc);
	ps_stats__open(sc->L);
	ps_pprof__open(sc->L);
	ps_sample_object__open(sc->L, sc);
	if (ps_sample__setup(sc) < 0) {
		ps_script__free(sc);
		errno = ENOMEM;
		return NULL;
	}
	return sc;
}

void ps_script__free(struct ps_script *sc)
{
	if (!sc)
		return;
	if (sc->L) {
		ps_probe__free(sc);
		ps_sample__free(sc);
		ps_aggregate__free(sc);
		lua_close(sc->L); /* __gc of counter objects frees their handles */
	}
	ps_sample_object__free(sc);
	ps_loop__free(sc->loop);
	free(sc);
}

static int on_signal(struct ps_loop *loop, uint64_t signo, void *ctx)
{
	struct ps_script *sc = ctx;

	(void)loop;
	if (signo == SIGINT && sc->on_interrupt) {
		sc->on_interrupt(sc); /* the REPL: Ctrl-C drops the line, not the session */
		return 0;
	}
	if (++sc->nsignals == 1) {
		/* A second SIGINT/SIGTERM, even during end probes, ends at once. */
		sigset_t set;

		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGTERM);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
	}
	ps_script__stop(sc, signo == SIGINT ? "SIGINT" : "SIGTERM");
	return 0;
}

static int on_target_exit(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	struct ps_script *sc = ctx;
	int wstatus = 0;

	(void)events;
	if (ps_session__reap(sc->session, &wstatus) == -EAGAIN)
		return 0;
	if (fd >= 0)
		ps_loop__del_fd(loop, fd);
	sc->target_done = true;
	sc->target_wstatus = wstatus;
	ps_script__stop(sc, "the target exited");
	return 0;
}

static int on_sigchld(struct ps_loop *loop, uint64_t signo, void *ctx)
{
	(void)signo;
	return on_target_exit(loop, -1, 0, ctx);
}

static int on_deadline(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	(void)loop;
	(void)expirations;
	ps_script__stop(ctx, "-T expired");
	return 0;
}

/* Load the chunk, or print "file:line: message" and return -1. */
static int load_chunk(struct ps_script *sc, const char *chunk, bool is_code)
{
	int rc = is_code ? luaL_loadbuffer(sc->L, chunk, strlen(chunk), "=(command line)")
			 : luaL_loadfile(sc->L, chunk);

	if (rc != LUA_OK) {
		fprintf(stderr, "perfscript: %s\n", lua_tostring(sc->L, -1));
		lua_pop(sc->L, 1);
		return -1;
	}
	return 0;
}

/* The global arg table, as lua(1) builds it. */
static void set_args(lua_State *L, const char *script, char **args, int nargs, char **pre, int npre)
{
	lua_createtable(L, nargs, npre + 1);
	for (int i = 0; i < npre; i++) {
		lua_pushstring(L, pre[i]);
		lua_rawseti(L, -2, i - npre);
	}
	lua_pushstring(L, script);
	lua_rawseti(L, -2, 0);
	for (int i = 0; i < nargs; i++) {
		lua_pushstring(L, args[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setglobal(L, "arg");
}

/* Whether anything can still happen once begin probes ran. */
static bool has_event_source(struct ps_script *sc)
{
	enum ps_target_kind kind = ps_session__target_kind(sc->session);

	return ps_probe__timer_count(sc) > 0 || sc->duration > 0 || kind != PS_TARGET_SELF ||
	       ps_sample__any(sc);
}

/* Start the session proper: context, target, timers, signals. Returns 0, or
 * -1 when the session cannot start (the reason is printed). */
int ps_script__start(struct ps_script *sc)
{
	static const int sigs[] = {SIGINT, SIGTERM}, sigchld = SIGCHLD;
	char msg[1024] = "";
	int rc, pidfd;

	/* probes first: their options decide how counters open (BPF or perf ring) */
	if (ps_sample__resolve(sc) < 0) {
		fprintf(stderr, "perfscript: %s\n", sc->sample_error);
		return -1;
	}
	rc = ps_script__create_context(sc, msg, sizeof(msg));
	if (rc < 0) {
		fprintf(stderr, "perfscript: %s\n", msg[0] ? msg : ps_strerror(rc));
		return -1;
	}
	rc = ps_session__release(sc->session);
	if (rc < 0 && rc != -ECHILD) {
		fprintf(stderr, "perfscript: cannot run the command: %s\n", ps_strerror(rc));
		return -1;
	}
	pidfd = ps_session__target_pidfd(sc->session);
	if (pidfd >= 0 && ps_loop__add_fd(sc->loop, pidfd, EPOLLIN, on_target_exit, sc) < 0)
		return -1;
	/* Without pidfd_open (kernels before 5.3, valgrind) SIGCHLD says it. */
	if (pidfd < 0 && ps_session__target_kind(sc->session) != PS_TARGET_PID &&
	    ps_session__target_pid(sc->session) > 0 &&
	    ps_loop__add_signals(sc->loop, &sigchld, 1, on_sigchld, sc) < 0)
		return -1;
	if (sc->duration > 0 &&
	    ps_loop__add_timer(sc->loop, (uint64_t)(sc->duration * 1e9), on_deadline, sc) < 0)
		return -1;
	if (ps_loop__add_signals(sc->loop, sigs, 2, on_signal, sc) < 0)
		return -1;
	sc->started = true;
	if (sc->verbose)
		fprintf(stderr,
			"perfscript: session started: %zu counters, %zu timers, target pid %d\n",
			ps_session__count(sc->session), ps_probe__timer_count(sc),
			(int)ps_session__target_pid(sc->session));
	return ps_probe__arm_timers(sc) < 0 ? -1 : 0;
}

/* A -c command still running when the session ends (exit(), -T, a signal)
 * is sent SIGTERM, as perf stat --timeout does, then reaped. */
static void stop_command(struct ps_script *sc)
{
	enum ps_target_kind kind = ps_session__target_kind(sc->session);
	pid_t pid = ps_session__target_pid(sc->session);
	int ws;

	if (sc->target_done || pid <= 0 || kind == PS_TARGET_PID ||
	    ps_session__reap(sc->session, &ws) != -EAGAIN)
		return;
	if (sc->verbose)
		fprintf(stderr, "perfscript: sending SIGTERM to the command (pid %d)\n", (int)pid);
	kill(pid, SIGTERM);
	for (int i = 0; i < 100; i++) { /* up to 1 s, then SIGKILL */
		if (ps_session__reap(sc->session, &ws) != -EAGAIN)
			return;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	while (ps_session__reap(sc->session, &ws) == -EAGAIN)
		usleep(1000);
}

/* The exit status of perfscript: 1 after any error, else the command's. */
static int final_status(struct ps_script *sc)
{
	if (sc->errors)
		return 1;
	if (sc->target_done && ps_session__target_kind(sc->session) != PS_TARGET_PID) {
		int ws = sc->target_wstatus;

		if (WIFEXITED(ws))
			return WEXITSTATUS(ws);
		if (WIFSIGNALED(ws)) {
			fprintf(stderr, "perfscript: the command was killed by signal %d (%s)\n",
				WTERMSIG(ws), strsignal(WTERMSIG(ws)));
			return 128 + WTERMSIG(ws);
		}
	}
	return sc->exit_status;
}

int ps_script__run(struct ps_script *sc, const char *chunk, bool is_code, char **args, int nargs,
		   char **pre, int npre)
{
	lua_State *L = sc->L;

	set_args(L, is_code ? "-e" : chunk, args, nargs, pre, npre);
	if (load_chunk(sc, chunk, is_code) < 0)
		return 1;
	luaL_checkstack(L, nargs + 1, "too many script arguments");
	for (int i = 0; i < nargs; i++)
		lua_pushstring(L, args[i]);
	if (ps_script__call(sc, nargs, "main chunk") == 0 && !sc->stop_asked) {
		ps_probe__run_point(sc, "begin", NULL);
		if (!sc->stop_asked && !sc->errors) {
			if (ps_script__start(sc) < 0)
				sc->errors++;
			else if (!sc->stop_asked && has_event_source(sc))
				ps_loop__run(sc->loop);
		}
	}
	return ps_script__end(sc);
}

int ps_script__end(struct ps_script *sc)
{
	ps_sample__finish(sc); /* what the target left in the rings, before end */
	sc->ending = true;
	if (sc->verbose)
		fprintf(stderr, "perfscript: session ended: %s\n",
			sc->stop_reason[0] ? sc->stop_reason : "nothing left to wait for");
	ps_probe__run_point(sc, "end", NULL);
	fflush(stdout);
	ps_sample__report_lost(sc);
	ps_aggregate__report(sc);
	stop_command(sc);
	return final_status(sc);
}
