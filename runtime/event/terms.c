/*
 * terms.c: the `/term=value,.../` part of an event string. The terms
 * every event takes are one table here: perf's (period, freq, name,
 * inherit, no-inherit, pinned, exclusive, cpu, config, config1, config2,
 * call-graph, stack-size, max-stack, time, overwrite, no-overwrite,
 * percore, metric-id, aux-output, aux-sample-size) and ours (the sample
 * contents callchain, stack, addr, raw, and the overflow path bpf/nobpf).
 * A term the table does not know goes to the resolver that named the event
 * (its term hook), which is where PMU format terms such as event= and
 * umask= are encoded. A term without a value means 1; a value in single or
 * double quotes may hold ':', '=' and ',' (name='a:b=c,d').
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/regs.h"
#include "event/event.h"

enum term_id {
	T_PERIOD,
	T_FREQ,
	T_NAME,
	T_INHERIT,
	T_PINNED,
	T_EXCLUSIVE,
	T_CPU,
	T_CONFIG,
	T_CONFIG1,
	T_CONFIG2,
	T_CALLCHAIN,
	T_CALL_GRAPH,
	T_STACK_SIZE,
	T_STACK,
	T_ADDR,
	T_RAW,
	T_BPF,
	T_NOBPF,
	T_NO_INHERIT,
	T_TIME,
	T_OVERWRITE,
	T_NO_OVERWRITE,
	T_PERCORE,
	T_METRIC_ID,
	T_AUX_OUTPUT,
	T_AUX_SAMPLE_SIZE,
	T_CGROUP,
};

enum term_kind {
	K_COUNT, /* a number > 0 */
	K_BOOL,	 /* 0 or 1 */
	K_NUM,	 /* any 64-bit number */
	K_STR,	 /* a non-empty string */
	K_WORD,	 /* one of a few words */
};

static const struct term_def {
	const char *name;
	enum term_id id;
	enum term_kind kind;
} terms[] = {
    {"period", T_PERIOD, K_COUNT},
    {"freq", T_FREQ, K_COUNT},
    {"name", T_NAME, K_STR},
    {"inherit", T_INHERIT, K_BOOL},
    {"pinned", T_PINNED, K_BOOL},
    {"exclusive", T_EXCLUSIVE, K_BOOL},
    {"cpu", T_CPU, K_NUM},
    {"config", T_CONFIG, K_NUM},
    {"config1", T_CONFIG1, K_NUM},
    {"config2", T_CONFIG2, K_NUM},
    {"callchain", T_CALLCHAIN, K_BOOL},
    {"call-graph", T_CALL_GRAPH, K_WORD},
    {"stack-size", T_STACK_SIZE, K_COUNT},
    {"max-stack", T_STACK, K_COUNT},
    {"stack", T_STACK, K_COUNT},
    {"addr", T_ADDR, K_BOOL},
    {"raw", T_RAW, K_BOOL},
    {"bpf", T_BPF, K_BOOL},
    {"nobpf", T_NOBPF, K_BOOL},
    {"no-inherit", T_NO_INHERIT, K_BOOL},
    {"time", T_TIME, K_BOOL},
    {"overwrite", T_OVERWRITE, K_BOOL},
    {"no-overwrite", T_NO_OVERWRITE, K_BOOL},
    {"percore", T_PERCORE, K_BOOL},
    {"metric-id", T_METRIC_ID, K_STR},
    {"aux-output", T_AUX_OUTPUT, K_BOOL},
    {"aux-sample-size", T_AUX_SAMPLE_SIZE, K_COUNT},
    {"cgroup", T_CGROUP, K_BOOL},
};
#define NTERMS (sizeof(terms) / sizeof(terms[0]))
#define TERMS_LIST                                                                                 \
	"period freq name inherit pinned exclusive cpu config config1 config2 callchain "          \
	"call-graph stack-size max-stack stack addr raw bpf nobpf no-inherit time overwrite "      \
	"no-overwrite percore metric-id aux-output aux-sample-size cgroup"
