/*
 * counter.c: a session's counter slots and the handles that name them. A
 * slot is reserved per event of a parsed spec; its attr is adjusted once,
 * here, for the session's target (inherit and enable_on_exec for a command,
 * inherit for a pid, the read_format scaling and group reads need), so what
 * ps_session__attr() shows is what will be opened. Handles carry the session
 * tag and the slot's generation so freed, stale, foreign or invented handles
 * are refused with -PS_ERR_HANDLE. The accessors live here too; opening is
 * in core/open.c, start/stop/reset in core/control.c, reading in
 * core/read.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/array.h"
#include "core/internal.h"

static void close_fds(struct ps_session *s, uint32_t slot)
{
	struct ps_counter *c = &s->slots[slot];

	/* the sampler lets go of the fds first (a program attached to them,
	 * samples still in a ring that would name them) */
	if (c->open && c->sampling && s->hooks)
		s->hooks->detach(s, slot);
	ps_counter__unmap_user_page(c);
	for (int i = 0; i < c->nfds; i++)
		if (c->fds[i] >= 0)
			close(c->fds[i]);
	free(c->fds);
	free(c->ids);
	free(c->tasks);
	free(c->cpus);
	ps_counter__free_ahead(c);
	c->fds = NULL;
	c->cpus = NULL;
	c->ids = NULL;
	c->tasks = NULL;
	c->nfds = c->handed = 0;
	c->open = c->running = c->group_fmt = false;
}

void ps_counter__hand_over(struct ps_session *s, struct ps_counter *c)
{
	(void)s;
	ps_counter__unmap_user_page(c);
	for (int i = 0; i < c->nfds; i++)
		if (c->fds[i] >= 0)
			close(c->fds[i]);
	ps_counter__free_ahead(c);
	c->handed = c->nfds > 0 ? c->nfds : 1;
	c->nfds = 0;
}

void ps_counter__close_group(struct ps_session *s, uint32_t leader)
{
	struct ps_counter *l = &s->slots[leader];

	/* members first: closing the leader first would promote them to singletons */
	for (uint32_t i = l->nmembers; i-- > 0;)
		close_fds(s, l->members[i]);
	free(l->rbuf);
	l->rbuf = NULL;
	l->rbuf_words = 0;
}

static void release_slot(struct ps_session *s, uint32_t i)
{
	struct ps_counter *c = &s->slots[i];

	close_fds(s, i);
	if (c->sampled && s->hooks)
		s->hooks->release(s, i);
	free(c->members);
	free(c->rbuf);
	if (c->spec && --c->spec->refs == 0)
		free(c->spec);
	free(c->name);
	free(c->unit);
	free(c->bp_symbol);
	free(c->tracepoint);
	ps_counter__free_probe(c);
	uint32_t gen = (c->gen + 1) & PS_HANDLE_GEN_MASK;
	memset(c, 0, sizeof(*c));
	c->gen = gen;
	c->next_free = s->free_head;
	s->free_head = i;
	s->live--;
}

static int take_slot(struct ps_session *s, uint32_t *slot)
{
	if (s->free_head != PS_NO_SLOT) {
		*slot = s->free_head;
		s->free_head = s->slots[*slot].next_free;
	} else {
		if (ps_array__reserve(&s->slots, &s->cap, (size_t)s->nslots + 1, sizeof(*s->slots)))
			return -ENOMEM;
		*slot = s->nslots++;
		s->slots[*slot].gen = 0;
	}
	struct ps_counter *c = &s->slots[*slot];
	uint32_t gen = c->gen;

	memset(c, 0, sizeof(*c));
	c->gen = gen;
	c->live = true;
	c->leader = *slot;
	c->cpu = -1;
	s->live++;
	return 0;
}

/* Fill a fresh slot from event i of evs, sharing spec. 0 or -ENOMEM. */
static int fill_slot(struct ps_counter *c, struct ps_spec *spec, const struct ps_events *evs,
		     size_t i)
{
	const char *unit = "", *sym, *tp;

	c->attr = *ps_events__attr(evs, i);
	c->cpu = ps_events__cpu(evs, i);
	c->max_stack = ps_events__max_stack(evs, i);
	c->flags = ps_events__flags(evs, i);
	c->spec = spec;
	spec->refs++;
	c->name = strdup(ps_events__name(evs, i) ? ps_events__name(evs, i) : spec->text);
	c->scale = 1.0;
	ps_events__scale(evs, i, &c->scale, &unit);
	c->unit = strdup(unit ? unit : "");
	if (!c->name || !c->unit)
		return -ENOMEM;
	sym = ps_events__bp_symbol(evs, i, &c->bp_offset);
	if (sym && !(c->bp_symbol = strdup(sym)))
		return -ENOMEM;
	tp = ps_events__tracepoint(evs, i);
	if (tp && !(c->tracepoint = strdup(tp)))
		return -ENOMEM;
	return ps_counter__set_probe(c, evs, i) < 0 ? -ENOMEM : 0;
}

