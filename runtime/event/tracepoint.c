/*
 * tracepoint.c: resolves `subsystem:event` names to PERF_TYPE_TRACEPOINT
 * attrs by reading the event's id from tracefs (events/SUBSYS/EVENT/id). The
 * tracefs root is $PERFSCRIPT_TRACEFS when set (tests point it at a fixture
 * tree), else /sys/kernel/tracing, else /sys/kernel/debug/tracing. Parsing
 * mounts nothing: ps_tracefs__mount_private (event/tracefs.c) is the
 * explicit call that does, for the command line. An unknown name gets a
 * did-you-mean among the subsystem's events, or among the subsystems. A name with glob characters
 * (sched:*, syscalls:sys_enter_*) is expanded here into every match, in sorted order, and the same
 * walk lists all tracepoints for -l.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "event/event.h"

#define TRACEFS		"/sys/kernel/tracing"
#define DEBUGFS_TRACING "/sys/kernel/debug/tracing"

/* Whether root/events is a directory we can read; a permission failure is
 * remembered so the error can say "permission" rather than "no tracefs". */
static bool has_events_dir(const char *root, bool *denied)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/events", root) >= (int)sizeof(path))
		return false;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return true;
	if (errno == EACCES || errno == EPERM)
		*denied = true;
	return false;
}

/* The tracefs root to use, or NULL when there is none. */
static const char *tracefs_root(bool *denied)
{
	const char *env = getenv("PERFSCRIPT_TRACEFS");

	if (env && *env) /* explicit: never fall back to the real one */
		return has_events_dir(env, denied) ? env : NULL;
	if (has_events_dir(TRACEFS, denied))
		return TRACEFS;
	if (has_events_dir(DEBUGFS_TRACING, denied))
		return DEBUGFS_TRACING;
	return NULL;
}

static bool is_dir_entry(const char *dir, const struct dirent *de)
{
	char path[PATH_MAX];
	struct stat st;

	if (de->d_name[0] == '.')
		return false;
	if (de->d_type == DT_DIR)
		return true;
	if (de->d_type != DT_UNKNOWN)
		return false;
	if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
		return false;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Feed every subdirectory name of dir to the suggester. Returns false when
 * dir cannot be opened. */
static bool suggest_dir(const char *dir, struct ps_suggest *s)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return false;
	while ((de = readdir(d)))
		if (is_dir_entry(dir, de))
			ps_suggest__try(s, de->d_name);
	closedir(d);
	return true;
}

bool ps_ev__has_glob(const char *s, size_t len)
{
	return memchr(s, '*', len) || memchr(s, '?', len) || memchr(s, '[', len);
}

static int unknown(const struct ps_ev_ref *ref, const char *root, struct ps_event_error *err)
{
	size_t toklen = ref->sys_len + 1 + ref->name_len;
	char dir[PATH_MAX];
	struct ps_suggest s;

	if (snprintf(dir, sizeof(dir), "%s/events/%.*s", root, (int)ref->sys_len, ref->sys) >=
	    (int)sizeof(dir))
		return ps_ev__fail(err, PS_ERR_UNKNOWN_EVENT, ref->column, ref->sys, toklen,
				   "unknown tracepoint '%.*s' at column %d", (int)toklen, ref->sys,
				   ref->column);
	ps_suggest__init(&s, ref->name, ref->name_len);
	if (ps_ev__safe_component(ref->sys, ref->sys_len) && suggest_dir(dir, &s)) {
		char full[sizeof(s.best) * 2 + 2];
		size_t l;

		/* Offer the whole "sys:event" name, cut to fit like any token. */
		if (s.best[0]) {
			l = (size_t)snprintf(
			    full, sizeof(full), "%.*s:%s",
			    (int)(ref->sys_len < sizeof(s.best) ? ref->sys_len : 63), ref->sys,
			    s.best);
			l = l < sizeof(s.best) ? l : sizeof(s.best) - 1;
			memcpy(s.best, full, l);
			s.best[l] = '\0';
		}
		ps_ev__fail(err, PS_ERR_UNKNOWN_EVENT, ref->column, ref->sys, toklen,
			    "unknown tracepoint '%.*s' at column %d%s%s%s", (int)toklen, ref->sys,
			    ref->column, s.best[0] ? " (did you mean '" : "", s.best,
			    s.best[0] ? "'?)" : "");
	} else {
		snprintf(dir, sizeof(dir), "%s/events", root);
		ps_suggest__init(&s, ref->sys, ref->sys_len);
		suggest_dir(dir, &s);
		ps_ev__fail(err, PS_ERR_UNKNOWN_EVENT, ref->column, ref->sys, ref->sys_len,
			    "unknown tracepoint subsystem '%.*s' at column %d%s%s%s",
			    (int)ref->sys_len, ref->sys, ref->column,
			    s.best[0] ? " (did you mean '" : "", s.best, s.best[0] ? "'?)" : "");
	}
	if (err)
		snprintf(err->suggestion, sizeof(err->suggestion), "%s", s.best);
	return -PS_ERR_UNKNOWN_EVENT;
}

