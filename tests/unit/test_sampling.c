/*
 * test_sampling.c: overflow sampling against the real kernel (runtime/
 * sample/: the sampler and its perf ring backend), no mocks. The workload helper ($WORKLOAD)
 * makes an exact number of getppid syscalls, so a period=1 tracepoint on it
 * must deliver exactly that many samples, each from the child's pid, and a
 * period=1000 one a thousandth of them. The loop drains as perfscript's own
 * does, epoll over ps_sampler__poll_fds(), then ps_sampler__flush() once
 * the command exits. Also: loss on a tiny ring is counted exactly, group
 * reads in samples, user-space IPs of a CPU clock, tracking records (COMM,
 * MMAP2, EXIT), stats, fd hygiene and freeing one counter mid-session.
 * Everything needs root (tracepoints, kernel samples): it skips otherwise.
 */
#include <errno.h>
#include <sched.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfscript.h"
#include "session_util.h"
#include "tap.h"

#define GETPPID "syscalls:sys_enter_getppid"
#define MAXCPU	4096

static const char *workload;

struct seen {
	pid_t pid; /* the command's pid: every sample must be from it */
	uint64_t samples, wrong_pid, time_back, user_misc, bad_handle;
	uint64_t user_ips; /* samples with PERF_RECORD_MISC_USER */
	uint64_t values, values_bad, member_sum;
	uint64_t comm, mmap2, exit_, fork_, lost_recs;
	bool comm_workload, mmap2_workload, exit_pid;
	ps_handle want;	     /* 0: any handle */
	useconds_t nap;	     /* sleep in each callback: a slow consumer */
	uint64_t *last_time; /* per CPU */
};

static int on_sample(const struct ps_sample *s, void *ctx)
{
	struct seen *w = ctx;

	w->samples++;
	if (w->want && s->handle != w->want)
		w->bad_handle++;
	if (w->pid && (s->pid != (uint32_t)w->pid || s->tid != (uint32_t)w->pid))
		w->wrong_pid++;
	if (s->cpu < MAXCPU) {
		if (s->time < w->last_time[s->cpu])
			w->time_back++;
		w->last_time[s->cpu] = s->time;
	}
	if (s->misc == PERF_RECORD_MISC_USER)
		w->user_ips++;
	if (s->sample_type & PERF_SAMPLE_READ) {
		uint64_t v, en, run;
		int n = ps_sample__value(s, 0, &v, &en, &run);

		w->values++;
		if (n < 2 || ps_sample__value(s, (size_t)n, &v, NULL, NULL) != -ERANGE)
			w->values_bad++;
		else if (ps_sample__value(s, 1, &v, NULL, NULL) == n)
			w->member_sum = v; /* the member's running total: the last one wins */
	}
	if (w->nap)
		usleep(w->nap);
	return 0;
}

static int on_record(const struct ps_record *r, void *ctx)
{
	struct seen *w = ctx;

	switch (r->type) {
	case PERF_RECORD_COMM:
		w->comm++;
		w->comm_workload |=
		    r->comm && strcmp(r->comm, "workload") == 0 && r->pid == (uint32_t)w->pid;
		break;
	case PERF_RECORD_MMAP2:
		w->mmap2++;
		w->mmap2_workload |=
		    r->filename && strstr(r->filename, "workload") && r->pid == (uint32_t)w->pid;
		break;
	case PERF_RECORD_EXIT:
		w->exit_++;
		w->exit_pid |= r->pid == (uint32_t)w->pid;
		break;
	case PERF_RECORD_FORK:
		w->fork_++;
		break;
	case PERF_RECORD_LOST:
		w->lost_recs++;
		break;
	}
	return 0;
}

static void seen_init(struct seen *w, pid_t pid, ps_handle want)
{
	static uint64_t times[MAXCPU];

	memset(w, 0, sizeof(*w));
	memset(times, 0, sizeof(times));
	w->pid = pid;
	w->want = want;
	w->last_time = times;
}

static void set_ops(struct ps_session *s, struct seen *w)
{
	struct ps_sample_ops ops = {
	    .sz = sizeof(ops), .sample = on_sample, .record = on_record, .ctx = w};

	ps_session__set_sample_ops(s, &ops);
}

