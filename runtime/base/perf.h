/*
 * perf.h: the two things every layer that talks to perf_event_open(2) needs
 * the same way (runtime/base/perf.c): the one call of the syscall, and the
 * layout of what read() of a counter gives for a read_format (also the
 * layout of a sample's PERF_SAMPLE_READ block), computed in one place.
 *
 *   without PERF_FORMAT_GROUP: value, [enabled], [running], [id], [lost]
 *   with it: nr, [enabled], [running], then nr x { value, [id], [lost] }
 */
#ifndef PS_BASE_PERF_H
#define PS_BASE_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

/* perf_event_open(attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC): the fd,
 * or -errno (errno is set too). */
int ps_perf__open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd);
/* The same, but for pid -1 with a cgroup directory's fd (cgroup_fd >= 0):
 * only the tasks of that group and the groups below it count on cpu
 * (PERF_FLAG_PID_CGROUP). */
int ps_perf__open_in(struct perf_event_attr *attr, pid_t pid, int cgroup_fd, int cpu, int group_fd);

struct ps_read_layout {
	bool group;	      /* PERF_FORMAT_GROUP */
	int enabled, running; /* word of each time, -1 when not asked for */
	size_t head;	      /* group: words before the first member */
	size_t per;	      /* group: words per member; else words of the read */
	int id, lost;	      /* offset of each from a member's value, -1 when absent */
};

void ps_read_layout__init(struct ps_read_layout *l, uint64_t read_format);
/* Words of a read of nr members (nr is 1 without GROUP). */
size_t ps_read_layout__words(const struct ps_read_layout *l, size_t nr);
/* Word of member i's value (i is 0 without GROUP). */
size_t ps_read_layout__value(const struct ps_read_layout *l, size_t i);

#endif /* PS_BASE_PERF_H */
