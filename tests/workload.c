/*
 * workload: a deterministic target for perfscript's end-to-end tests and
 * benchmarks. Each mode does an exact amount of one kind of work so that a
 * counter on it has a known value:
 *   workload getppid N      N getppid() syscalls (syscalls:sys_enter_getppid == N)
 *   workload pages N        touch N fresh anonymous pages (page-faults ~= N)
 *   workload spin MS        burn MS milliseconds of CPU time in hot_spin()
 *   workload loop N         N rounds of a fixed arithmetic loop in hot_loop(); prints
 *                           "loop_ms=.. cpu_ms=.." (its own elapsed and CPU time)
 *                           on stderr
 *   workload threads T N    T threads, each N getppid() calls
 *   workload hop N          N getppid() calls, moving to the next online CPU before
 *                           each (sched_setaffinity): consecutive calls of one
 *                           thread land in different CPUs' sample rings
 *   workload pingpong N     N round trips of a byte with a child over two pipes
 *                           (two context switches each)
 *   workload forks N        N short-lived processes, one after the other
 *   workload children N1 N2 two child processes making N1 and N2 getppid() calls;
 *                           each prints "child PID N" on stdout, the parent waits
 *   workload exit CODE      exit with CODE at once
 *   workload kill SIG       die by signal SIG
 *   workload sleep MS       sleep MS milliseconds
 *   workload poke N         N writes to the global poke_target (mem:poke_target:w == N)
 *   workload open FILE      openat(FILE) once, then 100 ms of sleep with the name
 *                           still in memory (s:user_string(s.args.filename))
 *   workload calls N        N calls of the global ps_probe_target(i), which returns i
 *                           (uprobe:WORKLOAD:ps_probe_target == N); each call passes
 *                           USDT marker perfscript:tick (arg i) N times in all, and
 *                           perfscript:guarded only while its semaphore is raised;
 *                           prints "guarded K" on stderr (K = times it was raised)
 * Options before the mode: --wait-usr1 (block until SIGUSR1 before working;
 * prints "ready PID" on stdout first), --fork (run the mode in a child too,
 * so inheritance doubles the count), --hold (after working, print "done PID"
 * on stdout and block until SIGUSR2: a finished process that stays, with
 * final counts, for tests that read them from outside).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#if defined(__has_include)
#if __has_include(<sys/sdt.h>)
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#define HAVE_SDT 1
#endif
#endif
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long arg_ul(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s ? s : "", &end, 0);
	if (!s || errno || *end) {
		fprintf(stderr, "workload: bad number '%s'\n", s ? s : "");
		exit(2);
	}
	return v;
}

__attribute__((noinline)) static void do_getppid(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		syscall(SYS_getppid); /* not cached by libc, always a real syscall */
}

__attribute__((noinline)) static void do_pages(unsigned long n)
{
	long pg = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, n * pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		perror("workload: mmap");
		exit(1);
	}
	for (unsigned long i = 0; i < n; i++)
		p[i * pg] = 1;
	munmap((void *)p, n * pg);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

volatile unsigned long spin_sink;
void hot_spin(unsigned long ms); /* global, so symbol tests find it by name */

/* Milliseconds of CPU this thread has used. */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Spin for ms of CPU time (not wall time: on a busy machine the count of
 * CPU-clock samples stays what the caller asked for). */
__attribute__((noinline)) void hot_spin(unsigned long ms)
{
	double end = cpu_ms() + ms;

	while (cpu_ms() < end)
		for (int i = 0; i < 100000; i++)
			spin_sink += i;
}

void hot_loop(unsigned long n);

/* Global, so breakpoint tests find it by name (mem:poke_target:w). */
volatile unsigned long poke_target;

__attribute__((noinline)) static void do_poke(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		poke_target = i;
}

/* Fixed work, not fixed time: what sampling costs shows as a longer run. */
__attribute__((noinline)) void hot_loop(unsigned long n)
{
	struct timespec c0, c1;
	double t0 = now_ms();

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	for (unsigned long r = 0; r < n; r++)
		for (int i = 0; i < 100000; i++)
			spin_sink += i;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	fprintf(stderr, "loop_ms=%.3f cpu_ms=%.3f\n", now_ms() - t0,
		(c1.tv_sec - c0.tv_sec) * 1e3 + (c1.tv_nsec - c0.tv_nsec) / 1e6);
}

static void *thread_main(void *arg)
{
	do_getppid((unsigned long)arg);
	return NULL;
}

static void do_threads(unsigned long t, unsigned long n)
{
	pthread_t *th = calloc(t, sizeof(*th));

	if (!th)
		exit(1);
	for (unsigned long i = 0; i < t; i++)
		if (pthread_create(&th[i], NULL, thread_main, (void *)n) != 0)
			exit(1);
	for (unsigned long i = 0; i < t; i++)
		pthread_join(th[i], NULL);
	free(th);
}

static void do_hop(unsigned long n)
{
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), cpu = 0;

	for (unsigned long i = 0; i < n; i++) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set); /* a CPU that is gone: stay */
		cpu = ncpu > 1 ? (cpu + 1) % ncpu : 0;
		syscall(SYS_getppid);
	}
}

/* n round trips of a byte between this process and a child over two
 * pipes: two context switches each, for off-CPU benchmarks. */
