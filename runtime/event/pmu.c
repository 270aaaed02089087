/*
 * pmu.c: resolves `PMU/terms/` names against sysfs (event/sysfs.c
 * reads and caches the PMU). The attr type comes from the PMU's `type`
 * file; a term the generic table does not know is, in order, one of the
 * PMU's format fields (encoded into config/config1/config2 bit by bit, its
 * value checked against the field's width), one of its events/ aliases
 * (whose own terms are applied in place, with .scale and .unit kept on the
 * event), or `rHEX` for a raw config, as perf spells `cpu/r1a8/`. Two terms
 * written in one string that set the same bits are refused rather than
 * silently merged. An uncore PMU's cpumask travels with the event so the
 * session can open it once per socket.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"

static __u64 *config_word(struct perf_event_attr *a, int word)
{
	return word == 2 ? &a->config2 : word == 1 ? &a->config1 : &a->config;
}

static const char *word_name(int word)
{
	return word == 2 ? "config2" : word == 1 ? "config1" : "config";
}

/* Spread v over the field's ranges, low bits into the first range. */
static void encode(const struct ps_ev_format *f, uint64_t v, struct perf_event_attr *a)
{
	__u64 *w = config_word(a, f->word);

	*w &= ~f->mask;
	for (unsigned i = 0; i < f->nranges; i++) {
		unsigned n = f->hi[i] - f->lo[i] + 1u;
		uint64_t part = n == 64 ? v : v & ((UINT64_C(1) << n) - 1);

		*w |= part << f->lo[i];
		v = n == 64 ? 0 : v >> n;
	}
}

static int check_width(const struct ps_ev_pmu *pmu, const struct ps_ev_format *f, const char *key,
		       size_t key_len, const char *val, size_t val_len, uint64_t v, int vcol,
		       struct ps_event_error *err)
{
	if (f->width >= 64 || v >> f->width == 0)
		return 0;
	return ps_ev__fail(err, PS_ERR_BAD_VALUE, vcol, val, val_len,
			   "value '%.*s' for term '%.*s' at column %d is out of range: '%s' of PMU "
			   "'%s' is %u bits wide (%s), at most 0x%llx",
			   (int)val_len, val, (int)key_len, key, vcol, f->name, pmu->name, f->width,
			   f->spec, (unsigned long long)((UINT64_C(1) << f->width) - 1));
}

static int malformed(const struct ps_ev_pmu *pmu, const struct ps_ev_format *f, int column,
		     const char *key, size_t key_len, struct ps_event_error *err)
{
	return ps_ev__fail(err, PS_ERR_NOT_SUPPORTED, column, key, key_len,
			   "term '%.*s' at column %d: format/%s of PMU '%s' does not parse (%s: "
			   "'%s')",
			   (int)key_len, key, column, f->name, pmu->name, f->bad, f->spec);
}

/* A generic name (legacy encoding, type 0 or 3) has no PMU fields to refine. */
static int generic_mix(const struct ps_ev_pmu *pmu, const char *key, size_t key_len, int column,
		       struct ps_event_error *err)
{
	return ps_ev__fail(err, PS_ERR_SYNTAX, column, key, key_len,
			   "term '%.*s' at column %d: a generic event name (cycles, "
			   "instructions, a cache name) in %s/.../ is perf's generic encoding and "
			   "takes no format terms of PMU '%s'; write the event's fields instead "
			   "(%s/event=...,umask=.../)",
			   (int)key_len, key, column, pmu->name, pmu->name, pmu->name);
}

/* A format term the user wrote: checked, refused when it overlaps another
 * written term, then encoded. */
static int apply_format(const struct ps_ev_pmu *pmu, const struct ps_ev_format *f, const char *key,
			size_t key_len, const char *val, size_t val_len, int column,
			struct ps_event *ev, struct ps_event_error *err)
{
	int vcol = column + (int)key_len + 1;
	uint64_t v;
	int r;

	if (f->bad)
		return malformed(pmu, f, column, key, key_len, err);
	if (ev->attr.type != pmu->type)
		return generic_mix(pmu, key, key_len, column, err);
	if (!ps_ev__parse_u64(val, val_len, &v))
		return ps_ev__fail(err, PS_ERR_BAD_VALUE, vcol, val, val_len,
				   "bad number '%.*s' for term '%.*s' at column %d", (int)val_len,
				   val, (int)key_len, key, vcol);
	if ((r = check_width(pmu, f, key, key_len, val, val_len, v, vcol, err)) < 0)
		return r;
	for (unsigned i = 0; i < ev->nfmt_used; i++) {
		const struct ps_ev_format *o = ev->fmt_used[i];

		if (o != f && o->word == f->word && (o->mask & f->mask))
			return ps_ev__fail(err, PS_ERR_BAD_VALUE, column, key, key_len,
					   "term '%.*s' at column %d overlaps term '%s' (both set "
					   "%s bits 0x%llx of PMU '%s')",
					   (int)key_len, key, column, ev->fmt_key[i],
					   word_name(f->word),
					   (unsigned long long)(o->mask & f->mask), pmu->name);
		if (o == f)
			goto encode;
	}
	if (ev->nfmt_used < PS_EV_MAX_FMT_USED) {
		ev->fmt_key[ev->nfmt_used] = f->name;
		ev->fmt_used[ev->nfmt_used++] = f;
	}
encode:
	encode(f, v, &ev->attr);
	return 1;
}

