/*
 * test_loop.c: the event loop (runtime/loop/loop.c) and the sampler's two
 * backends seen through the public C API, against the real kernel. The
 * loop wakes for an fd, a timer and a signal; stops with the status given
 * or with a callback's error; forgets what was deleted; and leaves no fd
 * behind after a thousand loops. The sampler delivers exactly the 10000
 * getppid() calls this test makes itself, on the perf ring and on the BPF
 * ring buffer, and each counter takes the backend the documented rule
 * gives it (term, then counter options, then the session's default; AUTO
 * means BPF only for in-kernel work). Sampling needs root (and BTF for
 * BPF): those parts skip, saying why.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "loop/loop.h"
#include "session_util.h"
#include "tap.h"

#define GETPPID "syscalls:sys_enter_getppid"
#define N_CALLS 10000

struct ticks {
	int fd_calls, timer_calls, signals, last_signo;
	uint64_t expirations;
};

static int on_readable(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	struct ticks *t = ctx;
	char c;

	t->fd_calls++;
	if ((events & EPOLLIN) && read(fd, &c, 1) == 1)
		ps_loop__stop(loop, 0);
	return 0;
}

static int on_tick(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	struct ticks *t = ctx;

	t->timer_calls++;
	t->expirations += expirations;
	if (t->expirations >= 5)
		ps_loop__stop(loop, 7);
	return 0;
}

static int raise_usr1(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	(void)loop, (void)expirations, (void)ctx;
	raise(SIGUSR1);
	return 0;
}

static int on_signal(struct ps_loop *loop, uint64_t signo, void *ctx)
{
	struct ticks *t = ctx;

	t->signals++;
	t->last_signo = (int)signo;
	ps_loop__stop(loop, 0);
	return 0;
}

static int fail_at_once(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	(void)loop, (void)expirations, (void)ctx;
	return -42;
}

static int never(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	(void)loop, (void)expirations;
	(*(int *)ctx)++;
	return 0;
}

static void test_loop_sources(void)
{
	struct ps_loop *loop = ps_loop__new();
	struct ticks t = {0};
	int p[2], id, fired = 0;

	if (!tap_ok(loop != NULL, "a loop is made"))
		return;
	if (pipe(p) < 0) {
		tap_ok(0, "pipe: %s", strerror(errno));
		ps_loop__free(loop);
		return;
	}
	tap_is_u64(ps_loop__add_fd(loop, p[0], EPOLLIN, on_readable, &t), 0, "add_fd");
	tap_ok(write(p[1], "x", 1) == 1, "a byte is written");
	tap_is_u64(ps_loop__run(loop), 0, "run returns the status stop() gave");
	tap_is_u64(t.fd_calls, 1, "the fd callback ran once, for the byte");
	tap_is_u64(ps_loop__del_fd(loop, p[0]), 0, "del_fd");

	id = ps_loop__add_timer(loop, 1000000, on_tick, &t);
	tap_ok(id >= 0, "a 1 ms timer is added (id %d)", id);
	tap_is_u64(ps_loop__run(loop), 7, "run returns 7, the status the timer's stop() gave");
	tap_ok(t.expirations >= 5 && t.timer_calls >= 1,
	       "the timer fired until it stopped the loop (%llu expirations in %d calls)",
	       (unsigned long long)t.expirations, t.timer_calls);
	tap_is_u64(ps_loop__del_timer(loop, id), 0, "del_timer");

	/* a deleted fd and timer stay quiet: only the signal wakes the loop */
	tap_ok(write(p[1], "y", 1) == 1, "another byte, for a deleted fd");
	tap_is_u64(ps_loop__add_signals(loop, (int[]){SIGUSR1}, 1, on_signal, &t), 0,
		   "add_signals(SIGUSR1)");
	id = ps_loop__add_timer(loop, 2000000, raise_usr1, NULL);
	tap_is_u64(ps_loop__run(loop), 0, "a signal stops the loop through its callback");
	tap_ok(t.signals == 1 && t.last_signo == SIGUSR1, "the callback got SIGUSR1 (%d, %d calls)",
	       t.last_signo, t.signals);
	tap_is_u64(t.fd_calls, 1, "the deleted fd's callback did not run again");
	ps_loop__del_timer(loop, id);

	id = ps_loop__add_timer(loop, 1000000, fail_at_once, NULL);
	tap_is_u64(ps_loop__run(loop), (uint64_t)-42, "a callback's error ends run with it");
	ps_loop__del_timer(loop, id);
	id = ps_loop__add_timer(loop, 1000000, never, &fired);
	ps_loop__del_timer(loop, id);
	ps_loop__add_timer(loop, 5000000, fail_at_once, NULL);
	ps_loop__run(loop);
	tap_is_u64(fired, 0, "a timer deleted before it fired never runs");
	ps_loop__free(loop);
	close(p[0]);
	close(p[1]);
}

