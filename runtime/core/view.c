/*
 * view.c: the accessors of core/view.h, the layers above's view of a
 * session and its counters.
 */
#include "core/internal.h"

struct ps_counter *ps_session__counter(const struct ps_session *s, uint32_t slot)
{
	return s && slot < s->nslots ? &s->slots[slot] : NULL;
}

uint32_t ps_session__slot_of(const struct ps_session *s, const struct ps_counter *c)
{
	return (uint32_t)(c - s->slots);
}

uint32_t ps_session__slot_of_handle(const struct ps_session *s, ps_handle h)
{
	const struct ps_counter *c = ps_session__slot(s, h);

	return c ? (uint32_t)(c - s->slots) : PS_NO_SLOT;
}

ps_handle ps_session__handle_of(const struct ps_session *s, uint32_t slot)
{
	return ps_session__handle(s, slot);
}

uint32_t ps_session__nslots(const struct ps_session *s)
{
	return s->nslots;
}

struct ps_sampler *ps_session__sampler(const struct ps_session *s)
{
	return s->sampler;
}

void ps_session__set_sampler(struct ps_session *s, struct ps_sampler *m,
			     const struct ps_sampler_hooks *hooks)
{
	s->sampler = m;
	s->hooks = hooks;
}

bool ps_session__held(const struct ps_session *s)
{
	return s->held;
}

bool ps_session__no_children(const struct ps_session *s)
{
	return s->no_children;
}

const struct perf_event_attr *ps_counter__attr(const struct ps_counter *c)
{
	return &c->attr;
}

struct perf_event_attr *ps_counter__attr_mut(struct ps_counter *c)
{
	return &c->attr;
}

int ps_counter__nfds(const struct ps_counter *c)
{
	return c->nfds;
}

int ps_counter__fd(const struct ps_counter *c, int k)
{
	return c->fds && k >= 0 && k < c->nfds ? c->fds[k] : -1;
}

uint64_t ps_counter__id(const struct ps_counter *c, int k)
{
	return c->ids && k >= 0 && k < c->nfds ? c->ids[k] : 0;
}

const char *ps_counter__name(const struct ps_counter *c)
{
	return c->name;
}

const char *ps_counter__spec_text(const struct ps_counter *c)
{
	return c->spec ? c->spec->text : "";
}

const char *ps_counter__tracepoint_name(const struct ps_counter *c)
{
	return c->tracepoint;
}

bool ps_counter__live(const struct ps_counter *c)
{
	return c->live;
}

bool ps_counter__stopped(const struct ps_counter *c)
{
	return c->stopped;
}

bool ps_counter__running(const struct ps_counter *c)
{
	return c->running;
}

unsigned ps_counter__flags(const struct ps_counter *c)
{
	return c->flags;
}

struct ps_sampled *ps_counter__sampled(const struct ps_counter *c)
{
	return c->sampled;
}

void ps_counter__set_sampled(struct ps_counter *c, struct ps_sampled *v)
{
	c->sampled = v;
}

size_t ps_counter__probe_sites(const struct ps_counter *c)
{
	return c->probe ? c->probe->nsites : 0;
}

struct ps_counter *ps_session__counter_of(const struct ps_session *s, ps_handle h)
{
	return ps_session__slot(s, h);
}

bool ps_counter__is_open(const struct ps_counter *c)
{
	return c->open;
}

bool ps_counter__alone(const struct ps_session *s, const struct ps_counter *c)
{
	return c->leader == (uint32_t)(c - s->slots) && c->nmembers <= 1;
}

int ps_counter__handed(const struct ps_counter *c)
{
	return c->handed;
}

int ps_counter__cpu_term(const struct ps_counter *c)
{
	return c->cpu;
}

bool ps_counter__reads_group(const struct ps_session *s, const struct ps_counter *c,
			     uint32_t *nmembers)
{
	*nmembers = c->group_fmt ? s->slots[c->leader].nmembers : 1;
	return c->group_fmt;
}

bool ps_counter__sampling(const struct ps_counter *c)
{
	return c->sampling;
}

int ps_session__cgroup_fd(const struct ps_session *s)
{
	return s ? s->cgroup_fd : -1;
}
