/*
 * perf.c: perf_event_open(2) and the read_format layout (base/perf.h).
 * Every fd perfscript opens is close-on-exec: a -c command must not
 * inherit the session's counters as open files.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/perf.h"

int ps_perf__open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
	int fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int ps_perf__open_in(struct perf_event_attr *attr, pid_t pid, int cgroup_fd, int cpu, int group_fd)
{
	int fd;

	if (pid != -1 || cgroup_fd < 0)
		return ps_perf__open(attr, pid, cpu, group_fd);
	fd = (int)syscall(SYS_perf_event_open, attr, cgroup_fd, cpu, group_fd,
			  PERF_FLAG_FD_CLOEXEC | PERF_FLAG_PID_CGROUP);
	return fd < 0 ? -errno : fd;
}

void ps_read_layout__init(struct ps_read_layout *l, uint64_t rf)
{
	int at = 1; /* after the value (single) or nr (group) */

	l->group = rf & PERF_FORMAT_GROUP;
	l->enabled = rf & PERF_FORMAT_TOTAL_TIME_ENABLED ? at++ : -1;
	l->running = rf & PERF_FORMAT_TOTAL_TIME_RUNNING ? at++ : -1;
	if (l->group) {
		l->head = (size_t)at;
		at = 1; /* within a member, after its value */
	} else {
		l->head = 0;
	}
	/* a single value's id and lost follow the times; a member's its value */
	l->id = rf & PERF_FORMAT_ID ? at++ : -1;
	l->lost = rf & PERF_FORMAT_LOST ? at++ : -1;
	l->per = (size_t)at; /* without GROUP: the whole read */
}

size_t ps_read_layout__words(const struct ps_read_layout *l, size_t nr)
{
	return l->group ? l->head + nr * l->per : l->per;
}

size_t ps_read_layout__value(const struct ps_read_layout *l, size_t i)
{
	return l->group ? l->head + i * l->per : 0;
}