/* Whether the directory of idpath (.../EVENT/id) has a format file. */
static bool has_format(const char *idpath)
{
	char path[PATH_MAX];
	size_t n = strlen(idpath);

	if (n < 2 || n + 5 >= sizeof(path))
		return false;
	memcpy(path, idpath, n - 2);
	memcpy(path + n - 2, "format", 7);
	return access(path, F_OK) == 0;
}

static int tracepoint_resolve(const struct ps_ev_ref *ref, struct ps_event *ev,
			      struct ps_event_error *err)
{
	struct perf_event_attr *attr = &ev->attr;
	size_t toklen = ref->sys_len + 1 + ref->name_len;
	const char *root;
	char path[PATH_MAX];
	uint64_t id;
	bool denied = false;
	int r;

	if (!ref->sys)
		return 0;
	if (ps_ev__has_glob(ref->sys, ref->sys_len) || ps_ev__has_glob(ref->name, ref->name_len)) {
		/* The parser expands the glob (ps_ev__tracepoint_glob) once the
		 * terms and modifiers that every match shares are known. */
		attr->type = PERF_TYPE_TRACEPOINT;
		attr->config = 0;
		return 1;
	}
	if (!ps_ev__safe_component(ref->sys, ref->sys_len) ||
	    !ps_ev__safe_component(ref->name, ref->name_len))
		return ps_ev__fail(err, PS_ERR_SYNTAX, ref->column, ref->sys, toklen,
				   "bad tracepoint name '%.*s' at column %d", (int)toklen, ref->sys,
				   ref->column);
	root = tracefs_root(&denied);
	if (!root && denied) /* not a missing event: the user may not (EACCES) */
		return ps_ev__fail(err, EACCES, ref->column, ref->sys, toklen,
				   "tracepoint '%.*s' at column %d: permission denied reading "
				   "tracefs (" TRACEFS "); tracepoints need root, or read access "
				   "to tracefs and a perf_event_paranoid of -1",
				   (int)toklen, ref->sys, ref->column);
	if (!root) {
		const char *env = getenv("PERFSCRIPT_TRACEFS");
		bool given = env && *env;

		return ps_ev__fail(err, PS_ERR_NOT_SUPPORTED, ref->column, ref->sys, toklen,
				   "tracepoint '%.*s' at column %d: no tracefs (tried %s)%s",
				   (int)toklen, ref->sys, ref->column,
				   given ? env : TRACEFS " and " DEBUGFS_TRACING,
				   given ? ""
					 : "; as root, perfscript mounts it for itself (a program "
					   "on the library: ps_tracefs__mount_private), or by "
					   "hand: mount -t tracefs nodev " TRACEFS);
	}
	if (snprintf(path, sizeof(path), "%s/events/%.*s/%.*s/id", root, (int)ref->sys_len,
		     ref->sys, (int)ref->name_len, ref->name) >= (int)sizeof(path))
		return unknown(ref, root, err);
	r = ps_ev__read_u64_file(path, &id);
	if (r == -ENOENT && has_format(path))
		return ps_ev__fail(
		    err, PS_ERR_NOT_SUPPORTED, ref->column, ref->sys, toklen,
		    "'%.*s' at column %d has a format but no id in tracefs: it is a "
		    "record type of the ftrace ring buffer, not a tracepoint perf can "
		    "open",
		    (int)toklen, ref->sys, ref->column);
	if (r == -ENOENT || r == -ENOTDIR)
		return unknown(ref, root, err);
	if (r < 0)
		return ps_ev__fail(err, PS_ERR_NOT_SUPPORTED, ref->column, ref->sys, toklen,
				   "tracepoint '%.*s' at column %d: cannot read %s: %s%s",
				   (int)toklen, ref->sys, ref->column, path, strerror(-r),
				   r == -EACCES ? " (tracepoints need root)" : "");
	if (!(ev->tp_name = strndup(ref->sys, toklen)))
		return ps_ev__nomem(err);
	attr->type = PERF_TYPE_TRACEPOINT;
	attr->config = id;
	return 1;
}

