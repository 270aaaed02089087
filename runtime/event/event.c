/*
 * event.c: the event-string parser. It reads perf's `-e` syntax (a comma
 * list of events and {groups}, each event a name, optional /terms/ and
 * :modifiers), asks the resolvers of event/event.h what each name means, applies
 * modifiers with perf's semantics and terms from the table in
 * event/terms.c, then fills in what every attr needs to be opened as a
 * counter (size, disabled on leaders, read_format, sample_type). A
 * tracepoint glob becomes one event per match, each with the terms and
 * modifiers written after the glob. It never opens anything; errors carry
 * the column, the token and a did-you-mean.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"

const struct ps_ev_resolver *const ps_ev__resolvers[] = {
    &ps_ev__symbolic,
    &ps_ev__tracepoint,
    &ps_ev__pmu,
    &ps_ev__pfm,
};
const size_t ps_ev__nresolvers = sizeof(ps_ev__resolvers) / sizeof(ps_ev__resolvers[0]);

#define MODIFIERS      "ukhHGIpSDe"
#define MODIFIERS_LIST "u k h H G I p pp ppp S D e"

struct parser {
	const char *s;
	size_t pos;
	struct ps_events *evs;
	struct ps_event_error *err;
};

static int col(size_t pos)
{
	return (int)pos + 1;
}

static bool is_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == '*' || c == '?';
}

static size_t word_len(const char *s)
{
	size_t n = 0;

	while (is_word_char(s[n]))
		n++;
	return n;
}

static void skip_ws(struct parser *p)
{
	while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t')
		p->pos++;
}

static bool looks_like_mods(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(MODIFIERS, s[i]))
			return false;
	return len > 0;
}

/* "empty event", "unexpected character" or "unterminated group", depending
 * on what sits where an event should start. */
static int no_event_here(struct parser *p, size_t group_open, bool in_group)
{
	char c = p->s[p->pos];

	if (c == '\0' && in_group)
		return ps_ev__fail(p->err, PS_ERR_SYNTAX, col(group_open), "{", 1,
				   "unterminated group '{' at column %d", col(group_open));
	if (c == '\0' || c == ',' || c == '}')
		return ps_ev__fail(p->err, PS_ERR_SYNTAX, col(p->pos), "", 0,
				   "empty event at column %d", col(p->pos));
	if (c == '{')
		return ps_ev__fail(p->err, PS_ERR_SYNTAX, col(p->pos), "{", 1,
				   "nested group '{' at column %d (groups cannot nest)",
				   col(p->pos));
	return ps_ev__fail(p->err, PS_ERR_SYNTAX, col(p->pos), &p->s[p->pos], 1,
			   "unexpected character '%c' at column %d", c, col(p->pos));
}

static int unknown_event(struct parser *p, const struct ps_ev_ref *ref)
{
	const char *tok = ref->sys ? ref->sys : ref->name;
	size_t len = ref->sys ? ref->sys_len + 1 + ref->name_len : ref->name_len;
	struct ps_ev_suggest s;

	ps_ev__suggest_init(&s, tok, len);
	for (size_t i = 0; i < ps_ev__nresolvers; i++)
		if (ps_ev__resolvers[i]->suggest)
			ps_ev__resolvers[i]->suggest(ref, &s);
	ps_ev__fail(p->err, PS_ERR_UNKNOWN_EVENT, ref->column, tok, len,
		    "unknown event '%.*s' at column %d%s%s%s", (int)len, tok, ref->column,
		    s.best[0] ? " (did you mean '" : "", s.best, s.best[0] ? "'?)" : "");
	snprintf(p->err->suggestion, sizeof(p->err->suggestion), "%s", s.best);
	return -PS_ERR_UNKNOWN_EVENT;
}

static int resolve(struct parser *p, const struct ps_ev_ref *ref, struct ps_event *ev,
		   const struct ps_ev_resolver **res)
{
	for (size_t i = 0; i < ps_ev__nresolvers; i++) {
		int r = ps_ev__resolvers[i]->resolve(ref, ev, p->err);

		if (r > 0)
			*res = ps_ev__resolvers[i];
		if (r != 0)
			return r < 0 ? r : 0;
	}
	return unknown_event(p, ref);
}

