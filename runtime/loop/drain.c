/*
 * drain.c: the session's overflow sources on the loop. Every poll fd of the
 * session (perf rings, the BPF ring buffer) is watched for EPOLLIN and
 * drained in budgets: the kernel wakes the poller once per quarter ring
 * written, not again for records already waiting, so a full budget means
 * "go on", while between budgets a pending SIGINT or SIGTERM or the end of
 * the session wins. A timer drains every source every 5 ms, so slow
 * streams arrive promptly and the BPF programs' loss counts are read.
 */
#include <stdio.h>
#include <sys/epoll.h>

#include "loop/internal.h"

void ps_driver__drain(struct ps_driver *d, int fd)
{
	while (ps_session__dispatch(d->s, fd, PS_DRAIN_BUDGET) == PS_DRAIN_BUDGET &&
	       !ps_driver__stopping(d) &&
	       !d->async_signo) /* a busy ring must not starve a signal */
		;
}

static int on_ready(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	struct ps_driver *d = ctx;

	ps_driver__drain(d, fd);
	/* A ring's carrier task exited: its fd polls HUP for ever. What its
	 * children still write is drained by the timer. */
	if (events & (EPOLLHUP | EPOLLERR))
		ps_loop__del_fd(loop, fd);
	fflush(stdout);
	return 0;
}

static int on_drain_timer(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	struct ps_driver *d = ctx;
	const int *fds;
	int n = ps_session__poll_fds(d->s, &fds);

	(void)loop;
	(void)expirations;
	for (int i = 0; i < n && !ps_driver__stopping(d); i++)
		ps_driver__drain(d, fds[i]);
	fflush(stdout);
	return 0;
}

int ps_driver__sync(struct ps_driver *d)
{
	const int *fds;
	int n = ps_session__poll_fds(d->s, &fds);

	if (n < 0)
		return n;
	for (; d->nwatched < n; d->nwatched++) {
		int rc = ps_loop__add_fd(d->loop, fds[d->nwatched], EPOLLIN, on_ready, d);

		if (rc < 0)
			return rc;
	}
	if (n > 0 && !d->drain_timer) {
		int id = ps_loop__add_timer(d->loop, PS_DRAIN_INTERVAL_NS, on_drain_timer, d);

		if (id < 0)
			return id;
		d->drain_timer = true;
	}
	return 0;
}
