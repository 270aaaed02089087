/*
 * overflow.c: perfctr's interrupt mode ("i-mode") on perf_event: a sampling
 * counter on the calling thread whose overflows arrive as a signal to that
 * thread. The fd is opened for this thread alone (pid 0, any CPU, not
 * inherited), with O_ASYNC, F_SETSIG to a real-time signal (so overflows
 * queue rather than merge) and F_SETOWN_EX to the thread's id; each
 * overflow the kernel counts then sends one signal, with the fd in si_fd.
 * One process-wide handler finds the counter by its fd and either calls the
 * C callback there (PAPI_overflow's contract: async-signal-safe work only)
 * or queues the interrupted ip in the counter's lock-free ring for a safe
 * point (ps_overflow__take: Lua and LuaJIT handlers run from there).
 * PERF_EVENT_IOC_REFRESH delivers n more overflows and then disables the
 * counter, as perfctr's iresume re-arms it; PERF_EVENT_IOC_PERIOD changes
 * the period. Kernel finding (6.18): a tracepoint event disabled by its
 * own refresh limit is not enabled again by a later refresh or enable, so a
 * refresh then opens the fd again, its count carried over.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/perf.h"
#include "perfscript.h"

#define MAX_LIVE  64	/* overflow counters alive at once, process-wide */
#define QUEUE_LEN 4096u /* queued ips per counter (a power of two) */

struct ps_overflow {
	int fd;
	pid_t tid, pid;	    /* the thread it counts, the process that made it */
	const char *thread; /* &thread_mark of that thread */
	struct perf_event_attr attr;
	ps_overflow_fn fn;
	void *ctx;
	uint64_t base;		/* the count of fds closed by a reopen */
	_Atomic uint64_t count; /* overflows signalled */
	_Atomic uint64_t dropped;
	_Atomic bool limited; /* the refresh limit disabled it (POLL_HUP) */
	_Atomic uint32_t head, tail;
	uint64_t ips[QUEUE_LEN];
	char name[64];
};

static struct ps_overflow *_Atomic live[MAX_LIVE];
/* Each live counter's fd + 1 (0: none) and its thread's mark, beside it:
 * a signal handler or a poll finds its own counter by them without
 * reading another thread's, which that thread may be freeing meanwhile
 * (ThreadSanitizer saw on_signal read o->fd of a counter being freed). */
static _Atomic int live_fd[MAX_LIVE];
static const char *_Atomic live_thread[MAX_LIVE];
static _Atomic bool installed;
/* Per thread: what frees dropped counters when the table is full (a
 * binding's garbage collector), and where ps_overflow__next looks first. */
static _Thread_local void (*reclaim_fn)(void *ctx);
static _Thread_local void *reclaim_ctx;
static _Thread_local int next_cursor;
/* The calling thread, without a gettid() per poll: the address of a
 * thread-local is unique among live threads. */
static _Thread_local char thread_mark;
static _Atomic int npolled; /* live counters made with ctx and no fn */
/* This process, kept rather than asked: a counter of getpid() calls must
 * not count perfscript's own. A forked child learns its own. */
static pid_t this_pid;

static void after_fork(void)
{
	this_pid = getpid();
}

static uint64_t interrupted_ip(const void *uctx)
{
	const ucontext_t *uc = uctx;

	if (!uc)
		return 0;
#if defined(__x86_64__)
	return (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uint64_t)uc->uc_mcontext.pc;
#else
	return 0;
#endif
}

static void on_signal(int signo, siginfo_t *si, void *uctx)
{
	int saved = errno;

	(void)signo;
	for (int i = 0; i < MAX_LIVE; i++) {
		struct ps_overflow *o;
		uint64_t ip;
		uint32_t head;

		/* the signal's fd is its thread's own counter's */
		if (atomic_load_explicit(&live_fd[i], memory_order_acquire) != si->si_fd + 1 ||
		    !(o = atomic_load_explicit(&live[i], memory_order_acquire)))
			continue;
		ip = interrupted_ip(uctx);
		atomic_fetch_add_explicit(&o->count, 1, memory_order_relaxed);
		if (si->si_code == POLL_HUP)
			atomic_store_explicit(&o->limited, true, memory_order_relaxed);
		if (o->fn) {
			o->fn(o, ip, o->ctx);
			break;
		}
		/* one producer (this handler, on o's thread); the consumer
		 * runs on the same thread, so it never runs during this */
		head = atomic_load_explicit(&o->head, memory_order_relaxed);
		if (head - atomic_load_explicit(&o->tail, memory_order_acquire) >= QUEUE_LEN) {
			atomic_fetch_add_explicit(&o->dropped, 1, memory_order_relaxed);
			break;
		}
		o->ips[head % QUEUE_LEN] = ip;
		atomic_store_explicit(&o->head, head + 1, memory_order_release);
		break;
	}
	errno = saved;
}