static int stop_seen;

static int stop_at_3(const struct ps_sample *s, void *ctx)
{
	(void)s;
	(void)ctx;
	return ++stop_seen == 3 ? -ECANCELED : 0;
}

static struct ps_session *command(char **argv)
{
	struct ps_target_opts o = {.sz = sizeof(o), .kind = PS_TARGET_COMMAND, .argv = argv};

	return ps_session__new(&o);
}

/* The first handle spec gives (a group leader), or 0. */
static ps_handle alloc_first(struct ps_session *s, const char *spec)
{
	ps_handle h[4] = {0};
	struct ps_event_error e;
	int n = ps_session__allocate(s, spec, h, 4, &e);

	if (n < 1)
		tap_diag("allocate '%s': %d %s", spec, n, n < 0 ? e.message : "");
	return n >= 1 ? h[0] : 0;
}

/* Release the command and drain as the loop would until it exits: epoll over
 * the poll fds (re-read, since the set may grow), then a final flush.
 * live_drain false leaves the rings alone until the end. Returns the exit
 * status or -errno. */
static int run_and_drain(struct ps_session *s, bool live_drain)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), st = -1, err, nfds;
	const int *fds;
	int ret = -ETIMEDOUT;

	if (ep < 0)
		return -errno;
	nfds = ps_sampler__poll_fds(s, &fds);
	for (int i = 0; i < nfds && live_drain; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = fds[i]};

		epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
	}
	if (ps_session__target_pidfd(s) >= 0) {
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = -1};

		epoll_ctl(ep, EPOLL_CTL_ADD, ps_session__target_pidfd(s), &ev);
	}
	err = ps_session__release(s);
	if (err) {
		close(ep);
		return err;
	}
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct epoll_event evs[16];
		int n = epoll_wait(ep, evs, 16, 10);

		for (int i = 0; i < n; i++)
			/* a full budget may leave more: the kernel wakes us once per
			 * watermark written, not again for what is already there */
			while (evs[i].data.fd >= 0 &&
			       ps_sampler__dispatch(s, evs[i].data.fd, 4096) == 4096)
				;
		if (ps_session__reap(s, &st) == 0) {
			ret = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 30)
			break;
	}
	err = ps_sampler__flush(s);
	if (err < 0 && ret >= 0)
		ret = err;
	close(ep);
	return ret;
}

static void test_exact(const char *spec, const char *n, uint64_t want, size_t pages)
{
	/* With a period above 1 the task is pinned: each CPU's fd keeps its own
	 * period, so a task that moved would leave a remainder on each CPU. */
	char *argv[] = {(char *)workload, "getppid", (char *)n, NULL};
	char *pinned[] = {"taskset", "-c", "0", (char *)workload, "getppid", (char *)n, NULL};
	struct ps_session *s = command(want == strtoull(n, NULL, 10) ? argv : pinned);
	struct ps_sample_stats st = {0}, tot = {0};
	struct ps_value v = {0};
	struct seen w;
	ps_handle h;
	char msg[512] = "";
	int rc;

	if (!tap_ok(s != NULL, "%s: command session", spec))
		return;
	h = alloc_first(s, spec);
	seen_init(&w, ps_session__target_pid(s), h);
	set_ops(s, &w);
	if (pages)
		ps_session__set_ring_pages(s, pages);
	tap_ok(ps_session__is_sampling(s, h), "%s is a sampling counter", spec);
	rc = ps_session__open(s, msg, sizeof(msg));
	if (!tap_ok(rc == 0, "%s: opens", spec)) {
		tap_diag("  %s", msg);
		ps_session__free(s);
		return;
	}
	rc = run_and_drain(s, true);
	tap_ok(rc == 0, "%s: workload ran (%d)", spec, rc);
	ps_sampler__stats(s, h, &st);
	ps_sampler__stats(s, 0, &tot);
	tap_is_u64(w.samples, want, "%s: exactly %llu samples", spec, (unsigned long long)want);
	tap_is_u64(st.lost, 0, "%s: none lost", spec);
	tap_is_u64(st.samples, w.samples, "%s: stats count what was delivered", spec);
	tap_is_u64(st.malformed + tot.malformed, 0, "%s: nothing malformed", spec);
	tap_is_u64(w.bad_handle, 0, "%s: every sample names its counter", spec);
	tap_is_u64(w.wrong_pid, 0, "%s: every sample's pid/tid is the child's", spec);
	tap_is_u64(w.time_back, 0, "%s: time never goes back on a CPU", spec);
	/* syscalls:* tracepoints hand perf the syscall's user registers */
	tap_is_u64(w.user_ips, w.samples, "%s: syscall tracepoint samples are user-mode", spec);
	tap_ok(ps_session__read(s, h, &v) == 0 && v.raw == strtoull(n, NULL, 10),
	       "%s: counting read sums the per-CPU fds (%llu)", spec, (unsigned long long)v.raw);
	ps_session__free(s);
}

