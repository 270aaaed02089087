/*
 * pfm.c: vendor event names through libpfm4 (INST_RETIRED.ANY,
 * inst_retired.any, skx::L2_RQSTS:ALL_DEMAND_MISS:u, INST_RETIRED:ANY_P:c=1:i).
 * libpfm4 owns the tables and the encoding; this file only shapes the name
 * (Intel's EVENT.UMASK spelling becomes libpfm4's EVENT:UMASK), asks
 * ps_pfm.get_os_event_encoding() for a perf_event_attr with libpfm4's own
 * modifiers (u, k, c=, i, e, precise=, period=...) applied, and copies the
 * attr fields it set. A trailing segment libpfm4 rejects that reads as perf
 * modifiers (":pp") is left for the parser to apply with perf's meaning.
 * libpfm4 is loaded (event/pfm_lib.c) and initialised once, on the first
 * name that needs it, so scripts that only use generic names never pay for
 * it; LIBPFM_FORCE_PMU picks the
 * PMU in tests, as libpfm4 documents.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* linux/perf_event.h first: libpfm4's own copy then stands aside. */
#include "base/array.h"
#include "event/event.h"
#include "event/pfm_lib.h"

#define MAX_TOKEN 255
#define PLM_ALL	  (PFM_PLM0 | PFM_PLM3 | PFM_PLMH) /* no level excluded unless asked */

static pthread_mutex_t pfm_lock = PTHREAD_MUTEX_INITIALIZER;
static bool pfm_inited;
static int pfm_state;
static char pfm_why[256]; /* why libpfm4 could not be loaded, or "" */

static int pfm_ready(void)
{
	pthread_mutex_lock(&pfm_lock);
	if (!pfm_inited) {
		pfm_why[0] = '\0';
		if (ps_pfm__load(pfm_why, sizeof(pfm_why)) != 0)
			pfm_state = -ENOENT;
		else if ((pfm_state = ps_pfm.initialize()) != PFM_SUCCESS)
			snprintf(pfm_why, sizeof(pfm_why), "libpfm4 failed to start: %s",
				 ps_pfm.strerror(pfm_state));
		pfm_state = pfm_state ? -ENOENT : 0;
		pfm_inited = true;
	}
	pthread_mutex_unlock(&pfm_lock);
	return pfm_state;
}

const char *ps_ev__pfm_unavailable(void)
{
	const char *why;

	pthread_mutex_lock(&pfm_lock);
	why = pfm_inited && pfm_why[0] ? pfm_why : NULL;
	pthread_mutex_unlock(&pfm_lock);
	return why;
}

static void forget_names(void);

void ps_ev__pfm_reset(void)
{
	pthread_mutex_lock(&pfm_lock);
	if (pfm_inited && pfm_state == 0)
		ps_pfm.terminate();
	pfm_inited = false;
	pthread_mutex_unlock(&pfm_lock);
	forget_names();
}

/* Intel's architectural events whose documented names libpfm4 spells
 * differently (its generic names for the fixed counters). */
static const struct {
	const char *intel, *pfm;
} arch_names[] = {
    {"INST_RETIRED:ANY", "INSTRUCTION_RETIRED"},
    {"CPU_CLK_UNHALTED:THREAD", "UNHALTED_CORE_CYCLES"},
    {"CPU_CLK_UNHALTED:CORE", "UNHALTED_CORE_CYCLES"},
    {"CPU_CLK_UNHALTED:REF_TSC", "UNHALTED_REFERENCE_CYCLES"},
};

static bool is_vendor_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.' || c == ':' ||
	       c == '=';
}

/* Copy tok into buf in libpfm4's spelling: '.' becomes ':' in the event
 * part (after any "pmu::"); modifiers keep theirs. */
static int pfm_spelling(const char *tok, size_t len, char *buf, bool swap)
{
	const char *qual = NULL;
	size_t ev = 0;
	bool in_event = true;

	for (size_t i = 0; i + 1 < len; i++)
		if (tok[i] == ':' && tok[i + 1] == ':')
			qual = &tok[i];
	if (qual)
		ev = (size_t)(qual - tok) + 2;
	for (size_t i = 0; i < len; i++) {
		char c = tok[i];

		if (i >= ev && c == ':')
			in_event = false; /* libpfm4's own ':' starts umasks/modifiers */
		buf[i] = i >= ev && in_event && c == '.' ? ':' : c;
	}
	buf[len] = '\0';
	/* Swap an architectural Intel name for libpfm4's, keeping the rest. */
	for (size_t i = 0; swap && i < sizeof(arch_names) / sizeof(arch_names[0]); i++) {
		size_t n = strlen(arch_names[i].intel), m = strlen(arch_names[i].pfm);
		char *e = buf + ev;

		if (strncasecmp(e, arch_names[i].intel, n) || (e[n] && e[n] != ':'))
			continue;
		memmove(e + m, e + n, strlen(e + n) + 1);
		memcpy(e, arch_names[i].pfm, m);
		return 1; /* the umask segment went into the name */
	}
	return 0;
}

