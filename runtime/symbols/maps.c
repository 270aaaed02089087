/*
 * maps.c: the processes the symbolizer knows and their executable
 * mappings. A process is its pid and a sorted array of mappings, each an
 * address range, a file offset and the ps_dso (symbols/dso.c) it maps; they
 * are learnt from /proc/PID/maps for processes older than the session and
 * from the ring's MMAP2/FORK/COMM records for the rest, and kept after EXIT
 * because samples of a dead process may still sit in a ring and profiles
 * name their addresses at the end. A pid never seen is read from /proc
 * once, lazily, which is what a system-wide profile needs for processes
 * that predate it. Every change bumps the process's generation, which tells
 * its unwinder (symbols/unwind.c) to report its modules again. A mapping
 * that another replaces (a library dlclose'd and another loaded at its
 * address) or that an exec unmaps is kept, retired, with the epochs it
 * lived in, so that a profile naming its addresses at the end names a
 * sample by what was mapped at the sample's epoch (ps_symbols__epoch).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "symbols/internal.h"
#include "symbols/python.h"

struct ps_proc *ps_procs__find(struct ps_symbols *syms, pid_t pid)
{
	struct ps_proc **e;

	if (syms->last && syms->last->pid == pid)
		return syms->last;
	e = ps_pidmap__get(&syms->procs, pid);
	return e ? (syms->last = *e) : NULL;
}

struct ps_proc *ps_procs__get(struct ps_symbols *syms, pid_t pid)
{
	struct ps_proc *p = ps_procs__find(syms, pid), **e;

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	e = p ? ps_pidmap__put(&syms->procs, pid) : NULL;
	if (!e) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	*e = p;
	return syms->last = p;
}

static void proc_free(struct ps_symbols *syms, struct ps_proc *p)
{
	ps_unwinder__free(syms, p->uw);
	ps_jit__free(p->jit);
	free(p->maps);
	free(p->retired);
	free(p);
}

static void proc_free_each(pid_t pid, void *value, void *ctx)
{
	(void)pid;
	proc_free(ctx, *(struct ps_proc **)value);
}

void ps_procs__free(struct ps_symbols *syms)
{
	ps_pidmap__each(&syms->procs, proc_free_each, syms);
	ps_pidmap__free(&syms->procs);
	ps_procs__free_gone(syms);
	syms->last = NULL;
}

void ps_procs__drop(struct ps_symbols *syms, struct ps_proc *p)
{
	if (syms->last == p)
		syms->last = NULL;
	ps_pidmap__del(&syms->procs, p->pid);
	proc_free(syms, p);
}

/* pid's entry for a live process: one that reuses the pid of a process
 * that exited starts anew (its predecessor's mappings are replaced next). */
static struct ps_proc *live(struct ps_symbols *syms, pid_t pid)
{
	struct ps_proc *p = ps_procs__get(syms, pid);

	if (p && p->gone)
		p->gone = 0, p->sampled = false;
	return p;
}

/* exec (retire: its mappings are kept for the samples before it) or a
 * read of /proc again (they are the same mappings, read anew). */
static void proc_forget(struct ps_proc *p, bool retired)
{
	if (retired && p->n) {
		for (size_t i = 0; i < p->n; i++)
			ps_proc__retire(p, &p->maps[i]);
		p->epoch++;
	}
	p->n = p->hint = 0;
	p->gen++;
}

/* Add m, cutting away whatever part of older mappings it covers, as mmap()
 * over an existing range does; what it renames is retired, in a new
 * epoch. Mappings arrive rarely (per mmap, not per sample), so the array
 * is simply rebuilt. */
static int proc_add_map(struct ps_proc *p, const struct ps_map *add)
{
	size_t cap = p->n + 2, n = 0;
	struct ps_map *v = malloc(cap * sizeof(*v)), m = *add;
	bool placed = false, replaced = false;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++) {
		const struct ps_map *e = &p->maps[i];

		if (e->end > m.start && e->start < m.end && ps_map__renames(e, &m)) {
			ps_proc__retire(p, e);
			replaced = true;
		}
	}
	if (replaced)
		p->epoch++;
	m.born = p->epoch;
	for (size_t i = 0; i < p->n; i++) {
		struct ps_map e = p->maps[i];

		if (!placed && e.start >= m.start) {
			v[n++] = m;
			placed = true;
		}
		if (e.end <= m.start || e.start >= m.end) {
			v[n++] = e;
			continue;
		}
		if (e.start < m.start) {
			struct ps_map left = e;

			left.end = m.start;
			v[n++] = left;
		}
		if (e.end > m.end) {
			struct ps_map right = e;

			right.pgoff += m.end - e.start;
			right.start = m.end;
			right.adj_state = 0; /* the adjustment depends on start and pgoff */
			if (!placed) {
				v[n++] = m;
				placed = true;
			}
			v[n++] = right;
		}
	}
	if (!placed)
		v[n++] = m;
	free(p->maps);
	p->maps = v;
	p->n = n;
	p->cap = cap;
	p->hint = 0;
	p->gen++;
	return 0;
}

