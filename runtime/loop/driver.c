/*
 * driver.c: the session driver's life: start (BPF options, counters, the
 * held command released, the target watched, the duration and the signals
 * armed; signals are caught from the driver's creation, loop/signals.c),
 * the loop, the reasons a session ends, and the end itself, where a
 * command still running, and what it started, is sent SIGTERM as perf stat
 * --timeout does, then SIGKILL. Everything reaches the driver as a loop callback, on the loop's
 * one thread. The client's sample ops are called through the driver's, so
 * once delivery is halted (exit(), an error) no handler runs again.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/advice.h"
#include "loop/internal.h"

static void say(const struct ps_driver *d, const char *fmt, int arg)
{
	if (!d->o.log)
		return;
	fputs("perfscript: ", d->o.log);
	fprintf(d->o.log, fmt, arg);
	fputc('\n', d->o.log);
}

static int on_sample(const struct ps_sample *smp, void *ctx)
{
	struct ps_driver *d = ctx;

	if (d->halted)
		return -ECANCELED; /* after exit() or an error no more handlers run */
	return d->client.sample ? d->client.sample(smp, d->client.ctx) : 0;
}

static int on_record(const struct ps_record *r, void *ctx)
{
	struct ps_driver *d = ctx;

	ps_driver__record_comm(d, r);
	return d->client.record ? d->client.record(r, d->client.ctx) : 0;
}

struct ps_driver *ps_driver__new(struct ps_session *s, struct ps_loop *loop,
				 const struct ps_driver_opts *opts)
{
	struct ps_sample_ops ops = {
	    .sz = sizeof(ops), .sample = on_sample, .record = on_record, .ctx = NULL};
	struct ps_driver *d;
	int err;

	if (!s || !loop || (opts && opts->sz < offsetof(struct ps_driver_opts, ctx))) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	d->s = s;
	ps_session__set_cancel(s, &d->nasync); /* a signal stops a long open */
	d->loop = loop;
	d->sigfd = -1;
	d->drain_timer = -1;
	d->drain_min_ns = PS_DRAIN_INTERVAL_NS;
	if (opts)
		memcpy(&d->o, opts, opts->sz < sizeof(d->o) ? opts->sz : sizeof(d->o));
	d->o.sz = sizeof(d->o);
	ps_pidmap__init(&d->comms, 16);
	ops.ctx = d;
	err = ps_session__set_sample_ops(s, &ops);
	if (!err)
		err = ps_driver__catch_signals(d);
	if (err) {
		ps_driver__release_signals(d);
		ps_session__set_sample_ops(s, NULL);
		free(d);
		errno = -err;
		return NULL;
	}
	return d;
}

void ps_driver__free(struct ps_driver *d)
{
	if (!d)
		return;
	ps_driver__release_signals(d);
	ps_session__set_cancel(d->s, NULL);
	ps_session__set_sample_ops(d->s, NULL);
	ps_driver__free_comms(d);
	free(d);
}

int ps_driver__set_sample_ops(struct ps_driver *d, const struct ps_sample_ops *ops)
{
	if (!d)
		return -EINVAL;
	memset(&d->client, 0, sizeof(d->client));
	if (!ops)
		return 0;
	if (ops->sz < offsetof(struct ps_sample_ops, ctx) + sizeof(ops->ctx))
		return -EINVAL;
	memcpy(&d->client, ops, ops->sz < sizeof(*ops) ? ops->sz : sizeof(*ops));
	return 0;
}

void ps_driver__stop(struct ps_driver *d, enum ps_stop_reason why)
{
	/* after exit(), an error or a signal no sample handler runs again */
	if (why == PS_STOP_CLIENT || why == PS_STOP_ERROR || why == PS_STOP_SIGNAL)
		d->halted = true;
	if (d->why == PS_STOP_NONE) {
		d->why = why;
		switch (why) {
		case PS_STOP_CLIENT:
			snprintf(d->text, sizeof(d->text), "the client stopped it");
			break;
		case PS_STOP_ERROR:
			snprintf(d->text, sizeof(d->text), "a handler raised an error");
			break;
		case PS_STOP_SIGNAL:
			snprintf(d->text, sizeof(d->text), "%s",
				 d->signo == SIGINT    ? "SIGINT"
				 : d->signo == SIGHUP  ? "SIGHUP"
				 : d->signo == SIGPIPE ? "SIGPIPE (the output was closed)"
						       : "SIGTERM");
			break;
		case PS_STOP_TARGET:
			snprintf(d->text, sizeof(d->text), "the target exited");
			break;
		case PS_STOP_DEADLINE:
			snprintf(d->text, sizeof(d->text), "%s expired",
				 ps_advice(PS_ADVICE_DURATION, "the duration"));
			break;
		case PS_STOP_INPUT:
			snprintf(d->text, sizeof(d->text), "end of input");
			break;
		case PS_STOP_NONE:
			break;
		}
	}
	ps_loop__stop(d->loop, 0);
}

bool ps_driver__stopping(const struct ps_driver *d)
{
	return d->why != PS_STOP_NONE;
}

enum ps_stop_reason ps_driver__stop_reason(const struct ps_driver *d)
{
	return d->why;
}

