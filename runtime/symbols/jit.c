/*
 * jit.c: names for code a JIT wrote into anonymous memory, from the perf
 * map the JIT keeps, /tmp/perf-PID.map: one "START SIZE name" line per
 * piece of code, START and SIZE in hex, the name the rest of the line (the
 * format perf reads; LuaJIT, V8, the JVM's perf agents and others write it).
 * The file is read on the first address of the process that no mapped file
 * names, sorted by start address, and read again when it has changed (it
 * grows as the JIT compiles); a miss looks at the file at most every
 * PS_JIT_RECHECK_NS, so a profile full of unnamed anonymous addresses does
 * not stat it per sample. Where code was written twice at one address the
 * later line wins, as the JIT reused the memory.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/array.h"
#include "symbols/internal.h"

#define PS_JIT_RECHECK_NS 20000000ull

struct ps_jitsym {
	uint64_t start, size;
	const char *name; /* in ps_jitmap.names */
	size_t order;	  /* line number: the later of two at one start wins */
};

struct ps_jitmap {
	char path[64];
	struct ps_jitsym *v;
	size_t n;
	char *names;
	struct stat st; /* of the file as read; st_ino 0: never read */
	uint64_t checked_ns;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int jitsym_cmp(const void *a, const void *b)
{
	const struct ps_jitsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Parse the whole file; the old table stays when it cannot be read. */
static int load(struct ps_jitmap *j, const struct stat *st)
{
	FILE *f = fopen(j->path, "re");
	struct ps_jitsym *v = NULL;
	size_t n = 0, cap = 0, used = 0, room = 0;
	char *names = NULL, *line = NULL;
	size_t linecap = 0;
	ssize_t len;

	if (!f)
		return -errno;
	while ((len = getline(&line, &linecap, f)) > 0) {
		char *end, *name;
		uint64_t start = strtoull(line, &end, 16), size;

		size = strtoull(end, &name, 16);
		if (name == end || *name != ' ' || !size)
			continue; /* not a map line */
		name++;
		name[strcspn(name, "\n")] = '\0';
		if (ps_array__reserve(&v, &cap, n + 1, sizeof(*v)) ||
		    ps_array__reserve(&names, &room, used + strlen(name) + 1, 1))
			goto nomem;
		/* names may move while growing: keep offsets until the end */
		v[n] = (struct ps_jitsym){.start = start, .size = size, .order = n};
		v[n].name = (const char *)(uintptr_t)used;
		memcpy(names + used, name, strlen(name) + 1);
		used += strlen(name) + 1;
		n++;
	}
	for (size_t i = 0; i < n; i++)
		v[i].name = names + (uintptr_t)v[i].name;
	qsort(v, n, sizeof(*v), jitsym_cmp);
	free(line);
	fclose(f);
	free(j->v);
	free(j->names);
	j->v = v;
	j->n = n;
	j->names = names;
	j->st = *st;
	return 0;
nomem:
	free(line);
	free(v);
	free(names);
	fclose(f);
	return -ENOMEM;
}

/* Read the map again if the file changed since it was read. */
static void refresh(struct ps_jitmap *j)
{
	uint64_t now = now_ns();
	struct stat st;

	if (j->checked_ns && now - j->checked_ns < PS_JIT_RECHECK_NS)
		return;
	j->checked_ns = now;
	if (stat(j->path, &st) < 0)
		return;
	if (st.st_ino == j->st.st_ino && st.st_size == j->st.st_size &&
	    st.st_mtim.tv_sec == j->st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == j->st.st_mtim.tv_nsec)
		return;
	load(j, &st);
}

/* The entry covering addr: the last one starting at or below it. */
static const struct ps_jitsym *find(const struct ps_jitmap *j, uint64_t addr)
{
	size_t lo = 0, hi = j->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr - j->v[lo - 1].start >= j->v[lo - 1].size)
		return NULL;
	return &j->v[lo - 1];
}

int ps_jit__lookup(struct ps_proc *p, uint64_t addr, char *buf, size_t len, const char **dso)
{
	struct ps_jitmap *j = p->jit;
	const struct ps_jitsym *s;

	if (!j) {
		j = p->jit = calloc(1, sizeof(*j));
		if (!j)
			return -ENOMEM;
		snprintf(j->path, sizeof(j->path), "/tmp/perf-%d.map", (int)p->pid);
	}
	s = find(j, addr);
	if (!s) {
		refresh(j);
		s = find(j, addr);
	}
	if (!s)
		return -ENOENT;
	snprintf(buf, len, "%s+0x%" PRIx64, s->name, addr - s->start);
	*dso = j->path;
	return 0;
}

void ps_jit__free(struct ps_jitmap *j)
{
	if (!j)
		return;
	free(j->v);
	free(j->names);
	free(j);
}
