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
	char *path; /* NULL: no group has the id (gone: ids are never reused) */
};

#define V1_SLOTS   64	 /* processes whose v1 path is kept, by pid */
#define MAX_GROUPS 65536 /* ids kept; past it the cache starts over */

struct v1_path {
	pid_t pid;
	uint64_t read_at; /* CLOCK_MONOTONIC ns */
	char *path;	  /* NULL: none */
	char name[16];	  /* the process's name at the read */
};

struct ps_cgroups {
	struct group *v; /* sorted by id */
	size_t n, cap;
	char mnt[4096]; /* the cgroup2 mount, cut off the paths */
	size_t mnt_len;
	int mnt_fd;	     /* for open_by_handle_at; -1: not open yet, -2: no mount */
	bool no_handles;     /* open_by_handle_at is refused (no CAP_DAC_READ_SEARCH) */
	uint64_t walk_after; /* no walk of the tree before (ns) */
	uint64_t walks;	     /* of the whole tree, for the tests */
	struct v1_path v1[V1_SLOTS];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int by_id(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static struct group *find(struct ps_cgroups *cg, uint64_t id)
{
	struct group key = {.id = id};

	return cg->n ? bsearch(&key, cg->v, cg->n, sizeof(*cg->v), by_id) : NULL;
}

static void forget_all(struct ps_cgroups *cg)
{
	for (size_t i = 0; i < cg->n; i++)
		free(cg->v[i].path);
	cg->n = 0;
}

/* id's entry, added at the end (path NULL: none), or NULL without memory. */
static struct group *append(struct ps_cgroups *cg, uint64_t id, const char *path)
{
	char *copy = path ? strdup(path) : NULL;

	if (path && !copy)
		return NULL;
	if (cg->n >= MAX_GROUPS)
		forget_all(cg);
	if (cg->n == cg->cap) {
		size_t cap = cg->cap ? 2 * cg->cap : 64;
		struct group *v = realloc(cg->v, cap * sizeof(*v));

		if (!v) {
			free(copy);
			return NULL;
		}
		cg->v = v;
		cg->cap = cap;
	}
	cg->v[cg->n] = (struct group){.id = id, .path = copy};
	return &cg->v[cg->n++];
}

/* The same, kept in order: one new id, seen in a sample. */
static struct group *add(struct ps_cgroups *cg, uint64_t id, const char *path)
{
	struct group *g = append(cg, id, path), new;
	size_t at = 0;

	if (!g)
		return NULL;
	new = *g;
	while (at < cg->n - 1 && cg->v[at].id < id)
		at++;
	memmove(cg->v + at + 1, cg->v + at, (cg->n - 1 - at) * sizeof(*cg->v));
	cg->v[at] = new;
	return &cg->v[at];
}

static bool mounted(struct ps_cgroups *cg)
{
	if (cg->mnt_fd == -1) {
		cg->mnt_fd = -2;
		if (!ps_cgroup__mount(cg->mnt, sizeof(cg->mnt))) {
			cg->mnt_len = strlen(cg->mnt);
			cg->mnt_fd = open(cg->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (cg->mnt_fd < 0)
				cg->mnt_fd = -2;
		}
	}
	return cg->mnt_fd >= 0;
}

/* The group with id, opened from its id as cgroupfs exports it (a kernfs
 * file handle is the id): its path, or NULL. */
static const char *by_handle(struct ps_cgroups *cg, uint64_t id, char *buf, size_t len)
{
	struct {
		struct file_handle h;
		uint64_t id;
	} fh = {.h = {.handle_bytes = sizeof(uint64_t), .handle_type = 0xfe /* FILEID_KERNFS */},
		.id = id};
	char link[64];
	ssize_t n;
	int fd = open_by_handle_at(cg->mnt_fd, &fh.h, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == EPERM)
			cg->no_handles = true;
		return NULL;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	close(fd);
	if (n < (ssize_t)cg->mnt_len || strncmp(buf, cg->mnt, cg->mnt_len) ||
	    (buf[cg->mnt_len] != '/' && buf[cg->mnt_len] != '\0'))
		return NULL;
	buf[n] = '\0';
	return buf[cg->mnt_len] ? buf + cg->mnt_len : "/";
}

static struct ps_cgroups *walking; /* nftw has no user pointer */

static int add_group(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct ps_cgroups *cg = walking;
	const char *rel = path + cg->mnt_len;

	(void)ftw;
	if (type != FTW_D)
		return FTW_CONTINUE;
	return append(cg, (uint64_t)st->st_ino, *rel ? rel : "/") ? FTW_CONTINUE : FTW_STOP;
}

/* Sorted by id again, each id once (the one that names a path). */
static void settle(struct ps_cgroups *cg)
{
	size_t kept = 0;

	if (cg->n)
		qsort(cg->v, cg->n, sizeof(*cg->v), by_id);
	for (size_t i = 0; i < cg->n; i++) {
		if (kept && cg->v[kept - 1].id == cg->v[i].id) {
			struct group *k = &cg->v[kept - 1], *dup = &cg->v[i];

			if (!k->path) { /* a miss of earlier: the walk's answer wins */
				k->path = dup->path;
				dup->path = NULL;
			}
			free(dup->path);
			continue;
		}
		cg->v[kept++] = cg->v[i];
	}
	cg->n = kept;
}

/* Every group of the mount, where ids cannot be opened: at most once a
 * second, and no more than 1% of the time (a walk of 20000 groups is not
 * cheap). The groups are added unordered, then sorted once. */
static void walk(struct ps_cgroups *cg)
{
	uint64_t t0 = now_ns(), t1, pause;

	if (t0 < cg->walk_after)
		return;
	walking = cg;
	nftw(cg->mnt, add_group, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
	walking = NULL;
	settle(cg);
	cg->walks++;
	t1 = now_ns();
	pause = 100 * (t1 - t0);
	cg->walk_after = t1 + (pause > 1000000000u ? pause : 1000000000u);
}

struct ps_cgroups *ps_cgroups__new(void)
{
	struct ps_cgroups *cg = calloc(1, sizeof(struct ps_cgroups));

	if (cg)
		cg->mnt_fd = -1;
	return cg;
}

const char *ps_cgroups__path(struct ps_cgroups *cg, uint64_t id)
{
	char buf[4096];
	const char *path;
	struct group *g;

	if (!cg || !id || !mounted(cg))
		return NULL;
	if ((g = find(cg, id)))
		return g->path;
	if (!cg->no_handles) {
		/* found or not, the answer is for good: ids are never reused */
		g = add(cg, id, (path = by_handle(cg, id, buf, sizeof(buf))));
		if (!cg->no_handles)
			return g ? g->path : NULL;
	}
	walk(cg);
	g = find(cg, id);
	return g ? g->path : NULL;
}

uint64_t ps_cgroups__walks(const struct ps_cgroups *cg)
{
	return cg ? cg->walks : 0;
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

const char *ps_cgroups__v1_path(struct ps_cgroups *cg, pid_t pid, uint64_t when, const char *name)
{
	struct v1_path *e;
	uint64_t now;
	char *path;

	if (!cg || pid <= 0)
		return NULL;
	now = now_ns();
	e = &cg->v1[(unsigned)pid % V1_SLOTS];
	/* what was read after `when` is the best there is for it (a group
	 * can only be read later than a sample is taken), and a read less
	 * than a second older will do, as it does without a time */
	if (e->pid == pid && (!name || !strncmp(name, e->name, sizeof(e->name) - 1)) &&
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
	snprintf(e->name, sizeof(e->name), "%s", name ? name : "");
	return e->path;
}

void ps_cgroups__free(struct ps_cgroups *cg)
{
	if (!cg)
		return;
	for (size_t i = 0; i < V1_SLOTS; i++)
		free(cg->v1[i].path);
	forget_all(cg);
	free(cg->v);
	if (cg->mnt_fd >= 0)
		close(cg->mnt_fd);
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