static void do_pingpong(unsigned long n)
{
	int ab[2], ba[2];
	char c = 0;
	pid_t pid;

	if (pipe(ab) || pipe(ba)) {
		perror("workload: pipe");
		exit(1);
	}
	pid = fork();
	if (pid < 0) {
		perror("workload: fork");
		exit(1);
	}
	for (unsigned long i = 0; i < n; i++) {
		if (pid == 0 ? read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1
			     : write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			_exit(1);
	}
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
}

static void do_children(unsigned long n1, unsigned long n2)
{
	unsigned long n[2] = { n1, n2 };

	for (int i = 0; i < 2; i++) {
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("workload: fork");
			exit(1);
		}
		if (pid == 0) {
			printf("child %d %lu\n", (int)getpid(), n[i]);
			fflush(stdout);
			do_getppid(n[i]);
			_exit(0);
		}
	}
	while (wait(NULL) > 0 || errno == EINTR)
		;
}

/* n short-lived processes, one after the other: each forks and exits. */
static void do_forks(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("workload: fork");
			exit(1);
		}
		if (pid == 0)
			_exit(0);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
}

#ifdef HAVE_SDT
/* sys/sdt.h's semaphore: the kernel raises it while a uprobe on the marker
 * is open with it as ref_ctr_offset (a USDT probe in perfscript). */
unsigned short perfscript_guarded_semaphore __attribute__((section(".probes"), used));
unsigned short perfscript_tick_semaphore __attribute__((section(".probes"), used));
#endif

unsigned long ps_probe_target(unsigned long i); /* global: uprobes find it by name */

__attribute__((noinline)) unsigned long ps_probe_target(unsigned long i)
{
	__asm__ volatile("" ::: "memory"); /* a real call, never folded away */
	return i;
}

static void do_calls(unsigned long n)
{
	unsigned long sum = 0, guarded = 0;

	for (unsigned long i = 0; i < n; i++) {
		sum += ps_probe_target(i);
#ifdef HAVE_SDT
		STAP_PROBE1(perfscript, tick, i);
		if (perfscript_guarded_semaphore) {
			guarded++;
			STAP_PROBE1(perfscript, guarded, i);
		}
#endif
	}
	fprintf(stderr, "guarded %lu sum %lu\n", guarded, sum);
}

static void run_mode(char **argv)
{
	const char *mode = argv[0];

	if (!strcmp(mode, "getppid"))
		do_getppid(arg_ul(argv[1]));
	else if (!strcmp(mode, "pages"))
		do_pages(arg_ul(argv[1]));
	else if (!strcmp(mode, "spin"))
		hot_spin(arg_ul(argv[1]));
	else if (!strcmp(mode, "loop"))
		hot_loop(arg_ul(argv[1]));
	else if (!strcmp(mode, "threads"))
		do_threads(arg_ul(argv[1]), arg_ul(argv[1] ? argv[2] : NULL));
	else if (!strcmp(mode, "hop"))
		do_hop(arg_ul(argv[1]));
	else if (!strcmp(mode, "pingpong"))
		do_pingpong(arg_ul(argv[1]));
	else if (!strcmp(mode, "children"))
		do_children(arg_ul(argv[1]), arg_ul(argv[1] ? argv[2] : NULL));
	else if (!strcmp(mode, "forks"))
		do_forks(arg_ul(argv[1]));
	else if (!strcmp(mode, "exit"))
		exit((int)arg_ul(argv[1]));
	else if (!strcmp(mode, "kill")) {
		signal((int)arg_ul(argv[1]), SIG_DFL);
		raise((int)arg_ul(argv[1]));
	} else if (!strcmp(mode, "sleep"))
		usleep(arg_ul(argv[1]) * 1000);
	else if (!strcmp(mode, "poke"))
		do_poke(arg_ul(argv[1]));
	else if (!strcmp(mode, "calls"))
		do_calls(arg_ul(argv[1]));
	else if (!strcmp(mode, "open") && argv[1]) {
		int fd = open(argv[1], O_RDONLY | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
		usleep(100 * 1000);
	}
	else {
		fprintf(stderr, "workload: unknown mode '%s'\n", mode);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	int wait_usr1 = 0, fork_too = 0, hold = 0, i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--wait-usr1"))
			wait_usr1 = 1;
		else if (!strcmp(argv[i], "--hold"))
			hold = 1;
		else if (!strcmp(argv[i], "--fork"))
			fork_too = 1;
		else
			break;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: workload [--wait-usr1] [--fork] [--hold] "
				"getppid N|pages N|spin MS|loop N|forks N|threads T N|hop N|exit CODE|kill SIG|sleep MS|calls N|"
				"poke N\n");
		return 2;
	}
	if (hold) { /* blocked from the start: a SIGUSR2 sent early is kept */
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		sigprocmask(SIG_BLOCK, &set, NULL);
	}
	if (wait_usr1) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		sigwait(&set, &sig);
	}
	if (fork_too) {
		pid_t child = fork();

		if (child < 0)
			return 1;
		run_mode(argv + i);
		if (child == 0)
			_exit(0);
		waitpid(child, NULL, 0);
		return 0;
	}
	run_mode(argv + i);
	if (hold) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR2);
		printf("done %d\n", (int)getpid());
		fflush(stdout);
		sigwait(&set, &sig);
	}
	return 0;
}