int ps_overflow__signal(void)
{
	return SIGRTMIN + 3;
}

static int install(void)
{
	struct sigaction sa;

	if (atomic_load(&installed))
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(ps_overflow__signal(), &sa, NULL) < 0)
		return -errno;
	this_pid = getpid();
	pthread_atfork(NULL, NULL, after_fork);
	atomic_store(&installed, true);
	return 0;
}

/* Open the fd on this thread and point its overflows at it. */
static int arm_fd(struct ps_overflow *o)
{
	struct f_owner_ex owner = {.type = F_OWNER_TID, .pid = o->tid};
	int fd = ps_perf__open(&o->attr, 0, -1, -1), flags;

	if (fd < 0)
		return fd;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_ASYNC) < 0 ||
	    fcntl(fd, F_SETSIG, ps_overflow__signal()) < 0 || fcntl(fd, F_SETOWN_EX, &owner) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	o->fd = fd;
	return 0;
}

static int enlist(struct ps_overflow *o)
{
	for (int i = 0; i < MAX_LIVE; i++) {
		struct ps_overflow *none = NULL;

		if (atomic_compare_exchange_strong(&live[i], &none, o)) {
			atomic_store_explicit(&live_thread[i], o->thread, memory_order_release);
			atomic_store_explicit(&live_fd[i], o->fd + 1, memory_order_release);
			return 0;
		}
	}
	return -PS_ERR_LIMIT;
}

static void delist(struct ps_overflow *o)
{
	for (int i = 0; i < MAX_LIVE; i++) {
		struct ps_overflow *me = o;

		if (atomic_load_explicit(&live[i], memory_order_relaxed) != o)
			continue;
		atomic_store_explicit(&live_fd[i], 0, memory_order_release);
		atomic_store_explicit(&live_thread[i], NULL, memory_order_release);
		atomic_compare_exchange_strong(&live[i], &me, NULL);
	}
}

/* The attr of spec's one sampling event, or a message saying why not. */
static int parse_one(const char *spec, struct perf_event_attr *a, char *name, size_t namelen,
		     char *msg, size_t msglen)
{
	struct ps_event_error err = {0};
	struct ps_events *evs = ps_events__parse(spec, &err);
	int rc = 0;

	if (!evs) {
		snprintf(msg, msglen, "%s", err.message);
		return err.code > 0 ? -err.code : -EINVAL;
	}
	if (ps_events__count(evs) != 1) {
		snprintf(msg, msglen, "'%s' gives %zu events: an overflow counter is one event",
			 spec, ps_events__count(evs));
		rc = -EINVAL;
	} else if (!ps_events__attr(evs, 0)->sample_period) {
		snprintf(msg, msglen,
			 "'%s' does not overflow: give it a period (e.g. '%s/period=1000000/') or "
			 "freq=",
			 spec, ps_events__name(evs, 0));
		rc = -EINVAL;
	} else {
		*a = *ps_events__attr(evs, 0);
		snprintf(name, namelen, "%s", ps_events__name(evs, 0));
	}
	ps_events__free(evs);
	return rc;
}

