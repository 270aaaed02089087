/*
 * finalize.c: the last step of parsing an event string: what every attr
 * needs to be opened as a counter of its group, once all its terms and
 * modifiers are known: size, disabled on leaders (members follow), the
 * read_format of a group, the sample contents of a sampling event (perf's
 * defaults, a tracepoint's raw record, a probe's registers, time=), the
 * flags the core reads (sample every hit, precise max, bpf/nobpf, weak
 * group), pinned/exclusive moved to the leader, the only place the kernel
 * takes them, and max-stack= as deep as the kernel's own walk may go (the
 * user side unwinds as deep as written: ev->max_stack).
 */
#include <stdatomic.h>
#include <stdio.h>

#include "event/event.h"

static size_t group_size(const struct ps_events *evs, size_t leader)
{
	size_t n = 0;

	for (size_t i = leader; i < evs->n && evs->ev[i].leader == leader; i++)
		n++;
	return n;
}

/* The sample contents the terms asked for, once period or freq is known:
 * perf's defaults, a tracepoint's raw fields (unless raw=0), time= and
 * as written. Counting events keep the bits the terms set; the
 * kernel ignores them. */
static void sample_bits(struct ps_event *ev, bool leads_group)
{
	struct perf_event_attr *a = &ev->attr;

	if (a->sample_period) { /* a union with sample_freq */
		a->sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				  PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
		if (leads_group)
			a->sample_type |= PERF_SAMPLE_READ;
		if (a->type == PERF_TYPE_TRACEPOINT && ev->raw_term != 0)
			a->sample_type |= PERF_SAMPLE_RAW;
	}
	if (ev->probe) {
		/* what s:arg(n) and s.retval read: the task's user registers
		 * at a uprobe, the registers at the breakpoint for a kprobe */
		bool kernel =
		    ev->probe->kind == PS_PROBE_KPROBE || ev->probe->kind == PS_PROBE_KRETPROBE;

		a->sample_type |= kernel ? PERF_SAMPLE_REGS_INTR : PERF_SAMPLE_REGS_USER;
		if (kernel)
			a->sample_regs_intr = ps_ev__probe_regs_mask();
		else
			a->sample_regs_user |= ps_ev__probe_regs_mask();
	}
	if (ev->time_term == 0)
		a->sample_type &= ~(uint64_t)PERF_SAMPLE_TIME;
	else if (ev->time_term == 1)
		a->sample_type |= PERF_SAMPLE_TIME;
}

/* kernel.perf_event_max_stack: the deepest callchain the kernel takes. */
static unsigned kernel_max_stack(void)
{
	static _Atomic unsigned max; /* read once: a sysctl seldom changed */
	unsigned v = 0;
	FILE *f;

	if (max)
		return max;
	if ((f = fopen("/proc/sys/kernel/perf_event_max_stack", "re"))) {
		if (fscanf(f, "%u", &v) != 1)
			v = 0;
		fclose(f);
	}
	max = v ? v : 127;
	return max;
}

void ps_ev__finalize(struct ps_events *evs)
{
	for (size_t i = 0; i < evs->n; i++) {
		struct ps_event *ev = &evs->ev[i];
		struct perf_event_attr *a = &ev->attr, *la = &evs->ev[ev->leader].attr;
		bool leads_group = ev->leader == i && group_size(evs, i) > 1;

		a->size = sizeof(*a);
		a->disabled = ev->leader == i; /* members follow their leader */
		a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		if (leads_group)
			a->read_format |= PERF_FORMAT_GROUP | PERF_FORMAT_ID;
		sample_bits(ev, leads_group);
		if (a->sample_max_stack > kernel_max_stack()) /* the kernel refuses more */
			a->sample_max_stack = (uint16_t)kernel_max_stack();
		if (ev->sample_read)
			la->sample_type |= PERF_SAMPLE_READ;
		if (a->type == PERF_TYPE_TRACEPOINT || ev->probe)
			ev->flags |= PS_EVENT_SAMPLE_EVERY;
		if (ev->precise_max)
			ev->flags |= PS_EVENT_PRECISE_MAX;
		if (ev->bpf)
			ev->flags |= ev->bpf > 0 ? PS_EVENT_BPF : PS_EVENT_NOBPF;
		if (ev->leader != i) {
			/* The kernel accepts pinned/exclusive on a group leader only;
			 * a group is weak as a whole, which its leader says. */
			la->pinned |= a->pinned;
			la->exclusive |= a->exclusive;
			a->pinned = a->exclusive = 0;
			evs->ev[ev->leader].flags |= ev->flags & PS_EVENT_WEAK_GROUP;
			ev->flags &= ~(unsigned)PS_EVENT_WEAK_GROUP;
		}
	}
}
