/*
 * offcpu_threads.c: four threads that each spend one second their own way,
 * for tests/e2e/offcpu.sh: one sleeps (nanosleep), one reads a pipe the main
 * thread writes after a second, one waits for a mutex the main thread holds
 * for a second, one spins. Each names itself first, so its off-CPU time is
 * under its own name, and waits in a function of its own.
 *   offcpu pinned   two threads spin 0.5 s of wall time each, both on CPU 0,
 *                   so each waits about half of it in the run queue; each
 *                   prints "tid on_cpu_ns run_delay_ns" from its schedstat
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
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

/* Spin 0.5 s of wall time on CPU 0, then say what the kernel counted. */
static void *pinned(void *arg)
{
	struct timespec s, n;
	cpu_set_t one;
	char line[128] = "";
	FILE *f;

	(void)arg;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	prctl(PR_SET_NAME, "pinned");
	clock_gettime(CLOCK_MONOTONIC, &s);
	do
		clock_gettime(CLOCK_MONOTONIC, &n);
	while (elapsed_ns(&s, &n) < 500000000L);
	f = fopen("/proc/thread-self/schedstat", "r");
	if (!f || !fgets(line, sizeof(line), f))
		_exit(1);
	fclose(f);
	printf("%ld %s", (long)syscall(SYS_gettid), line);
	return NULL;
}

int main(int argc, char **argv)
{
	static char *names[] = {"sleeper", "reader", "locker", "xspinner"};

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