/* An events/ alias: its terms as if written in its place. "?" marks a
 * value the user is expected to give (ldlat=?); it is left for them. */
static int apply_alias(const struct ps_ev_pmu *pmu, const struct ps_ev_alias *al, int column,
		       const char *key, size_t key_len, struct ps_event *ev,
		       struct ps_event_error *err)
{
	const char *p = al->terms;

	while (*p) {
		const char *k = p, *v = NULL, *end;
		size_t klen, vlen = 0;
		const struct ps_ev_format *f;
		uint64_t x = 1;

		while (*p == ' ')
			k = ++p;
		end = strchr(p, ',');
		end = end ? end : p + strlen(p);
		klen = (size_t)(end - k);
		if ((v = memchr(k, '=', klen))) {
			klen = (size_t)(v - k);
			v++;
			vlen = (size_t)(end - v);
		}
		p = *end ? end + 1 : end;
		if (klen == 0)
			continue;
		if (v && vlen == 1 && *v == '?')
			continue;
		if (v && !ps_ev__parse_u64(v, vlen, &x))
			goto bad;
		if ((f = ps_ev__pmu_format(pmu, k, klen))) {
			if (f->bad)
				return malformed(pmu, f, column, key, key_len, err);
			if (f->width < 64 && x >> f->width)
				goto bad;
			encode(f, x, &ev->attr);
		} else if (klen == 6 && !memcmp(k, "config", 6)) {
			ev->attr.config = x;
		} else if (klen == 7 && !memcmp(k, "config1", 7)) {
			ev->attr.config1 = x;
		} else if (klen == 7 && !memcmp(k, "config2", 7)) {
			ev->attr.config2 = x;
		} else {
			goto bad;
		}
	}
	ev->scale = al->scale;
	ev->unit = al->unit;
	return 1;
bad:
	return ps_ev__fail(err, PS_ERR_NOT_SUPPORTED, column, key, key_len,
			   "event '%.*s' at column %d: events/%s of PMU '%s' does not parse ('%s')",
			   (int)key_len, key, column, al->name, pmu->name, al->terms);
}