/* A tiny ring nobody drains while the target runs: samples are lost and
 * counted. The kernel only reports a loss in a LOST record written in front
 * of the next record that fits, so the test makes one more sample after
 * draining (a self session can): then delivered + lost is exact. */
static void test_lost(void)
{
	struct ps_target_opts o = {.sz = sizeof(o), .kind = PS_TARGET_SELF};
	struct ps_session *s = ps_session__new(&o);
	struct ps_sample_stats st = {0}, tot = {0};
	const int n = 20000;
	struct seen w;
	ps_handle h;
	char msg[512] = "";

	if (!tap_ok(s != NULL, "self session"))
		return;
	h = alloc_first(s, GETPPID "/period=1/");
	seen_init(&w, 0, h);
	set_ops(s, &w);
	tap_ok(ps_session__set_ring_pages(s, 3) == -EINVAL &&
		   ps_session__set_ring_pages(s, 0) == -EINVAL &&
		   ps_session__set_ring_pages(s, 1) == 0,
	       "ring pages must be a power of two");
	if (!tap_ok(ps_session__open(s, msg, sizeof(msg)) == 0, "1-page ring opens")) {
		tap_diag("  %s", msg);
		ps_session__free(s);
		return;
	}
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
	ps_sampler__flush(s);
	syscall(SYS_getppid); /* flushes the pending LOST record */
	ps_session__stop(s, h);
	ps_sampler__flush(s);
	ps_sampler__stats(s, h, &st);
	ps_sampler__stats(s, 0, &tot);
	tap_ok(st.lost > 0, "a 1-page ring drained late loses samples (%llu lost)",
	       (unsigned long long)st.lost);
	tap_is_u64(w.samples + st.lost, n + 1, "delivered + lost == made");
	tap_ok(w.lost_recs > 0 && tot.lost == st.lost,
	       "LOST records reach ops->record, totals agree");
	ps_session__free(s);
}

/* A consumer that sleeps in its callback on a tiny ring loses samples, and
 * what it sees is still consistent. */
static void test_slow_consumer(void)
{
	char *argv[] = {(char *)workload, "getppid", "20000", NULL};
	struct ps_session *s = command(argv);
	struct ps_sample_stats st = {0};
	struct seen w;
	ps_handle h;

	if (!tap_ok(s != NULL, "slow consumer: command session"))
		return;
	h = alloc_first(s, GETPPID "/period=1/");
	seen_init(&w, ps_session__target_pid(s), h);
	w.nap = 20;
	set_ops(s, &w);
	ps_session__set_ring_pages(s, 1);
	if (!tap_ok(ps_session__open(s, NULL, 0) == 0, "slow consumer: opens")) {
		ps_session__free(s);
		return;
	}
	run_and_drain(s, true);
	ps_sampler__stats(s, h, &st);
	tap_ok(st.lost > 0 && w.samples > 0 && w.samples + st.lost <= 20000,
	       "slow consumer loses samples: %llu delivered + %llu lost of 20000",
	       (unsigned long long)w.samples, (unsigned long long)st.lost);
	tap_is_u64(w.wrong_pid + w.bad_handle, 0, "slow consumer: samples stay well-formed");
	ps_session__free(s);
}

