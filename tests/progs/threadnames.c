/*
 * threadnames.c: three threads, each with its own name, for the tests of
 * a sample's thread name. The main thread keeps the program's name and
 * spins MS milliseconds of its own CPU time; "worker-b" spins as long;
 * "Zzz-Cleaner" names itself last of all (as Java's Common-Cleaner does)
 * and then sleeps until the others are done, so no sample is its.
 *   threadnames [MS]    prints "named" once the threads have their names,
 *                       "done" at the end
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long ms = 300;
static pthread_barrier_t worker_named, cleaner_named;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t over = PTHREAD_COND_INITIALIZER;
static int finished;

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void spin(void)
{
	volatile unsigned long x = 0;

	for (double end = cpu_ms() + ms; cpu_ms() < end;)
		for (int i = 0; i < 10000; i++)
			x += i;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker-b");
	pthread_barrier_wait(&worker_named);
	spin();
	return NULL;
}

static void *cleaner(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "Zzz-Cleaner");
	pthread_barrier_wait(&cleaner_named);
	pthread_mutex_lock(&lock);
	while (!finished)
		pthread_cond_wait(&over, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t w, c;

	if (argc > 1)
		ms = atol(argv[1]);
	pthread_barrier_init(&worker_named, NULL, 2);
	pthread_barrier_init(&cleaner_named, NULL, 2);
	pthread_create(&w, NULL, worker, NULL);
	pthread_barrier_wait(&worker_named);
	pthread_create(&c, NULL, cleaner, NULL); /* the last name taken */
	pthread_barrier_wait(&cleaner_named);
	puts("named");
	fflush(stdout);
	spin();
	pthread_join(w, NULL);
	pthread_mutex_lock(&lock);
	finished = 1;
	pthread_cond_signal(&over);
	pthread_mutex_unlock(&lock);
	pthread_join(c, NULL);
	puts("done");
	return 0;
}
