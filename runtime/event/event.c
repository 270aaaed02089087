/*
 * event.c: the event-string parser. It reads perf's `-e` syntax (a comma
 * list of events and {groups}, optionally named NAME{...}, each event a
 * name, optional /terms/ and :modifiers), asks the resolvers of
 * event/event.h what each name means, applies modifiers (event/modifiers.c)
 * and terms (event/terms.c), then has event/finalize.c fill in what every
 * attr needs to be opened as a counter.
 * Names with a grammar of their own go to their files: mem: breakpoints,
 * kprobe:/uprobe:/usdt: probes, TYPE:CONFIG numbers (here), libpfm4's
 * pmu::EVENT. A tracepoint glob becomes one event per match, each with the
 * terms and modifiers written after the glob. It never opens anything;
 * errors carry the column, the token and a did-you-mean.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "event/event.h"

const struct ps_ev_resolver *const ps_ev__resolvers[] = {
    &ps_ev__symbolic,
    &ps_ev__tracepoint,
    &ps_ev__pmu,
    &ps_ev__pfm,
};
const size_t ps_ev__nresolvers = sizeof(ps_ev__resolvers) / sizeof(ps_ev__resolvers[0]);

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

/* A glob's [...] class is part of the word when it closes before anything
 * that separates events, terms or modifiers. */
static size_t bracket_len(const char *s)
{
	size_t n = 1;

	while (is_word_char(s[n]) || s[n] == '!' || s[n] == '^')
		n++;
	return s[n] == ']' && n > 1 ? n + 1 : 0;
}

static size_t word_len(const char *s)
{
	size_t n = 0, b;

	for (;;) {
		if (is_word_char(s[n]))
			n++;
		else if (s[n] == '[' && (b = bracket_len(&s[n])))
			n += b;
		else
			return n;
	}
}

static bool is_number(const char *s, size_t len)
{
	uint64_t v;

	return len > 0 && s[0] >= '0' && s[0] <= '9' && ps_ev__parse_u64(s, len, &v);
}

static void skip_ws(struct parser *p)
{
	while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t')
		p->pos++;
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
	struct ps_suggest s;

	ps_suggest__init(&s, tok, len);
	for (size_t i = 0; i < ps_ev__nresolvers; i++)
		if (ps_ev__resolvers[i]->suggest)
			ps_ev__resolvers[i]->suggest(ref, &s);
	const char *nopfm = s.best[0] ? NULL : ps_ev__pfm_unavailable();

	ps_ev__fail(p->err, PS_ERR_UNKNOWN_EVENT, ref->column, tok, len,
		    "unknown event '%.*s' at column %d%s%s%s%s%s%s", (int)len, tok, ref->column,
		    s.best[0] ? " (did you mean '" : "", s.best, s.best[0] ? "'?)" : "",
		    nopfm ? " (" : "", nopfm ? nopfm : "", nopfm ? ")" : "");
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

static int unterminated_class(struct parser *p, size_t at)
{
	return ps_ev__fail(p->err, PS_ERR_SYNTAX, col(at), "[", 1,
			   "unterminated '[' at column %d (a glob class ends with ']', e.g. "
			   "sys_enter_[a-m]*)",
			   col(at));
}

/* TYPE:CONFIG, perf's numeric form ("1:1" is software task-clock): the
 * attr type and config as written, with the generic terms only. */
static int parse_numeric(struct parser *p, size_t len, struct ps_ev_ref *ref, struct ps_event *ev)
{
	const char *s = &p->s[p->pos];
	size_t len2 = word_len(&s[len + 1]);
	uint64_t type, config;

	*ref = (struct ps_ev_ref){.name = s, .name_len = len + 1 + len2, .column = col(p->pos)};
	if (!ps_ev__parse_u64(s, len, &type) || type > UINT32_MAX)
		return ps_ev__fail(p->err, PS_ERR_BAD_VALUE, col(p->pos), s, len,
				   "bad event type '%.*s' at column %d (TYPE:CONFIG takes a 32-bit "
				   "type, e.g. 1:1)",
				   (int)len, s, col(p->pos));
	if (!ps_ev__parse_u64(&s[len + 1], len2, &config))
		return ps_ev__fail(p->err, PS_ERR_BAD_VALUE, col(p->pos + len + 1), &s[len + 1],
				   len2,
				   "bad event config '%.*s' at column %d (TYPE:CONFIG takes a "
				   "number, e.g. 4:0x1c2)",
				   (int)len2, &s[len + 1], col(p->pos + len + 1));
	ev->attr.type = (uint32_t)type;
	ev->attr.config = config;
	p->pos += len + 1 + len2;
	ref->terms = p->s[p->pos] == '/';
	return 0;
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
	if (s[p->pos + len] == ':' && ps_ev__is_probe_prefix(&s[p->pos], len))
		return ps_ev__parse_probe(s, &p->pos, ref, ev, p->err);
	if (s[p->pos + len] == ':' && is_number(&s[p->pos], len) && s[p->pos + len + 1] >= '0' &&
	    s[p->pos + len + 1] <= '9')
		return parse_numeric(p, len, ref, ev);
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
	if (s[p->pos] == '[' || (len2 && s[p->pos + 1 + len2] == '['))
		return unterminated_class(p, s[p->pos] == '[' ? p->pos : p->pos + 1 + len2);
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
	if (r < 0 && ps_ev__looks_like_mods(tp.name, len2) && !tp.terms) {
		/* "cycels:u" is a misspelt event with modifiers, not a tracepoint
		 * of subsystem "cycels", when the tables know a near name. */
		struct ps_suggest sg;

		ps_suggest__init(&sg, ref->name, len);
		ps_ev__symbolic.suggest(ref, &sg);
		if (sg.best[0])
			return unknown_event(p, ref);
	}
	*ref = tp;
	p->pos += 1 + len2;
	return r;
}

static int push_event(struct parser *p, struct ps_event *ev)
{
	struct ps_events *evs = p->evs;

	if (evs->n >= PS_EVENTS_MAX)
		return ps_ev__fail(p->err, PS_ERR_LIMIT, col(p->pos), NULL, 0,
				   "more than %u events in one string (at column %d): split it, or "
				   "narrow its globs",
				   PS_EVENTS_MAX, col(p->pos));
	if (ps_array__reserve(&evs->ev, &evs->cap, evs->n + 1, sizeof(*evs->ev)))
		return ps_ev__nomem(p->err);
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
		ev.tp_name = strdup(tp[i].name);
		ev.metric_id = tmpl->metric_id ? strdup(tmpl->metric_id) : NULL;
		if (!ev.name || !ev.tp_name || (tmpl->metric_id && !ev.metric_id)) {
			ps_ev__event_release(&ev);
			r = ps_ev__nomem(p->err);
			break;
		}
		if ((r = push_event(p, &ev)) < 0)
			ps_ev__event_release(&ev);
	}
	ps_ev__tp_free(tp, n);
	return r;
}

