/*
 * signals.c: SIGINT, SIGTERM, SIGHUP and SIGPIPE act at once, in every phase
 * of a session. They are caught by a handler (not held for a signalfd, which
 * only the loop reads, and the loop does not run while a client's handler
 * is busy or before the session starts): the handler notes the signal, lets
 * the client stop what it is running (the Lua binding sets a hook, as lua.c
 * does, so a handler stuck in a loop raises "interrupted"), and wakes the
 * loop through an eventfd, whose callback ends the session. A second
 * SIGINT, SIGTERM or SIGHUP, while the first is still being acted on or
 * during the end, ends the process at once with that signal. SIGPIPE (the
 * reader of our output went away) ends the session quietly and never kills.
 * Signals are process-wide: one driver at a time has them.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "loop/internal.h"

static const int handled[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define NHANDLED (sizeof(handled) / sizeof(handled[0]))

static struct ps_driver *volatile owner;
static struct sigaction saved[NHANDLED];

static void on_async(int signo)
{
	struct ps_driver *d = owner;
	int err = errno;
	uint64_t one = 1;

	if (!d)
		return;
	/* the REPL keeps its session through any number of Ctrl-C */
	if (signo != SIGPIPE && !(signo == SIGINT && d->o.on_interrupt) && ++d->nasync > 1) {
		signal(signo, SIG_DFL);
		raise(signo); /* delivered, and fatal, once this handler returns */
	}
	d->async_signo = signo;
	if (d->o.on_signal)
		d->o.on_signal(signo, d->o.ctx);
	if (write(d->sigfd, &one, sizeof(one)) < 0) {
		/* the counter is at its limit: the loop is woken already */
	}
	errno = err;
}

/* The loop's side: act on what the handler noted. */
static int on_wake(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	struct ps_driver *d = ctx;
	uint64_t n;
	int signo = d->async_signo;

	(void)loop;
	(void)events;
	if (read(fd, &n, sizeof(n)) != sizeof(n) || !signo)
		return 0;
	d->async_signo = 0;
	ps_driver__signal(d, signo);
	return 0;
}

int ps_driver__catch_signals(struct ps_driver *d)
{
	struct sigaction sa;
	int rc;

	d->sigfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->sigfd < 0)
		return -errno;
	rc = ps_loop__add_fd(d->loop, d->sigfd, EPOLLIN, on_wake, d);
	if (rc < 0)
		return rc;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_async;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NHANDLED; i++)
		sigaddset(&sa.sa_mask, handled[i]);
	/* no SA_RESTART: a blocking wait in a handler (os.execute) returns EINTR */
	owner = d;
	for (size_t i = 0; i < NHANDLED; i++)
		if (sigaction(handled[i], &sa, &saved[i]) < 0)
			return -errno;
	return 0;
}

void ps_driver__release_signals(struct ps_driver *d)
{
	if (owner == d) {
		for (size_t i = 0; i < NHANDLED; i++)
			sigaction(handled[i], &saved[i], NULL);
		owner = NULL;
	}
	if (d->sigfd >= 0) {
		ps_loop__del_fd(d->loop, d->sigfd);
		close(d->sigfd);
	}
	d->sigfd = -1;
}

bool ps_driver__signalled(const struct ps_driver *d)
{
	return d && (d->nasync > 0 || d->nsignals > 0);
}
