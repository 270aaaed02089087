/*
 * rawtp.c: a tracepoint counter counted on its raw tracepoint. A program
 * on a tracepoint's perf event runs after the kernel has filled the event's
 * record, and the hit then goes on through the perf events there; for a
 * counter that only aggregates, the raw tracepoint's program (ps_raw) does
 * the whole job before any of that, and the counter's own perf events are
 * handed over (closed), so the tracepoint has no perf path left to pay for.
 * The counter's value is then the hits ps_raw counted in the target, and
 * its times those the counter was on, kept here. On a process target only
 * raw_syscalls' are counted so; an off-CPU aggregate's sched_switch, on a
 * CPU target, by ps_switch, which does its work. A tracepoint that has no
 * raw tracepoint of its name (syscalls:*, built on raw_syscalls') keeps
 * the perf path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample/bpf/internal.h"
#include "ps_sample.skel.h"

#define RAW_KEYS (PS_AGG_PID | PS_AGG_TID | PS_AGG_CPU | PS_AGG_COMM | PS_AGG_FIELD)

/* Keyed by a record field: raw_syscalls' id or ret, the raw tracepoint's
 * second argument, are the only ones a raw argument gives as the record
 * has them. */
static bool raw_field(const struct ps_counter *c, const struct ps_sample_conf *b)
{
	const char *tp = ps_counter__tracepoint_name(c);
	const char *name = !tp					   ? NULL
			   : !strcmp(tp, "raw_syscalls:sys_enter") ? "id"
			   : !strcmp(tp, "raw_syscalls:sys_exit")  ? "ret"
								   : NULL;
	const struct ps_tp_field *f =
	    name ? ps_tp_format__find(ps_tp_format__get(tp, NULL), name) : NULL;

	return f && f->offset == b->field_offset && f->size == 8 && b->field_size == 8;
}

/* What a counter counted on its raw tracepoint must be: counted as a
 * whole, on every hit, by nothing else. */
static bool raw_alone(const struct ps_session *s, const struct ps_counter *c)
{
	const struct ps_sample_conf *b = &ps_counter__sampled(c)->conf;
	const struct perf_event_attr *a = ps_counter__attr(c);

	if (b->npids || b->ncpus || b->tid || b->priv || b->every > 1)
		return false;
	if (a->freq || a->sample_period != 1 || a->exclude_user || a->exclude_kernel)
		return false;
	/* a counter that counted on its own fds already keeps them */
	return ps_counter__alone(s, c) && (ps_counter__handed(c) || !ps_counter__running(c));
}

bool ps_bpf__raw_offcpu(const struct ps_session *s, const struct ps_counter *c)
{
	const struct ps_sample_conf *b = &ps_counter__sampled(c)->conf;

	/* on a CPU target, as below; its hits are the switches there */
	return !(b->mode & PS_BPF_FORWARD) && ps_session__target_kind(s) == PS_TARGET_CPUS &&
	       raw_alone(s, c);
}

bool ps_bpf__raw_count(const struct ps_session *s, const struct ps_counter *c)
{
	const struct ps_sample_conf *b = &ps_counter__sampled(c)->conf;
	const char *tp = ps_counter__tracepoint_name(c);

	if (!tp || !strncmp(tp, "syscalls:", 9) || b->mode != PS_BPF_AGGREGATE)
		return false;
	/* A process target's perf events count some hits the program cannot
	 * tell from the current task: a wake-up of one of its tasks by
	 * another (the kernel hands sched_wakeup and sched_stat_* to the woken
	 * task's events), a hit in an exiting task after its events went.
	 * Syscalls are the current task's alone: every CPU target's events
	 * count a hit wherever the current task is. */
	if (ps_session__target_kind(s) != PS_TARGET_CPUS && strncmp(tp, "raw_syscalls:", 13))
		return false;
	if ((b->keys & ~RAW_KEYS) || ((b->keys & PS_AGG_FIELD) && !raw_field(c, b)))
		return false;
	return raw_alone(s, c);
}

int ps_bpf__raw_link(struct ps_bpf_counter *b, const char *name, const struct bpf_program *prog)
{
	int fd = bpf_raw_tracepoint_open(name, bpf_program__fd(prog));

	if (fd < 0)
		return fd;
	b->links[b->nlinks++] = fd;
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ps_bpf__raw_switched(struct ps_bpf_counter *b, bool on)
{
	uint64_t t = now_ns();

	if (on && !b->on_since)
		b->on_since = t;
	if (!on && b->on_since) {
		b->on_ns += t - b->on_since;
		b->on_since = 0;
	}
}

void ps_bpf__raw_start(struct ps_sampler *m, uint32_t slot, struct ps_bpf_counter *b)
{
	const struct ps_bpf_counter *old = ps_bpf__counter(m, slot);
	uint64_t hits = 0;

	if (old && old->raw && !ps_bpf__percpu_sum(old, PS_BPF_HITS, &hits)) {
		b->carried = old->carried + hits;
		b->base = old->base;
		b->base_ns = old->base_ns;
		b->on_ns = old->on_ns + (old->on_since ? now_ns() - old->on_since : 0);
	}
	if (b->skel->bss->on)
		ps_bpf__raw_switched(b, true);
}

bool ps_bpf__counts_hits(struct ps_sampler *m, uint32_t slot)
{
	const struct ps_bpf_counter *b = ps_bpf__counter(m, slot);

	return b && b->raw;
}

int ps_bpf__count(struct ps_sampler *m, uint32_t slot, struct ps_value *v, bool reset)
{
	struct ps_bpf_counter *b = ps_bpf__counter(m, slot);
	const struct ps_counter *c = ps_session__counter(m->s, slot);
	uint64_t hits = 0, ns;
	int err;

	if (!b || !b->raw)
		return -ENODATA;
	err = ps_bpf__percpu_sum(b, PS_BPF_HITS, &hits);
	if (err)
		return err;
	hits += b->carried;
	ns = b->on_ns + (b->on_since ? now_ns() - b->on_since : 0);
	if (reset) {
		b->base = hits;
		b->base_ns = ns;
		return 0;
	}
	/* the times the fds would have summed: each was on as long */
	ns = (ns - b->base_ns) * (uint64_t)ps_counter__handed(c);
	*v = (struct ps_value){
	    .value = hits - b->base, .raw = hits - b->base, .enabled = ns, .running = ns};
	return 0;
}
