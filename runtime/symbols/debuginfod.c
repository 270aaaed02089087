/*
 * debuginfod.c: debug information for stripped files, from the debuginfod
 * servers of $DEBUGINFOD_URLS (elfutils' libdebuginfod client, its cache
 * in ~/.cache/debuginfod_client or $DEBUGINFOD_CACHE_PATH). A file with no
 * symbol table and no local debug file (/usr/lib/debug/.build-id) is asked
 * for by its build id, once, on a thread of its own: sampling and delivery
 * never wait for a server. When the answer arrives the file's tables are
 * given back at the next safe point (ps_symbols__trim), and the file opens
 * again with the debug file beside it: names and lines from then on.
 * Before the end of a session, ps_symbols__settle waits for the answers
 * still coming, and from then on (the reports, off the sampling path) a
 * file first opened waits for its own, all within a budget for the whole
 * session (default 2 s), so a slow or dead server costs at most that. A
 * reply larger than $DEBUGINFOD_MAXSIZE (default 1 GiB) is cut off, and one
 * that is not an ELF file with the build id asked is removed from the
 * cache: a server cannot fill the disk. libdebuginfod (and the curl
 * and TLS libraries it brings) is loaded with dlopen at the first question: a session without one
 * never maps it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "base/array.h"
#include "symbols/internal.h"

#define DEFAULT_BUDGET_NS      2000000000ull
#define PS_DEBUGINFOD_MAX_SIZE (1L << 30) /* a large library's debug file: hundreds of MB */

enum { QUEUED, FETCHING, FOUND, NONE };

struct job {
	uint8_t id[20];
	size_t idlen;
	int state;
	char *path;   /* FOUND: the debug file in the client's cache */
	bool applied; /* its files were told */
};

struct ps_fetcher {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool started;
	_Atomic bool stop;
	_Atomic bool found; /* a job was answered since the last apply */
	struct job *jobs;
	size_t n, cap;
	uint64_t budget_ns, waited_ns;
	void *lib;
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_find_debuginfo) *find;
	__typeof__(debuginfod_set_progressfn) *set_progress;
	__typeof__(debuginfod_end) *end;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool load(struct ps_fetcher *f)
{
	void *lib = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		return false;
	*(void **)&f->begin = dlsym(lib, "debuginfod_begin");
	*(void **)&f->find = dlsym(lib, "debuginfod_find_debuginfo");
	*(void **)&f->set_progress = dlsym(lib, "debuginfod_set_progressfn");
	*(void **)&f->end = dlsym(lib, "debuginfod_end");
	if (!f->begin || !f->find || !f->set_progress || !f->end) {
		dlclose(lib);
		return false;
	}
	f->lib = lib;
	return true;
}

/* The worker's fetcher: libdebuginfod calls progress_stop on that thread
 * while a transfer runs (a: bytes so far), and a non-zero answer aborts
 * it: at the session's end, or past the size a debug file may have. */
static _Thread_local struct ps_fetcher *worker_of;
static _Thread_local long max_size;

static int progress_stop(debuginfod_client *c, long a, long b)
{
	(void)c, (void)b;
	return (worker_of && atomic_load(&worker_of->stop)) || a > max_size;
}

/* $DEBUGINFOD_MAXSIZE (which libdebuginfod sends the server too), or
 * PS_DEBUGINFOD_MAX_SIZE: a server must not fill the disk. */
static long max_size_of(void)
{
	const char *v = getenv(DEBUGINFOD_MAXSIZE_ENV_VAR);
	char *end;
	long n = v ? strtol(v, &end, 10) : 0;

	return v && *v && !*end && n > 0 ? n : PS_DEBUGINFOD_MAX_SIZE;
}

/* Whether the file a server sent is an ELF file with the build id asked;
 * what is not is taken out of the cache. */
