/*
 * jit.c: names for code a JIT wrote into anonymous memory, from the perf
 * map the JIT keeps, /tmp/perf-PID.map: one "START SIZE name" line per
 * piece of code, START and SIZE in hex, the name the rest of the line (the
 * format perf reads; LuaJIT, V8, the JVM's perf agents and others write it).
 *
 * The file sits in a directory every user can write to and perfscript runs
 * as root, so it is distrusted: it is opened without following a symlink
 * and without blocking (a FIFO would hang the session), and read only when
 * it is a regular file with one link, owned by the process's user or by
 * root, as perf asks. At most PS_JIT_MAX_BYTES of it are read, lines longer
 * than PS_JIT_MAX_LINE are skipped unread, so neither a sparse 2 GiB file
 * nor a symlink to /dev/zero costs more than that much time and memory.
 *
 * A process in another mount namespace (a container, a service with a
 * private /tmp) writes the map in its own /tmp, named by its pid there (the
 * last NSpid of /proc/PID/status): perf-NSPID.map is opened through
 * /proc/PID/root with openat2's RESOLVE_IN_ROOT, so that no symlink inside
 * (an absolute one included) leads out of that root, and judged by the same
 * rules.
 *
 * It is read on the first address of the process that no mapped file names;
 * as a JIT appends to it, only what was added since is read; a file that
 * was replaced or shrank is read again whole, at most once a second. A miss
 * looks at the file at most every PS_JIT_RECHECK_NS, so a profile full of
 * unnamed anonymous addresses does not stat it per sample. Where code was
 * written twice at one address the later line wins, as the JIT reused the
 * memory. A map keeps at most PS_JIT_MAX_ENTRIES entries (past them, the
 * newest half), and what the maps of all processes hold counts in the
 * symbolizer's budget: past a quarter of it, the maps that named nothing
 * for PS_JIT_IDLE_NS are given back, longest idle first (ps_jits__shed, from
 * the trim of symbols/budget.c),
 * and read again if asked; maps in use stay, so the cost follows what is
 * sampled, not what the processes wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/array.h"
#include "symbols/internal.h"
#include "symbols/jitwhere.h"

#define PS_JIT_RECHECK_NS  20000000ull
#define PS_JIT_RELOAD_NS   1000000000ull
#define PS_JIT_MAX_BYTES   (64u << 20)
#define PS_JIT_MAX_LINE	   4096
#define PS_JIT_MAX_ENTRIES 131072	  /* kept a map (about 10 MB): past it the newest half */
#define PS_JIT_IDLE_NS	   10000000000ull /* a map that named nothing this long may go */

struct ps_jitsym {
	uint64_t start, size;
	size_t name;  /* offset in ps_jitmap.names */
	size_t order; /* line number: the later of two at one start wins */
};

struct ps_jitmap {
	char path[64];	/* as the process names it: /tmp/perf-PID.map */
	pid_t root_pid; /* read through /proc/root_pid/root; 0: our own /tmp */
	uid_t uid;	/* the process's user, or 0 when it was gone */
	char why[96];	/* why the map was not read, once said ("" while it is fine) */
	bool told;	/* why was said */
	struct ps_jitsym *v;
	size_t n, cap;
	size_t lines; /* map lines taken so far: the next one's order */
	char *names;
	size_t used, room;
	bool sorted;
	off_t parsed;		/* bytes read up to the end of the last whole line */
	struct stat st;		/* of the file as read; st_ino 0: never read */
	unsigned char head[64]; /* its first bytes as read: a rewrite in place changes them */
	size_t nhead;
	uint64_t born_ns; /* the process's start (CLOCK_REALTIME), 0 when unknown */
	uint64_t checked_ns, loaded_ns;
	uint64_t used_ns; /* when it last named an address (the budget drops the oldest) */
};

