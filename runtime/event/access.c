/*
 * access.c: what a parsed event string gives its users (perfscript.h's
 * ps_events__* accessors), and releasing it. Every accessor takes a NULL
 * set or an index out of range and answers "nothing" rather than failing,
 * so a caller can walk the events without checking each step.
 */
#include <errno.h>
#include <stdlib.h>

#include "event/event.h"

void ps_ev__event_release(struct ps_event *ev)
{
	free(ev->name);
	free(ev->bp_symbol);
	free(ev->group_name);
	free(ev->metric_id);
	free(ev->tp_name);
	ps_ev__probe_free(ev->probe);
	ev->name = ev->bp_symbol = ev->group_name = ev->metric_id = ev->tp_name = NULL;
	ev->probe = NULL;
}

void ps_events__free(struct ps_events *evs)
{
	if (!evs)
		return;
	for (size_t i = 0; i < evs->n; i++)
		ps_ev__event_release(&evs->ev[i]);
	free(evs->ev);
	free(evs->spec);
	free(evs);
}

static const struct ps_event *at(const struct ps_events *evs, size_t i)
{
	return evs && i < evs->n ? &evs->ev[i] : NULL;
}

size_t ps_events__count(const struct ps_events *evs)
{
	return evs ? evs->n : 0;
}

const struct perf_event_attr *ps_events__attr(const struct ps_events *evs, size_t i)
{
	return at(evs, i) ? &evs->ev[i].attr : NULL;
}

const char *ps_events__name(const struct ps_events *evs, size_t i)
{
	return at(evs, i) ? evs->ev[i].name : NULL;
}

size_t ps_events__leader(const struct ps_events *evs, size_t i)
{
	return at(evs, i) ? evs->ev[i].leader : i;
}

int ps_events__cpu(const struct ps_events *evs, size_t i)
{
	return at(evs, i) ? evs->ev[i].cpu : -1;
}

unsigned ps_events__max_stack(const struct ps_events *evs, size_t i)
{
	return at(evs, i) ? evs->ev[i].max_stack : 0;
}

const char *ps_events__spec(const struct ps_events *evs)
{
	return evs ? evs->spec : NULL;
}

int ps_events__scale(const struct ps_events *evs, size_t i, double *scale, const char **unit)
{
	const struct ps_event *ev = at(evs, i);

	if (!ev)
		return -EINVAL;
	if (scale)
		*scale = ev->scale > 0 ? ev->scale : 1.0;
	if (unit)
		*unit = ev->unit ? ev->unit : "";
	return 0;
}

int ps_events__cpus(const struct ps_events *evs, size_t i, const int **cpus)
{
	const struct ps_event *ev = at(evs, i);

	if (!ev)
		return -EINVAL;
	if (cpus)
		*cpus = ev->cpus;
	return (int)ev->ncpus;
}

const char *ps_events__bp_symbol(const struct ps_events *evs, size_t i, uint64_t *offset)
{
	const struct ps_event *ev = at(evs, i);

	if (!ev || !ev->bp_symbol)
		return NULL;
	if (offset)
		*offset = ev->bp_offset;
	return ev->bp_symbol;
}

unsigned ps_events__flags(const struct ps_events *evs, size_t i)
{
	return at(evs, i) ? evs->ev[i].flags : 0;
}

const char *ps_events__group_name(const struct ps_events *evs, size_t i)
{
	return at(evs, i) ? evs->ev[i].group_name : NULL;
}

const char *ps_events__tracepoint(const struct ps_events *evs, size_t i)
{
	return at(evs, i) ? evs->ev[i].tp_name : NULL;
}
