/*
 * dynprobe.c: dynamic probes as events, through the kernel's kprobe and
 * uprobe PMUs: kprobe:SYMBOL[+OFF], kprobe:0xADDR, kretprobe:SYMBOL,
 * uprobe:PATH:SYMBOL[+OFF], uprobe:PATH:0xADDR, uretprobe:PATH:SYMBOL and
 * usdt:PATH:PROVIDER:NAME (a SystemTap static marker, which is a uprobe on
 * the marker's address with the kernel keeping its semaphore). The PMU's
 * type and its format's retprobe bit come from sysfs; everything that
 * depends on the target file (a symbol's file offset, the .note.stapsdt
 * entry) is resolved when a session opens the counter, in symbols/ and
 * core/, since the parser neither opens files nor knows the target. A PATH
 * with ':' or ',' in it is written quoted: uprobe:'/opt/a,b/x':main.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"

static const struct {
	const char *prefix;
	enum ps_probe_kind kind;
	const char *form;
} kinds[] = {
    {"kprobe", PS_PROBE_KPROBE, "kprobe:SYMBOL[+OFF] or kprobe:0xADDR"},
    {"kretprobe", PS_PROBE_KRETPROBE, "kretprobe:SYMBOL"},
    {"uprobe", PS_PROBE_UPROBE, "uprobe:PATH:SYMBOL[+OFF] or uprobe:PATH:0xADDR"},
    {"uretprobe", PS_PROBE_URETPROBE, "uretprobe:PATH:SYMBOL"},
    {"usdt", PS_PROBE_USDT, "usdt:PATH:PROVIDER:NAME"},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static const struct {
	const char *pmu, *form, *what;
} forms[] = {
    {"kprobe", "kprobe:SYMBOL[+OFF]", "a kernel function's entry (or an offset in it)"},
    {"kprobe", "kprobe:0xADDR", "a kernel address"},
    {"kprobe", "kretprobe:SYMBOL", "a kernel function's return; s.retval"},
    {"uprobe", "uprobe:PATH:SYMBOL[+OFF]", "a function of an ELF file; s:arg(n), s:user_string(a)"},
    {"uprobe", "uprobe:PATH:0xADDR", "an address of an ELF file (its link-time address)"},
    {"uprobe", "uretprobe:PATH:SYMBOL", "a function's return; s.retval"},
    {"uprobe", "usdt:PATH:PROVIDER:NAME", "a SystemTap/DTrace static marker (sys/sdt.h)"},
};

bool ps_ev__probe_form(const char *pmu, size_t i, const char **form, const char **what)
{
	for (size_t k = 0; k < sizeof(forms) / sizeof(forms[0]); k++) {
		if (strcmp(forms[k].pmu, pmu))
			continue;
		if (i-- == 0) {
			*form = forms[k].form;
			*what = forms[k].what;
			return true;
		}
	}
	return false;
}

bool ps_ev__is_probe_prefix(const char *s, size_t len)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (strlen(kinds[i].prefix) == len && !memcmp(kinds[i].prefix, s, len))
			return true;
	return false;
}

void ps_ev__probe_free(struct ps_probe *pr)
{
	if (!pr)
		return;
	free(pr->path);
	free(pr->symbol);
	free(pr->provider);
	free(pr->name);
	free(pr);
}

/* A symbol as compilers emit them: C and mangled C++ identifiers, with the
 * '.' of local clones (foo.part.0) and '@' of versioned names. */
static size_t symbol_len(const char *s)
{
	size_t n = 0;

	if (!isalpha((unsigned char)s[0]) && s[0] != '_')
		return 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == '.' || s[n] == '@')
		n++;
	return n;
}

/* PATH up to the next ':' (or quoted); *end is where it stopped. */
static int take_path(const char *s, size_t at, size_t *end, char **path, const char *form,
		     struct ps_event_error *err)
{
	size_t p = at;

	if (s[p] == '\'' || s[p] == '"') {
		const char *close = strchr(&s[p + 1], s[p]);

		if (!close)
			return ps_ev__fail(err, PS_ERR_SYNTAX, (int)p + 1, &s[p], 1,
					   "unterminated quoted path at column %d", (int)p + 1);
		*path = strndup(&s[p + 1], (size_t)(close - &s[p + 1]));
		p = (size_t)(close - s) + 1;
	} else {
		while (s[p] && !strchr(":,{}/ \t", s[p]))
			p++;
		/* a path has slashes: take them, not as a term list */
		while (s[p] == '/') {
			p++;
			while (s[p] && !strchr(":,{}/ \t", s[p]))
				p++;
		}
		*path = strndup(&s[at], p - at);
	}
	if (!*path)
		return ps_ev__nomem(err);
	if (!**path || s[p] != ':') {
		free(*path);
		*path = NULL;
		return ps_ev__fail(err, PS_ERR_SYNTAX, (int)at + 1, &s[at], p - at,
				   "probe at column %d needs a file and what to probe in it (%s)",
				   (int)at + 1, form);
	}
	*end = p + 1;
	return 0;
}

