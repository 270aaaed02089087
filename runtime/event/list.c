/*
 * list.c: what this machine can name, for `perfscript -l` and (later)
 * the REPL's completion. It gathers names from every source the parser
 * resolves against — the symbolic tables, tracefs, each sysfs PMU's aliases
 * and the libpfm4 PMUs found present — in the order a user scans them, and
 * asks the running kernel about the hardware and cache events with one
 * user-only perf_event_open each on the calling thread, since those are the
 * ones a VM or an older CPU lacks, and each libpfm4 PMU with one of its
 * events. Tracefs entries without an id (ftrace's own record types) are
 * not listed: nothing can open them. Answers are cached for the process, so a
 * REPL that lists again pays nothing. Every name printed is one the parser
 * accepts as written.
 */
#include <errno.h>
#include <pthread.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/perf.h"
#include "base/array.h"
#include "event/event.h"

struct ps_event_list {
	int tp_err; /* why tracepoints are not listed: -EACCES, -ENOENT, or 0 */
	struct ps_event_list_entry *e;
	size_t n, cap;
	const char *glob;
	bool wild;
};

/* What the kernel said, asked once per process (under seen_lock: two
 * threads may list at once): 0 not asked yet, 1 opened, 2 refused, 3
 * cannot tell (no permission). */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char hw_seen[PERF_COUNT_HW_MAX];
static unsigned char cache_seen[PERF_COUNT_HW_CACHE_MAX][PERF_COUNT_HW_CACHE_OP_MAX]
			       [PERF_COUNT_HW_CACHE_RESULT_MAX];

static int probe_kernel(uint32_t type, uint64_t config)
{
	struct perf_event_attr a = {.size = sizeof(a), .type = type, .config = config};
	unsigned char *slot;
	long fd;

	if (type == PERF_TYPE_HARDWARE && config < PERF_COUNT_HW_MAX)
		slot = &hw_seen[config];
	else if (type == PERF_TYPE_HW_CACHE)
		slot = &cache_seen[config & 0xff][(config >> 8) & 0xff][(config >> 16) & 0xff];
	else
		return -1;
	pthread_mutex_lock(&seen_lock);
	if (!*slot) {
		a.disabled = 1;
		a.exclude_kernel = 1; /* allowed at perf_event_paranoid <= 2 */
		a.exclude_hv = 1;
		fd = ps_perf__open(&a, 0, -1, -1);
		if (fd >= 0) {
			close((int)fd);
			*slot = 1;
		} else {
			*slot = errno == EACCES || errno == EPERM || errno == EMFILE ? 3 : 2;
		}
	}
	fd = *slot;
	pthread_mutex_unlock(&seen_lock);
	return fd == 1 ? 1 : fd == 2 ? 0 : -1;
}

static bool wanted(const struct ps_event_list *l, const char *group, const char *name)
{
	if (!l->glob)
		return true;
	if (!l->wild)
		return strcasestr(name, l->glob) || !strcasecmp(group, l->glob);
	return fnmatch(l->glob, name, FNM_CASEFOLD) == 0 ||
	       fnmatch(l->glob, group, FNM_CASEFOLD) == 0;
}

