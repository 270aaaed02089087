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
#include <stdint.h>
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

/* cgroup v2 ids, as a sample gives them (PERF_SAMPLE_CGROUP,
 * bpf_get_current_cgroup_id: the group directory's inode number), to paths
 * below the mount. An id not seen before is opened from its id (cgroupfs
 * exports a group by a file handle that is its id; this needs
 * CAP_DAC_READ_SEARCH, which root has), and its answer kept for good: ids
 * are never reused. Without that right, the tree is walked when an id is
 * not known, at most once a second and 1% of the time. At most 65536 ids
 * are kept. */
struct ps_cgroups;

struct ps_cgroups *ps_cgroups__new(void);
/* id's path ("/system.slice/docker-<id>.scope"; "/" for the root), or NULL
 * when no group has it (gone; or, walking, made since the last walk). */
const char *ps_cgroups__path(struct ps_cgroups *cg, uint64_t id);
/* How many times the whole tree was walked (none when ids can be opened). */
uint64_t ps_cgroups__walks(const struct ps_cgroups *cg);
/* Process pid's group in the cgroup v1 hierarchies at time `when` (a
 * sample's CLOCK_MONOTONIC time; 0: now), from /proc/PID/cgroup: read
 * again unless it was read after `when` or less than a second before it
 * (kept after the process is gone), and read again when the process's
 * `name` (NULL: not known) is not the one it had at the read: a process
 * that joins a group and execs (a container's first process) is named by
 * its new group from its first sample after the exec. So a process that moved is named by
 * its new group within a second of the move, and a process sampled 19
 * times a second is read once a second, not at every sample (0.5 ms of a
 * second of the agent's CPU): name=systemd's path, else the first
 * controller's that is not the root; NULL when every one is at the root
 * or nothing is known. */
const char *ps_cgroups__v1_path(struct ps_cgroups *cg, pid_t pid, uint64_t when, const char *name);
void ps_cgroups__free(struct ps_cgroups *cg);

/* The container a group path names, as runtimes name their groups
 * (docker-ID.scope, /docker/ID, cri-containerd-ID.scope, crio-ID.scope,
 * libpod-ID.scope, kubepods/.../ID): the last 64-hex-digit ID in it, into
 * id (65 bytes); false when there is none. */
bool ps_cgroup__container(const char *path, char *id);

#endif /* PS_BASE_CGROUP_H */
