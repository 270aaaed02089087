/*
 * offcpu_threads.c: four threads that each spend one second their own way,
 * for tests/e2e/offcpu.sh: one sleeps (nanosleep), one reads a pipe the main
 * thread writes after a second, one waits for a mutex the main thread holds
 * for a second, one spins. Each names itself first, so its off-CPU time is
 * under its own name, and waits in a function of its own.
 *   offcpu pinned   two threads spin 0.5 s of wall time each, both on CPU 0,
 *                   so each waits about half of it in the run queue; each
 *                   prints "tid on_cpu_ns run_delay_ns" from its schedstat
 *   offcpu migrate  a thread (migrant) blocks 50 times in a pipe's read,
 *                   10 ms each, while another (mover) pins it to the other
 *                   CPU: each wait begins on one CPU and ends on the other;
 *                   it prints "W tid ns moves": its time in those reads, and
 *                   how many came back on another CPU than they began on
 *   offcpu late     the main thread (late) makes 500 pipe round trips with
 *                   another (echo), each wait a few microseconds, then
 *                   sleeps 200 ms in wait_after_short
 *   offcpu rename   sleeps 50 times 2 ms named "before", then 50 named
 *                   "after"
 *   offcpu oneplace [alt]  one call site reads a pipe, then a socket, by
 *                   one fd number (see one_place)
 *   offcpu mixed    the four threads, the two pinned ones and the migrant
 *                   at once; each prints "T tid self_ns on_cpu_ns
 *                   run_delay_ns": how long it saw itself live, its on-CPU
 *                   time and run delay as the kernel counts them; main
 *                   prints "J tid span_ns" for each, from before its
 *                   creation to its join
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static long elapsed_ns(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000L + b->tv_nsec - a->tv_nsec;
}

__attribute__((noinline)) void wait_in_sleep(void)
{
	struct timespec t = {1, 0};

	nanosleep(&t, NULL);
}

__attribute__((noinline)) void wait_in_read(void)
{
	char c;

	if (read(fds[0], &c, 1) != 1)
		_exit(1);
}

__attribute__((noinline)) void wait_in_lock(void)
{
	pthread_mutex_lock(&mu);
	pthread_mutex_unlock(&mu);
}

__attribute__((noinline)) void spin_a_second(void)
{
	struct timespec s, n;

	clock_gettime(CLOCK_MONOTONIC, &s);
	do
		clock_gettime(CLOCK_MONOTONIC, &n);
	while (elapsed_ns(&s, &n) < 1000000000L);
}

static void *run(void *what)
{
	prctl(PR_SET_NAME, what);
	switch (*(const char *)what) {
	case 's':
		wait_in_sleep();
		break;
	case 'r':
		wait_in_read();
		break;
	case 'l':
		wait_in_lock();
		break;
	default:
		spin_a_second();
		break;
	}
	return NULL;
}

/* Spin 0.5 s of wall time on CPU 0, then say what the kernel counted
 * (unless arg, for mixed, which says it itself). */
static void *pinned(void *arg)
{
	struct timespec s, n;
	cpu_set_t one;
	char line[128] = "";
	FILE *f;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	prctl(PR_SET_NAME, "pinned");
	clock_gettime(CLOCK_MONOTONIC, &s);
	do
		clock_gettime(CLOCK_MONOTONIC, &n);
	while (elapsed_ns(&s, &n) < 500000000L);
	if (arg)
		return NULL;
	f = fopen("/proc/thread-self/schedstat", "r");
	if (!f || !fgets(line, sizeof(line), f))
		_exit(1);
	fclose(f);
	printf("%ld %s", (long)syscall(SYS_gettid), line);
	return NULL;
}

/* migrate: the migrant's pipe, its tid, and how many reads came back
 * on another CPU than they began on */
static int mfds[2];
static volatile long migrant_tid;
static int moves;

__attribute__((noinline)) void wait_moved(void)
{
	char c;

	if (read(mfds[0], &c, 1) != 1)
		_exit(1);
}

static void *migrant(void *arg)
{
	long in_reads = 0;

	(void)arg;
	prctl(PR_SET_NAME, "migrant");
	migrant_tid = (long)syscall(SYS_gettid);
	for (int i = 0; i < 50; i++) {
		int was = sched_getcpu();
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		wait_moved();
		clock_gettime(CLOCK_MONOTONIC, &b);
		in_reads += elapsed_ns(&a, &b);
		moves += sched_getcpu() != was;
	}
	printf("W %ld %ld %d\n", (long)migrant_tid, in_reads, moves);
	return NULL;
}