static bool is_debug_file(int fd, const char *path, const uint8_t *id, size_t idlen)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	const void *got;
	ssize_t n = elf && elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &got) : -1;
	bool ok = n == (ssize_t)idlen && !memcmp(got, id, idlen);

	elf_end(elf);
	if (!ok && path)
		unlink(path);
	return ok;
}

static void *worker(void *arg)
{
	struct ps_fetcher *f = arg;
	debuginfod_client *c = f->begin();

	worker_of = f;
	max_size = max_size_of();
	elf_version(EV_CURRENT);
	if (c)
		f->set_progress(c, progress_stop);
	pthread_mutex_lock(&f->lock);
	for (;;) {
		struct job *j = NULL;

		for (size_t i = 0; i < f->n && !j; i++)
			if (f->jobs[i].state == QUEUED)
				j = &f->jobs[i];
		if (atomic_load(&f->stop))
			break;
		if (!j) {
			pthread_cond_wait(&f->cond, &f->lock);
			continue;
		}
		j->state = FETCHING;
		{
			uint8_t id[20];
			size_t idlen = j->idlen;
			size_t at = (size_t)(j - f->jobs); /* jobs may move while unlocked */
			char *path = NULL;
			int fd;

			memcpy(id, j->id, idlen);
			pthread_mutex_unlock(&f->lock);
			fd = c ? f->find(c, id, (int)idlen, &path) : -ENOSYS;
			if (fd >= 0 && !is_debug_file(fd, path, id, idlen)) {
				close(fd);
				fd = -ENOEXEC;
			}
			if (fd >= 0)
				close(fd);
			pthread_mutex_lock(&f->lock);
			f->jobs[at].state = fd >= 0 && path ? FOUND : NONE;
			f->jobs[at].path = fd >= 0 ? path : NULL;
			if (fd >= 0 && path)
				atomic_store(&f->found, true);
			else
				free(path);
		}
		pthread_cond_broadcast(&f->cond);
	}
	pthread_mutex_unlock(&f->lock);
	if (c)
		f->end(c);
	return NULL;
}

static struct ps_fetcher *fetcher(struct ps_dsos *dsos)
{
	struct ps_fetcher *f = dsos->fetch;

	if (f)
		return f->lib ? f : NULL;
	if (!(f = dsos->fetch = calloc(1, sizeof(*f))))
		return NULL;
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	f->budget_ns = dsos->debuginfod_set ? dsos->debuginfod_budget_ns : DEFAULT_BUDGET_NS;
	if (!load(f))
		return NULL;
	f->started = pthread_create(&f->thread, NULL, worker, f) == 0;
	return f->started ? f : NULL;
}

void ps_debuginfod__want(struct ps_dsos *dsos, const struct ps_dso *d)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct ps_fetcher *f;

	if (!urls || !*urls || !d->build_id_len || dsos->debuginfod_off || !(f = fetcher(dsos)))
		return;
	pthread_mutex_lock(&f->lock);
	for (size_t i = 0; i < f->n; i++)
		if (f->jobs[i].idlen == d->build_id_len &&
		    !memcmp(f->jobs[i].id, d->build_id, d->build_id_len)) {
			pthread_mutex_unlock(&f->lock);
			return; /* asked already */
		}
	if (!ps_array__reserve(&f->jobs, &f->cap, f->n + 1, sizeof(*f->jobs))) {
		struct job *j = &f->jobs[f->n++];

		*j = (struct job){.idlen = d->build_id_len, .state = QUEUED};
		memcpy(j->id, d->build_id, d->build_id_len);
		pthread_cond_broadcast(&f->cond);
	}
	pthread_mutex_unlock(&f->lock);
}

bool ps_debuginfod__answered(const struct ps_dsos *dsos)
{
	return dsos->fetch && atomic_load(&dsos->fetch->found);
}