/* name or subsys:event. A ':' after a name the symbolic tables know starts
 * modifiers (cycles:u); after any other name it makes a tracepoint. */
static int parse_name(struct parser *p, struct ps_ev_ref *ref, struct ps_event *ev,
		      const struct ps_ev_resolver **res)
{
	const char *s = p->s;
	size_t len = word_len(&s[p->pos]), len2;
	struct ps_ev_ref tp;
	int r;

	if (len == 3 && !strncmp(&s[p->pos], "mem:", 4))
		return ps_ev__parse_breakpoint(s, &p->pos, ref, ev, p->err);
	if (s[p->pos + len] == ':' && s[p->pos + len + 1] == ':') { /* skx::EVENT */
		r = ps_ev__parse_vendor(s, &p->pos, ref, ev, p->err);
		if (r > 0)
			*res = &ps_ev__pfm;
		if (r != 0)
			return r < 0 ? r : 0;
		return ps_ev__fail(
		    p->err, PS_ERR_UNKNOWN_EVENT, col(p->pos), &s[p->pos], len + 2,
		    "unknown vendor event '%.*s' at column %d (libpfm4 knows no such "
		    "PMU or event here)",
		    (int)(len + 2 + word_len(&s[p->pos + len + 2])), &s[p->pos], col(p->pos));
	}
	*ref = (struct ps_ev_ref){.name = &s[p->pos], .name_len = len, .column = col(p->pos)};
	p->pos += len;
	len2 = s[p->pos] == ':' ? word_len(&s[p->pos + 1]) : 0;
	ref->terms = s[p->pos] == '/';
	if (len2 == 0)
		return resolve(p, ref, ev, res);
	r = ps_ev__symbolic.resolve(ref, ev, p->err);
	if (r > 0)
		*res = &ps_ev__symbolic;
	if (r != 0)
		return r < 0 ? r : 0;
	tp = (struct ps_ev_ref){.sys = ref->name,
				.sys_len = len,
				.name = &s[p->pos + 1],
				.name_len = len2,
				.column = ref->column};
	tp.terms = s[p->pos + 1 + len2] == '/';
	if (!ps_ev__has_glob(ref->name, len) && !ps_ev__tracepoint_subsys(ref->name, len)) {
		/* Not a tracepoint subsystem here: maybe EVENT:UMASK for libpfm4. */
		size_t at = p->pos - len;

		r = ps_ev__parse_vendor(s, &at, ref, ev, p->err);
		if (r > 0) {
			*res = &ps_ev__pfm;
			p->pos = at;
		}
		if (r != 0)
			return r < 0 ? r : 0;
	}
	r = resolve(p, &tp, ev, res);
	if (r < 0 && looks_like_mods(tp.name, len2) && !tp.terms) {
		/* "cycels:u" is a misspelt event with modifiers, not a tracepoint
		 * of subsystem "cycels", when the tables know a near name. */
		struct ps_ev_suggest sg;

		ps_ev__suggest_init(&sg, ref->name, len);
		ps_ev__symbolic.suggest(ref, &sg);
		if (sg.best[0])
			return unknown_event(p, ref);
	}
	*ref = tp;
	p->pos += 1 + len2;
	return r;
}

/* Apply a modifier string to attr the way perf does: the first of u/k/h
 * excludes all three privilege levels and each letter lets its own back in
 * (so "uk" excludes only the hypervisor); G and H do the same for guest and
 * host; each p raises precise_ip. Starting from the attr's current values is
 * what makes group modifiers combine with the members' own. */
