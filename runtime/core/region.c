/*
 * region.c: code regions, the marker API of LIKWID and PAPI's high-level
 * API over perfscript's event strings. A program brackets code with
 * ps_region__begin("solve") ... ps_region__end("solve") on any thread; each
 * thread counts the one event set of the process (a spec string, else
 * $PERFSCRIPT_EVENTS, else task-clock) on its own fds, opened at its first
 * begin as one group where the kernel allows it, so a boundary is one
 * read() (or rdpmc from the user pages, for hardware counters the kernel
 * lets user space read). A region sums, per thread, the inclusive counts of
 * its outermost activations and counts its calls; regions nest, and an end
 * must close the innermost open region. Results outlive their thread and
 * are reported at exit (core/region_report.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/perf.h"
#include "core/internal.h"
#include "core/region.h"

struct ps_regions_global ps_regions_g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static __thread struct ps_region_thread *self;
static __thread char last_msg[512];
static pthread_key_t close_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

const char *ps_regions__message(void)
{
	return last_msg;
}

char *ps_region__msgbuf(size_t *len)
{
	*len = sizeof(last_msg);
	return last_msg;
}

static int fail(int err, const char *fmt, const char *arg)
{
	snprintf(last_msg, sizeof(last_msg), fmt, arg, ps_strerror(err));
	return err;
}

static void close_fds(struct ps_region_thread *t)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < t->n; i++) {
		if (t->pages && t->pages[i])
			munmap(t->pages[i], page);
		if (t->fds[i] >= 0)
			close(t->fds[i]);
		t->fds[i] = -1;
	}
	free(t->pages);
	t->pages = NULL;
	t->open = false;
}

/* A thread's fds go with it; its results stay for the report. */
static void thread_gone(void *p)
{
	close_fds(p);
}

/* A forked child counts itself from scratch: the fds it inherits count the
 * parent's threads, and their results are the parent's to report. */
static void forked(void)
{
	for (struct ps_region_thread *t = ps_regions_g.threads; t; t = t->next)
		close_fds(t);
	ps_regions_g.threads = NULL; /* the copies are left: the child may not own them whole */
	self = NULL;
}

static void make_key(void)
{
	pthread_key_create(&close_key, thread_gone);
	pthread_atfork(NULL, NULL, forked);
}

/* Software events and tracepoints never have a user-readable index. */
static bool user_readable(const struct perf_event_attr *a)
{
	return a->type != PERF_TYPE_SOFTWARE && a->type != PERF_TYPE_TRACEPOINT &&
	       a->type != PERF_TYPE_BREAKPOINT;
}

/* Open the set on the calling thread: one group (one read() per boundary),
 * else one fd each when the kernel refuses the group. */
static int open_set(struct ps_region_thread *t, bool grouped)
{
	struct ps_regions_global *g = &ps_regions_g;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < t->n; i++) {
		struct perf_event_attr a = *ps_events__attr(g->evs, i);
		struct ps_open_failure f = {.name = ps_events__name(g->evs, i),
					    .attr = &a,
					    .kind = PS_TARGET_SELF,
					    .cpu = -1};
		int fd;

		/* A group is opened disabled and enabled whole: a member added to a
		 * running leader misses counts until the task is next scheduled in
		 * (about 1 in 9 of the first region's page faults here). */
		a.inherit = 0, a.disabled = grouped && i == 0, a.enable_on_exec = 0;
		a.sample_period = 0, a.freq = 0, a.sample_type = 0;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		if (grouped)
			a.read_format |= PERF_FORMAT_GROUP;
		fd = ps_perf__open(&a, 0, -1, grouped && i ? t->fds[0] : -1);
		if (fd < 0) {
			f.err = -fd;
			ps_explain_open_error(&f, last_msg, sizeof(last_msg));
			close_fds(t);
			return fd;
		}
		t->fds[i] = fd;
		if (user_readable(&a)) {
			void *p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);

			if (!t->pages)
				t->pages = calloc(t->n, sizeof(*t->pages));
			if (t->pages && p != MAP_FAILED)
				t->pages[i] = p;
			else if (p != MAP_FAILED)
				munmap(p, page);
		}
	}
	if (grouped && ioctl(t->fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) < 0) {
		int err = -errno;

		snprintf(last_msg, sizeof(last_msg), "regions: cannot enable the group: %s",
			 strerror(-err));
		close_fds(t);
		return err;
	}
	t->grouped = grouped;
	t->open = true;
	return 0;
}

static struct ps_region_thread *thread_state(int *err)
{
	struct ps_regions_global *g = &ps_regions_g;
	struct ps_region_thread *t = self, **pp;

	*err = 0;
	if (t && t->open)
		return t;
	if (!g->evs) /* the first begin of the process: init opens this thread too */
		return (*err = ps_regions__init(NULL, NULL, 0)) < 0 ? NULL : self;
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || !(t->fds = malloc(g->n * sizeof(*t->fds)))) {
			free(t);
			*err = fail(-ENOMEM, "%s%s", "regions: ");
			return NULL;
		}
		t->tid = (pid_t)syscall(SYS_gettid);
		t->n = g->n;
		for (size_t i = 0; i < t->n; i++)
			t->fds[i] = -1;
		pthread_mutex_lock(&g->lock);
		for (pp = &g->threads; *pp;)
			pp = &(*pp)->next; /* in order of first begin, for the report */
		*pp = t;
		pthread_mutex_unlock(&g->lock);
		self = t;
	}
	if ((t->n == 1 || (*err = open_set(t, true)) < 0) && (*err = open_set(t, false)) < 0)
		return NULL;
	pthread_once(&key_once, make_key);
	pthread_setspecific(close_key, t);
	return t;
}