/* Give each answered file its debug file, at a safe point. */
void ps_debuginfod__apply(struct ps_dsos *dsos)
{
	struct ps_fetcher *f = dsos->fetch;

	if (!f || !f->lib)
		return;
	pthread_mutex_lock(&f->lock);
	atomic_store(&f->found, false);
	for (size_t i = 0; i < f->n; i++) {
		struct job *j = &f->jobs[i];

		if (j->state != FOUND || j->applied)
			continue;
		j->applied = true;
		for (size_t k = 0; k < dsos->n; k++) {
			struct ps_dso *d = dsos->v[k];

			if (d->build_id_len != j->idlen || memcmp(d->build_id, j->id, j->idlen) ||
			    d->debug_path)
				continue;
			d->debug_path = strdup(j->path);
			if (d->opened)
				ps_dso__evict(d); /* opens again, with the debug file */
		}
	}
	pthread_mutex_unlock(&f->lock);
}

/* Wait for f's pending jobs (or only the one for id, when given) until
 * the session's budget is spent. Called with f->lock held. */
static void wait_for(struct ps_fetcher *f, const uint8_t *id, size_t idlen)
{
	uint64_t t0 = now_ns(), deadline;

	deadline = t0 + (f->budget_ns > f->waited_ns ? f->budget_ns - f->waited_ns : 0);
	for (;;) {
		bool pending = false;
		struct timespec until = {.tv_sec = (time_t)(deadline / 1000000000ull),
					 .tv_nsec = (long)(deadline % 1000000000ull)};

		for (size_t i = 0; i < f->n; i++)
			if (!id || (f->jobs[i].idlen == idlen && !memcmp(f->jobs[i].id, id, idlen)))
				pending |=
				    f->jobs[i].state == QUEUED || f->jobs[i].state == FETCHING;
		if (!pending || now_ns() >= deadline)
			break;
		pthread_cond_timedwait(&f->cond, &f->lock, &until);
	}
	f->waited_ns += now_ns() - t0;
}

const char *ps_debuginfod__wait(struct ps_dsos *dsos, const struct ps_dso *d)
{
	struct ps_fetcher *f = dsos->fetch;
	const char *path = NULL;

	if (!f || !f->lib)
		return NULL;
	pthread_mutex_lock(&f->lock);
	wait_for(f, d->build_id, d->build_id_len);
	for (size_t i = 0; i < f->n && !path; i++)
		if (f->jobs[i].idlen == d->build_id_len &&
		    !memcmp(f->jobs[i].id, d->build_id, d->build_id_len) &&
		    f->jobs[i].state == FOUND)
			path = f->jobs[i].path; /* stays until the fetcher goes */
	pthread_mutex_unlock(&f->lock);
	return path;
}

void ps_debuginfod__settle(struct ps_dsos *dsos)
{
	struct ps_fetcher *f = dsos->fetch;

	dsos->settling = true; /* from now on a new question is waited for */
	if (!f || !f->lib)
		return;
	pthread_mutex_lock(&f->lock);
	wait_for(f, NULL, 0);
	pthread_mutex_unlock(&f->lock);
	ps_debuginfod__apply(dsos);
}

void ps_debuginfod__free(struct ps_dsos *dsos)
{
	struct ps_fetcher *f = dsos->fetch;
	struct timespec t;

	if (!f)
		return;
	if (f->started) {
		atomic_store(&f->stop, true);
		pthread_mutex_lock(&f->lock);
		pthread_cond_broadcast(&f->cond);
		pthread_mutex_unlock(&f->lock);
		/* a transfer in progress aborts at its next progress call; one
		 * stuck in a connect is left to the process's exit */
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_nsec += 200000000;
		if (t.tv_nsec >= 1000000000) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000;
		}
		if (pthread_timedjoin_np(f->thread, NULL, &t) != 0) {
			pthread_detach(f->thread);
			dsos->fetch = NULL; /* the thread still uses f: leave it */
			return;
		}
	}
	for (size_t i = 0; i < f->n; i++)
		free(f->jobs[i].path);
	free(f->jobs);
	if (f->lib)
		dlclose(f->lib);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->cond);
	free(f);
	dsos->fetch = NULL;
}