static int apply_mods(struct parser *p, struct ps_event *ev, size_t at, size_t len)
{
	struct perf_event_attr *a = &ev->attr;
	const char *m = &p->s[at];
	unsigned seen = 0, np = 0;
	int eu = a->exclude_user, ek = a->exclude_kernel, eh = a->exclude_hv;
	int eH = a->exclude_host, eG = a->exclude_guest;
	int exclude = eu | ek | eh, exclude_gh = eG | eH;

	if (len == 0)
		return ps_ev__fail(
		    p->err, PS_ERR_SYNTAX, col(at), "", 0,
		    "missing modifier after ':' at column %d (valid: " MODIFIERS_LIST ")", col(at));
	for (size_t i = 0; i < len; i++) {
		const char *c = strchr(MODIFIERS, m[i]);

		if (!c)
			return ps_ev__fail(
			    p->err, PS_ERR_SYNTAX, col(at + i), &m[i], 1,
			    "unknown modifier '%c' at column %d (valid: " MODIFIERS_LIST ")", m[i],
			    col(at + i));
		if (m[i] == 'p')
			np++;
		else if (seen & 1u << (c - MODIFIERS))
			return ps_ev__fail(p->err, PS_ERR_SYNTAX, col(at + i), &m[i], 1,
					   "duplicate modifier '%c' at column %d", m[i],
					   col(at + i));
		seen |= 1u << (c - MODIFIERS);
	}
	if (a->precise_ip + np > 3)
		return ps_ev__fail(p->err, PS_ERR_BAD_VALUE, col(at), m, len,
				   "too many 'p' modifiers in '%.*s' at column %d (at most ppp)",
				   (int)len, m, col(at));
#define HAS(ch) (seen & 1u << (strchr(MODIFIERS, ch) - MODIFIERS))
	if (HAS('u') || HAS('k') || HAS('h')) {
		if (!exclude)
			eu = ek = eh = 1;
		eu = HAS('u') ? 0 : eu;
		ek = HAS('k') ? 0 : ek;
		eh = HAS('h') ? 0 : eh;
	}
	if (HAS('G') || HAS('H')) {
		if (!exclude_gh)
			eG = eH = 1;
		eG = HAS('G') ? 0 : eG;
		eH = HAS('H') ? 0 : eH;
	}
	a->exclude_user = eu & 1;
	a->exclude_kernel = ek & 1;
	a->exclude_hv = eh & 1;
	a->exclude_guest = eG & 1;
	a->exclude_host = eH & 1;
	a->exclude_idle |= HAS('I') ? 1 : 0;
	a->precise_ip = (a->precise_ip + np) & 3;
	a->pinned |= HAS('D') ? 1 : 0;
	a->exclusive |= HAS('e') ? 1 : 0;
	ev->sample_read |= HAS('S') != 0;
#undef HAS
	return 0;
}

static size_t mods_len(const char *s)
{
	size_t n = 0;

	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
	       (s[n] >= '0' && s[n] <= '9'))
		n++;
	return n;
}

static int push_event(struct parser *p, struct ps_event *ev)
{
	struct ps_events *evs = p->evs;

	if (evs->n == evs->cap) {
		size_t cap = evs->cap ? evs->cap * 2 : 4;
		struct ps_event *n = realloc(evs->ev, cap * sizeof(*n));

		if (!n)
			return ps_ev__nomem(p->err);
		evs->ev = n;
		evs->cap = cap;
	}
	evs->ev[evs->n++] = *ev;
	return 0;
}

/* One event per tracepoint the glob of ref matches, each a copy of tmpl
 * (terms and modifiers applied) named "subsys:event" plus the text written
 * after the glob. Outside braces each is its own leader; inside, the group's
 * leader stays the leader. */
static int push_glob(struct parser *p, const struct ps_event *tmpl, const struct ps_ev_ref *ref,
		     bool in_group)
{
	const char *after = ref->name + ref->name_len;
	size_t n = 0, rest = (size_t)(&p->s[p->pos] - after);
	struct ps_ev_tp *tp = NULL;
	int r = ps_ev__tracepoint_glob(ref, &tp, &n, p->err);

	for (size_t i = 0; r == 0 && i < n; i++) {
		struct ps_event ev = *tmpl;

		ev.attr.config = tp[i].id;
		if (!in_group)
			ev.leader = p->evs->n;
		ev.name = tmpl->named ? strdup(tmpl->name) : NULL;
		if (!tmpl->named && asprintf(&ev.name, "%s%.*s", tp[i].name, (int)rest, after) < 0)
			ev.name = NULL;
		if (!ev.name) {
			r = ps_ev__nomem(p->err);
			break;
		}
		if ((r = push_event(p, &ev)) < 0)
			free(ev.name);
	}
	ps_ev__tp_free(tp, n);
	return r;
}