static int add(struct ps_event_list *l, const char *group, const char *name, const char *desc,
	       int supported)
{
	struct ps_event_list_entry *e;

	if (ps_array__reserve(&l->e, &l->cap, l->n + 1, sizeof(*l->e)))
		return -ENOMEM;
	e = &l->e[l->n];
	e->group = strdup(group);
	e->name = strdup(name);
	e->desc = strdup(desc ? desc : "");
	e->supported = supported;
	if (!e->group || !e->name || !e->desc) {
		free((char *)e->group);
		free((char *)e->name);
		free((char *)e->desc);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

static int add_sym(const struct ps_ev_sym_entry *s, void *ctx)
{
	struct ps_event_list *l = ctx;
	int sup = -1;

	if (!wanted(l, s->group, s->name))
		return 0;
	if (s->type == PERF_TYPE_HARDWARE || s->type == PERF_TYPE_HW_CACHE)
		sup = probe_kernel(s->type, s->config);
	return add(l, s->group, s->name, s->desc, sup);
}

static int add_tracepoints(struct ps_event_list *l)
{
	struct ps_ev_tp *tp;
	size_t n;
	int r = 0;

	/* No tracefs (or no permission) means no tracepoint group, and a
	 * reason to give when a glob matched nothing */
	if ((l->tp_err = ps_ev__tracepoint_all(&tp, &n)) < 0)
		return 0;
	for (size_t i = 0; i < n && r == 0; i++)
		if (wanted(l, "tracepoint", tp[i].name))
			r = add(l, "tracepoint", tp[i].name, "", -1);
	ps_ev__tp_free(tp, n);
	return r;
}

static int add_pmu(struct ps_event_list *l, const char *name)
{
	const struct ps_ev_pmu *pmu;
	char group[300], nm[600], desc[600];
	int r;

	if (ps_ev__pmu_find(name, strlen(name), &pmu, 0, NULL) <= 0)
		return 0;
	snprintf(group, sizeof(group), "pmu/%s", pmu->name);
	if (pmu->nfmt) {
		size_t used = (size_t)snprintf(desc, sizeof(desc), "format terms:");

		for (size_t i = 0; i < pmu->nfmt && used < sizeof(desc); i++)
			used += (size_t)snprintf(desc + used, sizeof(desc) - used, " %s",
						 pmu->fmt[i].name);
		snprintf(nm, sizeof(nm), "%s//", pmu->name);
		if (wanted(l, group, nm) && (r = add(l, group, nm, desc, -1)) < 0)
			return r;
	}
	/* the kprobe and uprobe PMUs: the probe forms a user writes */
	for (size_t i = 0;; i++) {
		const char *form, *what;

		if (!ps_ev__probe_form(pmu->name, i, &form, &what))
			break;
		if (wanted(l, group, form) && (r = add(l, group, form, what, -1)) < 0)
			return r;
	}
	for (size_t i = 0; i < pmu->nalias; i++) {
		const struct ps_ev_alias *a = &pmu->alias[i];

		snprintf(nm, sizeof(nm), "%s/%s/", pmu->name, a->name);
		if (!wanted(l, group, nm))
			continue;
		if (a->unit)
			snprintf(desc, sizeof(desc), "%s (scale %g, unit %s)", a->terms,
				 a->scale > 0 ? a->scale : 1.0, a->unit);
		else
			snprintf(desc, sizeof(desc), "%s", a->terms);
		if ((r = add(l, group, nm, desc, -1)) < 0)
			return r;
	}
	return 0;
}

/* Whether the kernel opens an event of libpfm4's PMU pmu, asked once per
 * PMU with the first of its names listed (libpfm4 finds a PMU "present"
 * from the CPU model, which a VM reports without giving the counters): 1,
 * 0 refused, -1 cannot tell (no permission). */
static int pfm_supported(const char *pmu, const char *name)
{
	static char seen[32][64];
	static signed char answer[32];
	static unsigned nseen;
	struct ps_events *evs;
	struct perf_event_attr a;
	unsigned i;
	long fd;
	int r;

	pthread_mutex_lock(&seen_lock);
	for (i = 0; i < nseen; i++)
		if (!strcmp(seen[i], pmu)) {
			r = answer[i];
			pthread_mutex_unlock(&seen_lock);
			return r;
		}
	pthread_mutex_unlock(&seen_lock);
	if (!(evs = ps_events__parse(name, NULL)))
		return -1;
	a = *ps_events__attr(evs, 0);
	ps_events__free(evs);
	a.exclude_kernel = a.exclude_hv = 1; /* allowed at perf_event_paranoid <= 2 */
	fd = ps_perf__open(&a, 0, -1, -1);
	r = fd >= 0 ? 1 : errno == EACCES || errno == EPERM || errno == EMFILE ? -1 : 0;
	if (fd >= 0)
		close((int)fd);
	pthread_mutex_lock(&seen_lock);
	if (nseen < sizeof(answer)) { /* more PMUs than any machine has: no cache */
		snprintf(seen[nseen], sizeof(seen[0]), "%s", pmu);
		answer[nseen++] = (signed char)r;
	}
	pthread_mutex_unlock(&seen_lock);
	return r;
}

static int add_pfm(const struct ps_ev_pfm_entry *p, void *ctx)
{
	struct ps_event_list *l = ctx;
	char group[128], nm[512];

	snprintf(group, sizeof(group), "libpfm4/%s", p->pmu);
	if (p->umask)
		snprintf(nm, sizeof(nm), "%s::%s:%s", p->pmu, p->event, p->umask);
	else
		snprintf(nm, sizeof(nm), "%s::%s", p->pmu, p->event);
	if (!wanted(l, group, nm))
		return 0;
	return add(l, group, nm, p->desc, pfm_supported(p->pmu, nm));
}

struct ps_event_list *ps_event_list__new(const char *glob)
{
	struct ps_event_list *l = calloc(1, sizeof(*l));
	char **pmus = NULL;
	size_t npmus = 0;
	int r;

	if (!l)
		return NULL;
	if (glob && *glob) {
		l->glob = glob;
		l->wild = strpbrk(glob, "*?[") != NULL;
	}
	r = ps_ev__symbolic_foreach(add_sym, l);
	if (r == 0)
		r = add_tracepoints(l);
	if (r == 0 && ps_ev__pmu_names(&pmus, &npmus) == 0)
		for (size_t i = 0; i < npmus && r == 0; i++)
			r = add_pmu(l, pmus[i]);
	ps_ev__names_free(pmus, npmus);
	if (r == 0 && ps_ev__pfm_foreach(add_pfm, l) == -ENOMEM)
		r = -ENOMEM;
	if (r < 0) {
		ps_event_list__free(l);
		errno = -r;
		return NULL;
	}
	l->glob = NULL; /* the caller's string need not outlive the call */
	return l;
}

void ps_event_list__free(struct ps_event_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free((char *)l->e[i].group);
		free((char *)l->e[i].name);
		free((char *)l->e[i].desc);
	}
	free(l->e);
	free(l);
}

const char *ps_event_list__missing(const struct ps_event_list *l)
{
	if (!l || !l->tp_err)
		return NULL;
	return l->tp_err == -EACCES
		   ? "tracepoints are not listed: permission denied reading tracefs "
		     "(tracepoints need root, or read access to tracefs and a "
		     "perf_event_paranoid of -1)"
		   : "tracepoints are not listed: no tracefs is mounted (as root: mount -t "
		     "tracefs nodev /sys/kernel/tracing)";
}

size_t ps_event_list__count(const struct ps_event_list *l)
{
	return l ? l->n : 0;
}

const struct ps_event_list_entry *ps_event_list__entry(const struct ps_event_list *l, size_t i)
{
	return l && i < l->n ? &l->e[i] : NULL;
}

int ps_event_list__print(const struct ps_event_list *l, FILE *out, bool json)
{
	if (!l || !out)
		return -EINVAL;
	if (json)
		fputs("[\n", out);
	for (size_t i = 0; i < l->n; i++) {
		const struct ps_event_list_entry *e = &l->e[i];

		if (json) {
			fputs("  {\"group\": ", out);
			ps_ev__json_string(out, e->group);
			fputs(", \"name\": ", out);
			ps_ev__json_string(out, e->name);
			fputs(", \"desc\": ", out);
			ps_ev__json_string(out, e->desc);
			fprintf(out, ", \"supported\": %s}%s\n",
				e->supported > 0    ? "true"
				: e->supported == 0 ? "false"
						    : "null",
				i + 1 < l->n ? "," : "");
			continue;
		}
		if (i == 0 || strcmp(e->group, l->e[i - 1].group))
			fprintf(out, "%s%s:\n", i ? "\n" : "", e->group);
		fprintf(out, "  %-44s %s%s\n", e->name,
			e->supported == 0 ? "[not supported by this kernel/CPU] " : "", e->desc);
	}
	if (json)
		fputs("]\n", out);
	return ferror(out) ? -EIO : 0;
}