/* SYMBOL[+OFF] or 0xADDR at s[*p] into pr; advances *p. */
static int take_target(const char *s, size_t *p, struct ps_probe *pr, bool offset_ok,
		       const char *form, struct ps_event_error *err)
{
	size_t at = *p, n = symbol_len(&s[at]);

	if (n == 0) {
		while (isalnum((unsigned char)s[*p]))
			(*p)++;
		if (*p > at && ps_ev__parse_u64(&s[at], *p - at, &pr->offset))
			return 0; /* an address */
		return ps_ev__fail(err, PS_ERR_SYNTAX, (int)at + 1, &s[at], *p - at,
				   "probe at column %d needs a function name or an address (%s)",
				   (int)at + 1, form);
	}
	if (!(pr->symbol = strndup(&s[at], n)))
		return ps_ev__nomem(err);
	*p = at + n;
	if (s[*p] == '+') {
		size_t o = ++*p;

		while (isalnum((unsigned char)s[*p]))
			(*p)++;
		if (!offset_ok)
			return ps_ev__fail(err, PS_ERR_SYNTAX, (int)o, &s[o - 1], *p - o + 1,
					   "a return probe takes no offset (column %d): it fires "
					   "when the function returns",
					   (int)o);
		if (!ps_ev__parse_u64(&s[o], *p - o, &pr->offset))
			return ps_ev__fail(err, PS_ERR_BAD_VALUE, (int)o + 1, &s[o], *p - o,
					   "bad probe offset '%.*s' at column %d (a number after "
					   "'+')",
					   (int)(*p - o), &s[o], (int)o + 1);
	}
	return 0;
}

static int take_usdt(const char *s, size_t *p, struct ps_probe *pr, const char *form,
		     struct ps_event_error *err)
{
	size_t at = *p, n = symbol_len(&s[at]), m;

	if (n == 0 || s[at + n] != ':' || (m = symbol_len(&s[at + n + 1])) == 0)
		return ps_ev__fail(err, PS_ERR_SYNTAX, (int)at + 1, &s[at], n,
				   "USDT probe at column %d needs a provider and a name (%s)",
				   (int)at + 1, form);
	pr->provider = strndup(&s[at], n);
	pr->name = strndup(&s[at + n + 1], m);
	if (!pr->provider || !pr->name)
		return ps_ev__nomem(err);
	*p = at + n + 1 + m;
	return 0;
}

/* The PMU's type and retprobe bit. */
static int pmu_attr(const char *pmuname, bool ret, int column, const char *tok, size_t toklen,
		    struct ps_event *ev, struct ps_event_error *err)
{
	const struct ps_ev_pmu *pmu;
	const struct ps_ev_format *f;
	int r = ps_ev__pmu_find(pmuname, strlen(pmuname), &pmu, column, err);

	if (r < 0)
		return r;
	if (r == 0)
		return ps_ev__fail(
		    err, PS_ERR_NOT_SUPPORTED, column, tok, toklen,
		    "'%.*s' at column %d: this kernel has no %s PMU "
		    "(/sys/bus/event_source/devices/%s: it needs Linux 4.17 or later "
		    "built with CONFIG_%s)",
		    (int)toklen, tok, column, pmuname, pmuname,
		    pmuname[0] == 'k' ? "KPROBES and CONFIG_KPROBE_EVENTS"
				      : "UPROBES and CONFIG_UPROBE_EVENTS");
	ev->attr.type = pmu->type;
	ev->attr.config = 0;
	if (!ret)
		return 0;
	f = ps_ev__pmu_format(pmu, "retprobe", 8);
	if (!f || f->bad || f->word != 0 || !f->nranges)
		return ps_ev__fail(err, PS_ERR_NOT_SUPPORTED, column, tok, toklen,
				   "'%.*s' at column %d: the %s PMU has no usable format/retprobe",
				   (int)toklen, tok, column, pmuname);
	ev->attr.config |= UINT64_C(1) << f->lo[0];
	return 0;
}

int ps_ev__parse_probe(const char *s, size_t *pos, struct ps_ev_ref *ref, struct ps_event *ev,
		       struct ps_event_error *err)
{
	size_t start = *pos, plen = strcspn(&s[start], ":"), p = start + plen + 1, k;
	int column = (int)start + 1, r;
	struct ps_probe *pr;
	bool ret, user;

	for (k = 0; k < NKINDS; k++)
		if (strlen(kinds[k].prefix) == plen && !memcmp(kinds[k].prefix, &s[start], plen))
			break;
	if (k == NKINDS || !(pr = calloc(1, sizeof(*pr))))
		return k == NKINDS ? 0 : ps_ev__nomem(err);
	pr->kind = kinds[k].kind;
	ret = pr->kind == PS_PROBE_KRETPROBE || pr->kind == PS_PROBE_URETPROBE;
	user = pr->kind != PS_PROBE_KPROBE && pr->kind != PS_PROBE_KRETPROBE;
	if (user && (r = take_path(s, p, &p, &pr->path, kinds[k].form, err)) < 0)
		goto fail;
	if (pr->kind == PS_PROBE_USDT)
		r = take_usdt(s, &p, pr, kinds[k].form, err);
	else
		r = take_target(s, &p, pr, !ret, kinds[k].form, err);
	if (r < 0)
		goto fail;
	if (ret && !pr->symbol) {
		r = ps_ev__fail(err, PS_ERR_SYNTAX, column, &s[start], p - start,
				"'%.*s' at column %d: a return probe needs a function name (%s)",
				(int)(p - start), &s[start], column, kinds[k].form);
		goto fail;
	}
	r = pmu_attr(user ? "uprobe" : "kprobe", ret, column, &s[start], p - start, ev, err);
	if (r < 0)
		goto fail;
	*ref = (struct ps_ev_ref){.name = &s[start], .name_len = p - start, .column = column};
	ref->terms = s[p] == '/';
	ev->probe = pr;
	*pos = p;
	return 0;
fail:
	ps_ev__probe_free(pr);
	return r;
}

int ps_events__probe(const struct ps_events *evs, size_t i, struct ps_probe_info *info)
{
	const struct ps_probe *pr;

	if (!evs || i >= evs->n || !(pr = evs->ev[i].probe))
		return 0;
	if (info)
		*info = (struct ps_probe_info){.kind = pr->kind,
					       .path = pr->path,
					       .symbol = pr->symbol,
					       .offset = pr->offset,
					       .provider = pr->provider,
					       .name = pr->name};
	return 1;
}