/* Deepest callchain stack= may ask for; the kernel's own cap (kernel.perf_event_max_stack)
 * defaults to 127 and refuses more at open, but 1024 keeps room for a raised sysctl. */
#define PS_MAX_STACK 1024
/* User stack bytes a call-graph=dwarf sample copies: perf's default, and the
 * most a record (at most 64 KiB, header and registers included) holds. */
#define PS_STACK_SIZE_DEFAULT 8192
#define PS_STACK_SIZE_MAX     65528
#define PS_DWARF_BITS	      (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

struct term {
	const char *key, *val;
	size_t key_len, val_len;
	size_t key_pos, val_pos;
	bool has_val;
};

static bool is_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.'; /* '.': sysfs event names (l1d_cache.rd) */
}

static int unknown_term(const struct term *t, struct ps_event_error *err)
{
	struct ps_suggest s;

	ps_suggest__init(&s, t->key, t->key_len);
	for (size_t i = 0; i < NTERMS; i++)
		ps_suggest__try(&s, terms[i].name);
	ps_ev__fail(err, PS_ERR_UNKNOWN_TERM, (int)t->key_pos + 1, t->key, t->key_len,
		    "unknown term '%.*s' at column %d (%s%s%svalid terms: " TERMS_LIST ")",
		    (int)t->key_len, t->key, (int)t->key_pos + 1, s.best[0] ? "did you mean '" : "",
		    s.best, s.best[0] ? "'?; " : "");
	if (err)
		snprintf(err->suggestion, sizeof(err->suggestion), "%s", s.best);
	return -PS_ERR_UNKNOWN_TERM;
}

static int bad_value(const struct term *t, const char *why, struct ps_event_error *err)
{
	return ps_ev__fail(err, PS_ERR_BAD_VALUE, (int)t->val_pos + 1, t->val, t->val_len,
			   "bad %s '%.*s' for term '%.*s' at column %d%s",
			   *why ? "value" : "number", (int)t->val_len, t->val, (int)t->key_len,
			   t->key, (int)t->val_pos + 1, why);
}

static void set_bit(__u64 *word, uint64_t bit, uint64_t on)
{
	if (on)
		*word |= bit;
	else
		*word &= ~bit;
}

/* call-graph=fp|dwarf|no, as perf writes it: fp is the kernel's frame
 * pointer walk (the callchain term); dwarf adds the user registers and a
 * copy of the user stack to each sample for the DWARF unwinder, and keeps
 * the kernel's walk for kernel frames only, as perf record does. */
static int call_graph(const struct term *t, struct perf_event_attr *a, struct ps_event_error *err)
{
	size_t n = t->has_val ? t->val_len : 0;

	if (!n)
		return ps_ev__fail(err, PS_ERR_BAD_VALUE, (int)t->key_pos + 1, t->key, t->key_len,
				   "term 'call-graph' at column %d needs a value: fp, dwarf or no",
				   (int)t->key_pos + 1);
	if (n == 2 && !memcmp(t->val, "fp", 2)) {
		a->sample_type &= ~(uint64_t)PS_DWARF_BITS;
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		a->exclude_callchain_user = 0;
		a->sample_regs_user = 0;
		return 0;
	}
	if (n == 2 && !memcmp(t->val, "no", 2)) {
		a->sample_type &= ~(uint64_t)(PS_DWARF_BITS | PERF_SAMPLE_CALLCHAIN);
		a->exclude_callchain_user = 0;
		a->sample_regs_user = 0;
		return 0;
	}
	if (n == 5 && !memcmp(t->val, "dwarf", 5)) {
		if (!PS_REGS_UNWIND_MASK)
			return bad_value(t,
					 " (dwarf unwinding is not supported on this architecture; "
					 "use call-graph=fp)",
					 err);
		a->sample_type |= PERF_SAMPLE_CALLCHAIN | PS_DWARF_BITS;
		a->exclude_callchain_user = 1;
		a->sample_regs_user = PS_REGS_UNWIND_MASK;
		if (!a->sample_stack_user)
			a->sample_stack_user = PS_STACK_SIZE_DEFAULT;
		return 0;
	}
	return bad_value(t, " (call-graph is fp, dwarf or no)", err);
}

