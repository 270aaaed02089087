/*
 * attr.c: the perf_event_attr a counter opens with, settled in two steps
 * and in this one file. At allocation the target's part: what a read gives
 * (both times, the id, a group read for a leader with members) and whether
 * the counter follows a command's or a process's children; what sampling
 * adds is the sampler's (core/sampler_hooks.h). At open, per fd: on or off now (a
 * leader opens disabled, or armed with enable_on_exec on a held command; a
 * member follows its leader), a probe's site, and a group read dropped
 * when the kernel refused one.
 */
#include <time.h>

#include "core/internal.h"

void ps_counter__target_attr(const struct ps_session *s, struct ps_counter *c, bool leads,
			     bool grouped)
{
	struct perf_event_attr *a = &c->attr;

	a->size = sizeof(*a);
	a->read_format |=
	    PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
	if (grouped)
		a->read_format |= PERF_FORMAT_GROUP;
	/* Counters follow a command's or a pid's children and later threads. */
	if ((s->kind == PS_TARGET_COMMAND || s->kind == PS_TARGET_PID) &&
	    !(c->flags & PS_EVENT_NO_INHERIT)) {
		a->inherit = 1;
		a->inherit_thread = s->no_children; /* threads, not child processes */
	}
	a->disabled = leads; /* members count whenever their leader does */
	a->enable_on_exec = 0;
	/* One clock for every record: the one BPF stamps with and
	 * clock_gettime reads, so the sampler can merge its sources by time
	 * (sample/order.c). A group shares one clock, so every counter has it. */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

void ps_counter__open_attr(const struct ps_session *s, const struct ps_counter *c, bool leads,
			   bool drop_group, uint32_t site, struct perf_event_attr *a)
{
	*a = c->attr;
	ps_counter__probe_attr(c, site, a);
	if (drop_group)
		a->read_format &= ~(uint64_t)PERF_FORMAT_GROUP;
	if (leads) {
		a->disabled = 1;
		a->enable_on_exec = s->kind == PS_TARGET_COMMAND && s->held && !c->stopped;
	} else {
		/* members follow their leader; a stopped one stays off */
		a->disabled = c->stopped;
		a->enable_on_exec = 0;
	}
}