/* Other tracepoints fire with the kernel's own registers. */
static void test_kernel_misc(void)
{
	char *argv[] = {(char *)workload, "--fork", "sleep", "1",
			NULL}; /* the parent waits for the child */
	struct ps_session *s = command(argv);
	const char *spec = "sched:sched_process_exit/period=1/";
	struct seen w;
	ps_handle h;

	if (!tap_ok(s != NULL, "exit: command session"))
		return;
	h = alloc_first(s, spec);
	seen_init(&w, 0, h);
	set_ops(s, &w);
	if (!tap_ok(ps_session__open(s, NULL, 0) == 0, "%s opens", spec)) {
		ps_session__free(s);
		return;
	}
	run_and_drain(s, true);
	tap_is_u64(w.samples, 2, "%s: parent and forked child exit once each", spec);
	tap_is_u64(w.user_ips, 0, "%s: samples are kernel-mode", spec);
	tap_ok(w.fork_ >= 1, "FORK of the child arrives (%llu FORK)", (unsigned long long)w.fork_);
	ps_session__free(s);
}

static void test_group_read(void)
{
	char *argv[] = {(char *)workload, "getppid", "100000", NULL};
	struct ps_session *s = command(argv);
	const char *spec = "{" GETPPID "/period=1000/," GETPPID "}:S";
	struct seen w;
	ps_handle h;
	char msg[512] = "";

	if (!tap_ok(s != NULL, "group: command session"))
		return;
	h = alloc_first(s, spec);
	seen_init(&w, ps_session__target_pid(s), h);
	set_ops(s, &w);
	if (!tap_ok(ps_session__open(s, msg, sizeof(msg)) == 0, "%s opens", spec)) {
		tap_diag("  %s", msg);
		ps_session__free(s);
		return;
	}
	run_and_drain(s, true);
	/* one fd per CPU, each with its own period: a task that moved between
	 * CPUs leaves up to period-1 hits short of an overflow on each */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	tap_ok(w.samples <= 100 && w.samples + (uint64_t)(ncpu > 1 ? ncpu - 1 : 0) >= 100,
	       "%s: 100 samples, less at most one per extra CPU (%llu)", spec,
	       (unsigned long long)w.samples);
	tap_ok(w.values == w.samples && w.values_bad == 0,
	       "%s: every sample has 2 member values via ps_sample__value", spec);
	/* the member counts what the leader samples; its value in the last sample
	 * is 100000 minus what this CPU's fd had not seen (per-CPU fds) */
	tap_ok(w.member_sum > 0 && w.member_sum <= 100000, "%s: member value %llu", spec,
	       (unsigned long long)w.member_sum);
	ps_session__free(s);
}

static void test_user_ips(void)
{
	char *argv[] = {(char *)workload, "spin", "300", NULL};
	struct ps_session *s = command(argv);
	const char *spec = "cpu-clock/freq=1000/";
	struct seen w;
	struct ps_value clock = {0};
	ps_handle h, tc;
	double ms;

	if (!tap_ok(s != NULL, "spin: command session"))
		return;
	h = alloc_first(s, spec);
	tc = alloc_first(s, "task-clock");
	seen_init(&w, ps_session__target_pid(s), h);
	set_ops(s, &w);
	if (!tap_ok(ps_session__open(s, NULL, 0) == 0, "%s opens", spec)) {
		ps_session__free(s);
		return;
	}
	run_and_drain(s, true);
	/* spin runs 300 ms of wall time: on a busy machine it gets less CPU,
	 * and cpu-clock samples CPU time, which task-clock counts */
	ps_session__read(s, tc, &clock);
	ms = clock.value / 1e6;
	tap_ok(ms > 50 && w.samples >= ms * 0.6 && w.samples <= ms * 1.2 + 10,
	       "%s on spin 300: %llu samples for %.0f ms of task-clock", spec,
	       (unsigned long long)w.samples, ms);
	tap_ok(w.user_ips >= w.samples * 9 / 10, "%s: %llu of them in user space", spec,
	       (unsigned long long)w.user_ips);
	tap_ok(w.comm_workload, "COMM 'workload' arrives for the command (%llu COMM)",
	       (unsigned long long)w.comm);
	tap_ok(w.mmap2_workload, "MMAP2 of the workload binary arrives (%llu MMAP2)",
	       (unsigned long long)w.mmap2);
	tap_ok(w.exit_pid, "EXIT of the command arrives (%llu EXIT)", (unsigned long long)w.exit_);
	ps_session__free(s);
}