static int jitsym_cmp(const void *a, const void *b)
{
	const struct ps_jitsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The map's file, without following a symlink or blocking: in our /tmp, or
 * resolved inside the process's root. An fd, or -errno. */
static int open_file(struct ps_jitmap *j)
{
	struct open_how how = {.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	char root[32];
	int dir, fd, err;

	if (!j->root_pid) {
		fd = open(j->path, (int)how.flags);
		if (fd < 0 && errno == ELOOP)
			snprintf(j->why, sizeof(j->why), "it is a symbolic link");
		return fd < 0 ? -errno : fd;
	}
	snprintf(root, sizeof(root), "/proc/%d/root", (int)j->root_pid);
	if ((dir = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, dir, j->path + 1, &how, sizeof(how));
	err = errno;
	close(dir);
	if (fd < 0 && err == ELOOP)
		snprintf(j->why, sizeof(j->why), "it is a symbolic link");
	return fd < 0 ? -err : fd;
}

/* The map, opened as distrust asks; an fd, or -errno with why said in
 * j->why when the file is there but not to be trusted. */
static int open_map(struct ps_jitmap *j, struct stat *st)
{
	int fd = open_file(j);

	if (fd < 0)
		return fd;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode))
		snprintf(j->why, sizeof(j->why), "it is not a regular file");
	else if (st->st_nlink != 1)
		snprintf(j->why, sizeof(j->why), "it has %lu links", (unsigned long)st->st_nlink);
	else if (st->st_uid != 0 && st->st_uid != j->uid)
		snprintf(j->why, sizeof(j->why),
			 "its owner (uid %u) is neither the process's user (%u) nor root",
			 (unsigned)st->st_uid, (unsigned)j->uid);
	else if (j->born_ns &&
		 (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec <
		     j->born_ns) {
		/* written before the process started: left by an earlier process
		 * that had its pid (JITs leave their maps), not its; not there
		 * yet as far as this one goes */
		close(fd);
		return -ESTALE;
	} else
		return fd;
	close(fd);
	return -EPERM;
}

/* Keep the newest half of the entries (a JIT's latest code is what runs),
 * their names packed again: a map costs at most PS_JIT_MAX_ENTRIES
 * entries, however large its file. */
static int keep_newest(struct ps_jitmap *j)
{
	size_t from = j->lines - PS_JIT_MAX_ENTRIES / 2, n = 0, used = 0;
	char *names = malloc(j->used ? j->used : 1);

	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < j->n; i++) {
		size_t len;

		if (j->v[i].order < from)
			continue;
		len = strlen(j->names + j->v[i].name) + 1;
		memcpy(names + used, j->names + j->v[i].name, len);
		j->v[n] = j->v[i];
		j->v[n++].name = used;
		used += len;
	}
	free(j->names);
	j->names = names;
	j->room = j->used ? j->used : 1;
	j->used = used;
	j->n = n;
	return 0;
}

/* One "START SIZE name" line (without its newline) into the table. */
static int add_line(struct ps_jitmap *j, char *line)
{
	char *end, *name;
	uint64_t start = strtoull(line, &end, 16), size;
	size_t len;

	size = strtoull(end, &name, 16);
	if (name == end || *name != ' ' || !size)
		return 0; /* not a map line */
	name++;
	len = strlen(name);
	if (j->n >= PS_JIT_MAX_ENTRIES && keep_newest(j) < 0)
		return -ENOMEM;
	if (ps_array__reserve(&j->v, &j->cap, j->n + 1, sizeof(*j->v)) ||
	    ps_array__reserve(&j->names, &j->room, j->used + len + 1, 1))
		return -ENOMEM;
	j->v[j->n] =
	    (struct ps_jitsym){.start = start, .size = size, .name = j->used, .order = j->lines++};
	memcpy(j->names + j->used, name, len + 1);
	j->used += len + 1;
	j->n++;
	j->sorted = false;
	return 0;
}

/* Read whole lines from j->parsed up to limit; a line longer than
 * PS_JIT_MAX_LINE is skipped without being kept. */
static int read_lines(struct ps_jitmap *j, int fd, off_t limit)
{
	char buf[65536], line[PS_JIT_MAX_LINE + 1];
	size_t len = 0;
	bool too_long = false;
	off_t at = j->parsed;

	while (at < limit) {
		size_t want =
		    (size_t)(limit - at) < sizeof(buf) ? (size_t)(limit - at) : sizeof(buf);
		ssize_t got = pread(fd, buf, want, at);

		if (got <= 0)
			return got < 0 ? -errno : 0;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] != '\n') {
				if (len < PS_JIT_MAX_LINE)
					line[len++] = buf[i];
				else
					too_long = true;
				continue;
			}
			line[len] = '\0';
			if (!too_long && add_line(j, line) < 0)
				return -ENOMEM;
			len = 0;
			too_long = false;
			j->parsed = at + i + 1;
		}
		at += got;
	}
	return 0;
}

/* Whether the file still begins as it did when read: a map is appended
 * to, so a change there is a rewrite in place (a new process with the
 * same pid truncating the old one's map), to be read again whole. */
static bool same_head(struct ps_jitmap *j, int fd)
{
	unsigned char now[sizeof(j->head)];

	return !j->nhead || (pread(fd, now, j->nhead, 0) == (ssize_t)j->nhead &&
			     !memcmp(now, j->head, j->nhead));
}

/* Read what is new in the file; everything again when it was replaced. */
static void load(struct ps_jitmap *j, uint64_t now)
{
	struct stat st;
	int fd;

	if ((fd = open_map(j, &st)) < 0)
		return;
	if (st.st_ino != j->st.st_ino || st.st_dev != j->st.st_dev || st.st_size < j->parsed ||
	    !same_head(j, fd)) {
		if (j->loaded_ns && now - j->loaded_ns < PS_JIT_RELOAD_NS) {
			close(fd);
			return; /* replaced again so soon: keep what we have a while */
		}
		j->n = j->used = j->lines = 0;
		j->parsed = 0;
		j->nhead = 0;
		j->loaded_ns = now;
	}
	read_lines(j, fd, st.st_size < PS_JIT_MAX_BYTES ? st.st_size : PS_JIT_MAX_BYTES);
	if (j->nhead < sizeof(j->head)) { /* what later loads compare */
		ssize_t got = pread(fd, j->head, sizeof(j->head), 0);

		j->nhead = got > 0 ? (size_t)got : 0;
	}
	close(fd);
	j->st = st;
	if (!j->sorted) {
		qsort(j->v, j->n, sizeof(*j->v), jitsym_cmp);
		j->sorted = true;
	}
}

