/*
 * test_counter.c: sessions, counters and targets against the real kernel, no
 * mocks. Exact counts come from the syscalls:sys_enter_getppid tracepoint and
 * the workload helper ($WORKLOAD, default build/tests/workload), run as a
 * held command, attached with -p, or counted system-wide; groups, stop/start,
 * reset, handle validation, open-failure explanations and fd hygiene (1000
 * counters, nothing left open) are checked too. Tracepoints need root: those
 * checks skip with the reason when not root. Hardware events are expected to
 * fail with the not-supported explanation unless this machine has a PMU.
 */
#include <errno.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perfscript.h"
#include "session_util.h"
#include "tap.h"

#define N	1000
#define GETPPID "syscalls:sys_enter_getppid"

static const char *workload;
static bool root, have_pidfd;
/* At perf_event_paranoid 2 an unprivileged user may count user space only. */
static const char *tclock = "task-clock", *cycles = "cycles";

static void do_getppid(int n)
{
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
}

/* 5 ms of this thread's CPU time (not wall time: a busy machine would give
 * less, and task-clock counts CPU time). */
static void burn(void)
{
	struct timespec a, b;
	volatile unsigned long x = 0;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 10000; i++)
			x += i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 5000000L);
}

static struct ps_session *new_session(enum ps_target_kind kind, pid_t pid, char *const *argv,
				      const char *cpus)
{
	struct ps_target_opts o = {
	    .sz = sizeof(o), .kind = kind, .pid = pid, .argv = argv, .cpus = cpus};

	return ps_session__new(&o);
}

/* Release the command and wait for it to exit (pidfd, else polling reap). */
static int run_command(struct ps_session *s)
{
	int st = -1, err = ps_session__release(s);

	if (err)
		return err;
	for (int i = 0; i < 20000; i++) {
		struct pollfd p = {.fd = ps_session__target_pidfd(s), .events = POLLIN};

		if (p.fd >= 0)
			poll(&p, 1, 10);
		else
			usleep(1000);
		if (ps_session__reap(s, &st) == 0)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	}
	return -ETIMEDOUT;
}

static void test_self(void)
{
	struct ps_session *s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	ps_handle h = alloc1(s, tclock);
	struct ps_value v1, v2;
	char msg[512];

	tap_ok(s && h, "self session and task-clock counter");
	tap_ok(ps_session__target_pid(s) == 0 && ps_session__target_pidfd(s) == -1,
	       "self target: pid 0, no pidfd");
	tap_ok(ps_session__read(s, h, &v1) == 0 && v1.value == 0 && v1.enabled == 0,
	       "a never-opened counter reads zeros");
	tap_ok(ps_session__open(s, msg, sizeof(msg)) == 0, "open task-clock (%s)", msg);
	tap_ok(ps_session__is_open(s, h) && ps_session__is_running(s, h), "open and running");
	burn();
	ps_session__read(s, h, &v1);
	burn();
	ps_session__read(s, h, &v2);
	tap_ok(v1.value > 1000000 && v2.value > v1.value, "task-clock increases: %llu then %llu",
	       (unsigned long long)v1.value, (unsigned long long)v2.value);
	tap_ok(v2.running <= v2.enabled, "running <= enabled");
	tap_ok(v2.running != v2.enabled || v2.value == v2.raw,
	       "scaled == raw when running == enabled");
	tap_is_str(ps_session__spec(s, h), tclock, "spec of the handle");
	tap_ok(ps_session__count(s) == 1, "one live counter");
	ps_session__free(s);
}