/* Pin the migrant, blocked, to the CPU it is not on, then wake it 10 ms
 * later; 50 times. */
static void *mover(void *arg)
{
	struct timespec ten = {0, 10000000}, tick = {0, 100000};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	(void)arg;
	prctl(PR_SET_NAME, "mover");
	while (!migrant_tid)
		nanosleep(&tick, NULL);
	for (int i = 0; i < 50; i++) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(ncpu > 1 ? i % 2 : 0, &one);
		nanosleep(&tick, NULL); /* it is blocked by now */
		sched_setaffinity((pid_t)migrant_tid, sizeof(one), &one);
		nanosleep(&ten, NULL);
		if (write(mfds[1], "x", 1) != 1)
			_exit(1);
	}
	return NULL;
}

/* late: a thread (late) whose waits are short, 500 pipe round trips with
 * an echoing thread, before one long one (a 200 ms sleep): the long wait's
 * stacks are taken as it runs again, its last wait having been short */
static int lfds[2], efds[2];

__attribute__((noinline)) void wait_after_short(void)
{
	struct timespec t = {0, 200000000};

	nanosleep(&t, NULL);
}

static void *echo(void *arg)
{
	char c;

	(void)arg;
	prctl(PR_SET_NAME, "echo");
	while (read(lfds[0], &c, 1) == 1 && c == 'x')
		if (write(efds[1], &c, 1) != 1)
			_exit(1);
	return NULL;
}

static int late(void)
{
	pthread_t e;
	char c = 'x';

	if (pipe(lfds) || pipe(efds))
		return 1;
	prctl(PR_SET_NAME, "late");
	pthread_create(&e, NULL, echo, NULL);
	for (int i = 0; i < 500; i++)
		if (write(lfds[1], &c, 1) != 1 || read(efds[0], &c, 1) != 1)
			return 1;
	wait_after_short();
	c = 'q';
	if (write(lfds[1], &c, 1) != 1)
		return 1;
	pthread_join(e, NULL);
	return 0;
}

/* rename: 50 sleeps of 2 ms named "before", then 50 named "after" */
static int rename_midway(void)
{
	struct timespec two = {0, 2000000};

	prctl(PR_SET_NAME, "before");
	for (int i = 0; i < 50; i++)
		nanosleep(&two, NULL);
	prctl(PR_SET_NAME, "after");
	for (int i = 0; i < 50; i++)
		nanosleep(&two, NULL);
	return 0;
}

/* mixed: a thread, when it was asked for, and what it runs */
struct life {
	pthread_t t;
	struct timespec born; /* before pthread_create */
	void *(*fn)(void *);
	void *arg;
	long tid;
};

/* Run the thread's part, then say what the kernel counted and how long
 * the thread saw itself live, from its first line to its part's end. The time it
 * ran is its CPU-time clock's (schedstat's first figure is as of the last
 * tick, up to a tick behind in a running thread). */
static void *lived(void *arg)
{
	struct life *l = arg;
	unsigned long long on = 0, delay = 0, slices = 0;
	struct timespec start, now, ran = {0, 0};
	FILE *f;

	clock_gettime(CLOCK_MONOTONIC, &start);
	l->tid = (long)syscall(SYS_gettid);
	l->fn(l->arg);
	/* the span ends before the figures are read: a wait for a CPU while
	 * they are read, which they may not hold, is outside it (the tests'
	 * allowance for what happens outside the thread's own span) */
	clock_gettime(CLOCK_MONOTONIC, &now);
	f = fopen("/proc/thread-self/schedstat", "r");
	if (!f || fscanf(f, "%llu %llu %llu", &on, &delay, &slices) != 3)
		_exit(1);
	fclose(f);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ran);
	printf("T %ld %ld %ld %llu\n", l->tid, elapsed_ns(&start, &now),
	       ran.tv_sec * 1000000000L + ran.tv_nsec, delay);
	return NULL;
}

/* Wait for t's end and say how long it was, from before its creation. */
static void joined(struct life *t)
{
	struct timespec now;

	pthread_join(t->t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &now);
	printf("J %ld %ld\n", t->tid, elapsed_ns(&t->born, &now));
}