/* name [/terms/] [[:]mods]; on success the event is appended to p->evs. */
static int parse_event(struct parser *p, size_t leader, size_t group_open, bool in_group)
{
	struct ps_event ev = {.leader = leader, .cpu = -1};
	const struct ps_ev_resolver *res = NULL;
	struct ps_ev_ref ref;
	size_t start, at;
	bool after_terms = false;
	int r;

	skip_ws(p);
	start = p->pos;
	if (word_len(&p->s[p->pos]) == 0)
		return no_event_here(p, group_open, in_group);
	r = parse_name(p, &ref, &ev, &res);
	if (r < 0)
		return r;
	if (p->s[p->pos] == '/') {
		r = ps_ev__parse_terms(p->s, &p->pos, &ref, res, &ev, p->err);
		if (r < 0)
			goto fail;
		after_terms = true;
	}
	if (p->s[p->pos] == ':' || (after_terms && mods_len(&p->s[p->pos]) > 0)) {
		p->pos += p->s[p->pos] == ':';
		at = p->pos;
		p->pos += mods_len(&p->s[at]);
		r = apply_mods(p, &ev, at, p->pos - at);
		if (r < 0)
			goto fail;
		ev.has_mods = true;
	}
	if (ref.sys && ev.attr.type == PERF_TYPE_TRACEPOINT &&
	    (ps_ev__has_glob(ref.sys, ref.sys_len) || ps_ev__has_glob(ref.name, ref.name_len))) {
		r = push_glob(p, &ev, &ref, in_group);
		goto fail; /* the template's name, if any, is not kept */
	}
	if (!ev.named && !(ev.name = strndup(&p->s[start], p->pos - start))) {
		r = ps_ev__nomem(p->err);
		goto fail;
	}
	r = push_event(p, &ev);
	if (r == 0)
		return 0;
fail:
	free(ev.name);
	free(ev.bp_symbol);
	return r;
}

/* Group modifiers reach every member and show in each display name. */
static int apply_group_mods(struct parser *p, size_t first, size_t at, size_t len)
{
	for (size_t i = first; i < p->evs->n; i++) {
		struct ps_event *ev = &p->evs->ev[i];
		int r = apply_mods(p, ev, at, len);

		if (r < 0)
			return r;
		if (!ev->named) {
			size_t old = strlen(ev->name);
			char *n = realloc(ev->name, old + len + 2);

			if (!n)
				return ps_ev__nomem(p->err);
			snprintf(n + old, len + 2, "%s%.*s", ev->has_mods ? "" : ":", (int)len,
				 &p->s[at]);
			ev->name = n;
		}
	}
	return 0;
}

static int parse_group(struct parser *p)
{
	size_t open = p->pos, first = p->evs->n, at, len;
	int r;

	p->pos++;
	skip_ws(p);
	if (p->s[p->pos] == '}')
		return ps_ev__fail(p->err, PS_ERR_SYNTAX, col(open), "{}", 2,
				   "empty group '{}' at column %d", col(open));
	for (;;) {
		r = parse_event(p, first, open, true);
		if (r < 0)
			return r;
		skip_ws(p);
		if (p->s[p->pos] == '}')
			break;
		if (p->s[p->pos] == '\0')
			return ps_ev__fail(p->err, PS_ERR_SYNTAX, col(open), "{", 1,
					   "unterminated group '{' at column %d", col(open));
		if (p->s[p->pos] != ',')
			return ps_ev__fail(p->err, PS_ERR_SYNTAX, col(p->pos), &p->s[p->pos], 1,
					   "unexpected character '%c' at column %d", p->s[p->pos],
					   col(p->pos));
		p->pos++;
	}
	p->pos++;
	if (p->s[p->pos] == ':') {
		at = ++p->pos;
		len = mods_len(&p->s[at]);
		p->pos += len;
		return apply_group_mods(p, first, at, len);
	}
	return 0;
}

static size_t group_size(const struct ps_events *evs, size_t leader)
{
	size_t n = 0;

	for (size_t i = leader; i < evs->n && evs->ev[i].leader == leader; i++)
		n++;
	return n;
}

