/*
 * cgroup.c: cgroup v2 groups by name and by id (base/cgroup.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

struct group {
	uint64_t id;
	char *path;
};

#define V1_SLOTS 64 /* processes whose v1 path is kept, by pid */

struct v1_path {
	pid_t pid;
	uint64_t read_at; /* CLOCK_MONOTONIC ns */
	char *path;	  /* NULL: none */
};

struct ps_cgroups {
	struct group *v; /* sorted by id */
	size_t n, cap;
	size_t mnt_len; /* of the mount, cut off the paths */
	time_t read_at; /* when the mount was last read; 0: never */
	struct v1_path v1[V1_SLOTS];
};

static struct ps_cgroups *walking; /* nftw has no user pointer */

static int add_group(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct ps_cgroups *cg = walking;
	const char *rel = path + cg->mnt_len;

	(void)ftw;
	if (type != FTW_D)
		return FTW_CONTINUE;
	if (cg->n == cg->cap) {
		size_t cap = cg->cap ? 2 * cg->cap : 64;
		struct group *v = realloc(cg->v, cap * sizeof(*v));

		if (!v)
			return FTW_STOP;
		cg->v = v;
		cg->cap = cap;
	}
	cg->v[cg->n].id = (uint64_t)st->st_ino;
	if (!(cg->v[cg->n].path = strdup(*rel ? rel : "/")))
		return FTW_STOP;
	cg->n++;
	return FTW_CONTINUE;
}

static int by_id(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Every group of the mount, anew. */
static void read_groups(struct ps_cgroups *cg)
{
	char mnt[4096];

	for (size_t i = 0; i < cg->n; i++)
		free(cg->v[i].path);
	cg->n = 0;
	cg->read_at = time(NULL);
	if (ps_cgroup__mount(mnt, sizeof(mnt)))
		return;
	cg->mnt_len = strlen(mnt);
	walking = cg;
	nftw(mnt, add_group, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
	walking = NULL;
	qsort(cg->v, cg->n, sizeof(*cg->v), by_id);
}

struct ps_cgroups *ps_cgroups__new(void)
{
	return calloc(1, sizeof(struct ps_cgroups));
}

const char *ps_cgroups__path(struct ps_cgroups *cg, uint64_t id)
{
	struct group key = {.id = id}, *g;

	if (!cg || !id)
		return NULL;
	g = bsearch(&key, cg->v, cg->n, sizeof(*cg->v), by_id);
	if (!g && time(NULL) != cg->read_at) {
		read_groups(cg);
		g = bsearch(&key, cg->v, cg->n, sizeof(*cg->v), by_id);
	}
	return g ? g->path : NULL;
}

/* pid's v1 group: name=systemd's, else the first controller's that is
 * not the root; malloc'd, or NULL. */
static char *read_v1(pid_t pid)
{
	char path[64], line[4096], *best = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (!(f = fopen(path, "re")))
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *rel = ctl ? strchr(ctl + 1, ':') : NULL;
		bool systemd;

		if (!rel || rel == ctl + 1) /* not "N:controllers:path", or v2's "0::" */
			continue;
		*rel++ = '\0';
		rel[strcspn(rel, "\n")] = '\0';
		systemd = !strcmp(ctl + 1, "name=systemd");
		if (!strcmp(rel, "/") || (best && !systemd))
			continue;
		free(best);
		best = strdup(rel);
		if (systemd)
			break;
	}
	fclose(f);
	return best;
}

const char *ps_cgroups__v1_path(struct ps_cgroups *cg, pid_t pid, uint64_t when)
{
	struct v1_path *e;
	struct timespec ts;
	uint64_t now;
	char *path;

	if (!cg || pid <= 0)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	e = &cg->v1[(unsigned)pid % V1_SLOTS];
	/* what was read after `when` is the best there is for it (a group
	 * can only be read later than a sample is taken), and a read less
	 * than a second older will do, as it does without a time */
	if (e->pid == pid &&
	    (when ? when < e->read_at + 1000000000u : now - e->read_at < 1000000000u))
		return e->path;
	path = read_v1(pid);
	/* a process that has gone keeps the path it had */
	if (path || e->pid != pid) {
		free(e->path);
		e->path = path;
	}
	e->pid = pid;
	e->read_at = now;
	return e->path;
}

void ps_cgroups__free(struct ps_cgroups *cg)
{
	if (!cg)
		return;
	for (size_t i = 0; i < V1_SLOTS; i++)
		free(cg->v1[i].path);
	for (size_t i = 0; i < cg->n; i++)
		free(cg->v[i].path);
	free(cg->v);
	free(cg);
}

bool ps_cgroup__container(const char *path, char *id)
{
	const char *found = NULL;
	size_t run = 0;

	for (const char *p = path; p && *p; p++) {
		run = isxdigit((unsigned char)*p) && !isupper((unsigned char)*p) ? run + 1 : 0;
		/* exactly 64: a longer run is something else */
		if (run == 64 && !isxdigit((unsigned char)p[1]))
			found = p - 63;
	}
	if (!found)
		return false;
	memcpy(id, found, 64);
	id[64] = '\0';
	return true;
}