/* 0 with the attr fields libpfm4 set copied into ev, or a PFM_ERR_* code. */
static int encode(const char *name, struct ps_event *ev)
{
	struct perf_event_attr a;
	pfm_perf_encode_arg_t arg;
	struct perf_event_attr *o = &ev->attr;
	int r;

	memset(&a, 0, sizeof(a));
	memset(&arg, 0, sizeof(arg));
	a.size = sizeof(a);
	arg.attr = &a;
	arg.size = sizeof(arg);
	arg.cpu = -1;
	r = ps_pfm.get_os_event_encoding(name, PLM_ALL, PFM_OS_PERF_EVENT_EXT, &arg);
	if (r != PFM_SUCCESS)
		return r;
	o->type = a.type;
	o->config = a.config;
	o->config1 = a.config1;
	o->config2 = a.config2;
	o->exclude_user = a.exclude_user;
	o->exclude_kernel = a.exclude_kernel;
	o->exclude_hv = a.exclude_hv;
	o->exclude_host = a.exclude_host;
	o->exclude_guest = a.exclude_guest;
	o->precise_ip = a.precise_ip;
	o->sample_period = a.sample_period;
	o->freq = a.freq;
	o->pinned = a.pinned;
	o->exclusive = a.exclusive;
	if (arg.cpu >= 0)
		ev->cpu = arg.cpu;
	return 0;
}

/* The event index of buf's "pmu::EVENT" or "EVENT" part, or < 0. */
static int find_event(const char *buf, char *evname, size_t len)
{
	const char *q = strstr(buf, "::");
	const char *c = strchr(q ? q + 2 : buf, ':');
	size_t n = c ? (size_t)(c - buf) : strlen(buf);

	if (n >= len)
		return -1;
	memcpy(evname, buf, n);
	evname[n] = '\0';
	return ps_pfm.find_event(evname);
}

/* libpfm4 found the event but not the rest: name the part it does not
 * know and what the event takes. */
static int bad_attr(const char *tok, size_t len, const char *buf, int skip, int idx, int column,
		    int pfm_err, struct ps_event_error *err)
{
	pfm_event_info_t info = {.size = sizeof(info)};
	char takes[200] = "", part[64];
	const char *p = strchr(strstr(buf, "::") ? strstr(buf, "::") + 2 : buf, ':');
	struct ps_suggest s = {0};
	int bad_col = column, code;
	size_t used = 0;

	if (ps_pfm.get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) != PFM_SUCCESS)
		info.nattrs = 0;
	for (int i = 0; i < info.nattrs && used + 1 < sizeof(takes); i++) {
		pfm_event_attr_info_t ai = {.size = sizeof(ai)};

		if (ps_pfm.get_event_attr_info(idx, i, PFM_OS_PERF_EVENT_EXT, &ai) == PFM_SUCCESS)
			used += (size_t)snprintf(takes + used, sizeof(takes) - used, "%s%s",
						 used ? " " : "", ai.name);
	}
	if (used >= sizeof(takes))
		memcpy(takes + sizeof(takes) - 5, " ...", 5);
	/* Segments an architectural name swallowed (INST_RETIRED.ANY) are fine. */
	while (skip-- > 0 && p)
		p = strchr(p + 1, ':');
	/* The first segment that is no attribute of the event is the culprit. */
	while (p && *p == ':') {
		const char *e = p + 1;
		size_t n;
		bool known = false;

		while (*e && *e != ':' && *e != '=')
			e++;
		n = (size_t)(e - p - 1);
		for (int i = 0; i < info.nattrs && n > 0; i++) {
			pfm_event_attr_info_t ai = {.size = sizeof(ai)};

			if (ps_pfm.get_event_attr_info(idx, i, PFM_OS_PERF_EVENT_EXT, &ai) ==
				PFM_SUCCESS &&
			    strlen(ai.name) == n && !strncasecmp(ai.name, p + 1, n))
				known = true;
		}
		if (!known && n > 0 && n < sizeof(part)) {
			memcpy(part, p + 1, n);
			part[n] = '\0';
			ps_suggest__init(&s, part, n);
			for (int i = 0; i < info.nattrs; i++) {
				pfm_event_attr_info_t ai = {.size = sizeof(ai)};

				if (ps_pfm.get_event_attr_info(idx, i, PFM_OS_PERF_EVENT_EXT,
							       &ai) == PFM_SUCCESS)
					ps_suggest__try(&s, ai.name);
			}
			bad_col = column + (int)(p + 1 - buf);
			break;
		}
		/* A value libpfm4 refused: the last "name=value" is the likeliest. */
		if (pfm_err == PFM_ERR_ATTR_VAL && *e == '=')
			bad_col = column + (int)(p + 1 - buf);
		p = strchr(e, ':');
	}
	code = pfm_err == PFM_ERR_ATTR_VAL ? PS_ERR_BAD_VALUE : PS_ERR_UNKNOWN_EVENT;
	ps_ev__fail(err, code, bad_col, tok, len,
		    "vendor event '%.*s' at column %d: %s%s%s%s (%s takes: %s)", (int)len, tok,
		    bad_col, ps_pfm.strerror(pfm_err), s.best[0] ? " (did you mean '" : "", s.best,
		    s.best[0] ? "'?)" : "", info.name, takes);
	if (err)
		snprintf(err->suggestion, sizeof(err->suggestion), "%s", s.best);
	return -code;
}

