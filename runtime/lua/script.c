/*
 * script.c: one run of a probe script: the main chunk, begin probes, the
 * session (run by the session driver of loop/, which owns draining, the
 * target, signals and the duration), end probes exactly once, the reports,
 * and the exit status. This file is the one writer of struct ps_script;
 * the CLI and the REPL go through the calls of lua/script.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "base/advice.h"
#include "base/array.h"
#include "lua/probe.h"
#include "lua/setup.h"

static int on_record(const struct ps_record *r, void *ctx)
{
	struct ps_script *sc = ctx;

	ps_lua_sample_object__record(sc, r);
	ps_lua_lost__on_record(sc, r);
	return 0;
}

static bool on_interrupt(struct ps_driver *d, void *ctx)
{
	struct ps_script *sc = ctx;

	(void)d;
	if (!sc->interrupt)
		return false;
	sc->signal_pending = 0; /* the REPL keeps its session */
	return sc->interrupt(sc->interrupt_ctx);
}

struct ps_script *ps_lua_script__new(struct ps_session *session, const struct ps_script_opts *o)
{
	struct ps_script *sc = calloc(1, sizeof(*sc));
	struct ps_sample_ops ops = {
	    .sz = sizeof(ops), .sample = ps_lua_sample__on_sample, .record = on_record, .ctx = sc};
	struct ps_driver_opts d = {.sz = sizeof(d), .on_signal = ps_lua__on_signal, .ctx = sc};

	if (!sc || !session || !o || o->sz < offsetof(struct ps_script_opts, npaths)) {
		free(sc);
		errno = sc ? EINVAL : ENOMEM;
		return NULL;
	}
	memcpy(&sc->o, o, o->sz < sizeof(sc->o) ? o->sz : sizeof(sc->o));
	sc->session = session;
	d.duration = sc->o.duration;
	d.log = sc->o.verbose ? stderr : NULL;
	sc->loop = ps_loop__new();
	sc->L = luaL_newstate();
	if (sc->L)
		ps_lua__call_init(sc->L);
	sc->driver = sc->loop ? ps_driver__new(session, sc->loop, &d) : NULL;
	if (!sc->loop || !sc->L || !sc->driver || ps_driver__set_sample_ops(sc->driver, &ops) ||
	    ps_lua_setup__state(sc) < 0) {
		ps_lua_script__free(sc);
		errno = ENOMEM;
		return NULL;
	}
	return sc;
}

void ps_lua_script__free(struct ps_script *sc)
{
	if (!sc)
		return;
	if (sc->L) {
		ps_lua_probe__detach(sc);
		ps_lua_aggregate__free(sc);
		lua_close(sc->L); /* __gc of counter objects frees their handles */
	}
	ps_lua_sample_object__free(sc);
	ps_lua_sample_args__free(sc);
	ps_driver__free(sc->driver);
	ps_loop__free(sc->loop);
	free(sc->told);
	free(sc);
}

lua_State *ps_lua_script__state(const struct ps_script *sc)
{
	return sc->L;
}

struct ps_loop *ps_lua_script__loop(const struct ps_script *sc)
{
	return sc->loop;
}

void ps_lua_script__on_interrupt(struct ps_script *sc, bool (*fn)(void *ctx), void *ctx)
{
	sc->interrupt = fn;
	sc->interrupt_ctx = ctx;
	ps_driver__set_on_interrupt(sc->driver, fn ? on_interrupt : NULL);
}

void ps_lua_script__stop(struct ps_script *sc, enum ps_stop_reason why)
{
	ps_driver__stop(sc->driver, why);
}

void ps_lua_script__exit(struct ps_script *sc, int status)
{
	sc->exit_status = status;
	ps_driver__stop(sc->driver, PS_STOP_CLIENT);
}

/* The REPL's input ended. With -c, the command runs to its end and the
 * session ends with it (its exit status is perfscript's), as a script's
 * would: the input was only what to do meanwhile. */
void ps_lua_script__input_ended(struct ps_script *sc)
{
	if (sc->o.command && !ps_driver__target_exited(sc->driver, NULL))
		return;
	ps_driver__stop(sc->driver, PS_STOP_INPUT);
}

bool ps_lua_script__stopping(const struct ps_script *sc)
{
	return ps_driver__stopping(sc->driver);
}

/* Said once each: counters fell back to user space only (perf's rule for an
 * unprivileged user), and AUTO could not load BPF, so the perf ring does the
 * work. */
