/*
 * cgroup.h: cgroup v2 groups by name, as perf stat -G takes them
 * (runtime/base/cgroup.c): a group's directory below the cgroup2 mount
 * (here /sys/fs/cgroup/unified, elsewhere often /sys/fs/cgroup), opened for
 * perf_event_open's PERF_FLAG_PID_CGROUP, and whether a process is in it.
 */
#ifndef PS_BASE_CGROUP_H
#define PS_BASE_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Where cgroup v2 is mounted (the first cgroup2 line of
 * /proc/self/mountinfo) into buf: 0, or -ENOENT when it is not mounted. */
int ps_cgroup__mount(char *buf, size_t len);

/* The group name, a path below the cgroup2 mount ("app" or "/app/web"), or
 * an absolute path to a group's directory: its directory opened (an fd,
 * read-only, as perf_event_open takes it) with its path below the mount
 * into rel ("/app/web"), or -errno: -ENOENT when no such group, -ENODEV
 * when cgroup v2 is not mounted. */
int ps_cgroup__open(const char *name, char *rel, size_t len);

/* Whether process pid is in the group at rel or a group below it, as its
 * /proc/PID/cgroup's v2 line ("0::/app/web/x") says. */
bool ps_cgroup__has(pid_t pid, const char *rel);

#endif /* PS_BASE_CGROUP_H */