/* rHEX or r0xHEX: a raw config, as perf spells cpu/r1a8/ and software/r0x1a/. */
static bool raw_term(const char *key, size_t len, uint64_t *v)
{
	size_t skip = len > 3 && key[1] == '0' && (key[2] == 'x' || key[2] == 'X') ? 3 : 1;

	if (len <= skip || key[0] != 'r' || len - skip > 16)
		return false;
	for (size_t i = skip; i < len; i++)
		if (!strchr("0123456789abcdefABCDEF", key[i]))
			return false;
	*v = 0;
	for (size_t i = skip; i < len; i++) {
		char c = key[i];

		*v = *v << 4 | (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return true;
}

/* A generic hardware or cache name inside a core PMU's terms gives perf's
 * legacy encoding (cpu/cycles/ is type 0 config 0, as perf's parse-events
 * tests expect); a hybrid PMU's type rides in the config's upper half
 * (PERF_PMU_TYPE_SHIFT) so the kernel counts on that PMU's CPUs. */
static int legacy_term(const struct ps_ev_pmu *pmu, const char *key, size_t key_len,
		       const char *val, size_t val_len, int column, struct ps_event *ev,
		       struct ps_event_error *err)
{
	uint32_t type;
	uint64_t config;
	int r;

	if (!pmu->core || (r = ps_ev__legacy_hw(key, key_len, &type, &config)) == 0)
		return 0;
	if (r < 0)
		return ps_ev__fail(err, PS_ERR_UNKNOWN_EVENT, column, key, key_len,
				   "event '%.*s' of PMU '%s' at column %d: that cache cannot "
				   "count that operation",
				   (int)key_len, key, pmu->name, column);
	if (val_len != 1 || *val != '1')
		return ps_ev__fail(err, PS_ERR_BAD_VALUE, column, key, key_len,
				   "event '%.*s' of PMU '%s' at column %d takes no value",
				   (int)key_len, key, pmu->name, column);
	if (ev->nfmt_used || ev->attr.type != pmu->type)
		return generic_mix(pmu, key, key_len, column, err);
	ev->attr.type = type;
	ev->attr.config = config;
	if (strcmp(pmu->name, "cpu"))
		ev->attr.config |= (uint64_t)pmu->type << 32;
	return 1;
}

/* Append names to buf (space-separated) as long as they fit, then "...". */
static void list_names(char *buf, size_t len, const char *const *names, size_t stride, size_t n)
{
	size_t used = strlen(buf);

	for (size_t i = 0; i < n; i++) {
		const char *nm = *(const char *const *)((const char *)names + i * stride);
		size_t l = strlen(nm);

		if (used + l + 5 >= len) {
			snprintf(buf + used, len - used, " ...");
			return;
		}
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? " " : "", nm);
	}
}

static int unknown_term(const struct ps_ev_pmu *pmu, const char *key, size_t key_len, int column,
			struct ps_event_error *err)
{
	char fmts[160] = "", aliases[96] = "";
	struct ps_suggest s;

	ps_suggest__init(&s, key, key_len);
	for (size_t i = 0; i < pmu->nfmt; i++)
		ps_suggest__try(&s, pmu->fmt[i].name);
	for (size_t i = 0; i < pmu->nalias; i++)
		ps_suggest__try(&s, pmu->alias[i].name);
	ps_ev__suggest_generic_terms(&s);
	if (pmu->nfmt)
		list_names(fmts, sizeof(fmts), (const char *const *)&pmu->fmt[0].name,
			   sizeof(pmu->fmt[0]), pmu->nfmt);
	if (pmu->nalias)
		list_names(aliases, sizeof(aliases), (const char *const *)&pmu->alias[0].name,
			   sizeof(pmu->alias[0]), pmu->nalias);
	ps_ev__fail(err, PS_ERR_UNKNOWN_TERM, column, key, key_len,
		    "unknown term '%.*s' at column %d (%s%s%sPMU '%s' terms: %s%s%s; generic: %s)",
		    (int)key_len, key, column, s.best[0] ? "did you mean '" : "", s.best,
		    s.best[0] ? "'?; " : "", pmu->name, pmu->nfmt ? fmts : "none",
		    pmu->nalias ? "; events: " : "", aliases, ps_ev__generic_terms());
	if (err)
		snprintf(err->suggestion, sizeof(err->suggestion), "%s", s.best);
	return -PS_ERR_UNKNOWN_TERM;
}

static int pmu_resolve(const struct ps_ev_ref *ref, struct ps_event *ev, struct ps_event_error *err)
{
	const struct ps_ev_pmu *pmu;
	int r;

	if (ref->sys || !ref->terms)
		return 0;
	r = ps_ev__pmu_find(ref->name, ref->name_len, &pmu, ref->column, err);
	if (r <= 0)
		return r;
	ev->attr.type = pmu->type;
	ev->attr.config = 0;
	ev->cpus = pmu->cpus;
	ev->ncpus = pmu->ncpus;
	return 1;
}

/* PMU names are candidates only for NAME/terms/, where a PMU was meant. */
static void pmu_suggest(const struct ps_ev_ref *ref, struct ps_suggest *s)
{
	char **names;
	size_t n;

	if (ref->sys || !ref->terms || ps_ev__pmu_names(&names, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		ps_suggest__try(s, names[i]);
	ps_ev__names_free(names, n);
}

static int pmu_term(const struct ps_ev_ref *ref, const char *key, size_t key_len, const char *val,
		    size_t val_len, int column, struct ps_event *ev, struct ps_event_error *err)
{
	const struct ps_ev_pmu *pmu;
	const struct ps_ev_format *f;
	const struct ps_ev_alias *al;
	uint64_t raw;
	int r;

	if (ref->sys)
		return 0;
	r = ps_ev__pmu_find(ref->name, ref->name_len, &pmu, ref->column, err);
	if (r <= 0)
		return r;
	if ((f = ps_ev__pmu_format(pmu, key, key_len)))
		return apply_format(pmu, f, key, key_len, val, val_len, column, ev, err);
	if ((r = legacy_term(pmu, key, key_len, val, val_len, column, ev, err)) != 0)
		return r;
	if ((al = ps_ev__pmu_alias(pmu, key, key_len))) {
		if (val_len != 1 || *val != '1')
			return ps_ev__fail(err, PS_ERR_BAD_VALUE, column, key, key_len,
					   "event '%.*s' of PMU '%s' at column %d takes no value",
					   (int)key_len, key, pmu->name, column);
		return apply_alias(pmu, al, column, key, key_len, ev, err);
	}
	if (raw_term(key, key_len, &raw)) {
		ev->attr.config = raw;
		return 1;
	}
	return unknown_term(pmu, key, key_len, column, err);
}

const struct ps_ev_resolver ps_ev__pmu = {
    .what = "pmu",
    .resolve = pmu_resolve,
    .suggest = pmu_suggest,
    .term = pmu_term,
};