/* name= and metric-id=: a string value. */
static int apply_string(const struct term_def *d, const struct term *t, struct ps_event *ev,
			struct ps_event_error *err)
{
	char *str;

	if (!t->has_val || t->val_len == 0)
		return ps_ev__fail(err, PS_ERR_BAD_VALUE, (int)t->key_pos + 1, t->key, t->key_len,
				   "term '%.*s' at column %d needs a value", (int)t->key_len,
				   t->key, (int)t->key_pos + 1);
	if (!(str = strndup(t->val, t->val_len)))
		return ps_ev__nomem(err);
	if (d->id == T_METRIC_ID) {
		free(ev->metric_id);
		ev->metric_id = str;
		return 0;
	}
	free(ev->name);
	ev->name = str;
	ev->named = true;
	return 0;
}

/* Terms that say what and when a counter samples; 1 when d is not one of them. */
static int sample_term(const struct term_def *d, const struct term *t, uint64_t v,
		       struct ps_event *ev, struct ps_event_error *err)
{
	struct perf_event_attr *a = &ev->attr;

	switch (d->id) {
	case T_PERIOD:
	case T_FREQ:
		/* sample_period and sample_freq share a union: one or the other. */
		if (a->sample_period && a->freq != (d->id == T_FREQ))
			return ps_ev__fail(err, PS_ERR_BAD_VALUE, (int)t->key_pos + 1, t->key,
					   t->key_len, "period and freq both given at column %d",
					   (int)t->key_pos + 1);
		/* The kernel takes a period as a signed 64-bit number and
		 * refuses one with the top bit set. */
		if (v > INT64_MAX)
			return bad_value(t, " (must be below 2^63)", err);
		a->sample_period = v;
		a->freq = d->id == T_FREQ;
		break;
	case T_TIME:
		ev->time_term = (signed char)v;
		break;
	case T_CALLCHAIN:
		/* The sample bits stay on a counting event too, where the kernel ignores
		 * them; finalize() adds the rest of sample_type once period/freq is known. */
		set_bit(&a->sample_type, PERF_SAMPLE_CALLCHAIN, v);
		break;
	case T_STACK_SIZE:
		/* whole words, as the kernel copies them */
		if (v > PS_STACK_SIZE_MAX)
			return bad_value(t, " (must be 8 to 65528 bytes)", err);
		a->sample_stack_user = (uint32_t)((v + 7) & ~7ull);
		break;
	case T_STACK:
		if (v > PS_MAX_STACK)
			return bad_value(t, " (must be 1 to 1024)", err);
		ev->max_stack = (uint16_t)v; /* the user side's: finalize() caps the kernel's */
		a->sample_max_stack = (uint16_t)v;
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		break;
	case T_ADDR:
		set_bit(&a->sample_type, PERF_SAMPLE_ADDR, v);
		break;
	case T_CGROUP: /* the sampled task's cgroup id (Linux 5.7): s.cgroup */
		set_bit(&a->sample_type, PERF_SAMPLE_CGROUP, v);
		break;
	case T_RAW:
		/* Only tracepoints have a raw record (their fields); the kernel would
		 * refuse it at open with a bare EINVAL, so say it here with the column. */
		if (v && a->type != PERF_TYPE_TRACEPOINT)
			return ps_ev__fail(err, PS_ERR_BAD_VALUE, (int)t->key_pos + 1, t->key,
					   t->key_len,
					   "term 'raw' at column %d needs a tracepoint "
					   "(subsys:event)",
					   (int)t->key_pos + 1);
		set_bit(&a->sample_type, PERF_SAMPLE_RAW, v);
		ev->raw_term = (signed char)v;
		break;
	default:
		return 1;
	}
	return 0;
}

