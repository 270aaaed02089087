/*
 * loop.c: perfscript's event loop. One thread, one epoll set; every source is
 * a file descriptor: ring buffers and pidfds as plain fds, timers as timerfds
 * on CLOCK_MONOTONIC, signals as a signalfd. Callbacks run on the loop thread
 * only, so the Lua state above never sees concurrency. Sources are kept in a
 * small array indexed by a slot number carried in epoll's data field, which
 * lets a callback delete any source (itself included) safely mid-iteration.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/array.h"
#include "loop/internal.h"
#include "loop/loop.h"

enum source_kind { SRC_FREE, SRC_FD, SRC_TIMER, SRC_SIGNAL };

struct source {
	enum source_kind kind;
	int fd;
	bool owned; /* timerfd/signalfd: the loop closes it */
	ps_fd_fn fd_fn;
	ps_timer_fn timer_fn;
	void *ctx;
};

struct ps_loop {
	int epfd;
	bool stop;
	int status;
	struct source *src;
	size_t nsrc;
	sigset_t blocked; /* signals we moved to a signalfd, restored on free */
	bool have_blocked;
};

struct ps_loop *ps_loop__new(void)
{
	struct ps_loop *loop = calloc(1, sizeof(*loop));

	if (!loop)
		return NULL;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0) {
		int err = errno;

		free(loop);
		errno = err;
		return NULL;
	}
	return loop;
}

static void source_release(struct ps_loop *loop, struct source *src)
{
	if (src->kind == SRC_FREE)
		return;
	epoll_ctl(loop->epfd, EPOLL_CTL_DEL, src->fd, NULL);
	if (src->owned)
		close(src->fd);
	memset(src, 0, sizeof(*src));
	src->fd = -1;
}

void ps_loop__free(struct ps_loop *loop)
{
	if (!loop)
		return;
	for (size_t i = 0; i < loop->nsrc; i++)
		source_release(loop, &loop->src[i]);
	if (loop->have_blocked)
		sigprocmask(SIG_UNBLOCK, &loop->blocked, NULL);
	close(loop->epfd);
	free(loop->src);
	free(loop);
}

/* Claim a free slot, growing the array; returns its index or -ENOMEM. */
static int source_alloc(struct ps_loop *loop)
{
	size_t old = loop->nsrc;

	for (size_t i = 0; i < loop->nsrc; i++)
		if (loop->src[i].kind == SRC_FREE)
			return (int)i;
	if (ps_array__reserve(&loop->src, &loop->nsrc, old + 1, sizeof(*loop->src)))
		return -ENOMEM;
	memset(loop->src + old, 0, (loop->nsrc - old) * sizeof(*loop->src));
	for (size_t i = old; i < loop->nsrc; i++)
		loop->src[i].fd = -1;
	return (int)old;
}

static int source_add(struct ps_loop *loop, enum source_kind kind, int fd, bool owned,
		      uint32_t events, void *ctx)
{
	struct epoll_event ev = {.events = events};
	int slot = source_alloc(loop);

	if (slot < 0)
		return slot;
	ev.data.u32 = (uint32_t)slot;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	loop->src[slot] = (struct source){.kind = kind, .fd = fd, .owned = owned, .ctx = ctx};
	return slot;
}

int ps_loop__add_fd(struct ps_loop *loop, int fd, uint32_t events, ps_fd_fn fn, void *ctx)
{
	if (!loop || fd < 0 || !fn)
		return -EINVAL;
	int slot = source_add(loop, SRC_FD, fd, false, events, ctx);

	if (slot >= 0)
		loop->src[slot].fd_fn = fn;
	return slot < 0 ? slot : 0;
}

int ps_loop__del_fd(struct ps_loop *loop, int fd)
{
	if (!loop)
		return -EINVAL;
	for (size_t i = 0; i < loop->nsrc; i++) {
		if (loop->src[i].kind == SRC_FD && loop->src[i].fd == fd) {
			source_release(loop, &loop->src[i]);
			return 0;
		}
	}
	return -ENOENT;
}