/* Settle the attr and open the fd on this thread; 0 or -errno with msg. */
static int open_here(struct ps_overflow *o, const char *spec, char *msg, size_t msglen)
{
	int err;

	o->attr.size = sizeof(o->attr);
	o->attr.disabled = 1;
	o->attr.inherit = 0;
	o->attr.enable_on_exec = 0;
	o->attr.watermark = 0;
	o->attr.wakeup_events = 1;
	/* no ring: nothing is written. And a software event (a tracepoint)
	 * with PERF_SAMPLE_PERIOD and a fixed period overflows on every hit,
	 * whatever the period says */
	o->attr.sample_type = 0;
	o->attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	if ((err = install()) < 0) {
		snprintf(msg, msglen, "cannot catch signal %d: %s", ps_overflow__signal(),
			 strerror(-err));
		return err;
	}
	err = arm_fd(o);
	if (err == -EACCES && o->attr.type != PERF_TYPE_TRACEPOINT && !o->attr.exclude_kernel) {
		/* perf's rule at perf_event_paranoid 2: user space only */
		o->attr.exclude_kernel = o->attr.exclude_hv = 1;
		err = arm_fd(o);
	}
	if (err < 0)
		snprintf(msg, msglen, "cannot open '%s' on this thread: %s", spec,
			 ps_strerror(err));
	return err;
}

struct ps_overflow *ps_overflow__new(const char *spec, ps_overflow_fn fn, void *ctx, char *msg,
				     size_t msglen)
{
	struct ps_overflow *o = calloc(1, sizeof(*o));
	char none[1];
	int err;

	if (!msg || !msglen)
		msg = none, msglen = sizeof(none);
	msg[0] = '\0';
	if (!o || !spec) {
		snprintf(msg, msglen, "%s", spec ? "out of memory" : "no event string given");
		free(o);
		errno = spec ? ENOMEM : EINVAL;
		return NULL;
	}
	*o = (struct ps_overflow){
	    .fd = -1, .fn = fn, .ctx = ctx, .tid = gettid(), .thread = &thread_mark};
	err = parse_one(spec, &o->attr, o->name, sizeof(o->name), msg, msglen);
	if (!err)
		err = open_here(o, spec, msg, msglen); /* installs the handler: this_pid is known */
	o->pid = this_pid;
	if (!err && (err = enlist(o)) < 0 && reclaim_fn) {
		reclaim_fn(reclaim_ctx); /* counters the program dropped hold slots */
		err = enlist(o);
	}
	if (err == -PS_ERR_LIMIT)
		snprintf(msg, msglen,
			 "at most %d overflow counters may be alive at once: close one first",
			 MAX_LIVE);
	if (err) {
		if (o->fd >= 0)
			close(o->fd);
		free(o);
		errno = -err;
		return NULL;
	}
	if (!fn && ctx)
		atomic_fetch_add(&npolled, 1);
	return o;
}

void ps_overflow__set_reclaim(void (*fn)(void *ctx), void *ctx)
{
	reclaim_fn = fn;
	reclaim_ctx = ctx;
}

/* A forked child shares the counter's open file with its parent: only the
 * process that made it may stop, start or re-arm it. */
static bool mine(const struct ps_overflow *o)
{
	return o->pid == this_pid;
}

void ps_overflow__free(struct ps_overflow *o)
{
	if (!o)
		return;
	if (mine(o)) /* a child's copy: closing its descriptor leaves the parent's counting */
		ioctl(o->fd, PERF_EVENT_IOC_DISABLE, 0);
	delist(o); /* a signal still queued for the fd finds no one */
	if (!o->fn && o->ctx)
		atomic_fetch_sub(&npolled, 1);
	close(o->fd);
	free(o);
}

static int ioctl_rc(int fd, unsigned long req, unsigned long arg)
{
	return ioctl(fd, req, arg) < 0 ? -errno : 0;
}

int ps_overflow__stop(struct ps_overflow *o)
{
	if (!o)
		return -EINVAL;
	return mine(o) ? ioctl_rc(o->fd, PERF_EVENT_IOC_DISABLE, 0) : -EPERM;
}

int ps_overflow__read(struct ps_overflow *o, uint64_t *value)
{
	uint64_t v[3];
	ssize_t r;

	if (!o || !value)
		return -EINVAL;
	r = read(o->fd, v, sizeof(v));
	if (r < 0)
		return -errno;
	if (r != (ssize_t)sizeof(v))
		return -EIO;
	/* one thread's counter: scaled only if the PMU multiplexed it */
	if (v[2] && v[2] < v[1])
		v[0] = (uint64_t)((double)v[0] * (double)v[1] / (double)v[2]);
	*value = o->base + v[0];
	return 0;
}

