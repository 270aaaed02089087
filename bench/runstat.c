/*
 * runstat.c: run a command N times and report its wall time and peak RSS.
 * Each run is fork+exec+wait4, timed on CLOCK_MONOTONIC around the whole
 * cycle, with the child's ru_maxrss taken from wait4 so that no shell or
 * /usr/bin/time is in the figure. The child's stdout goes to /dev/null;
 * stderr is kept so that a failing command is seen. Prints one line:
 *   runs=N fail=F median_ms=.. min_ms=.. max_ms=.. maxrss_kib=..
 * usage: runstat N CMD [ARGS...]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0, fails = 0;
	long maxrss = 0;
	double *ms;

	if (n <= 0) {
		fprintf(stderr, "usage: runstat N CMD [ARGS...]\n");
		return 2;
	}
	ms = calloc(n, sizeof(*ms));
	if (!ms)
		return 1;
	for (int i = 0; i < n; i++) {
		struct rusage ru;
		int status;
		double t0 = now_ms();
		pid_t pid = fork();

		if (pid < 0) {
			perror("runstat: fork");
			return 1;
		}
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0)
				dup2(fd, 1);
			execvp(argv[2], argv + 2);
			perror("runstat: exec");
			_exit(127);
		}
		if (wait4(pid, &status, 0, &ru) < 0) {
			perror("runstat: wait4");
			return 1;
		}
		ms[i] = now_ms() - t0;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fails++;
		if (ru.ru_maxrss > maxrss)
			maxrss = ru.ru_maxrss; /* KiB on Linux */
	}
	qsort(ms, n, sizeof(*ms), cmp_double);
	printf("runs=%d fail=%d median_ms=%.2f min_ms=%.2f max_ms=%.2f maxrss_kib=%ld\n", n, fails,
	       n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2, ms[0], ms[n - 1], maxrss);
	free(ms);
	return fails ? 1 : 0;
}