static void test_getppid_self(void)
{
	struct ps_session *s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	ps_handle h = alloc1(s, GETPPID);
	uint64_t a, b;

	ps_session__open(s, NULL, 0);
	a = value(s, h);
	do_getppid(N);
	b = value(s, h);
	tap_is_u64(b - a, N, "self: %s counts exactly %d getppid()", GETPPID, N);

	tap_ok(ps_session__stop(s, h) == 0 && !ps_session__is_running(s, h), "stop");
	a = value(s, h);
	do_getppid(N);
	tap_is_u64(value(s, h), a, "a stopped counter does not move");
	tap_ok(ps_session__start(s, h) == 0 && ps_session__is_running(s, h), "start again");
	do_getppid(N);
	tap_is_u64(value(s, h), a + N, "counts again after start");
	tap_ok(ps_session__reset(s, h) == 0, "reset");
	tap_is_u64(value(s, h), 0, "reset zeroes the count");
	do_getppid(7);
	tap_is_u64(value(s, h), 7, "and counts from zero");
	ps_session__free(s);

	/* stopped before open: open leaves it off; start opens nothing twice */
	s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	h = alloc1(s, GETPPID);
	ps_session__stop(s, h);
	ps_session__open(s, NULL, 0);
	do_getppid(N);
	tap_ok(ps_session__is_open(s, h) && value(s, h) == 0,
	       "stopped before open: opened, not counting");
	ps_session__start(s, h);
	do_getppid(N);
	tap_is_u64(value(s, h), N, "then start counts");
	ps_session__free(s);

	s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	h = alloc1(s, GETPPID);
	tap_ok(ps_session__start(s, h) == 0 && ps_session__is_open(s, h), "start opens a counter");
	do_getppid(N);
	tap_is_u64(value(s, h), N, "and it counts");
	ps_session__free(s);
}

static void test_command(const char *what, char *const *argv, uint64_t want)
{
	struct ps_session *s = new_session(PS_TARGET_COMMAND, 0, argv, NULL);
	ps_handle h = alloc1(s, GETPPID);
	char msg[512] = "";
	int open = ps_session__open(s, msg, sizeof(msg));
	int rc = run_command(s);

	tap_ok(s && h && open == 0 && rc == 0, "command %s ran (open %d %s, exit %d)", what, open,
	       msg, rc);
	tap_is_u64(value(s, h), want, "command %s: counted from exec", what);
	ps_session__free(s);
}

static void test_commands(void)
{
	char n[16];
	struct ps_session *s;
	int st = 0;

	snprintf(n, sizeof(n), "%d", N);
	test_command("getppid N", (char *const[]){(char *)workload, "getppid", n, NULL}, N);
	test_command("--fork getppid N (inherit)",
		     (char *const[]){(char *)workload, "--fork", "getppid", n, NULL}, 2 * N);
	test_command("threads 4 N", (char *const[]){(char *)workload, "threads", "4", n, NULL},
		     4 * N);

	/* inherit + PERF_FORMAT_GROUP: the group read sums the forked child too */
	ps_handle g[2];
	struct ps_value v[2];

	s = new_session(PS_TARGET_COMMAND, 0,
			(char *const[]){(char *)workload, "--fork", "getppid", n, NULL}, NULL);
	tap_ok(ps_session__allocate(s, "{" GETPPID ",task-clock}", g, 2, NULL) == 2 &&
		   ps_session__open(s, NULL, 0) == 0 && run_command(s) == 0 &&
		   ps_session__read_group(s, g[0], v, 2) == 2,
	       "command with an inherited group");
	tap_ok(v[0].raw == 2 * N && v[1].raw > 0 && v[0].enabled == v[1].enabled,
	       "inherited group read sums parent and child: %llu getppid, %llu ns",
	       (unsigned long long)v[0].raw, (unsigned long long)v[1].raw);
	ps_session__free(s);

	s = new_session(PS_TARGET_COMMAND, 0, (char *const[]){"./nosuchcmd", NULL}, NULL);
	tap_ok(s && ps_session__target_pid(s) > 0 &&
		   (ps_session__target_pidfd(s) >= 0 || !have_pidfd),
	       "a bad command still forks and is held");
	tap_is_u64(ps_session__release(s), -ENOENT, "exec failure of ./nosuchcmd: -ENOENT");
	for (int i = 0; i < 5000 && ps_session__reap(s, &st) == -EAGAIN; i++)
		usleep(1000);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 127, "the failed child exits 127");
	ps_session__free(s);

	s = new_session(PS_TARGET_COMMAND, 0,
			(char *const[]){(char *)workload, "sleep", "100000", NULL}, NULL);
	pid_t pid = ps_session__target_pid(s);

	ps_session__free(s);
	tap_ok(pid > 0 && kill(pid, 0) < 0 && errno == ESRCH,
	       "freeing a session kills and reaps the held command");
	s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	tap_is_u64(ps_session__reap(s, &st), -ECHILD, "reap without a command: -ECHILD");
	tap_is_u64(ps_session__release(s), -ECHILD, "release without a command: -ECHILD");
	ps_session__free(s);
}