/* -p: per thread and CPU; threads made after attaching are inherited clones
 * whose samples still name the counter (IDENTIFIER is the primary id). */
static void test_pid_threads(void)
{
	int out[2];
	pid_t child;
	char line[64] = "";
	struct ps_session *s;
	struct seen w;
	ps_handle h;

	if (pipe(out) < 0)
		return;
	child = fork();
	if (child == 0) {
		dup2(out[1], 1);
		execl(workload, workload, "--wait-usr1", "threads", "4", "5000", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	if (read(out[0], line, sizeof(line) - 1) <= 0 || strncmp(line, "ready", 5) != 0) {
		tap_ok(0, "-p: workload got ready");
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		close(out[0]);
		return;
	}
	close(out[0]);
	struct ps_target_opts o = {.sz = sizeof(o), .kind = PS_TARGET_PID, .pid = child};

	s = ps_session__new(&o);
	h = s ? alloc_first(s, GETPPID "/period=1/") : 0;
	seen_init(&w, 0, h);
	if (s) {
		set_ops(s, &w);
		ps_session__set_ring_pages(s, 1024); /* drained only at the end */
	}
	if (!tap_ok(s && ps_session__open(s, NULL, 0) == 0, "-p: a sampling counter opens")) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		ps_session__free(s);
		return;
	}
	kill(child, SIGUSR1);
	waitpid(child, NULL, 0);
	ps_sampler__flush(s);
	tap_is_u64(w.samples, 20000, "-p: 4 new threads x 5000 calls, all samples delivered");
	tap_is_u64(w.bad_handle, 0, "-p: clones' samples name the counter");
	ps_session__free(s);
}

/* drain() honours its budget and the callback's stop, and leaves the rest. */
static void test_budget(void)
{
	struct ps_target_opts o = {.sz = sizeof(o), .kind = PS_TARGET_SELF};
	struct ps_session *s = ps_session__new(&o);
	struct ps_sample_ops stop = {.sz = sizeof(stop), .sample = stop_at_3};
	struct seen w;
	const int *fds;
	int nrings, got = 0, first = -1, k;
	ps_handle h;

	if (!tap_ok(s != NULL, "budget: self session"))
		return;
	h = alloc_first(s, GETPPID "/period=1,cpu=0/");
	seen_init(&w, 0, h);
	set_ops(s, &w);
	if (!tap_ok(ps_session__open(s, NULL, 0) == 0, "a cpu=0 sampling counter opens")) {
		ps_session__free(s);
		return;
	}
	nrings = ps_sampler__poll_fds(s, &fds);
	tap_is_u64(nrings, 1, "cpu=0 maps one ring");
	/* run on CPU 0 so every sample lands in that ring */
	cpu_set_t one, old;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_getaffinity(0, sizeof(old), &old);
	sched_setaffinity(0, sizeof(one), &one);
	for (int i = 0; i < 100; i++)
		syscall(SYS_getppid);
	sched_setaffinity(0, sizeof(old), &old);
	ps_session__stop(s, h);
	first = ps_sampler__dispatch(s, fds[0], 10);
	while ((k = ps_sampler__dispatch(s, fds[0], 10)) > 0)
		got += k;
	tap_ok(first == 10 && w.samples == 100 && got == 90,
	       "a budget of 10 consumes 10 records at a time (%d, then %d, %llu samples)", first,
	       got, (unsigned long long)w.samples);
	tap_ok(ps_sampler__dispatch(s, -1, 0) == -EBADF,
	       "dispatching an fd that is not ours is -EBADF");
	ps_session__start(s, h);
	sched_setaffinity(0, sizeof(one), &one); /* the counter is on CPU 0 */
	for (int i = 0; i < 10; i++)
		syscall(SYS_getppid);
	sched_setaffinity(0, sizeof(old), &old);
	ps_session__stop(s, h);
	ps_session__set_sample_ops(s, &stop);
	stop_seen = 0;
	k = 0;
	for (int i = 0; i < nrings && k >= 0; i++)
		k = ps_sampler__dispatch(s, fds[i], 0);
	tap_ok(k == -ECANCELED && stop_seen == 3,
	       "a callback's -ECANCELED stops the drain after "
	       "its record (%d, %d seen)",
	       k, stop_seen);
	ps_session__free(s);
}

/* Freeing one sampling counter leaves the ring (on its carrier) and the
 * other counter's samples alone; many open/free cycles leak no fd. */
static void test_free_mid_session(void)
{
	struct ps_target_opts o = {.sz = sizeof(o), .kind = PS_TARGET_SELF};
	struct ps_session *s = ps_session__new(&o);
	struct ps_sample_stats st = {0};
	struct seen w;
	ps_handle a, b;
	int before, rings;
	const int *fds;

	if (!tap_ok(s != NULL, "self session"))
		return;
	a = alloc_first(s, GETPPID "/period=1/");
	b = alloc_first(s, GETPPID "/period=10/");
	seen_init(&w, 0, 0);
	set_ops(s, &w);
	if (!tap_ok(ps_session__open(s, NULL, 0) == 0, "two sampling counters open")) {
		ps_session__free(s);
		return;
	}
	rings = ps_sampler__poll_fds(s, &fds);
	tap_ok(rings >= 1, "%d rings, one per CPU", rings);
	/* on one CPU: period=10 counts on each per-CPU fd apart, so a thread
	 * that moved would leave a remainder on each */
	cpu_set_t one, old;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_getaffinity(0, sizeof(old), &old);
	sched_setaffinity(0, sizeof(one), &one);
	for (int i = 0; i < 1000; i++)
		syscall(SYS_getppid);
	ps_sampler__flush(s);
	tap_ok(ps_session__free_counter(s, a) == 0, "free the period=1 counter mid-session");
	for (int i = 0; i < 1000; i++)
		syscall(SYS_getppid);
	sched_setaffinity(0, sizeof(old), &old);
	ps_sampler__flush(s);
	ps_sampler__stats(s, b, &st);
	tap_is_u64(st.samples, 200, "the other counter still samples (2000 calls / 10)");
	tap_is_u64(w.samples, 1200, "1000 + 200 samples in all");
	before = count_fds();
	for (int i = 0; i < 200; i++) {
		ps_handle c = alloc_first(s, "cpu-clock/freq=100/");

		ps_session__open_counter(s, c, NULL, 0);
		ps_session__free_counter(s, c);
	}
	tap_is_u64(count_fds(), before, "200 sampling counters opened and freed leak no fd");
	tap_is_u64(ps_sampler__poll_fds(s, NULL), rings, "the ring set did not change");
	ps_session__free(s);
}

int main(void)
{
	int fds_before;

	workload = getenv("WORKLOAD") ? getenv("WORKLOAD") : "build/tests/workload";
	if (geteuid() != 0) {
		tap_skip("sampling tracepoints and kernel IPs need root",
			 "exact sample counts, loss, group reads, tracking records");
		return tap_done();
	}
	if (access(workload, X_OK) != 0) {
		tap_ok(0, "workload %s missing (make build/tests/workload)", workload);
		return tap_done();
	}
	fds_before = count_fds();
	/* a ring that holds the whole flood (about 80 bytes a sample): a
	 * syscall here can take 0.1 us, faster than any consumer */
	test_exact(GETPPID "/period=1/", "200000", 200000, 8192);
	/* the default ring (1 MiB) holds a burst of 10000 whatever the speed */
	test_exact(GETPPID "/period=1/", "10000", 10000, 0);
	test_exact(GETPPID "/period=1000/", "200000", 200, 0);
	test_lost();
	test_slow_consumer();
	test_kernel_misc();
	test_group_read();
	test_user_ips();
	test_pid_threads();
	test_budget();
	test_free_mid_session();
	tap_is_u64(count_fds(), fds_before, "no fd left open by any session");
	return tap_done();
}