int ps_ev__tracepoint_path(const char *tracepoint, const char *file, char *buf, size_t len)
{
	const char *colon = strchr(tracepoint, ':');
	bool denied = false;
	const char *root = tracefs_root(&denied);

	if (!colon)
		return -EINVAL;
	if (!root)
		return denied ? -EACCES : -ENOENT;
	if (snprintf(buf, len, "%s/events/%.*s/%s/%s", root, (int)(colon - tracepoint), tracepoint,
		     colon + 1, file) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

const struct ps_ev_resolver ps_ev__tracepoint = {
    .what = "tracepoint",
    .resolve = tracepoint_resolve,
};

bool ps_ev__tracepoint_subsys(const char *sys, size_t len)
{
	char path[PATH_MAX];
	struct stat st;
	bool denied = false;
	const char *root;

	if (!ps_ev__safe_component(sys, len) || !(root = tracefs_root(&denied)))
		return false;
	if (snprintf(path, sizeof(path), "%s/events/%.*s", root, (int)len, sys) >=
	    (int)sizeof(path))
		return false;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void ps_ev__tp_free(struct ps_ev_tp *tp, size_t n)
{
	for (size_t i = 0; i < n && tp; i++)
		free(tp[i].name);
	free(tp);
}

static int cmp_tp(const void *a, const void *b)
{
	return strcmp(((const struct ps_ev_tp *)a)->name, ((const struct ps_ev_tp *)b)->name);
}

struct walk {
	struct ps_ev_tp *v;
	size_t n, cap;
};

static int walk_add(struct walk *w, const char *sys, const char *ev, uint64_t id)
{
	if (ps_array__reserve(&w->v, &w->cap, w->n + 1, sizeof(*w->v)))
		return -ENOMEM;
	if (asprintf(&w->v[w->n].name, "%s:%s", sys, ev) < 0)
		return -ENOMEM;
	w->v[w->n++].id = id;
	return 0;
}

/* Events of one subsystem directory that match nglob (NULL: all); ids are
 * read only when asked for, since -l lists thousands of names. */
static int walk_subsys(struct walk *w, const char *root, const char *sys, const char *nglob,
		       bool ids)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (snprintf(dir, sizeof(dir), "%s/events/%s", root, sys) >= (int)sizeof(dir) ||
	    !(d = opendir(dir)))
		return 0;
	while ((de = readdir(d))) {
		uint64_t id = 0;

		if (!is_dir_entry(dir, de) || (nglob && fnmatch(nglob, de->d_name, 0) != 0))
			continue;
		/* no id: an ftrace record type (ftrace:bprint), which perf cannot open */
		if (snprintf(path, sizeof(path), "%s/%s/id", dir, de->d_name) >=
			(int)sizeof(path) ||
		    (ids ? ps_ev__read_u64_file(path, &id) < 0 : access(path, F_OK) < 0))
			continue;
		if ((r = walk_add(w, sys, de->d_name, id)) < 0)
			break;
	}
	closedir(d);
	return r;
}

static int walk_all(const char *root, const char *sglob, const char *nglob, bool ids,
		    struct ps_ev_tp **out, size_t *n)
{
	char dir[PATH_MAX];
	struct walk w = {0};
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (snprintf(dir, sizeof(dir), "%s/events", root) >= (int)sizeof(dir) ||
	    !(d = opendir(dir)))
		return -errno;
	while ((de = readdir(d))) {
		if (!is_dir_entry(dir, de) || (sglob && fnmatch(sglob, de->d_name, 0) != 0))
			continue;
		if ((r = walk_subsys(&w, root, de->d_name, nglob, ids)) < 0)
			break;
	}
	closedir(d);
	if (r < 0) {
		ps_ev__tp_free(w.v, w.n);
		return r;
	}
	if (w.n)
		qsort(w.v, w.n, sizeof(*w.v), cmp_tp);
	*out = w.v;
	*n = w.n;
	return 0;
}

int ps_ev__tracepoint_all(struct ps_ev_tp **out, size_t *n)
{
	bool denied = false;
	const char *root = tracefs_root(&denied);

	*out = NULL;
	*n = 0;
	if (!root)
		return denied ? -EACCES : -ENOENT;
	return walk_all(root, NULL, NULL, false, out, n);
}

int ps_ev__tracepoint_glob(const struct ps_ev_ref *ref, struct ps_ev_tp **out, size_t *n,
			   struct ps_event_error *err)
{
	size_t toklen = ref->sys_len + 1 + ref->name_len;
	char sglob[NAME_MAX + 1], nglob[NAME_MAX + 1];
	bool denied = false;
	const char *root;
	int r;

	*out = NULL;
	*n = 0;
	if (ref->sys_len > NAME_MAX || ref->name_len > NAME_MAX)
		return ps_ev__fail(err, PS_ERR_SYNTAX, ref->column, ref->sys, toklen,
				   "bad tracepoint name '%.*s' at column %d", (int)toklen, ref->sys,
				   ref->column);
	if (!(root = tracefs_root(&denied)))
		return ps_ev__fail(
		    err, denied ? EACCES : PS_ERR_NOT_SUPPORTED, ref->column, ref->sys, toklen,
		    "tracepoint glob '%.*s' at column %d: %s", (int)toklen, ref->sys, ref->column,
		    denied ? "permission denied reading tracefs"
			   : "no tracefs (as root: mount -t tracefs nodev " TRACEFS ")");
	snprintf(sglob, sizeof(sglob), "%.*s", (int)ref->sys_len, ref->sys);
	snprintf(nglob, sizeof(nglob), "%.*s", (int)ref->name_len, ref->name);
	r = walk_all(root, sglob, nglob, true, out, n);
	if (r == -ENOMEM)
		return ps_ev__nomem(err);
	if (r < 0 || *n == 0) {
		ps_ev__tp_free(*out, *n);
		*out = NULL;
		*n = 0;
		return ps_ev__fail(err, PS_ERR_UNKNOWN_EVENT, ref->column, ref->sys, toklen,
				   "no tracepoint matches '%.*s' at column %d", (int)toklen,
				   ref->sys, ref->column);
	}
	return 0;
}
