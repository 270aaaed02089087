/*
 * cgroup.c: cgroup v2 groups by name (base/cgroup.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/cgroup.h"

int ps_cgroup__mount(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], mnt[4096], type[64];
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		/* id parent major:minor root mount-point options... - type */
		if (dash && sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 &&
		    sscanf(dash + 3, "%63s", type) == 1 && !strcmp(type, "cgroup2"))
			err = (size_t)snprintf(buf, len, "%s", mnt) < len ? 0 : -ENAMETOOLONG;
	}
	fclose(f);
	return err;
}

int ps_cgroup__open(const char *name, char *rel, size_t len)
{
	char mnt[4096], path[8192];
	size_t n;
	int fd;

	if (!name || !*name)
		return -EINVAL;
	if (ps_cgroup__mount(mnt, sizeof(mnt)))
		return -ENODEV;
	n = strlen(mnt);
	if (!strncmp(name, mnt, n) && (name[n] == '/' || !name[n]))
		name += n; /* an absolute path into the mount */
	while (*name == '/')
		name++;
	snprintf(path, sizeof(path), "%s/%s", mnt, name);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = strlen(name);
	while (n && name[n - 1] == '/')
		n--;
	if ((size_t)snprintf(rel, len, "/%.*s", (int)n, name) >= len) {
		close(fd);
		return -ENAMETOOLONG;
	}
	return fd;
}

bool ps_cgroup__has(pid_t pid, const char *rel)
{
	char path[64], line[4096];
	size_t n = strlen(rel);
	bool in = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	while (!in && fgets(line, sizeof(line), f)) {
		const char *p = line + 3;

		line[strcspn(line, "\n")] = '\0';
		/* "/" is every group; otherwise rel itself or a group below it */
		in = !strncmp(line, "0::", 3) &&
		     (!strcmp(rel, "/") || (!strncmp(p, rel, n) && (p[n] == '/' || !p[n])));
	}
	fclose(f);
	return in;
}