const char *ps_driver__stop_text(const struct ps_driver *d)
{
	return d->text;
}

bool ps_driver__started(const struct ps_driver *d)
{
	return d->started;
}

void ps_driver__set_on_interrupt(struct ps_driver *d, bool (*fn)(struct ps_driver *d, void *ctx))
{
	if (d)
		d->o.on_interrupt = fn;
}

void ps_driver__signal(struct ps_driver *d, int signo)
{
	if (!d || signo <= 0)
		return;
	if (signo == SIGINT && d->o.on_interrupt && d->o.on_interrupt(d, d->o.ctx))
		return; /* a REPL: Ctrl-C drops the line */
	if (!d->nsignals++)
		d->signo = signo;
	ps_driver__stop(d, PS_STOP_SIGNAL);
}

void ps_driver__take_signal(struct ps_driver *d)
{
	int signo = d ? d->async_signo : 0;

	if (!signo)
		return;
	d->async_signo = 0;
	ps_driver__signal(d, signo);
}

static int on_target_exit(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	struct ps_driver *d = ctx;
	int wstatus = 0;

	(void)events;
	if (ps_session__reap(d->s, &wstatus) == -EAGAIN)
		return 0;
	if (fd >= 0)
		ps_loop__del_fd(loop, fd);
	d->target_done = true;
	d->target_wstatus = wstatus;
	ps_driver__stop(d, PS_STOP_TARGET);
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
	ps_driver__stop(ctx, PS_STOP_DEADLINE);
	return 0;
}

/* The target's end and the duration, on the loop (signals: loop/signals.c). */
static int watch(struct ps_driver *d, char *msg, size_t msglen)
{
	static const int sigchld = SIGCHLD;
	int pidfd = ps_session__target_pidfd(d->s), rc = 0;

	if (pidfd >= 0)
		rc = ps_loop__add_fd(d->loop, pidfd, EPOLLIN, on_target_exit, d);
	/* Without pidfd_open (kernels before 5.3, valgrind) SIGCHLD says it. */
	else if (ps_session__target_kind(d->s) != PS_TARGET_PID && ps_session__target_pid(d->s) > 0)
		rc = ps_loop__add_signals(d->loop, &sigchld, 1, on_sigchld, d);
	if (!rc && d->o.duration > 0)
		rc = ps_loop__add_timer(d->loop, (uint64_t)(d->o.duration * 1e9), on_deadline, d);
	if (rc < 0 && msg && msglen)
		snprintf(msg, msglen, "cannot watch the session: %s", ps_strerror(rc));
	return rc < 0 ? rc : 0;
}

int ps_driver__start(struct ps_driver *d, char *msg, size_t msglen)
{
	int rc;

	if (msg && msglen)
		msg[0] = '\0';
	rc = ps_session__open(d->s, msg, msglen);
	if (!rc)
		rc = ps_driver__sync(d);
	if (rc < 0) {
		if (msg && msglen && !msg[0])
			snprintf(msg, msglen, "%s", ps_strerror(rc));
		return rc;
	}
	rc = ps_session__release(d->s);
	if (rc < 0 && rc != -ECHILD) {
		if (msg && msglen)
			snprintf(msg, msglen, "cannot run the command: %s", ps_strerror(rc));
		return rc;
	}
	rc = watch(d, msg, msglen);
	if (rc < 0)
		return rc;
	d->started = true;
	return 0;
}

int ps_driver__run(struct ps_driver *d)
{
	if (d->why != PS_STOP_NONE)
		return 0;
	return ps_loop__run(d->loop);
}

int ps_driver__finish(struct ps_driver *d)
{
	/* After an error or exit() no handler runs again; after SIGINT the user
	 * wants out now, and a slow handler could take seconds over a full ring. */
	if (d->halted || d->nsignals)
		return 0;
	return ps_sampler__flush(d->s);
}

/* Whether anything of the command is left: the command itself, or a member
 * of its process group. */
static bool command_left(struct ps_driver *d)
{
	int ws;

	return ps_session__reap(d->s, &ws) == -EAGAIN || ps_session__signal(d->s, 0) == 0;
}

void ps_driver__end(struct ps_driver *d)
{
	pid_t pid = ps_session__target_pid(d->s);
	int ws;

	if (pid <= 0 || ps_session__target_kind(d->s) == PS_TARGET_PID || !command_left(d))
		return;
	/* the command and whatever it started and left running (a pipeline
	 * under sh -c, a background job): no child outlives the session */
	say(d, "sending SIGTERM to the command (pid %d) and its process group", (int)pid);
	ps_session__signal(d->s, SIGTERM);
	for (int i = 0; i < 100; i++) { /* up to 1 s, then SIGKILL */
		if (!command_left(d))
			return;
		usleep(10000);
	}
	say(d, "the command (pid %d) or its processes are still there a second later: SIGKILL",
	    (int)pid);
	ps_session__signal(d->s, SIGKILL);
	while (ps_session__reap(d->s, &ws) == -EAGAIN)
		usleep(1000);
}

bool ps_driver__target_exited(const struct ps_driver *d, int *wstatus)
{
	if (d->target_done && wstatus)
		*wstatus = d->target_wstatus;
	return d->target_done;
}