/* Read the map again if the file changed since it was read. */
static void refresh(struct ps_jitmap *j)
{
	uint64_t now = ps_coarse_ns();
	struct stat st;
	int fd, rc;

	if (j->checked_ns && now - j->checked_ns < PS_JIT_RECHECK_NS)
		return;
	j->checked_ns = now;
	if (!j->root_pid) { /* our own /tmp: one lstat, as ever */
		if (lstat(j->path, &st) < 0)
			return;
	} else { /* inside its root: only an open resolves there */
		if ((fd = open_file(j)) < 0)
			return;
		rc = fstat(fd, &st);
		close(fd);
		if (rc < 0)
			return;
	}
	if (st.st_ino == j->st.st_ino && st.st_size == j->st.st_size &&
	    st.st_mtim.tv_sec == j->st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == j->st.st_mtim.tv_nsec)
		return;
	load(j, now);
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

static struct ps_jitmap *jitmap_new(pid_t pid)
{
	struct ps_jitmap *j = calloc(1, sizeof(*j));
	struct ps_jit_where w;

	if (!j)
		return NULL;
	ps_jit__where(pid, &w);
	memcpy(j->path, w.path, sizeof(j->path));
	j->root_pid = w.root_pid;
	j->uid = w.uid;
	j->born_ns = w.born_ns;
	return j;
}

int ps_jit__lookup(struct ps_symbols *syms, struct ps_proc *p, uint64_t addr, char *buf, size_t len,
		   const char **dso)
{
	struct ps_jitmap *j = p->jit;
	const struct ps_jitsym *s;

	if (!j && !(j = p->jit = jitmap_new(p->pid)))
		return -ENOMEM;
	s = find(j, addr);
	if (!s) {
		refresh(j);
		s = find(j, addr);
	}
	if (j->why[0] && !j->told) { /* refused as perf refuses it: say so, once */
		j->told = true;
		ps_symbols__tell(syms, "%s of process %d is not read: %s", j->path, (int)p->pid,
				 j->why);
	}
	if (!s)
		return -ENOENT;
	j->used_ns = ps_coarse_ns(); /* the coarse clock: a few ns */
	snprintf(buf, len, "%s+0x%" PRIx64, j->names + s->name, addr - s->start);
	*dso = j->path;
	return 0;
}

int ps_jit__entry(struct ps_proc *p, uint64_t addr, uint64_t *start, const char **name)
{
	struct ps_jitmap *j = p->jit;
	const struct ps_jitsym *s;

	if (!j && !(j = p->jit = jitmap_new(p->pid)))
		return -ENOMEM;
	if (!(s = find(j, addr))) {
		refresh(j);
		s = find(j, addr);
	}
	if (!s)
		return -ENOENT;
	*start = s->start;
	*name = j->names + s->name;
	return 0;
}

static size_t map_bytes(const struct ps_jitmap *j)
{
	return sizeof(*j) + j->cap * sizeof(*j->v) + j->room;
}

/* The processes' maps: their bytes, and the idle one used least lately. */
struct jits {
	size_t bytes;
	struct ps_proc *oldest;
	uint64_t now;
};

static void weigh(pid_t pid, void *value, void *ctx)
{
	struct ps_proc *p = *(struct ps_proc **)value;
	struct jits *w = ctx;

	(void)pid;
	if (!p->jit)
		return;
	w->bytes += map_bytes(p->jit);
	if (w->now - p->jit->used_ns >= PS_JIT_IDLE_NS &&
	    (!w->oldest || p->jit->used_ns < w->oldest->jit->used_ns))
		w->oldest = p;
}

size_t ps_jits__bytes(struct ps_symbols *syms)
{
	struct jits w = {0};

	ps_pidmap__each(&syms->procs, weigh, &w);
	return w.bytes;
}

static void recheck(pid_t pid, void *value, void *ctx)
{
	struct ps_proc *p = *(struct ps_proc **)value;

	(void)pid;
	(void)ctx;
	if (p->jit)
		p->jit->checked_ns = 0;
}

void ps_jits__recheck(struct ps_symbols *syms)
{
	ps_pidmap__each(&syms->procs, recheck, NULL);
}

size_t ps_jits__shed(struct ps_symbols *syms, size_t keep)
{
	size_t freed = 0;

	for (;;) {
		struct jits w = {.now = ps_coarse_ns()};

		ps_pidmap__each(&syms->procs, weigh, &w);
		if (w.bytes <= keep || !w.oldest)
			return freed;
		freed += map_bytes(w.oldest->jit);
		ps_jit__free(w.oldest->jit);
		w.oldest->jit = NULL; /* read again at its next unnamed address */
	}
}

void ps_jit__free(struct ps_jitmap *j)
{
	if (!j)
		return;
	free(j->v);
	free(j->names);
	free(j);
}
