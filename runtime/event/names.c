/*
 * names.c: the symbolic event names perf accepts without asking the
 * kernel: generic hardware events (cycles, instructions, ...), software
 * events (cpu-clock, page-faults, ...), hardware-cache events built from a
 * cache, an operation and a result (L1-dcache-load-misses), and raw events
 * (r01c2). Spellings and aliases follow perf's tables so that what works in
 * `perf stat -e` works here; matching is case-insensitive. The one-line
 * descriptions are ours, for `perfscript -l`.
 */
#include <string.h>
#include <strings.h>

#include "event/event.h"

#define MAX_ALIASES 5

struct sym {
	const char *names[MAX_ALIASES]; /* canonical first, then aliases */
	uint64_t config;
	const char *desc;
};

static const struct sym hw_syms[] = {
    {{"cpu-cycles", "cycles"},
     PERF_COUNT_HW_CPU_CYCLES,
     "Core cycles (may vary with frequency scaling)"},
    {{"instructions"}, PERF_COUNT_HW_INSTRUCTIONS, "Instructions retired"},
    {{"cache-references"},
     PERF_COUNT_HW_CACHE_REFERENCES,
     "Last-level cache accesses (the PMU's idea of them)"},
    {{"cache-misses"}, PERF_COUNT_HW_CACHE_MISSES, "Last-level cache misses"},
    {{"branch-instructions", "branches"},
     PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
     "Branch instructions retired"},
    {{"branch-misses"}, PERF_COUNT_HW_BRANCH_MISSES, "Mispredicted branches retired"},
    {{"bus-cycles"}, PERF_COUNT_HW_BUS_CYCLES, "Bus cycles"},
    {{"stalled-cycles-frontend", "idle-cycles-frontend"},
     PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
     "Cycles the front end issued nothing"},
    {{"stalled-cycles-backend", "idle-cycles-backend"},
     PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
     "Cycles the back end could not accept work"},
    {{"ref-cycles"},
     PERF_COUNT_HW_REF_CPU_CYCLES,
     "Reference cycles (constant rate, not scaled by frequency)"},
};

/* Numbers rather than enum names for the newest ones, so that older
 * linux/perf_event.h headers still build. */
static const struct sym sw_syms[] = {
    {{"cpu-clock"}, PERF_COUNT_SW_CPU_CLOCK, "CPU time by a per-CPU high-resolution timer (ns)"},
    {{"task-clock"}, PERF_COUNT_SW_TASK_CLOCK, "CPU time of the task (ns)"},
    {{"page-faults", "faults"}, PERF_COUNT_SW_PAGE_FAULTS, "Page faults"},
    {{"context-switches", "cs"}, PERF_COUNT_SW_CONTEXT_SWITCHES, "Context switches"},
    {{"cpu-migrations", "migrations"}, PERF_COUNT_SW_CPU_MIGRATIONS, "Migrations to another CPU"},
    {{"minor-faults"}, PERF_COUNT_SW_PAGE_FAULTS_MIN, "Page faults served without I/O"},
    {{"major-faults"}, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "Page faults that needed I/O"},
    {{"alignment-faults"},
     PERF_COUNT_SW_ALIGNMENT_FAULTS,
     "Alignment faults fixed up by the kernel"},
    {{"emulation-faults"}, PERF_COUNT_SW_EMULATION_FAULTS, "Instructions the kernel emulated"},
    {{"dummy"}, 9, "Counts nothing (carries side-band records)"},
    {{"bpf-output"}, 10, "Output from BPF programs"},
    {{"cgroup-switches"}, 11, "Switches between tasks of different cgroups"},
};

/* Cache ids, operations and results, in kernel enum order
 * (PERF_COUNT_HW_CACHE_L1D.., _OP_READ.., _RESULT_ACCESS..). */
static const char *const cache_types[][MAX_ALIASES] = {
    {"L1-dcache", "l1-d", "l1d", "L1-data"},
    {"L1-icache", "l1-i", "l1i", "L1-instruction"},
    {"LLC", "L2"},
    {"dTLB", "d-tlb", "Data-TLB"},
    {"iTLB", "i-tlb", "Instruction-TLB"},
    {"branch", "branches", "bpu", "btb", "bpc"},
    {"node"},
};
#define NCACHE (sizeof(cache_types) / sizeof(cache_types[0]))

static const char *const cache_ops[][MAX_ALIASES] = {
    {"load", "loads", "read"},
    {"store", "stores", "write"},
    {"prefetch", "prefetches", "speculative-read", "speculative-load"},
};
#define NOPS (sizeof(cache_ops) / sizeof(cache_ops[0]))