static void tell_fallback(struct ps_script *sc)
{
	const char *why = ps_session__bpf_fallback(sc->session);

	if (ps_session__user_only(sc->session) && !sc->user_told) {
		fprintf(stderr, "perfscript: kernel.perf_event_paranoid does not let this user "
				"count the kernel: counting user space only (as with :u)\n");
		sc->user_told = true;
	}
	if (why[0] && !sc->bpf_told) {
		fprintf(stderr,
			"perfscript: in-kernel handling unavailable, using the perf ring "
			"buffer: %s\n",
			why);
		sc->bpf_told = true;
	}
}

void ps_lua_script__opened(struct ps_script *sc)
{
	int rc = ps_driver__sync(sc->driver);

	if (rc < 0)
		fprintf(stderr, "perfscript: cannot watch the sample rings: %s\n", ps_strerror(rc));
	tell_fallback(sc);
}

int ps_lua_script__create_context(struct ps_script *sc, char *msg, size_t msglen)
{
	int rc = ps_session__open(sc->session, msg, msglen);

	if (rc == 0)
		ps_lua_script__opened(sc);
	return rc;
}

/* Start the session proper: probes, counters, target, signals. 0, or -1
 * when it cannot start (the reason printed). */
int ps_lua_script__start(struct ps_script *sc)
{
	char msg[1024] = "";

	/* probes first: their options decide how counters open (BPF or perf ring) */
	sc->setup_error[0] = '\0';
	if (ps_lua_probe__start(sc) < 0) {
		if (sc->setup_error[0]) /* else a Lua error, reported already */
			fprintf(stderr, "perfscript: %s\n", sc->setup_error);
		sc->errors++;
		return -1;
	}
	if (ps_driver__start(sc->driver, msg, sizeof(msg)) < 0) {
		if (ps_driver__signalled(sc->driver)) { /* a signal stopped the open: no error */
			if (sc->o.verbose)
				fprintf(stderr, "perfscript: %s\n", msg);
			ps_driver__take_signal(sc->driver);
			return -1;
		}
		fprintf(stderr, "perfscript: %s\n", msg);
		sc->errors++;
		sc->unstarted = true;
		return -1;
	}
	tell_fallback(sc);
	if (sc->o.verbose)
		fprintf(stderr,
			"perfscript: session started: %zu counters, %zu timers, target pid %d\n",
			ps_session__count(sc->session), ps_lua_timer_provider.count(sc),
			(int)ps_session__target_pid(sc->session));
	return 0;
}

void ps_lua_script__settle(struct ps_script *sc)
{
	char msg[1024] = "";

	if (ps_lua_script__create_context(sc, msg, sizeof(msg)) < 0)
		fprintf(stderr, "perfscript: %s\n", msg);
	sc->setup_error[0] = '\0';
	if (ps_lua_probe__start(sc) < 0 && sc->setup_error[0])
		fprintf(stderr, "perfscript: %s\n", sc->setup_error);
}

/* Whether anything can still happen once begin probes ran. */
static bool has_event_source(struct ps_script *sc)
{
	/* On itself, a script's samples come from its own code, which runs only
	 * in handlers: sample and lost probes alone cannot make anything happen,
	 * only timers and listeners can (docs/guide.md, "Probes and lifecycle"). */
	if (ps_session__target_kind(sc->session) == PS_TARGET_SELF)
		return sc->o.duration > 0 || sc->listeners > 0 || ps_lua_probe__sources(sc, true);
	return true;
}

void ps_lua_script__source_ended(struct ps_script *sc)
{
	if (sc->until_idle && !ps_lua_script__stopping(sc) && !has_event_source(sc))
		ps_lua_script__stop(sc, PS_STOP_CLIENT); /* nothing can happen any more */
}

int ps_lua_script__args(struct ps_script *sc, const char *script, char **args, int nargs,
			char **pre, int npre)
{
	struct ps_lua_args a = {script, args, nargs, pre, npre};

	return ps_lua_setup__args(sc, &a);
}

/* Load and call one main chunk with the script arguments; 0, -1 when it
 * failed, -2 when it could not be loaded (nothing of it ran). */