/* The core of both entry points: 1 claimed (*used set), 0 not libpfm4's. */
static int vendor(const char *tok, size_t len, int column, bool strip_mods, struct ps_event *ev,
		  size_t *used, struct ps_event_error *err)
{
	char buf[MAX_TOKEN + 32], evname[MAX_TOKEN + 1];
	const char *last;
	int r, idx, swapped;

	if (len == 0 || len > MAX_TOKEN || pfm_ready() < 0)
		return 0;
	swapped = pfm_spelling(tok, len, buf, true);
	if ((r = encode(buf, ev)) == 0) {
		*used = len;
		return 1;
	}
	/* "EVENT:UMASK:pp": perf's modifiers after a vendor name. */
	last = memrchr(tok, ':', len);
	if (strip_mods && last && last > tok && last[-1] != ':' && last + 1 < tok + len) {
		size_t keep = (size_t)(last - tok), i;

		for (i = keep + 1; i < len && strchr("ukhHGIpSDe", tok[i]); i++)
			;
		pfm_spelling(tok, keep, buf, true);
		if (i == len && encode(buf, ev) == 0) {
			*used = keep;
			return 1;
		}
		pfm_spelling(tok, len, buf, true);
	}
	idx = find_event(buf, evname, sizeof(evname));
	/* Columns come from the text as written, so point at it (spelled
	 * with ':' but without the architectural-name swap, same length). */
	pfm_spelling(tok, len, buf, false);
	if (idx >= 0)
		return bad_attr(tok, len, buf, swapped, idx, column, r, err);
	return 0;
}

int ps_ev__parse_vendor(const char *s, size_t *pos, struct ps_ev_ref *ref, struct ps_event *ev,
			struct ps_event_error *err)
{
	size_t start = *pos, end = start, used = 0;
	int r;

	while (is_vendor_char(s[end]))
		end++;
	r = vendor(&s[start], end - start, (int)start + 1, true, ev, &used, err);
	if (r <= 0)
		return r;
	*ref = (struct ps_ev_ref){.name = &s[start], .name_len = used, .column = (int)start + 1};
	ref->terms = s[start + used] == '/';
	*pos = start + used;
	return 1;
}

static int pfm_resolve(const struct ps_ev_ref *ref, struct ps_event *ev, struct ps_event_error *err)
{
	size_t used;

	if (ref->sys)
		return 0;
	return vendor(ref->name, ref->name_len, ref->column, false, ev, &used, err);
}

/* Walk the events of the PMUs libpfm4 finds here, minus its generic
 * perf_events tables (they repeat the symbolic names). */
static int each_event(int (*fn)(int idx, const pfm_pmu_info_t *pi, void *ctx), void *ctx)
{
	pfm_pmu_t p;
	int r;

	if (pfm_ready() < 0)
		return -ENOENT;
	pfm_for_all_pmus(p)
	{
		pfm_pmu_info_t pi = {.size = sizeof(pi)};

		if (p == PFM_PMU_PERF_EVENT || p == PFM_PMU_PERF_EVENT_RAW ||
		    ps_pfm.get_pmu_info(p, &pi) != PFM_SUCCESS || !pi.is_present)
			continue;
		for (int i = pi.first_event; i >= 0; i = ps_pfm.get_event_next(i))
			if ((r = fn(i, &pi, ctx)))
				return r;
	}
	return 0;
}