/* Start the workload waiting for SIGUSR1; returns its pid once it said "ready". */
static pid_t spawn_waiting(char *const *args)
{
	int p[2];
	pid_t pid;
	char buf[64] = "";
	ssize_t n;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execv(workload, args);
		_exit(127);
	}
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	if (n <= 0 || strncmp(buf, "ready ", 6) != 0)
		return -1;
	return pid;
}

static void test_pid(const char *what, char *const *args, uint64_t want)
{
	pid_t pid = spawn_waiting(args);
	struct ps_session *s = new_session(PS_TARGET_PID, pid, NULL, NULL);
	ps_handle h = alloc1(s, GETPPID);
	char msg[512] = "";
	int open = ps_session__open(s, msg, sizeof(msg)), st = -1;

	tap_ok(pid > 0 && s && open == 0 && ps_session__target_pid(s) == pid &&
		   (ps_session__target_pidfd(s) >= 0 || !have_pidfd),
	       "attach to pid %d (%s)", (int)pid, msg);
	kill(pid, SIGUSR1);
	waitpid(pid, &st, 0);
	tap_is_u64(value(s, h), want, "-p %s", what);
	tap_is_u64(ps_session__reap(s, NULL), -ECHILD, "a -p target is not ours to reap");
	ps_session__free(s);
}

static void test_pids(void)
{
	char n[16];
	pid_t dead;
	int err;

	snprintf(n, sizeof(n), "%d", N);
	test_pid("getppid N", (char *const[]){(char *)workload, "--wait-usr1", "getppid", n, NULL},
		 N);
	test_pid("threads 4 N (threads made after attach)",
		 (char *const[]){(char *)workload, "--wait-usr1", "threads", "4", n, NULL}, 4 * N);

	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	errno = 0;
	err = new_session(PS_TARGET_PID, dead, NULL, NULL) ? 0 : errno;
	tap_ok(err == ESRCH, "-p of a dead pid: ESRCH (%s)", strerror(err));
}

static void test_cpus(void)
{
	char n[16];
	struct ps_session *s;
	ps_handle h;
	const int *fds;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	const char *bad[] = {"", "abc", "0-", "3-1", "0,,1", "99999", "0-99999", "-1"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		tap_ok(!new_session(PS_TARGET_CPUS, 0, NULL, bad[i]) && errno == EINVAL,
		       "bad CPU list '%s': EINVAL", bad[i]);
	}
	s = new_session(PS_TARGET_CPUS, 0, NULL, "0");
	h = alloc1(s, "cpu-clock");
	tap_ok(s && ps_session__open(s, NULL, 0) == 0 && ps_session__fds(s, h, &fds) == 1,
	       "-C 0: one fd");
	ps_session__free(s);

	snprintf(n, sizeof(n), "%d", N);
	s = new_session(PS_TARGET_CPUS, 0, (char *const[]){(char *)workload, "getppid", n, NULL},
			NULL);
	h = alloc1(s, GETPPID);
	ps_handle h0 = alloc1(s, "cpu-clock/cpu=0/");
	char msg[512] = "";
	int open = ps_session__open(s, msg, sizeof(msg));

	tap_ok(open == 0 && ps_session__fds(s, h, &fds) == ncpu,
	       "-a: one fd per online CPU (%ld) %s", ncpu, msg);
	tap_ok(ps_session__fds(s, h0, &fds) == 1, "cpu= term restricts to one CPU");
	tap_ok(run_command(s) == 0, "-a with a command runs it");
	/* system-wide: every process's getppid() counts, so at least the workload's */
	uint64_t v = value(s, h);

	tap_ok(v >= N, "-a getppid N counts >= N (%llu)", (unsigned long long)v);
	ps_session__free(s);
}