/* A tracepoint its limit disabled: a new fd (see the header comment). */
static int reopen(struct ps_overflow *o)
{
	uint64_t v = 0;
	int old = o->fd, err;

	ps_overflow__read(o, &v);
	ioctl(old, PERF_EVENT_IOC_DISABLE, 0);
	err = arm_fd(o); /* o->fd stays old on failure */
	if (err)
		return err;
	for (int i = 0; i < MAX_LIVE; i++) /* its signals come on the new fd */
		if (atomic_load_explicit(&live[i], memory_order_relaxed) == o)
			atomic_store_explicit(&live_fd[i], o->fd + 1, memory_order_release);
	o->base = v;
	close(old); /* a signal still queued for old names a closed fd */
	atomic_store(&o->limited, false);
	return 0;
}

/* A tracepoint its refresh limit disabled needs a new fd to count again. */
static int revive(struct ps_overflow *o)
{
	int err = 0;

	if (atomic_load(&o->limited) && o->attr.type == PERF_TYPE_TRACEPOINT)
		err = reopen(o);
	atomic_store(&o->limited, false);
	return err;
}

int ps_overflow__start(struct ps_overflow *o)
{
	int err;

	if (!o)
		return -EINVAL;
	if (!mine(o))
		return -EPERM;
	if ((err = revive(o)) < 0)
		return err;
	return ioctl_rc(o->fd, PERF_EVENT_IOC_ENABLE, 0);
}

int ps_overflow__refresh(struct ps_overflow *o, int n)
{
	int err;

	if (!o || n <= 0)
		return -EINVAL;
	if (!mine(o))
		return -EPERM;
	if ((err = revive(o)) < 0)
		return err;
	return ioctl_rc(o->fd, PERF_EVENT_IOC_REFRESH, (unsigned long)n);
}

int ps_overflow__set_period(struct ps_overflow *o, uint64_t period)
{
	if (!o || !period || o->attr.freq)
		return -EINVAL;
	if (!mine(o))
		return -EPERM;
	if (ioctl(o->fd, PERF_EVENT_IOC_PERIOD, &period) < 0)
		return -errno;
	o->attr.sample_period = period;
	return 0;
}

uint64_t ps_overflow__count(const struct ps_overflow *o)
{
	return o ? atomic_load(&o->count) : 0;
}

uint64_t ps_overflow__dropped(const struct ps_overflow *o)
{
	return o ? atomic_load(&o->dropped) : 0;
}

size_t ps_overflow__take(struct ps_overflow *o, uint64_t *ips, size_t max)
{
	uint32_t tail, head;
	size_t n = 0;

	if (!o)
		return 0;
	tail = atomic_load_explicit(&o->tail, memory_order_relaxed);
	head = atomic_load_explicit(&o->head, memory_order_acquire);
	while (tail != head && n < max)
		ips[n++] = o->ips[tail++ % QUEUE_LEN];
	atomic_store_explicit(&o->tail, tail, memory_order_release);
	return n;
}

struct ps_overflow *ps_overflow__next(void **ctx, uint64_t *ip)
{
	if (atomic_load_explicit(&npolled, memory_order_relaxed) == 0)
		return NULL; /* regions poll at every boundary: this is the common case */
	for (int k = 0; k < MAX_LIVE; k++) {
		int i = (next_cursor + k) % MAX_LIVE;
		struct ps_overflow *o;

		/* this thread's own counters only: another's may be going */
		if (atomic_load_explicit(&live_thread[i], memory_order_acquire) != &thread_mark ||
		    !(o = atomic_load_explicit(&live[i], memory_order_acquire)))
			continue;
		if (o->fn || !o->ctx || !ps_overflow__take(o, ip, 1))
			continue;
		next_cursor = i; /* the same counter first next time: its ips in order */
		if (ctx)
			*ctx = o->ctx;
		return o;
	}
	return NULL;
}

const char *ps_overflow__name(const struct ps_overflow *o)
{
	return o ? o->name : "";
}

int ps_overflow__fd(const struct ps_overflow *o)
{
	return o ? o->fd : -1;
}
