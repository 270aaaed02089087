/*
 * ring_baseline.c: what delivering overflow samples costs with no runtime in
 * the way, the bare C side of bench/sampling.sh's delivery benchmark. It
 * does what perfscript -c does for a sampling counter, minus Lua: forks the
 * command and holds it before exec, opens the tracepoint on it once per
 * online CPU with period 1, inherit and enable_on_exec, with perfscript's
 * sample_type (IP, TID, TIME, CPU, IDENTIFIER: PERIOD is dropped for a fixed
 * period, see runtime/sample/sampling.c) and its wakeup watermark (a quarter of the
 * ring), mmaps one ring per CPU, releases the command and drains the rings
 * from epoll (head loaded with acquire, tail stored with release) counting
 * PERF_RECORD_SAMPLE records and the losses of PERF_RECORD_LOST, until the
 * command exits (a pidfd in the same epoll set), then drains once more.
 * Like perfscript, it also drains every 50 ms when nothing woke it.
 * Prints one line:
 *   samples=N lost=L wall_s=.. cpu_s=.. ns_per_sample=..
 * wall_s runs from before the fork to after the last drain; cpu_s is this
 * process's user+system time (getrusage RUSAGE_SELF, the command is a child
 * and not in it).
 * usage: ring_baseline TRACEPOINT_ID PAGES CMD [ARGS...]
 *   TRACEPOINT_ID from /sys/kernel/tracing/events/CATEGORY/NAME/id
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;
};

static uint64_t samples, lost, records;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void drain(struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail, mask = r->size - 1;

	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail & mask;

		/* the header never wraps (records are 8-aligned), the body may */
		memcpy(&h, r->data + off, sizeof(h));
		if (h.size < sizeof(h))
			break; /* corrupt: give up on this batch */
		if (h.type == PERF_RECORD_SAMPLE) {
			samples++;
		} else if (h.type == PERF_RECORD_LOST) {
			uint64_t body[2]; /* id, lost */
			uint64_t boff = (off + sizeof(h)) & mask;

			if (boff + sizeof(body) <= r->size) {
				memcpy(body, r->data + boff, sizeof(body));
			} else {
				size_t first = r->size - boff;

				memcpy(body, r->data + boff, first);
				memcpy((unsigned char *)body + first, r->data, sizeof(body) - first);
			}
			lost += body[1];
		}
		records++;
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, head, __ATOMIC_RELEASE);
}

int main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE), ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long id, pages;
	int go[2], ep, pidfd, status = 0, done = 0;
	struct ring *rings;
	struct rusage ru;
	double t0, t1;
	pid_t pid;
	char c = 'g';

	if (argc < 4) {
		fprintf(stderr, "usage: ring_baseline TRACEPOINT_ID PAGES CMD [ARGS...]\n");
		return 2;
	}
	id = strtoul(argv[1], NULL, 0);
	pages = strtoul(argv[2], NULL, 0);
	if (!pages || (pages & (pages - 1))) {
		fprintf(stderr, "ring_baseline: PAGES must be a power of two\n");
		return 2;
	}
	rings = calloc(ncpu, sizeof(*rings));
	if (!rings || pipe2(go, O_CLOEXEC) < 0)
		return 1;
	t0 = now_s();
	pid = fork();
	if (pid < 0) {
		perror("ring_baseline: fork");
		return 1;
	}
	if (pid == 0) { /* held until the counters are open, like perfscript -c */
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execvp(argv[3], argv + 3);
		perror("ring_baseline: exec");
		_exit(127);
	}
	close(go[0]);
	ep = epoll_create1(EPOLL_CLOEXEC);
	for (long cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr a;
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = (uint64_t)cpu };
		void *m;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = id;
		a.sample_period = 1;
		a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		a.disabled = 1;
		a.inherit = 1;
		a.enable_on_exec = 1;
		a.sample_id_all = 1;
		a.watermark = 1;
		a.wakeup_watermark = (uint32_t)(pages * psz / 4);
		rings[cpu].fd = (int)syscall(SYS_perf_event_open, &a, pid, (int)cpu, -1,
					     PERF_FLAG_FD_CLOEXEC);
		if (rings[cpu].fd < 0) {
			perror("ring_baseline: perf_event_open");
			kill(pid, SIGKILL);
			return 1;
		}
		m = mmap(NULL, (1 + pages) * psz, PROT_READ | PROT_WRITE, MAP_SHARED,
			 rings[cpu].fd, 0);
		if (m == MAP_FAILED) {
			perror("ring_baseline: mmap");
			kill(pid, SIGKILL);
			return 1;
		}
		rings[cpu].meta = m;
		rings[cpu].data = (unsigned char *)m + psz;
		rings[cpu].size = pages * psz;
		epoll_ctl(ep, EPOLL_CTL_ADD, rings[cpu].fd, &ev);
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd >= 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = UINT64_MAX };

		epoll_ctl(ep, EPOLL_CTL_ADD, pidfd, &ev);
	}
	if (write(go[1], &c, 1) != 1)
		return 1;
	close(go[1]);
	while (!done) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, 50);

		if (n < 0 && errno != EINTR) {
			perror("ring_baseline: epoll_wait");
			return 1;
		}
		if (n == 0) { /* the periodic drain */
			for (long cpu = 0; cpu < ncpu; cpu++)
				drain(&rings[cpu]);
			if (pidfd < 0 && waitpid(pid, &status, WNOHANG) == pid)
				done = 1;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u64 == UINT64_MAX)
				done = 1;
			else
				drain(&rings[evs[i].data.u64]);
		}
	}
	if (pidfd >= 0)
		waitpid(pid, &status, 0);
	for (long cpu = 0; cpu < ncpu; cpu++)
		drain(&rings[cpu]);
	t1 = now_s();
	getrusage(RUSAGE_SELF, &ru);
	double cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		       ru.ru_stime.tv_usec / 1e6;
	printf("samples=%llu lost=%llu wall_s=%.3f cpu_s=%.3f ns_per_sample=%.1f\n",
	       (unsigned long long)samples, (unsigned long long)lost, t1 - t0, cpu_s,
	       samples ? cpu_s * 1e9 / samples : 0.0);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
