/*
 * read_baseline.c: what one read() of a counter costs with no runtime in the
 * way. It opens task-clock on itself with the read_format perfscript uses
 * (TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING | ID, see runtime/core/counter.c),
 * scales each value as perfscript does, and times N reads on the process
 * CPU clock, the same clock as Lua's os.clock(), so that time the shared
 * machine spends on other work does not count. Prints "ns_per_read=..".
 * usage: read_baseline [N]    (default 1000000)
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	struct perf_event_attr a;
	uint64_t buf[4], sum = 0; /* value, enabled, running, id */
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			PERF_FORMAT_ID;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		perror("read_baseline: perf_event_open");
		return 1;
	}
	for (int i = 0; i < 1000; i++) /* warm the path */
		if (read(fd, buf, sizeof(buf)) != sizeof(buf))
			return 1;
	double t0 = cpu_ns();
	for (long i = 0; i < n; i++) {
		if (read(fd, buf, sizeof(buf)) != sizeof(buf)) {
			perror("read_baseline: read");
			return 1;
		}
		sum += buf[2] ? (uint64_t)((double)buf[0] * buf[1] / buf[2]) : 0;
	}
	double t1 = cpu_ns();
	printf("ns_per_read=%.1f n=%ld checksum=%llu\n", (t1 - t0) / n, n,
	       (unsigned long long)(sum & 0xff));
	close(fd);
	return 0;
}