static void test_groups(void)
{
	struct ps_session *s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	ps_handle g[2], g2[2], m[2];
	struct ps_value v[2], one;
	int n1 = ps_session__allocate(s, "{task-clock,page-faults}", g, 2, NULL);
	int n2 = ps_session__allocate(s, "{" GETPPID ",task-clock}", g2, 2, NULL);
	char msg[512] = "";
	int err;

	tap_ok(n1 == 2 && n2 == 2, "two groups of two allocated");
	tap_is_u64(ps_session__allocate(s, "{task-clock,page-faults}", m, 1, NULL), -ENOSPC,
		   "allocate into too small an array: -ENOSPC");
	tap_ok(ps_session__group(s, g[1], m, 2) == 2 && m[0] == g[0] && m[1] == g[1],
	       "group of a member: leader first");
	tap_ok((ps_session__attr(s, g[0])->read_format & PERF_FORMAT_GROUP) &&
		   ps_session__attr(s, g[0])->disabled && !ps_session__attr(s, g[1])->disabled,
	       "leader reads the group and starts disabled; members follow it");
	tap_ok(ps_session__open(s, msg, sizeof(msg)) == 0, "open groups (%s)", msg);
	char *p = mmap(NULL, 64 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	for (int i = 0; i < 64; i++)
		p[i << 12] = 1;
	munmap(p, 64 << 12);
	do_getppid(N);
	burn();
	tap_is_u64(ps_session__read_group(s, g[0], v, 2), 2, "read_group: two values");
	tap_ok(v[0].value > 0 && v[1].value >= 64 && v[0].enabled == v[1].enabled &&
		   v[0].running == v[1].running,
	       "{task-clock,page-faults}: %llu ns, %llu faults, one enabled/running",
	       (unsigned long long)v[0].value, (unsigned long long)v[1].value);
	tap_is_u64(ps_session__read_group(s, g2[0], v, 2), 2, "read_group of the second group");
	tap_is_u64(v[0].raw, N, "{getppid,task-clock}: leader counts exactly N");
	tap_ok(v[1].raw > 1000000, "{getppid,task-clock}: member task-clock %llu ns",
	       (unsigned long long)v[1].raw);
	tap_ok(ps_session__read(s, g2[0], &one) == 0 && one.raw == N,
	       "a leader read alone gives its own value");
	err = ps_session__read(s, g[1], &one);
	tap_ok(err == 0 && one.raw >= 64 && one.raw < 1000,
	       "a member read alone gives its own value (%llu)", (unsigned long long)one.raw);

	tap_ok(ps_session__stop(s, g2[0]) == 0 && !ps_session__is_running(s, g2[1]),
	       "stopping a leader stops its group");
	ps_session__read_group(s, g2[0], v, 2);
	do_getppid(N);
	burn();
	struct ps_value w[2];

	ps_session__read_group(s, g2[0], w, 2);
	tap_ok(w[0].raw == v[0].raw && w[1].raw == v[1].raw, "a stopped group does not move");
	ps_session__start(s, g2[0]);
	ps_session__reset(s, g2[0]);
	do_getppid(N);
	burn();
	ps_session__read_group(s, g2[0], w, 2);
	tap_ok(w[0].raw == N && w[1].raw > 1000000,
	       "restarted and reset group counts both members again (%llu, %llu)",
	       (unsigned long long)w[0].raw, (unsigned long long)w[1].raw);
	ps_session__stop(s, g2[1]);
	ps_session__read(s, g2[1], &one);
	burn();
	tap_ok(ps_session__read(s, g2[1], &v[1]) == 0 && v[1].raw == one.raw,
	       "a member stopped alone does not move");
	ps_session__start(s, g2[1]);
	burn();
	tap_ok(ps_session__read(s, g2[1], &v[1]) == 0 && v[1].raw > one.raw + 1000000,
	       "a member started alone counts at once");
	tap_ok(ps_session__free_counter(s, g[0]) == 0 &&
		   ps_session__check(s, g[1]) == -PS_ERR_HANDLE,
	       "freeing a leader frees its group");
	tap_ok(ps_session__free_counter(s, g2[1]) == 0 &&
		   ps_session__read_group(s, g2[0], v, 2) == 1 && v[0].raw == N,
	       "freeing a member shrinks its group");
	ps_session__free(s);
}

static void test_handles(void)
{
	struct ps_session *s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	struct ps_session *t = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	ps_handle h = alloc1(s, "task-clock"), h2, ht = alloc1(t, "task-clock");
	struct ps_value v;

	tap_ok(h != 0 && ps_session__check(s, h) == 0, "a live handle checks");
	tap_is_u64(ps_session__check(s, ht), -PS_ERR_HANDLE, "another session's handle: refused");
	tap_is_u64(ps_session__read(s, ht, &v), -PS_ERR_HANDLE, "reading a foreign handle");
	tap_is_u64(ps_session__read(s, 0, &v), -PS_ERR_HANDLE, "handle 0");
	tap_is_u64(ps_session__read(s, 0xdeadbeefcafeull, &v), -PS_ERR_HANDLE, "made-up handle");
	tap_is_u64(ps_session__read(s, h + 1, &v), -PS_ERR_HANDLE, "handle of an unused slot");
	tap_is_u64(ps_session__free_counter(s, h), 0, "free");
	tap_is_u64(ps_session__free_counter(s, h), -PS_ERR_HANDLE, "double free refused");
	tap_is_u64(ps_session__start(s, h), -PS_ERR_HANDLE, "start of a freed handle");
	h2 = alloc1(s, "task-clock");
	tap_ok(h2 != h && ps_session__check(s, h) == -PS_ERR_HANDLE &&
		   ps_session__check(s, h2) == 0,
	       "a reused slot gets a new generation; the stale handle stays refused");
	tap_ok(!ps_session__name(s, h) && !ps_session__spec(s, h) && !ps_session__attr(s, h) &&
		   ps_session__fds(s, h, NULL) == -PS_ERR_HANDLE &&
		   ps_session__stop(s, h) == -PS_ERR_HANDLE &&
		   ps_session__reset(s, h) == -PS_ERR_HANDLE,
	       "every accessor refuses the stale handle");
	tap_is_u64(ps_session__read(NULL, h2, &v), -PS_ERR_HANDLE, "NULL session");

	struct ps_session *ss[4];
	ps_handle hh[4];
	int foreign_ok = 0;

	for (int i = 0; i < 4; i++) {
		ss[i] = new_session(PS_TARGET_SELF, 0, NULL, NULL);
		hh[i] = alloc1(ss[i], "task-clock");
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			foreign_ok += (i == j) == (ps_session__check(ss[i], hh[j]) == 0);
	tap_is_u64(foreign_ok, 16, "consecutive sessions refuse each other's handles");
	for (int i = 0; i < 4; i++)
		ps_session__free(ss[i]);
	ps_session__free(s);
	ps_session__free(t);
	ps_session__free(NULL);
}

static void test_many(void)
{
	struct ps_session *s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	int before = count_fds(), bad = 0;
	struct ps_value v;

	for (int i = 0; i < 1000; i++) {
		ps_handle h = alloc1(s, i % 2 ? tclock : root ? "page-faults" : "page-faults:u");

		bad += !h || ps_session__open(s, NULL, 0) != 0 || ps_session__read(s, h, &v) != 0 ||
		       ps_session__free_counter(s, h) != 0;
	}
	tap_ok(bad == 0 && count_fds() == before,
	       "1000 counters allocated, opened, read, freed: "
	       "%d failures, fds %d before, %d after",
	       bad, before, count_fds());

	for (int i = 0; i < 1000; i++)
		bad += !alloc1(s, tclock);
	tap_ok(bad == 0 && ps_session__open(s, NULL, 0) == 0 && ps_session__count(s) == 1000 &&
		   count_fds() == before + 1000,
	       "1000 counters open at once");
	ps_session__free(s);
	tap_ok(count_fds() == before, "freeing the session closes them all");
}

static void test_errors(void)
{
	struct ps_session *s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	ps_handle tc = alloc1(s, tclock), cy = alloc1(s, cycles);
	int before = count_fds();
	char msg[512] = "";
	struct ps_event_error e;
	ps_handle h;
	int err = ps_session__open(s, msg, sizeof(msg));

	tap_diag("%s", msg);
	if (err == 0) {
		burn();
		tap_ok(value(s, cy) > 0, "this machine has a PMU: cycles counts");
		tap_skip("a PMU exists", "the not-supported explanation");
	} else {
		tap_is_u64(err, -ENOENT, "cycles without a PMU: -ENOENT");
		char want[128];

		snprintf(want, sizeof(want),
			 "cannot open '%s': not supported by this machine's PMU "
			 "(no hardware counters here",
			 cycles);
		tap_ok(strstr(msg, want) != NULL,
		       "the message names cycles and says the PMU is missing");
		tap_ok(!ps_session__is_open(s, tc) && count_fds() == before,
		       "the failed open left nothing open, not even task-clock");
	}
	ps_session__free(s);

	s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	tap_ok(ps_session__allocate(s, "cycels", &h, 1, &e) == -PS_ERR_UNKNOWN_EVENT &&
		   e.message[0],
	       "a bad spec: -PS_ERR_UNKNOWN_EVENT (%s)", e.message);
	tap_ok(ps_session__count(s) == 0, "and reserves nothing");
	ps_session__free(s);

	/* EMFILE: a limit just above what is open now */
	struct rlimit old, low;

	getrlimit(RLIMIT_NOFILE, &old);
	s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	for (int i = 0; i < 20; i++)
		alloc1(s, tclock);
	before = count_fds();
	low = old;
	low.rlim_cur = (rlim_t)before + 10;
	setrlimit(RLIMIT_NOFILE, &low);
	err = ps_session__open(s, msg, sizeof(msg));
	setrlimit(RLIMIT_NOFILE, &old);
	tap_diag("%s", msg);
	tap_ok(err == -EMFILE && strstr(msg, "too many open files") && strstr(msg, "ulimit -n"),
	       "EMFILE explained with ulimit -n");
	tap_ok(count_fds() == before, "and nothing of it stays open");
	ps_session__free(s);

	s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	alloc1(s, root ? "task-clock/freq=1000000/" : "task-clock/freq=1000000/u");
	err = ps_session__open(s, msg, sizeof(msg));
	tap_diag("%s", msg);
	tap_ok(err == -EINVAL &&
		   strstr(msg, "freq=1000000 is above kernel.perf_event_max_sample_rate"),
	       "EINVAL: a frequency above the kernel's limit is named");
	ps_session__free(s);
	s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
	alloc1(s, root ? "task-clock/cpu=4000/" : "task-clock/cpu=4000/u");
	err = ps_session__open(s, msg, sizeof(msg));
	tap_diag("%s", msg);
	tap_ok(err < 0 && strstr(msg, "cpu=4000 is not an online CPU"),
	       "an offline or absent cpu= is named");
	ps_session__free(s);

	pid_t child = fork();

	if (child == 0) {
		pause();
		_exit(0);
	}
	s = new_session(PS_TARGET_PID, child, NULL, NULL);
	alloc1(s, tclock);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	err = ps_session__open(s, msg, sizeof(msg));
	tap_diag("%s", msg);
	char want[80];

	snprintf(want, sizeof(want), "the target process %d is gone", (int)child);
	tap_ok(err == -ESRCH && strstr(msg, want) == msg,
	       "-p target gone before open: -ESRCH explained, not as the event's fault");
	ps_session__free(s);

	tap_is_str(ps_strerror(-PS_ERR_HANDLE), ps_strerror(PS_ERR_HANDLE),
		   "ps_strerror: either sign");
	tap_ok(strstr(ps_strerror(-PS_ERR_HANDLE), "handle") != NULL,
	       "ps_strerror of PS_ERR_HANDLE");
	tap_is_str(ps_strerror(-ENOENT), strerror(ENOENT), "ps_strerror falls back to strerror");
}

/* EACCES for real: as an unprivileged user, with paranoid >= 2, kernel counting is refused. */
static void test_permission(void)
{
	int p[2];
	char msg[512] = "";
	pid_t pid;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int paranoid = 2;

	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = 2;
		fclose(f);
	}
	if (!root || paranoid < 2) {
		tap_skip(!root ? "needs root to drop to an unprivileged user"
			       : "perf_event_paranoid < 2",
			 "EACCES explanation");
		tap_skip(!root ? "needs root to drop to an unprivileged user"
			       : "perf_event_paranoid < 2",
			 "user-space-only fallback");
		return;
	}
	if (pipe(p) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		struct ps_session *s;

		close(p[0]);
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(1);
		s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
		/* both: perf's fallback to user space only */
		ps_handle h = alloc1(s, "task-clock");
		int fell = ps_session__open(s, NULL, 0) == 0 && ps_session__user_only(s) &&
			   ps_session__attr(s, h)->exclude_kernel;

		ps_session__free(s);
		/* the kernel alone: refused, and explained */
		s = new_session(PS_TARGET_SELF, 0, NULL, NULL);
		alloc1(s, "task-clock:k");
		int err = ps_session__open(s, msg, sizeof(msg));

		if (write(p[1], &fell, sizeof(fell)) < 0 || write(p[1], &err, sizeof(err)) < 0 ||
		    write(p[1], msg, strlen(msg) + 1) < 0)
			_exit(1);
		ps_session__free(s);
		_exit(0);
	}
	close(p[1]);
	int err = 0, fell = 0;
	ssize_t n = read(p[0], &fell, sizeof(fell));

	n = n > 0 ? read(p[0], &err, sizeof(err)) : 0;

	n = n > 0 ? read(p[0], msg, sizeof(msg) - 1) : 0;
	msg[n > 0 ? n : 0] = '\0';
	close(p[0]);
	waitpid(pid, NULL, 0);
	char want[64];

	snprintf(want, sizeof(want), "kernel.perf_event_paranoid is %d", paranoid);
	tap_diag("%s", msg);
	tap_ok(fell,
	       "unprivileged: task-clock opens user space only (perf's fallback), and says so");
	tap_ok((err == -EACCES || err == -EPERM) && strstr(msg, "cannot open 'task-clock:k'") &&
		   strstr(msg, want) && strstr(msg, ":u modifier") &&
		   strstr(msg, "kernel.perf_event_paranoid=1") && strstr(msg, "CAP_PERFMON"),
	       "unprivileged kernel counting: EACCES explained with paranoid %d", paranoid);
}

int main(void)
{
	workload = getenv("WORKLOAD") ? getenv("WORKLOAD") : "build/tests/workload";
	root = geteuid() == 0;
	if (!root) {
		tclock = "task-clock:u";
		cycles = "cycles:u";
	}
	int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);

	/* valgrind, for one, does not know pidfd_open: the session then has no pidfd */
	have_pidfd = pfd >= 0;
	if (pfd >= 0)
		close(pfd);
	else
		tap_diag("no pidfd_open here (%s): pidfds are -1", strerror(errno));
	test_self();
	test_handles();
	test_many();
	test_errors();
	test_permission();
	if (!root) {
		tap_skip("tracepoints need root (perf_event_paranoid and tracefs)",
			 "exact getppid counts for self, command, -p, -a and groups");
		return tap_done();
	}
	if (access(workload, X_OK) != 0) {
		tap_ok(0, "workload %s missing (make build/tests/workload)", workload);
		return tap_done();
	}
	test_getppid_self();
	test_commands();
	test_pids();
	test_cpus();
	test_groups();
	return tap_done();
}