/* perf's "Reference" plus "references"/"accesses", which users type. */
static const char *const cache_results[][MAX_ALIASES] = {
    {"refs", "references", "ops", "access", "accesses"},
    {"misses", "miss"},
};
#define NRESULTS (sizeof(cache_results) / sizeof(cache_results[0]))

/* Which operations each cache can count, as in perf's table; the kernel
 * would reject the others with ENOENT at open time, too late to be useful. */
static const unsigned cache_valid_ops[NCACHE] = {
    [PERF_COUNT_HW_CACHE_L1D] = 7,  [PERF_COUNT_HW_CACHE_L1I] = 5,  [PERF_COUNT_HW_CACHE_LL] = 7,
    [PERF_COUNT_HW_CACHE_DTLB] = 7, [PERF_COUNT_HW_CACHE_ITLB] = 1, [PERF_COUNT_HW_CACHE_BPU] = 1,
    [PERF_COUNT_HW_CACHE_NODE] = 7,
};

static bool name_is(const char *s, size_t len, const char *name)
{
	return name && strlen(name) == len && strncasecmp(s, name, len) == 0;
}

static const struct sym *find_sym(const struct sym *tab, size_t n, const char *s, size_t len)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < MAX_ALIASES && tab[i].names[j]; j++)
			if (name_is(s, len, tab[i].names[j]))
				return &tab[i];
	return NULL;
}

/* The longest alias that s starts with and that ends at a '-' or at the end
 * of s; returns its row and sets *used, or -1. Longest wins so that
 * "L1-dcache" is not read as "l1-d" followed by "cache". */
static int match_piece(const char *const (*tab)[MAX_ALIASES], size_t n, const char *s, size_t len,
		       size_t *used)
{
	int best = -1;

	*used = 0;
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < MAX_ALIASES && tab[i][j]; j++) {
			size_t l = strlen(tab[i][j]);

			if (l > len || l <= *used || strncasecmp(s, tab[i][j], l) != 0)
				continue;
			if (l < len && s[l] != '-')
				continue;
			best = (int)i;
			*used = l;
		}
	}
	return best;
}

/* Skip a piece and the '-' after it. */
static void advance(const char **s, size_t *len, size_t used)
{
	if (used < *len)
		used++;
	*s += used;
	*len -= used;
}

/* TYPE[-OP][-RESULT] or TYPE[-RESULT][-OP], defaults read and access, like
 * perf. Returns 1 and the config, 0 when s is not a cache name, or < 0 for
 * a cache name whose operation the cache cannot count. */
static int decode_cache(const char *s, size_t len, uint64_t *config, int *type_out, int *op_out)
{
	int type, op = -1, result = -1;
	size_t used;

	type = match_piece(cache_types, NCACHE, s, len, &used);
	if (type < 0)
		return 0;
	advance(&s, &len, used);
	for (int piece = 0; piece < 2 && len > 0; piece++) {
		int r;

		if (op < 0 && (r = match_piece(cache_ops, NOPS, s, len, &used)) >= 0)
			op = r;
		else if (result < 0 &&
			 (r = match_piece(cache_results, NRESULTS, s, len, &used)) >= 0)
			result = r;
		else
			return 0;
		advance(&s, &len, used);
	}
	if (len > 0)
		return 0;
	if (op < 0)
		op = PERF_COUNT_HW_CACHE_OP_READ;
	if (result < 0)
		result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	*type_out = type;
	*op_out = op;
	if (!(cache_valid_ops[type] & (1u << op)))
		return -1;
	*config = (uint64_t)type | (uint64_t)op << 8 | (uint64_t)result << 16;
	return 1;
}

/* rNNNN: up to 16 hex digits of raw config, lower-case 'r' as in perf. */
static bool decode_raw(const char *s, size_t len, uint64_t *config)
{
	uint64_t v = 0;

	if (len < 2 || len > 17 || s[0] != 'r')
		return false;
	for (size_t i = 1; i < len; i++) {
		char c = s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return false;
		v = v << 4 | d;
	}
	*config = v;
	return true;
}

int ps_ev__legacy_hw(const char *s, size_t len, uint32_t *type, uint64_t *config)
{
	const struct sym *sym = find_sym(hw_syms, sizeof(hw_syms) / sizeof(hw_syms[0]), s, len);
	int r, t = 0, op = 0;

	if (sym) {
		*type = PERF_TYPE_HARDWARE;
		*config = sym->config;
		return 1;
	}
	r = decode_cache(s, len, config, &t, &op);
	if (r > 0)
		*type = PERF_TYPE_HW_CACHE;
	return r;
}

static int symbolic_resolve(const struct ps_ev_ref *ref, struct ps_event *ev,
			    struct ps_event_error *err)
{
	struct perf_event_attr *attr = &ev->attr;
	const struct sym *sym;
	uint64_t config;
	int r, type = 0, op = 0;