/* Event names of the present PMUs, copied once: asking libpfm4 for each
 * event's info costs about a microsecond, too much for every misspelling. */
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static char **names;
static size_t nnames, capnames;
static bool names_done;

static int collect_name(int idx, const pfm_pmu_info_t *pi, void *ctx)
{
	pfm_event_info_t info = {.size = sizeof(info)};

	(void)pi;
	(void)ctx;
	if (ps_pfm.get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) != PFM_SUCCESS)
		return 0;
	if (ps_array__reserve(&names, &capnames, nnames + 1, sizeof(*names)))
		return -ENOMEM;
	if (!(names[nnames] = strdup(info.name)))
		return -ENOMEM;
	nnames++;
	return 0;
}

static void forget_names(void)
{
	pthread_mutex_lock(&names_lock);
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	names = NULL;
	nnames = capnames = 0;
	names_done = false;
	pthread_mutex_unlock(&names_lock);
}

static void load_names(void)
{
	pthread_mutex_lock(&names_lock);
	if (!names_done && each_event(collect_name, NULL) != -ENOMEM)
		names_done = true;
	pthread_mutex_unlock(&names_lock);
}

/* Event names only (not every unit mask): cheap enough for an error path.
 * For "INST_RETRIED.ANY" the event part is compared and the rest kept. */
static void pfm_suggest(const struct ps_ev_ref *ref, struct ps_suggest *s)
{
	struct ps_suggest part;
	const char *dot;
	char rest[64], cand[160];

	if (ref->sys || ref->name_len < 4)
		return;
	load_names();
	dot = memchr(ref->name, '.', ref->name_len);
	if (!dot) {
		for (size_t i = 0; i < nnames; i++)
			ps_suggest__try(s, names[i]);
		return;
	}
	if (ref->name_len - (size_t)(dot - ref->name) >= sizeof(rest))
		return;
	snprintf(rest, sizeof(rest), "%.*s", (int)(ref->name_len - (size_t)(dot - ref->name)), dot);
	ps_suggest__init(&part, ref->name, (size_t)(dot - ref->name));
	for (size_t i = 0; i < nnames; i++) {
		if (ps_suggest__distance(part.word, part.word_len, names[i], strlen(names[i])) >=
		    part.best_dist)
			continue;
		snprintf(cand, sizeof(cand), "%s%s", names[i], rest);
		ps_suggest__try(s, cand);
	}
}

struct foreach_ctx {
	int (*fn)(const struct ps_ev_pfm_entry *e, void *ctx);
	void *ctx;
};

static int foreach_one(int idx, const pfm_pmu_info_t *pi, void *vctx)
{
	struct foreach_ctx *c = vctx;
	pfm_event_info_t info = {.size = sizeof(info)};
	struct ps_ev_pfm_entry e = {.pmu = pi->name};
	int r, bare = -1; /* -1: no unit masks seen yet */

	if (ps_pfm.get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) != PFM_SUCCESS)
		return 0;
	e.event = info.name;
	e.desc = info.desc ? info.desc : "";
	/* The bare name only when it means something alone: no unit masks,
	 * or one of them is the default. */
	for (int i = 0; i < info.nattrs; i++) {
		pfm_event_attr_info_t ai = {.size = sizeof(ai)};

		if (ps_pfm.get_event_attr_info(idx, i, PFM_OS_PERF_EVENT_EXT, &ai) == PFM_SUCCESS &&
		    ai.type == PFM_ATTR_UMASK) {
			bare = bare == 1 ? 1 : ai.is_dfl ? 1 : 0;
			if (bare)
				break;
		}
	}
	if (bare && (r = c->fn(&e, c->ctx)))
		return r;
	for (int i = 0; i < info.nattrs; i++) {
		pfm_event_attr_info_t ai = {.size = sizeof(ai)};

		if (ps_pfm.get_event_attr_info(idx, i, PFM_OS_PERF_EVENT_EXT, &ai) != PFM_SUCCESS ||
		    ai.type != PFM_ATTR_UMASK)
			continue;
		e.umask = ai.name;
		e.desc = ai.desc ? ai.desc : "";
		if ((r = c->fn(&e, c->ctx)))
			return r;
	}
	return 0;
}

int ps_ev__pfm_foreach(int (*fn)(const struct ps_ev_pfm_entry *e, void *ctx), void *ctx)
{
	struct foreach_ctx c = {fn, ctx};

	return each_event(foreach_one, &c);
}

const struct ps_ev_resolver ps_ev__pfm = {
    .what = "libpfm4",
    .resolve = pfm_resolve,
    .suggest = pfm_suggest,
};