/* Group structure: members point at their leader; leaders list their
 * members. slots[i] holds event i. 0, -EINVAL or -ENOMEM. */
static int link_groups(struct ps_session *s, const struct ps_events *evs, const uint32_t *slots,
		       size_t n)
{
	/* in passes, not a scan per leader: a string of n ungrouped events is
	 * n leaders */
	for (size_t i = 0; i < n; i++) {
		size_t li = ps_events__leader(evs, i);

		if (li >= n || ps_events__leader(evs, li) != li)
			return -EINVAL;
		s->slots[slots[i]].leader = slots[li];
		s->slots[slots[li]].nmembers++;
	}
	for (size_t i = 0; i < n; i++) {
		struct ps_counter *c = &s->slots[slots[i]];

		if (ps_events__leader(evs, i) != i)
			continue;
		if (!(c->members = malloc(c->nmembers * sizeof(*c->members))))
			return -ENOMEM;
		c->nmembers = 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct ps_counter *l = &s->slots[s->slots[slots[i]].leader];

		l->members[l->nmembers++] = slots[i];
	}
	return 0;
}

/* Each counter's attr for this target, and the sampler's part. */
static int settle(struct ps_session *s, const struct ps_events *evs, const uint32_t *slots,
		  size_t n, ps_handle *handles)
{
	for (size_t i = 0; i < n; i++) {
		struct ps_counter *c = &s->slots[slots[i]];
		struct ps_counter *l = &s->slots[c->leader];
		int err;

		/* a group is one unit on one CPU: the leader's cpu= term places it */
		c->cpu = l->cpu;
		c->sampling = c->attr.sample_period != 0;
		ps_counter__target_attr(s, c, c == l, c == l && l->nmembers > 1);
		if (c->sampling) {
			err = s->hooks ? s->hooks->prepare(s, slots[i], evs, i) : -EOPNOTSUPP;
			if (err)
				return err;
		}
		handles[i] = ps_session__handle(s, slots[i]);
	}
	return 0;
}

/* The parsed string, or NULL with *ret the code to return. */
static struct ps_events *parse(const char *spec, struct ps_event_error *err, int *ret)
{
	struct ps_events *evs;

	memset(err, 0, sizeof(*err));
	evs = ps_events__parse(spec, err);
	if (!evs)
		*ret = errno == ENOMEM ? -ENOMEM : err->code > 0 ? -err->code : -PS_ERR_SYNTAX;
	return evs;
}

int ps_session__allocate(struct ps_session *s, const char *spec, ps_handle *handles, size_t max,
			 struct ps_event_error *err)
{
	struct ps_event_error local;
	struct ps_events *evs;
	uint32_t *slots = NULL;
	struct ps_spec *shared = NULL;
	size_t n, done = 0;
	int ret = 0;

	if (!err)
		err = &local;
	if (!s || !spec)
		return -EINVAL;
	evs = parse(spec, err, &ret);
	if (!evs)
		return ret;
	n = ps_events__count(evs);
	if (n == 0)
		ret = -EINVAL;
	else if (!handles || n > max) {
		ret = -ENOSPC;
		err->needed = (unsigned)n;
		snprintf(err->message, sizeof(err->message),
			 "'%.100s' gives %zu events: pass room for %zu handles", spec, n, n);
	} else if (s->live + n > PS_SESSION_MAX_COUNTERS) {
		ret = -PS_ERR_LIMIT;
		snprintf(err->message, sizeof(err->message),
			 "'%.100s' gives %zu events and the session already holds %zu counters: "
			 "a session holds at most %u at once",
			 spec, n, (size_t)s->live, PS_SESSION_MAX_COUNTERS);
	} else if (!(slots = malloc(n * sizeof(*slots))) ||
		   !(shared = malloc(sizeof(*shared) + strlen(spec) + 1)))
		ret = -ENOMEM;
	if (shared) {
		shared->refs = 1; /* ours, until the slots hold it */
		strcpy(shared->text, spec);
	}
	while (!ret && done < n && !(ret = take_slot(s, &slots[done]))) {
		ret = fill_slot(&s->slots[slots[done]], shared, evs, done);
		done++; /* taken: released again on failure */
	}
	if (!ret)
		ret = link_groups(s, evs, slots, n);
	/* where a probe fires is looked up now: a misspelt symbol is the
	 * caller's error here, with the nearest name, not at the session's start */
	for (size_t i = 0; !ret && i < n; i++)
		if ((ret = ps_counter__resolve_probe(s, slots[i], err->message,
						     sizeof(err->message))))
			err->code = 0;
	if (!ret)
		ret = settle(s, evs, slots, n, handles);
	if (ret < 0)
		for (size_t i = done; i-- > 0;)
			release_slot(s, slots[i]);
	free(slots);
	if (shared && --shared->refs == 0)
		free(shared);
	ps_events__free(evs);
	return ret < 0 ? ret : (int)n;
}