static int mixed(void)
{
	static char *names[] = {"sleeper", "reader", "locker", "xspinner"};
	struct timespec half = {0, 500000000};
	struct life l[7];
	pthread_t mv;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(fds) || pipe(mfds))
		return 1;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < 7; i++) {
		l[i].fn = i < 4 ? run : i < 6 ? pinned : migrant;
		l[i].arg = i < 4 ? names[i] : "quiet";
		clock_gettime(CLOCK_MONOTONIC, &l[i].born);
		pthread_create(&l[i].t, NULL, lived, &l[i]);
	}
	pthread_create(&mv, NULL, mover, NULL);
	nanosleep(&half, NULL); /* the pinned ones end about now */
	joined(&l[4]);
	joined(&l[5]);
	nanosleep(&half, NULL);
	if (write(fds[1], "x", 1) != 1)
		return 1;
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 4; i++)
		joined(&l[i]);
	joined(&l[6]);
	pthread_join(mv, NULL);
	return 0;
}

static int migrate(void)
{
	pthread_t m, mv;

	if (pipe(mfds))
		return 1;
	pthread_create(&m, NULL, migrant, NULL);
	pthread_create(&mv, NULL, mover, NULL);
	pthread_join(m, NULL);
	pthread_join(mv, NULL);
	return 0;
}

/* oneplace: a thread (oneplace) reads fd ONE_FD 24 times from one call
 * site, the main thread writing to it 5 ms after each read began; ONE_FD
 * is a pipe's read end or a socket's, dup2'd onto it before each read: by
 * its registers one place, with two kernel stacks. "alt" alternates them;
 * otherwise the pipe is read 12 times, then the socket. It prints "P ns"
 * and "U ns": its time in the pipe's reads and in the socket's. */
#define ONE_FD 100
static int pfds[2], ufds[2], alternate;
static volatile int one_ready;

__attribute__((noinline)) void read_one_place(void)
{
	char c;

	one_ready = 1;
	if (read(ONE_FD, &c, 1) != 1)
		_exit(1);
}

static int sock_turn(int i)
{
	return alternate ? i % 2 : i >= 12;
}

static void *oneplace(void *arg)
{
	long ns[2] = {0, 0};

	(void)arg;
	prctl(PR_SET_NAME, "oneplace");
	for (int i = 0; i < 24; i++) {
		struct timespec a, b;

		if (dup2(sock_turn(i) ? ufds[0] : pfds[0], ONE_FD) != ONE_FD)
			_exit(1);
		clock_gettime(CLOCK_MONOTONIC, &a);
		read_one_place();
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns[sock_turn(i)] += elapsed_ns(&a, &b);
	}
	printf("P %ld\nU %ld\n", ns[0], ns[1]);
	return NULL;
}

static int one_place(const char *how)
{
	struct timespec five = {0, 5000000}, tick = {0, 50000};
	pthread_t t;

	alternate = how && !strcmp(how, "alt");
	if (pipe(pfds) || socketpair(AF_UNIX, SOCK_STREAM, 0, ufds))
		return 1;
	pthread_create(&t, NULL, oneplace, NULL);
	for (int i = 0; i < 24; i++) {
		while (!one_ready)
			nanosleep(&tick, NULL);
		one_ready = 0;
		nanosleep(&five, NULL);
		if (write(sock_turn(i) ? ufds[1] : pfds[1], "x", 1) != 1)
			return 1;
	}
	pthread_join(t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	static char *names[] = {"sleeper", "reader", "locker", "xspinner"};

	if (argc > 1 && !strcmp(argv[1], "mixed"))
		return mixed();
	if (argc > 1 && !strcmp(argv[1], "migrate"))
		return migrate();
	if (argc > 1 && !strcmp(argv[1], "late"))
		return late();
	if (argc > 1 && !strcmp(argv[1], "rename"))
		return rename_midway();
	if (argc > 1 && !strcmp(argv[1], "oneplace"))
		return one_place(argv[2]);
	if (argc > 1 && !strcmp(argv[1], "pinned")) {
		pthread_t p[2];

		for (int i = 0; i < 2; i++)
			pthread_create(&p[i], NULL, pinned, NULL);
		for (int i = 0; i < 2; i++)
			pthread_join(p[i], NULL);
		return 0;
	}
	struct timespec one = {1, 0};
	pthread_t t[4];

	if (pipe(fds))
		return 1;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, run, names[i]);
	nanosleep(&one, NULL);
	if (write(fds[1], "x", 1) != 1)
		return 1;
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}
