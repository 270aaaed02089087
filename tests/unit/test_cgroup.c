/*
 * test_cgroup.c: a process's cgroup v1 group (base/cgroup.c), which
 * names samples on a v1 or hybrid host, is read from /proc/PID/cgroup at
 * most once a second per process, and a process that moved is named by
 * its new group after that second. The test moves a child between two
 * groups of the v1 pids hierarchy it makes (root, and a v1 pids mount,
 * are needed: it says why it skips without). And v2 ids name their
 * groups without walking the tree.
 */
#include <linux/capability.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/cgroup.h"
#include "tap.h"

#define V1_PIDS "/sys/fs/cgroup/pids"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int move_to(const char *group, pid_t pid)
{
	char path[256];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s%s/cgroup.procs", V1_PIDS, group);
	if (!(f = fopen(path, "w")))
		return -1;
	ok = fprintf(f, "%d\n", (int)pid) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Without CAP_DAC_READ_SEARCH (open_by_handle_at refused) the ids are
 * found by walking the tree: once for all of them, not once each. */
static void walked(const uint64_t *ids, int n)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2], saved[2];
	struct ps_cgroups *cg;
	int found = 0;

	if (syscall(SYS_capget, &h, saved) < 0) {
		tap_skip("capget failed", "without CAP_DAC_READ_SEARCH: ids found by one walk");
		return;
	}
	memcpy(d, saved, sizeof(d));
	d[0].effective &= ~(1u << CAP_DAC_READ_SEARCH);
	if (syscall(SYS_capset, &h, d) < 0) {
		tap_skip("capset failed", "without CAP_DAC_READ_SEARCH: ids found by one walk");
		return;
	}
	cg = ps_cgroups__new();
	for (int i = 0; i < n; i++)
		found += ps_cgroups__path(cg, ids[i]) != NULL;
	tap_is_i64(found, n, "without CAP_DAC_READ_SEARCH: %d ids named by walking the tree", n);
	tap_is_u64(ps_cgroups__walks(cg), 1, "... in one walk, not one each");
	ps_cgroups__free(cg);
	syscall(SYS_capset, &h, saved);
}

/* cgroup v2 ids to paths: each id opened by its id, none of them by a
 * walk of the tree, and an id no group has answered without one. */
static void v2_ids(void)
{
	char mnt[4096], top[4352], dir[4608];
	struct ps_cgroups *cg;
	uint64_t ids[200];
	struct stat st;
	int right = 0;

	if (geteuid() != 0 || ps_cgroup__mount(mnt, sizeof(mnt))) {
		tap_skip("needs root and a cgroup v2 mount",
			 "cgroup v2 ids to paths, without a walk");
		return;
	}
	snprintf(top, sizeof(top), "%s/perfscript-unit-%d", mnt, (int)getpid());
	mkdir(top, 0755);
	for (int i = 0; i < 200; i++) {
		snprintf(dir, sizeof(dir), "%s/g%d", top, i);
		mkdir(dir, 0755);
		ids[i] = stat(dir, &st) == 0 ? (uint64_t)st.st_ino : 0;
	}
	cg = ps_cgroups__new();
	for (int i = 0; i < 200; i++) {
		char want[64];
		const char *got = ps_cgroups__path(cg, ids[i]);

		snprintf(want, sizeof(want), "/perfscript-unit-%d/g%d", (int)getpid(), i);
		right += got && !strcmp(got, want);
	}
	tap_is_i64(right, 200, "200 new groups: each id names its path");
	tap_ok(!ps_cgroups__path(cg, UINT64_MAX - 5), "an id no group has: none");
	tap_is_u64(ps_cgroups__walks(cg), 0, "... and the tree was never walked for them");
	walked(ids, 200);
	snprintf(dir, sizeof(dir), "%s/g0", top);
	rmdir(dir);
	tap_ok(ps_cgroups__path(cg, ids[0]) != NULL,
	       "a group gone keeps the path it had (ids are never reused)");
	ps_cgroups__free(cg);
	for (int i = 1; i < 200; i++) {
		snprintf(dir, sizeof(dir), "%s/g%d", top, i);
		rmdir(dir);
	}
	rmdir(top);
}

int main(void)
{
	char a[64], b[64], dir_a[128], dir_b[128];
	struct ps_cgroups *cg;
	const char *p1, *p2, *p3, *p4;
	uint64_t t0;
	pid_t child;

	v2_ids();
	snprintf(a, sizeof(a), "/perfscript-unit-%d-a", (int)getpid());
	snprintf(b, sizeof(b), "/perfscript-unit-%d-b", (int)getpid());
	snprintf(dir_a, sizeof(dir_a), "%s%s", V1_PIDS, a);
	snprintf(dir_b, sizeof(dir_b), "%s%s", V1_PIDS, b);
	if (geteuid() != 0 || access(V1_PIDS "/cgroup.procs", W_OK) || mkdir(dir_a, 0755)) {
		tap_skip("needs root and a cgroup v1 pids hierarchy at " V1_PIDS,
			 "a process's v1 group, read once a second");
		return tap_done();
	}
	mkdir(dir_b, 0755);
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	cg = ps_cgroups__new();
	tap_ok(child > 0 && move_to(a, child) == 0, "the child is in %s", a);
	t0 = now_ns();
	p1 = ps_cgroups__v1_path(cg, child, t0, NULL);
	tap_is_str(p1, a, "its group is read from /proc");
	move_to(b, child);
	p2 = ps_cgroups__v1_path(cg, child, t0 + 500000000u, NULL);
	tap_ok(p2 == p1, "a sample half a second later is named by the same read (not read again)");
	p3 = ps_cgroups__v1_path(cg, child, t0 - 1000000u, NULL);
	tap_ok(p3 == p1, "a sample taken before the read is named by it");
	p4 = ps_cgroups__v1_path(cg, child, now_ns() + 1500000000u, NULL);
	tap_is_str(p4, b,
		   "a sample more than a second after the read reads it again: the new group");
	move_to(a, child);
	p4 = ps_cgroups__v1_path(cg, child, now_ns(), "exec-name");
	tap_is_str(
	    p4, a,
	    "a sample just after the read, of a process renamed since (an exec): read again");
	p4 = ps_cgroups__v1_path(cg, child, now_ns(), "exec-name");
	tap_ok(p4 && !strcmp(p4, a), "the same name again: that read names it");
	ps_cgroups__free(cg);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	rmdir(dir_a);
	rmdir(dir_b);
	return tap_done();
}