/* What every attr needs to be opened as a counter of a group. */
static void finalize(struct ps_events *evs)
{
	const uint64_t sample = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;

	for (size_t i = 0; i < evs->n; i++) {
		struct ps_event *ev = &evs->ev[i];
		struct perf_event_attr *a = &ev->attr, *la = &evs->ev[ev->leader].attr;
		bool leads_group = ev->leader == i && group_size(evs, i) > 1;

		a->size = sizeof(*a);
		a->disabled = ev->leader == i; /* members follow their leader */
		a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		if (leads_group)
			a->read_format |= PERF_FORMAT_GROUP | PERF_FORMAT_ID;
		if (a->sample_period) /* a union with sample_freq; |= keeps the terms' bits */
			a->sample_type |= sample | (leads_group ? PERF_SAMPLE_READ : 0);
		if (ev->sample_read)
			la->sample_type |= PERF_SAMPLE_READ;
		if (ev->leader != i) {
			/* The kernel accepts pinned/exclusive on a group leader only. */
			la->pinned |= a->pinned;
			la->exclusive |= a->exclusive;
			a->pinned = a->exclusive = 0;
		}
	}
}

struct ps_events *ps_events__parse(const char *spec, struct ps_event_error *err)
{
	struct ps_event_error local;
	struct parser p = {.s = spec, .err = &local};
	struct ps_events *evs = NULL;
	int r = -ENOMEM;

	memset(&local, 0, sizeof(local));
	if (!spec) {
		r = ps_ev__fail(&local, PS_ERR_SYNTAX, 0, "", 0, "no event string given");
		goto fail;
	}
	if (!(evs = calloc(1, sizeof(*evs))) || !(evs->spec = strdup(spec))) {
		r = ps_ev__nomem(&local);
		goto fail;
	}
	p.evs = evs;
	for (;;) {
		skip_ws(&p);
		r = spec[p.pos] == '{' ? parse_group(&p) : parse_event(&p, evs->n, 0, false);
		if (r < 0)
			goto fail;
		skip_ws(&p);
		if (spec[p.pos] == '\0')
			break;
		if (spec[p.pos] != ',') {
			r = ps_ev__fail(&local, PS_ERR_SYNTAX, col(p.pos), &spec[p.pos], 1,
					"unexpected character '%c' at column %d", spec[p.pos],
					col(p.pos));
			goto fail;
		}
		p.pos++;
	}
	finalize(evs);
	return evs;
fail:
	ps_events__free(evs);
	if (err)
		*err = local;
	errno = r == -ENOMEM ? ENOMEM : EINVAL;
	return NULL;
}

void ps_events__free(struct ps_events *evs)
{
	if (!evs)
		return;
	for (size_t i = 0; i < evs->n; i++) {
		free(evs->ev[i].name);
		free(evs->ev[i].bp_symbol);
	}
	free(evs->ev);
	free(evs->spec);
	free(evs);
}

size_t ps_events__count(const struct ps_events *evs)
{
	return evs ? evs->n : 0;
}

const struct perf_event_attr *ps_events__attr(const struct ps_events *evs, size_t i)
{
	return evs && i < evs->n ? &evs->ev[i].attr : NULL;
}

const char *ps_events__name(const struct ps_events *evs, size_t i)
{
	return evs && i < evs->n ? evs->ev[i].name : NULL;
}

size_t ps_events__leader(const struct ps_events *evs, size_t i)
{
	return evs && i < evs->n ? evs->ev[i].leader : i;
}

int ps_events__cpu(const struct ps_events *evs, size_t i)
{
	return evs && i < evs->n ? evs->ev[i].cpu : -1;
}

const char *ps_events__spec(const struct ps_events *evs)
{
	return evs ? evs->spec : NULL;
}

int ps_events__scale(const struct ps_events *evs, size_t i, double *scale, const char **unit)
{
	if (!evs || i >= evs->n)
		return -EINVAL;
	if (scale)
		*scale = evs->ev[i].scale > 0 ? evs->ev[i].scale : 1.0;
	if (unit)
		*unit = evs->ev[i].unit ? evs->ev[i].unit : "";
	return 0;
}

int ps_events__cpus(const struct ps_events *evs, size_t i, const int **cpus)
{
	if (!evs || i >= evs->n)
		return -EINVAL;
	if (cpus)
		*cpus = evs->ev[i].cpus;
	return (int)evs->ev[i].ncpus;
}

const char *ps_events__bp_symbol(const struct ps_events *evs, size_t i, uint64_t *offset)
{
	if (!evs || i >= evs->n || !evs->ev[i].bp_symbol)
		return NULL;
	if (offset)
		*offset = evs->ev[i].bp_offset;
	return evs->ev[i].bp_symbol;
}