/* name [/terms/] [[:]mods]; on success the event is appended to p->evs. */
static int parse_event(struct parser *p, size_t leader, size_t group_open, bool in_group)
{
	struct ps_event ev = {.leader = leader, .cpu = -1, .time_term = -1, .raw_term = -1};
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
		goto fail;
	if (p->s[p->pos] == '/') {
		r = ps_ev__parse_terms(p->s, &p->pos, &ref, res, &ev, p->err);
		if (r < 0)
			goto fail;
		after_terms = true;
	}
	if (p->s[p->pos] == ':' || (after_terms && ps_ev__mods_len(&p->s[p->pos]) > 0)) {
		p->pos += p->s[p->pos] == ':';
		at = p->pos;
		p->pos += ps_ev__mods_len(&p->s[at]);
		r = ps_ev__apply_mods(p->s, at, p->pos - at, &ev, p->err);
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
	ps_ev__event_release(&ev);
	return r;
}

/* Group modifiers reach every member and show in each display name. */
static int apply_group_mods(struct parser *p, size_t first, size_t at, size_t len)
{
	for (size_t i = first; i < p->evs->n; i++) {
		struct ps_event *ev = &p->evs->ev[i];
		int r = ps_ev__apply_mods(p->s, at, len, ev, p->err);

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

/* {events}[:mods], or NAME{events}[:mods] with name_len > 0 (perf's
 * named groups: the name is the group's, kept on its leader). */
static int parse_group(struct parser *p, size_t name_len)
{
	size_t name_at = p->pos, open = p->pos + name_len, first = p->evs->n, at, len;
	int r;

	p->pos = open + 1;
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
	if (name_len && !(p->evs->ev[first].group_name = strndup(&p->s[name_at], name_len)))
		return ps_ev__nomem(p->err);
	if (p->s[p->pos] == ':') {
		at = ++p->pos;
		len = ps_ev__mods_len(&p->s[at]);
		p->pos += len;
		return apply_group_mods(p, first, at, len);
	}
	return 0;
}

/* Bytes no event string may hold outside a quoted value: non-ASCII (a
 * look-alike dash or quote pasted from a document reads as a valid name
 * otherwise only by luck) and control characters. */
static int check_bytes(const char *s, struct ps_event_error *err)
{
	char quote = 0;

	for (size_t i = 0; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (quote) {
			quote = c == (unsigned char)quote ? 0 : quote;
			continue;
		}
		if (c == '\'' || c == '"')
			quote = (char)c;
		else if (c >= 0x80)
			return ps_ev__fail(err, PS_ERR_SYNTAX, col(i), &s[i], 1,
					   "non-ASCII byte 0x%02x at column %d: event names, terms "
					   "and modifiers are ASCII (a look-alike character pasted "
					   "from a document?); quote a value that needs other "
					   "characters, as in name='...'",
					   c, col(i));
		else if (c < 0x20 && c != '\t')
			return ps_ev__fail(
			    err, PS_ERR_SYNTAX, col(i), &s[i], 1,
			    "control character 0x%02x at column %d in the event string", c, col(i));
	}
	return 0;
}

struct ps_events *ps_events__parse(const char *spec, struct ps_event_error *err)
{
	struct ps_event_error local;
	struct parser p = {.s = spec, .err = &local};
	struct ps_events *evs = NULL;
	size_t wl;
	int r = -ENOMEM;

	memset(&local, 0, sizeof(local));
	if (!spec) {
		r = ps_ev__fail(&local, PS_ERR_SYNTAX, 0, "", 0, "no event string given");
		goto fail;
	}
	if ((r = check_bytes(spec, &local)) < 0)
		goto fail;
	if (!(evs = calloc(1, sizeof(*evs))) || !(evs->spec = strdup(spec))) {
		r = ps_ev__nomem(&local);
		goto fail;
	}
	p.evs = evs;
	for (;;) {
		skip_ws(&p);
		wl = spec[p.pos] == '{' ? 0 : word_len(&spec[p.pos]);
		if (spec[p.pos + wl] == '{')
			r = parse_group(&p, wl);
		else
			r = parse_event(&p, evs->n, 0, false);
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
	ps_ev__finalize(evs);
	return evs;
fail:
	ps_events__free(evs);
	if (err)
		*err = local;
	errno = r == -ENOMEM ? ENOMEM : EINVAL;
	return NULL;
}