/* Whether path here is the file the process mapped. */
static bool is_file(const char *path, const struct ps_file_stamp *id)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino;
}

/* A mapping of name (a path, "[vdso]", "//anon", "") in p's process, of
 * the file id. */
static int add_mapping(struct ps_symbols *syms, struct ps_proc *p, uint64_t start, uint64_t end,
		       uint64_t pgoff, const char *name, const struct ps_file_stamp *id)
{
	struct ps_map m = {.start = start, .end = end, .pgoff = pgoff};

	if (end <= start)
		return -EINVAL;
	/* perf's convention names anonymous memory "//anon". */
	if (name[0] == '/' && name[1] != '/') {
		char alt[4096 + 64];
		bool has_alt = snprintf(alt, sizeof(alt), "/proc/%d/root%s", (int)p->pid, name) <
			       (int)sizeof(alt);

		/* A process in another mount namespace names files as it sees
		 * them: the same path here may be another file (a container's
		 * libc). When ours is not the file it mapped, its own root comes
		 * first. Whatever the path names now must be the file mapped
		 * (its owner may have renamed another over it). */
		bool other;

		/* a file seen before by its inode (exec churn maps the same
		 * few files again and again): no stat() */
		m.dso = ps_dsos__by_id(&syms->dsos, id->dev, id->ino);
		if (m.dso) {
			m.label = ps_dso__name(m.dso);
			return proc_add_map(p, &m);
		}
		other = id->ino && !is_file(name, id);
		m.dso = other && has_alt ? ps_dsos__get(&syms->dsos, name, alt, id) : NULL;
		if (!m.dso && errno != ENOMEM)
			m.dso = ps_dsos__get(&syms->dsos, name, name, id);
		if (!m.dso && errno != ENOMEM && has_alt && !other)
			m.dso = ps_dsos__get(&syms->dsos, name, alt, id);
		if (!m.dso && errno != ENOMEM)
			m.dso = ps_dsos__get_unreadable(&syms->dsos, name);
		if (!m.dso)
			return -ENOMEM;
		m.label = ps_dso__name(m.dso);
	} else if (!strcmp(name, "[vdso]")) {
		m.dso = ps_dsos__vdso(&syms->dsos);
		m.label = "[vdso]";
	} else {
		m.label = !strcmp(name, "[vsyscall]") ? "[vsyscall]" : "[anon]";
	}
	return proc_add_map(p, &m);
}

uint64_t ps_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int ps_symbols__add_proc(struct ps_symbols *syms, pid_t pid)
{
	char path[64], line[4096 + 256];
	struct ps_proc *p;
	FILE *f;
	int err = 0;

	if (!syms || pid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	p = live(syms, pid);
	if (!p) {
		err = -ENOMEM;
		goto cleanup;
	}
	proc_forget(p, false);
	p->from_proc = true;
	p->read_ns = ps_coarse_ns();
	/* "start-end perms offset maj:min inode   path" */
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int name_at = 0;
		char *name, *nl;
		struct ps_file_stamp id;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off,
			   &maj, &min, &ino, &name_at) < 7 ||
		    !name_at)
			continue;
		id = (struct ps_file_stamp){.dev = makedev(maj, min), .ino = (ino_t)ino};
		if (perms[2] != 'x')
			continue;
		name = line + name_at;
		nl = strchr(name, '\n');
		if (nl)
			*nl = '\0';
		err = add_mapping(syms, p, start, end, off, name, &id);
		if (err == -ENOMEM)
			goto cleanup;
		err = 0;
	}
cleanup:
	fclose(f);
	return err;
}

struct ps_proc *ps_procs__known(struct ps_symbols *syms, pid_t pid)
{
	struct ps_proc *p = ps_procs__find(syms, pid);

	if (p && p->from_proc)
		return p;
	/* Once only: a pid that is gone stays an empty entry. */
	if (ps_symbols__add_proc(syms, pid) == -ENOMEM)
		return NULL;
	p = ps_procs__get(syms, pid);
	if (p)
		p->from_proc = true;
	return p;
}

