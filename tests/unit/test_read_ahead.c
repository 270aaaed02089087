/*
 * test_read_ahead.c: ps_session__read_ahead against the real kernel. The
 * fds of a system-wide counter are read from their own CPUs (the thread
 * visits each, which a cpu-migrations counter on this thread sees), the
 * reads that follow take those values once (calls made between the
 * read-ahead and the read are not in the read, and are in the next),
 * for single counters and group reads alike, and the thread's CPU mask is
 * as it was. System-wide tracepoints need root: without it the checks
 * skip, saying so. The calls counted are of a syscall nothing else makes
 * (sched_get_priority_max): a system-wide count of getppid took the
 * calls of other suites running beside this one.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perfscript.h"
#include "session_util.h"
#include "tap.h"

#define N	 1000
#define CALLS_TP "syscalls:sys_enter_sched_get_priority_max"

static struct ps_session *session(enum ps_target_kind kind, const char *cpus)
{
	struct ps_target_opts o = {.sz = sizeof(o), .kind = kind, .cpus = cpus};

	return ps_session__new(&o);
}

static void do_calls(int n)
{
	for (int i = 0; i < n; i++)
		syscall(SYS_sched_get_priority_max, SCHED_FIFO);
}

/* The N calls after a read-ahead are in the second read, not the first. */
static void test_taken_once(struct ps_session *s, ps_handle h, ps_handle g)
{
	struct ps_value a, b, ga[2], gb[2];
	bool ok;

	tap_ok(ps_session__read_ahead(s, (ps_handle[]){h, g}, 2) == 0, "read-ahead of two handles");
	do_calls(N);
	ok = ps_session__read(s, h, &a) == 0 && ps_session__read(s, h, &b) == 0;
	tap_ok(ok, "two reads");
	tap_ok(b.value >= a.value + N,
	       "the first read is the read-ahead's, the second is live (%llu then %llu)",
	       (unsigned long long)a.value, (unsigned long long)b.value);
	ok = ps_session__read_group(s, g, ga, 2) == 2 && ps_session__read_group(s, g, gb, 2) == 2;
	tap_ok(ok, "two group reads");
	tap_ok(gb[0].value >= ga[0].value + N,
	       "a group read takes the read-ahead too (%llu then %llu)",
	       (unsigned long long)ga[0].value, (unsigned long long)gb[0].value);
	/* a later read-ahead makes an untaken one stale */
	tap_ok(ps_session__read_ahead(s, &h, 1) == 0, "read-ahead");
	do_calls(N);
	tap_ok(ps_session__read_ahead(s, &h, 1) == 0, "another, nothing taken between");
	do_calls(N);
	/* (the reads before the check: C leaves the order of arguments open) */
	ok = ps_session__read(s, h, &a) == 0 && ps_session__read(s, h, &b) == 0;
	tap_ok(ok && b.value >= a.value + N && b.value < a.value + 2 * N,
	       "only the last read-ahead is taken (%llu then %llu)", (unsigned long long)a.value,
	       (unsigned long long)b.value);
}

/* The thread visits the other CPU and comes back to its mask. */
static void test_moves(struct ps_session *s, ps_handle h)
{
	struct ps_session *self = session(PS_TARGET_SELF, NULL);
	ps_handle m = alloc1(self, "cpu-migrations");
	cpu_set_t was, now, zero;
	uint64_t before, after;

	CPU_ZERO(&zero);
	CPU_SET(0, &zero);
	sched_getaffinity(0, sizeof(was), &was);
	/* pinned to CPU 0, so that no migration but the read-ahead's counts */
	if (!tap_ok(sched_setaffinity(0, sizeof(zero), &zero) == 0 && self && m &&
			ps_session__open(self, NULL, 0) == 0 && ps_session__start(self, m) == 0,
		    "a cpu-migrations counter on this thread, pinned to CPU 0"))
		goto out;
	before = value(self, m);
	for (int i = 0; i < 10; i++)
		ps_session__read(s, h, &(struct ps_value){0});
	after = value(self, m);
	tap_is_u64(after - before, 0, "reading from afar does not move the thread");
	ps_session__read_ahead(s, &h, 1);
	after = value(self, m);
	tap_ok(after - before >= 2, "a read-ahead visits CPU 1 and comes back (%llu migrations)",
	       (unsigned long long)(after - before));
	sched_getaffinity(0, sizeof(now), &now);
	tap_ok(CPU_EQUAL(&now, &zero), "the thread's CPU mask is as it was");
out:
	sched_setaffinity(0, sizeof(was), &was);
	ps_session__free(self);
}

int main(void)
{
	struct ps_session *s;
	ps_handle h, g;
	char msg[512] = "";

	tap_ok(ps_session__read_ahead(NULL, NULL, 0) == -EINVAL, "NULL session: EINVAL");
	if (geteuid() != 0) {
		tap_skip("system-wide tracepoints need root", "read-ahead values and CPU moves");
		return tap_done();
	}
	s = session(PS_TARGET_CPUS, NULL);
	h = alloc1(s, CALLS_TP);
	ps_handle pair[2] = {0, 0};
	g = ps_session__allocate(s, "{" CALLS_TP ",cpu-clock}", pair, 2, NULL) == 2 ? pair[0] : 0;
	if (!tap_ok(h && g && ps_session__open(s, msg, sizeof(msg)) == 0,
		    "-a: a tracepoint and a group open %s", msg))
		return tap_done();
	tap_ok(ps_session__read_ahead(s, (ps_handle[]){0xdead}, 1) == 0,
	       "a stale handle is left to its read");
	test_taken_once(s, h, g);
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		test_moves(s, h);
	else
		tap_skip("one CPU: nothing to move to", "read-ahead CPU moves");
	ps_session__free(s);
	return tap_done();
}