	if (ref->sys)
		return 0;
	if ((sym = find_sym(hw_syms, sizeof(hw_syms) / sizeof(hw_syms[0]), ref->name,
			    ref->name_len))) {
		attr->type = PERF_TYPE_HARDWARE;
		attr->config = sym->config;
		return 1;
	}
	if ((sym = find_sym(sw_syms, sizeof(sw_syms) / sizeof(sw_syms[0]), ref->name,
			    ref->name_len))) {
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = sym->config;
		return 1;
	}
	r = decode_cache(ref->name, ref->name_len, &config, &type, &op);
	if (r < 0)
		return ps_ev__fail(err, PS_ERR_UNKNOWN_EVENT, ref->column, ref->name, ref->name_len,
				   "unknown event '%.*s' at column %d (%s cannot count %s events)",
				   (int)ref->name_len, ref->name, ref->column, cache_types[type][0],
				   cache_ops[op][0]);
	if (r > 0) {
		attr->type = PERF_TYPE_HW_CACHE;
		attr->config = config;
		return 1;
	}
	if (decode_raw(ref->name, ref->name_len, &config)) {
		attr->type = PERF_TYPE_RAW;
		attr->config = config;
		return 1;
	}
	return 0;
}

static void suggest_syms(const struct sym *tab, size_t n, struct ps_suggest *s)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < MAX_ALIASES && tab[i].names[j]; j++)
			ps_suggest__try(s, tab[i].names[j]);
}

/* The vocabulary: every generic and software name and alias, and the cache
 * names in the form `perf list` prints (L1-dcache-loads, -load-misses). */
static void symbolic_suggest(const struct ps_ev_ref *ref, struct ps_suggest *s)
{
	char buf[64];

	(void)ref;
	suggest_syms(hw_syms, sizeof(hw_syms) / sizeof(hw_syms[0]), s);
	suggest_syms(sw_syms, sizeof(sw_syms) / sizeof(sw_syms[0]), s);
	for (size_t t = 0; t < NCACHE; t++) {
		for (size_t op = 0; op < NOPS; op++) {
			if (!(cache_valid_ops[t] & (1u << op)))
				continue;
			snprintf(buf, sizeof(buf), "%s-%s", cache_types[t][0], cache_ops[op][1]);
			ps_suggest__try(s, buf);
			snprintf(buf, sizeof(buf), "%s-%s-misses", cache_types[t][0],
				 cache_ops[op][0]);
			ps_suggest__try(s, buf);
		}
	}
}

const struct ps_ev_resolver ps_ev__symbolic = {
    .what = "symbolic",
    .resolve = symbolic_resolve,
    .suggest = symbolic_suggest,
};

static int sym_foreach(const struct sym *tab, size_t n, const char *group, uint32_t type,
		       int (*fn)(const struct ps_ev_sym_entry *e, void *ctx), void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		struct ps_ev_sym_entry e = {group, tab[i].names[0], tab[i].desc, type,
					    tab[i].config};
		int r = fn(&e, ctx);

		if (r)
			return r;
	}
	return 0;
}

/* Every name in the form `perf list` prints, for the listing. */
int ps_ev__symbolic_foreach(int (*fn)(const struct ps_ev_sym_entry *e, void *ctx), void *ctx)
{
	static const char *const res_desc[NRESULTS] = {"accesses", "misses"};
	char name[64], desc[96];
	int r;

	if ((r = sym_foreach(hw_syms, sizeof(hw_syms) / sizeof(hw_syms[0]), "hardware",
			     PERF_TYPE_HARDWARE, fn, ctx)) ||
	    (r = sym_foreach(sw_syms, sizeof(sw_syms) / sizeof(sw_syms[0]), "software",
			     PERF_TYPE_SOFTWARE, fn, ctx)))
		return r;
	for (size_t t = 0; t < NCACHE; t++) {
		for (size_t op = 0; op < NOPS; op++) {
			if (!(cache_valid_ops[t] & (1u << op)))
				continue;
			for (size_t res = 0; res < NRESULTS; res++) {
				struct ps_ev_sym_entry e = {"cache", name, desc, PERF_TYPE_HW_CACHE,
							    t | op << 8 | res << 16};

				if (res == 0)
					snprintf(name, sizeof(name), "%s-%s", cache_types[t][0],
						 cache_ops[op][1]);
				else
					snprintf(name, sizeof(name), "%s-%s-misses",
						 cache_types[t][0], cache_ops[op][0]);
				snprintf(desc, sizeof(desc), "%s %s %s", cache_types[t][0],
					 cache_ops[op][0], res_desc[res]);
				if ((r = fn(&e, ctx)))
					return r;
			}
		}
	}
	return 0;
}