int ps_loop__add_timer(struct ps_loop *loop, uint64_t interval_ns, ps_timer_fn fn, void *ctx)
{
	struct itimerspec its = {0};
	int fd, slot;

	if (!loop || !fn || interval_ns == 0)
		return -EINVAL;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	its.it_interval.tv_sec = (time_t)(interval_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(interval_ns % 1000000000u);
	its.it_value = its.it_interval;
	if (timerfd_settime(fd, 0, &its, NULL) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	slot = source_add(loop, SRC_TIMER, fd, true, EPOLLIN, ctx);
	if (slot < 0) {
		close(fd);
		return slot;
	}
	loop->src[slot].timer_fn = fn;
	return slot;
}

int ps_loop__set_timer(struct ps_loop *loop, int id, uint64_t interval_ns)
{
	struct itimerspec its = {0};

	if (!loop || id < 0 || (size_t)id >= loop->nsrc || loop->src[id].kind != SRC_TIMER ||
	    !interval_ns)
		return -EINVAL;
	its.it_interval.tv_sec = (time_t)(interval_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(interval_ns % 1000000000u);
	its.it_value = its.it_interval;
	return timerfd_settime(loop->src[id].fd, 0, &its, NULL) < 0 ? -errno : 0;
}

int ps_loop__del_timer(struct ps_loop *loop, int id)
{
	if (!loop)
		return -EINVAL;
	if (id < 0 || (size_t)id >= loop->nsrc || loop->src[id].kind != SRC_TIMER)
		return -ENOENT;
	source_release(loop, &loop->src[id]);
	return 0;
}

int ps_loop__add_signals(struct ps_loop *loop, const int *signals, size_t n, ps_timer_fn fn,
			 void *ctx)
{
	sigset_t set;
	int fd, slot;

	if (!loop || !fn || (!signals && n))
		return -EINVAL;
	sigemptyset(&set);
	for (size_t i = 0; i < n; i++)
		sigaddset(&set, signals[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		sigprocmask(SIG_UNBLOCK, &set, NULL);
		return err;
	}
	slot = source_add(loop, SRC_SIGNAL, fd, true, EPOLLIN, ctx);
	if (slot < 0) {
		close(fd);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		return slot;
	}
	loop->src[slot].timer_fn = fn;
	if (!loop->have_blocked)
		sigemptyset(&loop->blocked);
	for (size_t i = 0; i < n; i++)
		sigaddset(&loop->blocked, signals[i]);
	loop->have_blocked = true;
	return 0;
}

/* Run one ready source; a negative return stops the loop. */
static int dispatch(struct ps_loop *loop, uint32_t slot, uint32_t events)
{
	struct source *src;

	if (slot >= loop->nsrc)
		return 0;
	src = &loop->src[slot];
	switch (src->kind) {
	case SRC_FD:
		return src->fd_fn(loop, src->fd, events, src->ctx);
	case SRC_TIMER: {
		uint64_t expirations;

		if (read(src->fd, &expirations, sizeof(expirations)) != sizeof(expirations))
			return 0; /* spurious wake-up: EAGAIN */
		return src->timer_fn(loop, expirations, src->ctx);
	}
	case SRC_SIGNAL: {
		struct signalfd_siginfo si;
		int rc = 0;

		while (rc >= 0 && src->kind == SRC_SIGNAL &&
		       read(src->fd, &si, sizeof(si)) == sizeof(si))
			rc = src->timer_fn(loop, si.ssi_signo, src->ctx);
		return rc;
	}
	case SRC_FREE:
		break;
	}
	return 0;
}

int ps_loop__run(struct ps_loop *loop)
{
	struct epoll_event evs[64];

	if (!loop)
		return -EINVAL;
	while (!loop->stop) {
		int n = epoll_wait(loop->epfd, evs, 64, -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < n && !loop->stop; i++) {
			int rc = dispatch(loop, evs[i].data.u32, evs[i].events);

			if (rc < 0)
				ps_loop__stop(loop, rc);
		}
	}
	loop->stop = false; /* the loop can be run again, e.g. for a final drain */
	return loop->status;
}

void ps_loop__stop(struct ps_loop *loop, int status)
{
	if (!loop)
		return;
	loop->stop = true;
	loop->status = status;
}

bool ps_loop__stopping(const struct ps_loop *loop)
{
	return loop && loop->stop;
}