static int copy_maps(struct ps_proc *to, const struct ps_proc *from)
{
	struct ps_map *v = NULL;

	if (from->n) {
		v = malloc(from->n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memcpy(v, from->maps, from->n * sizeof(*v));
	}
	free(to->maps);
	to->maps = v;
	to->n = to->cap = from->n;
	to->hint = 0;
	to->gen++;
	/* the child's own epochs start here: all it has was mapped at its first */
	for (size_t i = 0; i < to->n; i++)
		to->maps[i].born = to->epoch;
	return 0;
}

int ps_symbols__record(struct ps_symbols *syms, const struct ps_record *rec)
{
	struct ps_proc *p, *parent;

	if (!syms || !rec)
		return -EINVAL;
	/* pid -1 marks the kernel's own records (modules, the kernel image). */
	if (rec->pid == 0 || rec->pid == UINT32_MAX)
		return 0;
	switch (rec->type) {
	case PERF_RECORD_MMAP2:
		if (!rec->filename || !(rec->prot & PROT_EXEC) ||
		    (rec->misc & PERF_RECORD_MISC_MMAP_DATA))
			return 0;
		p = live(syms, (pid_t)rec->pid);
		if (!p)
			return -ENOMEM;
		/* Records describe this process now: /proc has nothing to add. */
		p->from_proc = p->tracked = true;
		return add_mapping(syms, p, rec->addr, rec->addr + rec->len, rec->pgoff,
				   rec->filename,
				   &(struct ps_file_stamp){.dev = makedev(rec->maj, rec->min),
							   .ino = rec->ino}) == -ENOMEM
			   ? -ENOMEM
			   : 0;
	case PERF_RECORD_FORK:
		/* A new thread shares its process's mappings already. */
		if (rec->pid == rec->ppid)
			return 0;
		p = live(syms, (pid_t)rec->pid);
		if (!p)
			return -ENOMEM;
		p->from_proc = p->tracked = true;
		parent = ps_procs__find(syms, (pid_t)rec->ppid);
		if (!parent) {
			proc_forget(p, false);
			return 0;
		}
		return copy_maps(p, parent);
	case PERF_RECORD_COMM:
		if (!(rec->misc & PERF_RECORD_MISC_COMM_EXEC))
			return 0;
		/* exec replaced the image; the new one's MMAP2s follow. */
		p = live(syms, (pid_t)rec->pid);
		if (!p)
			return -ENOMEM;
		p->from_proc = p->tracked = true;
		proc_forget(p, true);
		ps_python__forget(syms, (pid_t)rec->pid);
		return 0;
	case PERF_RECORD_EXIT:
		/* the process, not one of its threads; kept a while (gone.c):
		 * samples may still come */
		if (rec->pid == rec->tid) {
			ps_procs__exited(syms, (pid_t)rec->pid);
			ps_python__forget(syms, (pid_t)rec->pid);
		}
		return 0;
	default:
		return 0;
	}
}

struct ps_map *ps_proc__lookup(struct ps_proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;

	if (p->hint < p->n && addr >= p->maps[p->hint].start && addr < p->maps[p->hint].end)
		return &p->maps[p->hint];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= p->maps[lo - 1].end)
		return NULL;
	p->hint = lo - 1;
	return &p->maps[lo - 1];
}

#define PS_MAPS_STALE_NS (20 * 1000000ull)

struct ps_map *ps_procs__lookup_now(struct ps_symbols *syms, struct ps_proc *p, uint64_t addr)
{
	struct ps_map *m = ps_proc__lookup(p, addr);

	if (m || p->tracked || p->gone || ps_coarse_ns() - p->read_ns < PS_MAPS_STALE_NS)
		return m;
	p->read_ns = ps_coarse_ns(); /* a pid gone from /proc is not asked again at once either */
	/* the pidmap holds pointers: p stays where it is */
	return ps_symbols__add_proc(syms, p->pid) == 0 ? ps_proc__lookup(p, addr) : NULL;
}

bool ps_map__adjust(struct ps_map *m)
{
	if (m->adj_state == 0) {
		int64_t adj;

		m->adj_state = !m->dso || ps_dso__offset_adjust(m->dso, m->pgoff, &adj) ? -1 : 1;
		if (m->adj_state == 1)
			m->adj = (int64_t)(m->pgoff - m->start) + adj;
	}
	return m->adj_state > 0;
}

int ps_syms__proc_files(struct ps_symbols *syms, pid_t pid, struct ps_dso **dsos, int64_t *bias,
			size_t max)
{
	struct ps_proc *p = ps_procs__find(syms, pid);
	size_t n = 0;

	if (!p || !p->from_proc) {
		int err = ps_symbols__add_proc(syms, pid);

		if (err)
			return err;
		p = ps_procs__find(syms, pid);
		if (!p)
			return -ESRCH;
	}
	for (size_t i = 0; i < p->n && n < max; i++) {
		struct ps_map *m = &p->maps[i];
		bool seen = false;

		if (!m->dso || !ps_map__adjust(m))
			continue;
		for (size_t j = 0; j < n && !seen; j++)
			seen = dsos[j] == m->dso;
		if (seen)
			continue;
		/* ld.so maps every segment of a file with one bias, so the code
		 * mapping's also places the file's data. */
		dsos[n] = m->dso;
		bias[n++] = -m->adj;
	}
	return (int)n;
}

struct ps_dso *ps_syms__file(struct ps_symbols *syms, const char *path)
{
	return ps_dsos__get(&syms->dsos, path, path, NULL);
}