/* Terms of the counter itself; 1 when d is not one of them. */
static int attr_term(const struct term_def *d, const struct term *t, uint64_t v,
		     struct ps_event *ev, struct ps_event_error *err)
{
	struct perf_event_attr *a = &ev->attr;

	switch (d->id) {
	case T_NO_INHERIT:
		a->inherit = 0;
		ev->flags = v ? ev->flags | PS_EVENT_NO_INHERIT : ev->flags & ~PS_EVENT_NO_INHERIT;
		break;
	case T_PERCORE:
		ev->flags = v ? ev->flags | PS_EVENT_PERCORE : ev->flags & ~PS_EVENT_PERCORE;
		break;
	case T_METRIC_ID:
		break;
	case T_INHERIT:
		a->inherit = v & 1;
		break;
	case T_PINNED:
		a->pinned = v & 1;
		break;
	case T_EXCLUSIVE:
		a->exclusive = v & 1;
		break;
	case T_CPU:
		if (v > INT_MAX)
			return bad_value(t, " (not a CPU number)", err);
		ev->cpu = (int)v;
		break;
	case T_CONFIG:
		a->config = v;
		break;
	case T_CONFIG1:
		a->config1 = v;
		break;
	case T_CONFIG2:
		a->config2 = v;
		break;
	case T_NAME:
	case T_CALL_GRAPH:
		break;
	case T_OVERWRITE:
	case T_NO_OVERWRITE:
		/* perfscript reads every sample as it arrives: no flight-recorder ring */
		if (v && d->id == T_OVERWRITE)
			return ps_ev__fail(
			    err, PS_ERR_NOT_SUPPORTED, (int)t->key_pos + 1, t->key, t->key_len,
			    "term 'overwrite' at column %d: perfscript reads samples "
			    "as they arrive and keeps no overwritable (backward) ring; "
			    "drop the term",
			    (int)t->key_pos + 1);
		break;
	case T_AUX_OUTPUT:
		a->aux_output = v & 1;
		break;
	case T_AUX_SAMPLE_SIZE:
		if (v > UINT32_MAX)
			return bad_value(t, " (at most 4294967295)", err);
		a->aux_sample_size = (uint32_t)v;
		a->sample_type |= PERF_SAMPLE_AUX;
		break;
	case T_BPF:
	case T_NOBPF:
		/* the path of its overflows: BPF program or perf ring (runtime/sample/bpf/load.c)
		 */
		ev->bpf = v ? (d->id == T_BPF ? 1 : -1) : 0;
		break;
	default:
		return 1;
	}
	return 0;
}

static int apply(const struct term_def *d, const struct term *t, struct ps_event *ev,
		 struct ps_event_error *err)
{
	uint64_t v = 1;
	int r;

	if (d->kind == K_WORD)
		return call_graph(t, &ev->attr, err);
	if (d->kind == K_STR)
		return apply_string(d, t, ev, err);
	if (t->has_val && !ps_ev__parse_u64(t->val, t->val_len, &v))
		return bad_value(t, "", err);
	if (d->kind == K_COUNT && v == 0)
		return bad_value(t, " (must be > 0)", err);
	if (d->kind == K_BOOL && v > 1)
		return bad_value(t, " (must be 0 or 1)", err);
	r = sample_term(d, t, v, ev, err);
	if (r == 1)
		r = attr_term(d, t, v, ev, err);
	return r == 1 ? 0 : r;
}

/* After the whole term list (s[open] is its '/', s[end] the closing one):
 * stack-size belongs to call-graph=dwarf. A size left over from a dwarf
 * that a later call-graph= replaced is dropped; one written without dwarf
 * is refused. */
static int check_terms(const char *s, size_t open, size_t end, struct perf_event_attr *a,
		       struct ps_event_error *err)
{
	const char *at = s + open;