void ps_counters__free_all(struct ps_session *s)
{
	for (uint32_t i = 0; i < s->nslots; i++)
		if (s->slots[i].live)
			release_slot(s, i);
}

int ps_session__free_counter(struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h);
	uint32_t i, li;

	if (!c)
		return -PS_ERR_HANDLE;
	i = (uint32_t)(c - s->slots);
	li = c->leader;
	if (li == i) {
		ps_counter__close_group(s, i);
		for (uint32_t m = c->nmembers; m-- > 1;)
			release_slot(s, c->members[m]);
		release_slot(s, i);
		return 0;
	}
	struct ps_counter *l = &s->slots[li];

	for (uint32_t m = 0; m < l->nmembers; m++) {
		if (l->members[m] == i) {
			memmove(&l->members[m], &l->members[m + 1],
				(l->nmembers - m - 1) * sizeof(*l->members));
			l->nmembers--;
			break;
		}
	}
	release_slot(s, i);
	return 0;
}

int ps_session__check(const struct ps_session *s, ps_handle h)
{
	return ps_session__slot(s, h) ? 0 : -PS_ERR_HANDLE;
}

int ps_session__group(struct ps_session *s, ps_handle h, ps_handle *handles, size_t max)
{
	struct ps_counter *c = ps_session__slot(s, h), *l;

	if (!c)
		return -PS_ERR_HANDLE;
	l = &s->slots[c->leader];
	if (l->nmembers > max || (!handles && l->nmembers))
		return -ENOSPC;
	for (uint32_t m = 0; m < l->nmembers; m++)
		handles[m] = ps_session__handle(s, l->members[m]);
	return (int)l->nmembers;
}

const char *ps_session__spec(const struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h);

	return c ? c->spec->text : NULL;
}

int ps_session__scale(const struct ps_session *s, ps_handle h, double *scale, const char **unit)
{
	struct ps_counter *c = ps_session__slot(s, h);

	if (!c)
		return -PS_ERR_HANDLE;
	if (scale)
		*scale = c->scale;
	if (unit)
		*unit = c->unit;
	return 0;
}

const char *ps_session__name(const struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h);

	return c ? c->name : NULL;
}

int ps_session__probe_kind(const struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h);

	if (!c)
		return -PS_ERR_HANDLE;
	return c->probe ? (int)c->probe->kind : -ENOENT;
}

const char *ps_session__tracepoint(const struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h);

	return c ? c->tracepoint : NULL;
}

unsigned ps_session__flags(const struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h);

	return c ? c->flags : 0;
}

const struct perf_event_attr *ps_session__attr(const struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h);

	return c ? &c->attr : NULL;
}

unsigned ps_session__max_stack(const struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h);

	return c ? c->max_stack : 0;
}

bool ps_session__is_open(const struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h);

	return c && c->open;
}

bool ps_session__is_running(const struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h);

	return c && c->open && c->running && s->slots[c->leader].running;
}

int ps_session__fds(const struct ps_session *s, ps_handle h, const int **fds)
{
	struct ps_counter *c = ps_session__slot(s, h);

	if (!c)
		return -PS_ERR_HANDLE;
	if (fds)
		*fds = c->fds;
	return c->nfds;
}

size_t ps_session__count(const struct ps_session *s)
{
	return s ? s->live : 0;
}

/* A tracepoint or probe sampled with no period= samples every hit, as perf
 * record does: period 1, the sample fields the parser gives period=1. */
int ps_session__sample_every(struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h);
	struct perf_event_attr *a;
	uint32_t slot;

	if (!c)
		return -PS_ERR_HANDLE;
	if (c->sampling)
		return 0;
	if (!(c->flags & PS_EVENT_SAMPLE_EVERY))
		return -EINVAL;
	if (c->open)
		return -PS_ERR_STATE;
	slot = (uint32_t)(c - s->slots);
	a = &c->attr;
	/* what the parser gives period=1 (event/event.c) */
	a->sample_period = 1;
	a->freq = 0;
	a->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			  PERF_SAMPLE_PERIOD;
	if (a->type == PERF_TYPE_TRACEPOINT)
		a->sample_type |= PERF_SAMPLE_RAW;
	if (c->leader == slot && c->nmembers > 1)
		a->sample_type |= PERF_SAMPLE_READ;
	c->sampling = true;
	return s->hooks && s->hooks->prepare ? s->hooks->prepare(s, slot, NULL, 0) : 0;
}