static void test_loop_fds(void)
{
	int before = count_fds(), p[2];
	bool made = true;

	if (pipe(p) < 0) {
		tap_ok(0, "pipe: %s", strerror(errno));
		return;
	}
	for (int i = 0; i < 1000 && made; i++) {
		struct ps_loop *loop = ps_loop__new();
		struct ticks t = {0};

		made = loop && ps_loop__add_fd(loop, p[0], EPOLLIN, on_readable, &t) == 0 &&
		       ps_loop__add_timer(loop, 1000000, on_tick, &t) >= 0 &&
		       ps_loop__add_signals(loop, (int[]){SIGUSR2}, 1, on_signal, &t) == 0;
		ps_loop__free(loop);
	}
	close(p[0]);
	close(p[1]);
	tap_ok(made, "1000 loops with an fd, a timer and a signal each are made");
	tap_is_u64(count_fds(), before, "and freed, leaving no fd behind");
}

static int count_mine(const struct ps_sample *s, void *ctx)
{
	uint64_t *n = ctx;

	n[s->pid == (uint32_t)getpid() ? 0 : 1]++;
	return 0;
}

/* N_CALLS getppid() of our own through a period=1 counter on backend b:
 * exactly N_CALLS samples, all ours, none lost. */
static void test_exact(enum ps_backend b, const char *what)
{
	struct ps_session *s = ps_session__new(
	    &(struct ps_target_opts){.sz = sizeof(struct ps_target_opts), .kind = PS_TARGET_SELF});
	uint64_t n[2] = {0, 0};
	struct ps_sample_stats st = {0};
	char msg[512] = "";
	ps_handle h;
	int err;

	h = alloc1(s, GETPPID "/period=1/");
	ps_session__set_backend(s, b);
	ps_session__set_sample_ops(s, &(struct ps_sample_ops){
					  .sz = sizeof(struct ps_sample_ops),
					  .sample = count_mine,
					  .ctx = n,
				      });
	err = h ? ps_session__open(s, msg, sizeof(msg)) : -EINVAL;
	if (!tap_ok(err == 0, "%s: a period=1 counter on %s opens (%s)", what, GETPPID,
		    err ? msg : "ok")) {
		ps_session__free(s);
		return;
	}
	tap_is_u64(ps_session__backend(s, h), b, "%s: it is served by that backend", what);
	for (int i = 0; i < N_CALLS; i++)
		syscall(SYS_getppid);
	ps_sampler__flush(s);
	ps_sampler__stats(s, h, &st);
	tap_is_u64(n[0], N_CALLS, "%s: exactly %d samples of our %d getppid() calls", what, N_CALLS,
		   N_CALLS);
	tap_is_u64(n[1], 0, "%s: none from another process", what);
	tap_is_u64(st.lost, 0, "%s: none lost", what);
	tap_is_u64(st.samples, N_CALLS, "%s: the stats say the same", what);
	ps_session__free(s);
}

/* Which backend serves a counter: its term, else its options, else the
 * session's default; AUTO takes BPF only for in-kernel work. */