static int main_chunk(struct ps_script *sc, const char *chunk, bool is_code, char **args, int nargs)
{
	lua_State *L = sc->L;
	int rc = is_code ? luaL_loadbuffer(L, chunk, strlen(chunk), "=(command line)")
			 : luaL_loadfile(L, chunk);

	if (rc != LUA_OK) {
		fprintf(stderr, "perfscript: %s\n", lua_tostring(L, -1));
		lua_pop(L, 1);
		sc->errors++;
		return -2;
	}
	if (!lua_checkstack(L, nargs + 1)) {
		fprintf(stderr, "perfscript: too many script arguments\n");
		lua_pop(L, 1);
		sc->errors++;
		return -2;
	}
	for (int i = 0; i < nargs; i++)
		lua_pushstring(L, args[i]);
	return ps_lua__call(sc, nargs, 0, 0, "main chunk");
}

int ps_lua_script__run(struct ps_script *sc, const char *const *chunks, int nchunks, bool is_code,
		       char **args, int nargs, char **pre, int npre)
{
	if (ps_lua_script__args(sc, is_code ? "-e" : chunks[0], args, nargs, pre, npre) < 0)
		return 1;
	/* each -e is its own chunk, run in order, as lua(1) runs them; a chunk
	 * that cannot be loaded stops before anything runs */
	for (int i = 0; i < nchunks; i++) {
		int rc = main_chunk(sc, chunks[i], is_code, args, nargs);

		if (rc == -2 && i == 0)
			return 1; /* nothing ran: no end probes to run either */
		if (rc < 0 || ps_lua_script__stopping(sc))
			return ps_lua_script__end(sc);
	}
	ps_lua_phase__run(sc, PS_PHASE_BEGIN, NULL);
	if (!ps_lua_script__stopping(sc) && !sc->errors && ps_lua_script__start(sc) == 0 &&
	    !ps_lua_script__stopping(sc) && has_event_source(sc)) {
		sc->until_idle = true;
		ps_driver__run(sc->driver);
		sc->until_idle = false;
	}
	return ps_lua_script__end(sc);
}

void ps_lua_script__report_lost(struct ps_script *sc, ps_handle h)
{
	struct ps_sample_stats st;
	const char *name = ps_session__name(sc->session, h);

	for (size_t i = 0; i < sc->ntold; i++)
		if (sc->told[i] == h)
			return;
	if (!h || ps_sampler__stats(sc->session, h, &st) < 0 ||
	    ps_array__reserve(&sc->told, &sc->captold, sc->ntold + 1, sizeof(*sc->told)))
		return;
	sc->told[sc->ntold++] = h;
	if (st.lost)
		fprintf(stderr,
			"perfscript: %llu of %llu samples of '%s' were lost (the ring filled up: a "
			"handler slower than the sample rate, or a ring too small; try a larger "
			"ring%s or a longer period)\n",
			(unsigned long long)st.lost, (unsigned long long)(st.lost + st.samples),
			name, ps_advice(PS_ADVICE_RING_PAGES, ""));
	if (st.throttled)
		fprintf(stderr,
			"perfscript: '%s' was throttled %llu times by the kernel "
			"(kernel.perf_event_max_sample_rate); samples are missing for those "
			"intervals\n",
			name, (unsigned long long)st.throttled);
}

/* The exit status of perfscript: 1 after any error, else what exit(N)
 * named, else the command's. */
static int final_status(struct ps_script *sc)
{
	int ws;

	if (sc->errors)
		return 1;
	if (sc->exit_given)
		return sc->exit_status;
	if (ps_driver__target_exited(sc->driver, &ws) &&
	    ps_session__target_kind(sc->session) != PS_TARGET_PID) {
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

int ps_lua_script__end(struct ps_script *sc)
{
	ps_driver__finish(sc->driver); /* what the target left in the rings, before end */
	ps_lua_probe__stop(sc);
	ps_lua_sample_object__settle(sc); /* debug files on their way, for the reports */
	sc->ending = true;		  /* from here only a second signal stops a probe */
	sc->signal_pending = 0;
	if (sc->o.verbose)
		fprintf(stderr, "perfscript: session ended: %s\n",
			ps_driver__stop_reason(sc->driver) == PS_STOP_CLIENT ? "exit() was called"
			: ps_driver__stopping(sc->driver) ? ps_driver__stop_text(sc->driver)
							  : "nothing left to wait for");
	/* a session that could not start measured nothing: no report of it */
	if (!sc->unstarted)
		ps_lua_phase__run(sc, PS_PHASE_END, NULL);
	fflush(stdout);
	ps_lua_sample_object__tell(sc);
	ps_lua_probe__report(sc);
	ps_lua_aggregate__report(sc);
	ps_driver__end(sc->driver);
	return final_status(sc);
}