	if (!a->sample_stack_user || (a->sample_type & PERF_SAMPLE_STACK_USER))
		return 0;
	while ((at = strstr(at + 1, "stack-size")) && at < s + end && at[-1] != '/' &&
	       at[-1] != ',')
		;
	if (!at || at >= s + end) {
		a->sample_stack_user = 0;
		return 0;
	}
	return ps_ev__fail(err, PS_ERR_BAD_VALUE, (int)(at - s) + 1, "stack-size", 10,
			   "term 'stack-size' at column %d needs call-graph=dwarf (the size of "
			   "the user stack each sample copies for the DWARF unwinder)",
			   (int)(at - s) + 1);
}

static int apply_term(const struct term *t, const struct ps_ev_ref *ref,
		      const struct ps_ev_resolver *res, struct ps_event *ev,
		      struct ps_event_error *err)
{
	int r;

	for (size_t i = 0; i < NTERMS; i++)
		if (strlen(terms[i].name) == t->key_len &&
		    memcmp(terms[i].name, t->key, t->key_len) == 0)
			return apply(&terms[i], t, ev, err);
	if (res && res->term) {
		r = res->term(ref, t->key, t->key_len, t->has_val ? t->val : "1",
			      t->has_val ? t->val_len : 1, (int)t->key_pos + 1, ev, err);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	return unknown_term(t, err);
}

int ps_ev__parse_terms(const char *s, size_t *pos, const struct ps_ev_ref *ref,
		       const struct ps_ev_resolver *res, struct ps_event *ev,
		       struct ps_event_error *err)
{
	size_t open = *pos, p = *pos + 1;
	int r;

	if (s[p] == '/') { /* "cpu//" is an event with no terms, as in perf */
		*pos = p + 1;
		return 0;
	}
	for (;;) {
		struct term t = {.key = &s[p], .key_pos = p};

		while (is_key_char(s[p]))
			p++;
		t.key_len = p - t.key_pos;
		if (t.key_len == 0) {
			if (s[p] == '\0')
				break;
			if (s[p] == ',' || s[p] == '/')
				return ps_ev__fail(err, PS_ERR_SYNTAX, (int)p + 1, "", 0,
						   "empty term at column %d", (int)p + 1);
			return ps_ev__fail(err, PS_ERR_SYNTAX, (int)p + 1, &s[p], 1,
					   "unexpected character '%c' in terms at column %d", s[p],
					   (int)p + 1);
		}
		if (s[p] == '=') {
			t.has_val = true;
			t.val = &s[++p];
			t.val_pos = p;
			if (s[p] == '\'' || s[p] == '"') {
				const char *close = strchr(&s[p + 1], s[p]);

				if (!close)
					return ps_ev__fail(err, PS_ERR_SYNTAX, (int)p + 1, &s[p], 1,
							   "unterminated quoted value at column %d",
							   (int)p + 1);
				t.val = &s[p + 1];
				t.val_pos = p + 1;
				t.val_len = (size_t)(close - t.val);
				p = (size_t)(close - s) + 1;
			} else {
				while (s[p] && s[p] != ',' && s[p] != '/')
					p++;
				t.val_len = p - t.val_pos;
			}
		}
		r = apply_term(&t, ref, res, ev, err);
		if (r < 0)
			return r;
		if (s[p] == '/') {
			*pos = p + 1;
			return check_terms(s, open, p, &ev->attr, err);
		}
		if (s[p] != ',') {
			if (s[p] == '\0')
				break;
			return ps_ev__fail(err, PS_ERR_SYNTAX, (int)p + 1, &s[p], 1,
					   "unexpected character '%c' in terms at column %d", s[p],
					   (int)p + 1);
		}
		p++;
	}
	return ps_ev__fail(err, PS_ERR_SYNTAX, (int)open + 1, "/", 1,
			   "unterminated term list '/' at column %d", (int)open + 1);
}

/* For the PMU resolver's unknown-term message, which lists both vocabularies. */
void ps_ev__suggest_generic_terms(struct ps_suggest *s)
{
	for (size_t i = 0; i < NTERMS; i++)
		ps_suggest__try(s, terms[i].name);
}

const char *ps_ev__generic_terms(void)
{
	return TERMS_LIST;
}