static void test_choice(bool bpf_ok)
{
	static const struct {
		const char *spec;
		enum ps_backend session;
		bool filter; /* in-kernel work asked through ps_session__set_bpf */
		enum ps_backend want;
		const char *why;
	} cases[] = {
	    {GETPPID "/period=1000/", PS_BACKEND_AUTO, false, PS_BACKEND_PERF,
	     "AUTO with no in-kernel work: the perf ring"},
	    {GETPPID "/period=1000/", PS_BACKEND_AUTO, true, PS_BACKEND_BPF,
	     "AUTO with a filter to run in the kernel: BPF"},
	    {GETPPID "/period=1000/", PS_BACKEND_BPF, false, PS_BACKEND_BPF,
	     "the session's default BPF"},
	    {GETPPID "/period=1000,bpf/", PS_BACKEND_PERF, false, PS_BACKEND_BPF,
	     "the bpf term over the session's default perf"},
	    {GETPPID "/period=1000,nobpf/", PS_BACKEND_BPF, true, PS_BACKEND_PERF,
	     "the nobpf term over the default and a filter"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ps_session *s = ps_session__new(&(struct ps_target_opts){
		    .sz = sizeof(struct ps_target_opts), .kind = PS_TARGET_SELF});
		ps_handle h = alloc1(s, cases[i].spec);
		char msg[512] = "";
		int err;

		if (cases[i].want == PS_BACKEND_BPF && !bpf_ok) {
			tap_skip("BPF cannot load here (root and BTF needed)", "%s", cases[i].why);
			ps_session__free(s);
			continue;
		}
		ps_session__set_backend(s, cases[i].session);
		if (cases[i].filter)
			ps_session__set_bpf(s, h,
					    &(struct ps_bpf_opts){.sz = sizeof(struct ps_bpf_opts),
								  .tid = gettid()},
					    msg, sizeof(msg));
		err = h ? ps_session__open(s, msg, sizeof(msg)) : -EINVAL;
		if (err)
			tap_diag("open: %s", msg);
		tap_is_u64(err ? (uint64_t)-1 : ps_session__backend(s, h), cases[i].want, "%s",
			   cases[i].why);
		ps_session__free(s);
	}
}

static int sum_counts(const struct ps_agg_entry *e, void *ctx)
{
	*(uint64_t *)ctx += e->count;
	return 0;
}

/* ps_session__merge_bpf: an aggregate's options, then a sample probe's
 * (FORWARD alone), give a counter that both aggregates and forwards, as
 * the binding's merges do; the same options again load nothing (a new
 * program would start an empty map). */
static void test_merge(void)
{
	struct ps_session *s = ps_session__new(
	    &(struct ps_target_opts){.sz = sizeof(struct ps_target_opts), .kind = PS_TARGET_SELF});
	uint64_t n[2] = {0, 0}, counted = 0, again = 0;
	ps_handle h = alloc1(s, GETPPID "/period=1/");
	struct ps_bpf_opts agg = {.sz = sizeof(agg), .mode = PS_BPF_AGGREGATE, .keys = PS_AGG_PID},
			   fwd = {.sz = sizeof(fwd), .mode = PS_BPF_FORWARD};
	char msg[512] = "";
	int err;

	ps_session__set_sample_ops(s, &(struct ps_sample_ops){
					  .sz = sizeof(struct ps_sample_ops),
					  .sample = count_mine,
					  .ctx = n,
				      });
	err = ps_session__merge_bpf(s, h, &agg, msg, sizeof(msg));
	if (!err)
		err = ps_session__merge_bpf(s, h, &fwd, msg, sizeof(msg));
	if (!err)
		err = ps_session__open(s, msg, sizeof(msg));
	if (!tap_ok(err == 0, "merge: aggregate, then forward, opens (%s)", err ? msg : "ok")) {
		ps_session__free(s);
		return;
	}
	for (int i = 0; i < N_CALLS; i++)
		syscall(SYS_getppid);
	ps_sampler__flush(s);
	ps_aggregate__read(s, h, sum_counts, &counted);
	tap_is_u64(counted, N_CALLS, "merge: the aggregate counted our %d calls", N_CALLS);
	tap_is_u64(n[0], N_CALLS, "merge: ... and forwarded them, the modes added up");
	err = ps_session__merge_bpf(s, h, &agg, msg, sizeof(msg));
	ps_aggregate__read(s, h, sum_counts, &again);
	tap_ok(err == 0 && again == N_CALLS,
	       "merge: the same options again load nothing: the map keeps its %llu (%d)",
	       (unsigned long long)again, err);
	ps_session__free(s);
}

int main(void)
{
	bool bpf_ok = geteuid() == 0 && access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	int fds_before;

	test_loop_sources();
	test_loop_fds();
	if (geteuid() != 0) {
		tap_skip("sampling a tracepoint needs root", "exact samples on each backend");
		tap_skip("sampling a tracepoint needs root", "backend choice");
		return tap_done();
	}
	fds_before = count_fds();
	test_exact(PS_BACKEND_PERF, "perf ring");
	if (bpf_ok)
		test_exact(PS_BACKEND_BPF, "BPF ring buffer");
	else
		tap_skip("no BTF (/sys/kernel/btf/vmlinux): BPF programs cannot load",
			 "exact samples on the BPF backend");
	test_choice(bpf_ok);
	if (bpf_ok)
		test_merge();
	else
		tap_skip("no BTF (/sys/kernel/btf/vmlinux): BPF programs cannot load",
			 "merged BPF options");
	tap_is_u64(count_fds(), fds_before, "no fd left open by any session");
	return tap_done();
}
