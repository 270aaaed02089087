/*
 * drain.c: the session's overflow sources on the loop. Every poll fd of the
 * session (perf rings, the BPF ring buffer) is watched for EPOLLIN and
 * drained in budgets: the kernel wakes the poller once per quarter ring
 * written, not again for records already waiting, so a full budget means
 * "go on", while between budgets a pending SIGINT or SIGTERM or the end of
 * the session wins. A timer drains every source every 5 ms, so slow
 * streams arrive promptly and the BPF programs' loss counts are read;
 * while a drain finds nothing (a session that aggregates in the kernel,
 * a quiet target) its interval doubles up to 80 ms, so an idle session
 * wakes 12 times a second, not 200, and the first record back sets it to
 * 5 ms again. A client that does not need records that soon (a profiler
 * that reads its profiles every few seconds) sets a longer shortest
 * interval, and drains at once when it needs what is there.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/epoll.h>

#include "loop/internal.h"

size_t ps_driver__drain(struct ps_driver *d, int fd)
{
	size_t total = 0;
	int n;

	if (d->draining)
		return 0; /* a handler's drain, inside a drain */
	d->draining = true;
	while ((n = ps_sampler__dispatch(d->s, fd, PS_DRAIN_BUDGET)) > 0) {
		total += (size_t)n;
		if (n != PS_DRAIN_BUDGET || ps_driver__stopping(d) ||
		    d->async_signo) /* a busy ring must not starve a signal */
			break;
	}
	d->draining = false;
	return total;
}

/* The drain timer at ns, if it is not there already. */
static void drain_every(struct ps_driver *d, uint64_t ns)
{
	if (d->drain_timer >= 0 && d->drain_ns != ns &&
	    ps_loop__set_timer(d->loop, d->drain_timer, ns) == 0)
		d->drain_ns = ns;
}

static int on_ready(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	struct ps_driver *d = ctx;

	if (ps_driver__drain(d, fd))
		drain_every(d, d->drain_min_ns);
	/* A ring's carrier task exited: its fd polls HUP for ever. What its
	 * children still write is drained by the timer. */
	if (events & (EPOLLHUP | EPOLLERR))
		ps_loop__del_fd(loop, fd);
	fflush(stdout);
	return 0;
}

/* Every source drained: whether any gave something. */
static size_t drain_all(struct ps_driver *d)
{
	const int *fds;
	int n = d ? ps_sampler__poll_fds(d->s, &fds) : -1;
	size_t got = 0;

	for (int i = 0; i < n && !ps_driver__stopping(d); i++)
		got += ps_driver__drain(d, fds[i]);
	return got;
}

void ps_driver__drain_now(struct ps_driver *d)
{
	drain_all(d);
}

int ps_driver__set_drain_interval(struct ps_driver *d, uint64_t ns)
{
	if (!d || ns < 1000000u || ns > 1000000000u)
		return -EINVAL;
	d->drain_min_ns = ns;
	drain_every(d, ns);
	return 0;
}

uint64_t ps_driver__drain_interval(const struct ps_driver *d)
{
	return d ? d->drain_min_ns : 0;
}

static int on_drain_timer(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	struct ps_driver *d = ctx;
	size_t got;
	uint64_t idle,
	    most = d->drain_min_ns > PS_DRAIN_IDLE_NS ? d->drain_min_ns : PS_DRAIN_IDLE_NS;

	(void)loop;
	(void)expirations;
	got = drain_all(d);
	idle = d->drain_ns * 2 < most ? d->drain_ns * 2 : most;
	drain_every(d, got ? d->drain_min_ns : idle);
	fflush(stdout);
	return 0;
}

int ps_driver__sync(struct ps_driver *d)
{
	const int *fds;
	int n = ps_sampler__poll_fds(d->s, &fds);

	if (n < 0)
		return n;
	for (; d->nwatched < n; d->nwatched++) {
		int rc = ps_loop__add_fd(d->loop, fds[d->nwatched], EPOLLIN, on_ready, d);

		if (rc < 0)
			return rc;
	}
	if (n > 0 && d->drain_timer < 0) {
		int id = ps_loop__add_timer(d->loop, d->drain_min_ns, on_drain_timer, d);

		if (id < 0)
			return id;
		d->drain_timer = id;
		d->drain_ns = d->drain_min_ns;
	}
	return 0;
}