/* The set's values now, scaled by nothing: raw, enabled and running. */
static int read_set(struct ps_region_thread *t, struct ps_region_read *r)
{
	uint64_t buf[3 + PS_REGION_MAX_EVENTS];
	bool user = t->pages != NULL;

	for (size_t i = 0; user && i < t->n; i++)
		user =
		    t->pages[i] && ps_user_page__read(t->pages[i], &r->v[i], &r->en[i], &r->run[i]);
	if (user)
		return 0;
	if (t->grouped) {
		ssize_t want = (ssize_t)((3 + t->n) * sizeof(*buf));

		if (read(t->fds[0], buf, sizeof(buf)) != want)
			return -EIO;
		for (size_t i = 0; i < t->n; i++) {
			r->v[i] = buf[3 + i];
			r->en[i] = buf[1];
			r->run[i] = buf[2];
		}
		return 0;
	}
	for (size_t i = 0; i < t->n; i++) {
		if (read(t->fds[i], buf, 3 * sizeof(*buf)) != 3 * (ssize_t)sizeof(*buf))
			return -EIO;
		r->v[i] = buf[0], r->en[i] = buf[1], r->run[i] = buf[2];
	}
	return 0;
}

static struct ps_region *find(struct ps_region_thread *t, const char *name, bool add)
{
	struct ps_region *r;

	for (size_t i = 0; i < t->nregions; i++)
		if (!strcmp(t->regions[i]->name, name))
			return t->regions[i];
	if (!add)
		return NULL;
	r = calloc(1, sizeof(*r) + t->n * sizeof(r->sum[0]));
	if (!r || !(r->name = strdup(name))) {
		free(r);
		return NULL;
	}
	/* the report walks this array under the lock */
	pthread_mutex_lock(&ps_regions_g.lock);
	if (t->nregions == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		struct ps_region **p = realloc(t->regions, cap * sizeof(*p));

		if (!p) {
			pthread_mutex_unlock(&ps_regions_g.lock);
			free(r->name);
			free(r);
			return NULL;
		}
		t->regions = p, t->cap = cap;
	}
	t->regions[t->nregions++] = r;
	pthread_mutex_unlock(&ps_regions_g.lock);
	return r;
}

int ps_region__open_self(void)
{
	int err;

	return thread_state(&err) ? 0 : err;
}

int ps_region__begin(const char *name)
{
	struct ps_region_thread *t;
	struct ps_region *r;
	int err;

	if (!name || !*name)
		return fail(-EINVAL, "%s%s", "regions: a region needs a name: ");
	if (!(t = thread_state(&err)))
		return err;
	if (t->depth == PS_REGION_MAX_DEPTH) {
		snprintf(last_msg, sizeof(last_msg),
			 "regions: '%s' would be the 65th open region of this thread: regions nest "
			 "at most 64 deep (end one first)",
			 name);
		return -PS_ERR_LIMIT;
	}
	if (!(r = find(t, name, true)))
		return fail(-ENOMEM, "regions: '%s': %s", name);
	if (r->active++ == 0 && (err = read_set(t, &r->start)) < 0) {
		r->active--;
		return fail(err, "regions: cannot read the counters of '%s': %s", name);
	}
	t->stack[t->depth++] = r;
	return 0;
}

/* The delta from start to now, scaled when the kernel multiplexed it. */
static void add_delta(struct ps_region *r, size_t n, const struct ps_region_read *now)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t d = now->v[i] - r->start.v[i];
		uint64_t en = now->en[i] - r->start.en[i], run = now->run[i] - r->start.run[i];

		if (run && run < en)
			d = (uint64_t)((unsigned __int128)d * en / run);
		ps_region__add(&r->sum[i], d);
	}
}

int ps_region__end(const char *name)
{
	struct ps_region_thread *t = self;
	struct ps_region_read now;
	struct ps_region *r;
	int err;

	if (!name)
		return fail(-EINVAL, "%s%s", "regions: a region needs a name: ");
	if (!t || t->depth == 0) {
		snprintf(last_msg, sizeof(last_msg), "regions: end of '%s' with no region open",
			 name);
		return -PS_ERR_STATE;
	}
	r = t->stack[t->depth - 1];
	if (strcmp(r->name, name)) {
		snprintf(last_msg, sizeof(last_msg),
			 "regions: end of '%s' while '%s' is the innermost open region (end '%s' "
			 "first)",
			 name, r->name, r->name);
		return -PS_ERR_STATE;
	}
	if (r->active == 1) {
		if ((err = read_set(t, &now)) < 0)
			return fail(err, "regions: cannot read the counters of '%s': %s", name);
		add_delta(r, t->n, &now);
	}
	r->active--;
	ps_region__add(&r->calls, 1);
	t->depth--;
	return 0;
}

int ps_region__read(const char *name, uint64_t *calls, uint64_t *values, size_t max)
{
	struct ps_region_thread *t = self;
	struct ps_region *r = t && name ? find(t, name, false) : NULL;

	if (!r)
		return fail(-ENOENT, "regions: no region '%s' on this thread: %s",
			    name ? name : "");
	if (calls)
		*calls = ps_region__get(&r->calls);
	for (size_t i = 0; i < t->n && i < max; i++)
		values[i] = ps_region__get(&r->sum[i]);
	return (int)t->n;
}

int ps_regions__close_thread(void)
{
	struct ps_region_thread *t = self;

	if (!t)
		return 0;
	if (t->depth)
		return fail(-PS_ERR_STATE, "regions: '%s' is still open: %s",
			    t->stack[t->depth - 1]->name);
	close_fds(t);
	return 0;
}
