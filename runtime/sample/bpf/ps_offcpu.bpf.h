/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ps_offcpu.bpf.h: off-CPU time, the part of ps_sample.bpf.c that runs on
 * sched:sched_switch for an aggregate with PS_BPF_OFFCPU. Each thread of
 * the target has an entry in ps_offcpu, kept in place from its first
 * switch to its last: when it is switched out (it is the current task:
 * prev), its key (comm, args.prev_state: why it left the CPU) and the time
 * go there; when it is switched in again (next), the interval is added to
 * the key's sum. An interval shorter than the threshold (cfg_offcpu_min_ns)
 * is added without stacks: a switch costs a timestamp and a map update, and
 * the totals stay exact whatever the threshold. The stacks of a longer one
 * are taken once, in the thread's own context: where the kernel has
 * sched_exit_tp (6.16 on: the end of __schedule, in the task that runs
 * next), at the switch-out of a thread whose last interval was long (or its
 * first: it is likely to wait long again, and may still be waiting when the
 * sums are read), otherwise as the thread runs again if the interval turned
 * out long (cfg_offcpu_late: its kernel and user stacks still hold the
 * place where it left the CPU; ps_resumed); on other kernels at every
 * switch-out. The stack map keeps each distinct stack once, and a
 * thread that blocks again where it blocked before is given the stacks
 * walked there, checked now and then (ps_offcpu_places.bpf.h). With on-CPU
 * slices asked for too (cfg_offcpu & PS_OC_ON), the time from a switch-in
 * to the next switch-out is added under the key taken there, its state
 * PS_STATE_ONCPU: a thread's parts then add up to its whole time in the
 * session. A dying thread's last switch-out ends its last slice and drops
 * its entry. Intervals that find the map full are counted as dropped
 * (ps_lost[1]), like keys. The switches come to ps_switch, on the raw
 * tracepoint (kernels 5.18 on; in the scheduler's clock and figures), or
 * else to the tracepoint's own program (ps_tp, with bpf_ktime_get_ns and
 * the wake-ups ps_wakeup sees); ps_flush books what is still going on
 * before the aggregate is read (those in ps_offcpu_edges.bpf.h). Included
 * once, by ps_sample.bpf.c, after make_key, add and in_target.
 */
#ifndef PS_OFFCPU_BPF_H
#define PS_OFFCPU_BPF_H

#define PS_OC_OFF	1    /* cfg_offcpu: sum the intervals switched out... */
#define PS_OC_ON	2    /* ...and the slices switched in */
#define PS_STATE_ONCPU	(-1) /* a slice's args.prev_state: the thread ran... */
#define PS_STATE_STOLEN (-2) /* ...or held the CPU while it did not (steal, IRQs) */

#define PS_NO_RUN (~0ull) /* waited(): the run-queue part is not known */

struct rq___ps {
	__u64 clock;
} __attribute__((preserve_access_index));

struct cfs_rq___ps {
	struct rq___ps *rq;
} __attribute__((preserve_access_index));

struct sched_entity___ps {
	__u64 sum_exec_runtime;
	struct cfs_rq___ps *cfs_rq; /* on its CPU's run queue */
} __attribute__((preserve_access_index));

struct sched_info___ps {
	unsigned long long run_delay, last_queued;
} __attribute__((preserve_access_index));

/* What the scheduler counted: the time the task ran (its task clock, up to
 * date at its switch-out; hypervisor steal left out), its time in the run
 * queue (run_delay; since last_queued, in the run queue's clock, for a
 * thread queued now), and exit_state, set by an exiting task's last
 * switch. */
struct task_struct___run {
	int pid;
	char comm[16];
	__u64 start_time; /* which thread a reused tid is */
	struct sched_entity___ps se;
	struct sched_info___ps sched_info;
	int exit_state;
} __attribute__((preserve_access_index));

/* Now, in the clock the interval is measured in: with ps_switch, the run
 * queue's clock of the CPU that switches, as updated for the switch (the
 * scheduler's own figures are in it; me is the task switched out, on
 * it), otherwise bpf_ktime_get_ns. */
static __always_inline __u64 clock_now(int raw, struct task_struct___run *me)
{
	if (raw) /* me is ps_switch's prev, a pointer the verifier knows */
		return me->se.cfs_rq->rq->clock;
	return bpf_ktime_get_ns();
}

/* A field of task t: read directly at ps_switch (tp_btf: t is a pointer
 * to the kernel's task_struct as the verifier knows it), with a probe read
 * elsewhere. */
#define TASK_FIELD(raw, t, f) ((raw) ? (t)->f : BPF_CORE_READ(t, f))

/* The run-queue clock less bpf_ktime_get_ns, as of the last switch (where
 * the scheduler has just updated it): away from a switch a run queue's
 * clock can be tens of milliseconds behind, so ps_flush and an exec take
 * the time as bpf_ktime_get_ns plus this. */
__s64 rq_minus_ktime = 0;

static __always_inline __u64 clock_now_away(void)
{
	__u64 k = bpf_ktime_get_ns();

	return cfg_offcpu_raw ? k + rq_minus_ktime : k;
}

#include "ps_offcpu_fwd.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* the loader sizes it: threads of the target alive at once */
	__type(key, __u32);	/* tid */
	__type(value, struct ps_oc_entry);
} ps_offcpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ps_oc_entry);
} ps_offcpu_scratch SEC(".maps"); /* a new entry is made here: too big for the stack */

/* Per CPU, the thread just switched in there whose stacks are due: the
 * end of __schedule that follows is its (ps_resumed), and every other
 * task's is told from it without a lookup in ps_offcpu. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ps_resuming SEC(".maps");

#include "ps_offcpu_sums.bpf.h"
#include "ps_offcpu_places.bpf.h"

/* The thread tid, switched in on this CPU, has its stacks due. */
static __always_inline void due_here(__u32 tid)
{
	__u32 zero = 0, *slot = bpf_map_lookup_elem(&ps_resuming, &zero);

	if (slot)
		*slot = tid;
}

/* An interval off the CPU, from since (st's last booking, claimed by the
 * caller) to end, is added to its key. At the switch-in (resuming), one
 * whose stacks are due waits for them in the entry (ps_resumed books
 * it). */
static __always_inline void waited(struct ps_oc_entry *st, __u64 since, __u64 end, __u64 run,
				   int resuming)
{
	int kept = end - st->began >= cfg_offcpu_min_ns;
	__u64 ns[2];
	__s64 state[2];

	if (!(cfg_offcpu & PS_OC_OFF))
		return;
	parts_of(st, since, end, run, ns, state);
	if (kept && resuming && st->due) {
		st->pend[0] = ns[0];
		st->pend[1] = ns[1];
		st->pend_state[0] = state[0];
		st->pend_state[1] = state[1];
		st->npend = 1;
		due_here(st->tid);
		return;
	}
	book(st, ns, state, kept);
}

/* Parts still waiting for stacks that never came (the thread left the
 * CPU again first) are added without them. */
static __always_inline void settle_pending(struct ps_oc_entry *st)
{
	if (!st->npend)
		return;
	st->npend = 0;
	book(st, st->pend, st->pend_state, 1);
}

/* The entry of a thread that ended unseen (its tid now another's): what
 * it holds is added under its own key before the entry is replaced. */
static __always_inline void retire(struct ps_oc_entry *st)
{
	settle_pending(st);
	spill(st);
}

/* The stacks of st's interval, in its thread's own context (ctx: the
 * program's; kskip: the frames of the walk that are the tracing's; late:
 * as it runs again, where the kernel stack's first frame is another
 * place in __schedule than at its switch-out): the
 * key's, and for a forwarded interval the ones its samples carry (taken
 * here when the key has none) and its user registers and stack. */
static __always_inline void take_stacks(struct ps_oc_entry *st, void *ctx, __u64 kskip, int late)
{
	if (!cfg_offcpu_fwd) { /* the key's stacks only: where it waited before, perhaps */
		stacks_at_place(ctx, kskip, late, st->left, &st->key.ustack, &st->key.kstack);
		return;
	}
	st->us = st->key.ustack = walk_user(ctx);
	st->ks = st->key.kstack = walk_kernel(ctx, kskip);
	if ((cfg_flags & PS_BPF_F_CALLCHAIN) && !(cfg_keys & PS_BPF_K_KSTACK))
		st->ks = bpf_get_stackid(ctx, &ps_stacks, kskip);
	if ((cfg_flags & PS_BPF_F_CALLCHAIN) && !cfg_offcpu_stack && !(cfg_keys & PS_BPF_K_USTACK))
		st->us = bpf_get_stackid(ctx, &ps_stacks, BPF_F_USER_STACK);
	sw_stack(st->tid);
}

/* The thread switched in (nt, with ps_switch): its interval off the CPU
 * ends (whoever is switched out). Its time in the run queue is what the
 * scheduler added to its run_delay since its switch-out and is about to
 * add (nt: ps_switch's next, a tp_btf task, or NULL). Its entry stays, as
 * the start of a slice. Found running already,
 * its switch-out was missed (the kernel skips a tracepoint's programs on
 * a CPU where another BPF program, or a map update, is under way; and a
 * few tasks of this VM's host are only ever seen switching in): the slice
 * is counted as dropped, and a new one begins. */
static __always_inline void switched_in(__u32 next, struct task_struct___run *nt, __u64 now)
{
	struct ps_oc_entry *st;
	__u64 run = PS_NO_RUN, queued, since;

	if (!next || !(st = bpf_map_lookup_elem(&ps_offcpu, &next)))
		return;
	if (st->oncpu) { /* a slice is cut short: dropped */
		if (cfg_offcpu & PS_OC_ON)
			bump(PS_BPF_LOST_KEYS);
		__sync_lock_test_and_set(&st->since, now);
		return;
	}
	if (nt) {
		queued = nt->sched_info.last_queued;
		run = nt->sched_info.run_delay - st->delay +
		      (queued && queued < now ? now - queued : 0);
	}
	st->kept_last = now - st->began >= cfg_offcpu_min_ns;
	/* the interval is claimed whole, against the reader's flush */
	since = __sync_lock_test_and_set(&st->since, now);
	if (since < now)
		waited(st, since, now, run, 1);
	st->woken = 0;
	st->oncpu = 1;
}

/* The slice that ends at this switch-out, from the switch-in at since
 * (on: it was seen; otherwise the switch-in was missed), under st's key,
 * taken here, without stacks. The task clock says how long it ran (the
 * rest of a slice's wall time the hypervisor took): both parts are exact
 * still. */
static __always_inline void slice(struct ps_oc_entry *st, __u64 wall, __u64 task, int on)
{
	if (!(cfg_offcpu & PS_OC_ON))
		return;
	add_short(st, task, cfg_offcpu_split ? PS_STATE_ONCPU : st->key.field);
	if (cfg_offcpu_split && on && wall > task)
		add_short(st, wall - task, PS_STATE_STOLEN);
}

/* Whether keys a and b are of the same thread under the same name (their
 * state and stacks aside). */
static __always_inline int same_who(const struct ps_agg_key *a, const struct ps_agg_key *b)
{
	const __u64 *ca = (const __u64 *)a->comm, *cb = (const __u64 *)b->comm;

	return a->pid == b->pid && a->tid == b->tid && a->cpu == b->cpu && ca[0] == cb[0] &&
	       ca[1] == cb[1];
}

/* Whether st's key names thread me as it is now, on this CPU (ps_switch:
 * me's fields read directly): its name and CPU when keyed by them. */
static __always_inline int same_name(const struct ps_oc_entry *st, struct task_struct___run *me,
				     __u32 cpu)
{
	const __u64 *was = (const __u64 *)st->key.comm;

	if ((cfg_keys & PS_BPF_K_CPU) && st->key.cpu != cpu)
		return 0;
	if (!(cfg_keys & PS_BPF_K_COMM))
		return 1;
	return *(__u64 *)&me->comm[0] == was[0] && *(__u64 *)&me->comm[8] == was[1];
}

/* The entry of the thread switched out (tid, started at born): its own,
 * kept from its last switch, or the per-CPU scratch for one of the target
 * seen for the first time (fresh: the caller fills and inserts it); an
 * entry of an earlier thread of that tid, whose end was not seen, is
 * retired first. NULL: not the target's. */
static __always_inline struct ps_oc_entry *leaving(__u32 tgid, __u32 tid, __u32 cpu, __u64 born,
						   int *fresh)
{
	struct ps_oc_entry *st = tid ? bpf_map_lookup_elem(&ps_offcpu, &tid) : NULL;
	__u32 zero = 0;

	*fresh = 0;
	if (st && (!st->born || st->born == born))
		return st;
	if (st) {
		retire(st);
		bpf_map_delete_elem(&ps_offcpu, &tid);
	}
	if (!tid || !on || !in_target(tgid, cpu))
		return NULL;
	if ((cfg_flags & PS_BPF_F_PIDS) && !bpf_map_lookup_elem(&ps_pids, &tgid))
		return NULL;
	if (cfg_tid && tid != cfg_tid)
		return NULL;
	st = bpf_map_lookup_elem(&ps_offcpu_scratch, &zero);
	if (!st)
		return NULL;
	st->npend = 0;
	*fresh = 1;
	return st;
}

/* One switch: next is the thread switched in; ctx the program's, for the
 * stacks; raw: ctx is sched_switch's arguments (tp_btf: prev and nt the
 * tasks), state the switch's args.prev_state (a tracepoint's record has
 * both; prev and nt are NULL). */
static __always_inline void offcpu(void *ctx, struct task_struct___run *prev, __u32 next,
				   struct task_struct___run *nt, __s64 state, int raw)
{
	struct task_struct___run *me = raw ? prev : (void *)bpf_get_current_task();
	__u64 now = clock_now(raw, me), pt = bpf_get_current_pid_tgid();
	__u32 tgid = pt >> 32, tid = (__u32)pt, cpu = bpf_get_smp_processor_id();
	__u64 ran, delay, wall, task, since;
	struct ps_oc_entry *st;
	struct ps_agg_key nk;
	int fresh, early;

	/* (the offset moves by nanoseconds: kept up to date at about one
	 * switch in 32, whose clock's bits say so) */
	if (raw && (!rq_minus_ktime || !(now & 0x7c0)))
		rq_minus_ktime = (__s64)(now - bpf_ktime_get_ns());
	if (cfg_raw_count && on && in_target_of(tgid, cpu, 1))
		bump(PS_BPF_HITS); /* the counter's value, its perf events handed over */
	switched_in(next, nt, now);
	/* the thread switched out: one the target had at its last switch (its
	 * counters may be gone if it is exiting), or a thread of the target */
	if (!(st = leaving(tgid, tid, cpu, TASK_FIELD(raw, me, start_time), &fresh)))
		return;
	if (fresh)
		st->born = TASK_FIELD(raw, me, start_time);
	ran = TASK_FIELD(raw, me, se.sum_exec_runtime);
	delay = TASK_FIELD(raw, me, sched_info.run_delay);
	/* what began at the last switch ends now: claimed whole, against the
	 * reader's flush (a fresh entry's is its own) */
	since = fresh ? now : __sync_lock_test_and_set(&st->since, now);
	wall = now > since ? now - since : 0;
	task = ran - st->ran < wall ? ran - st->ran : wall;
	if (!fresh) {
		settle_pending(st);
		if (!st->oncpu && wall) /* its switch-in was missed: the wait ended task ago */
			waited(st, since, now - task, raw ? delay - st->delay : PS_NO_RUN, 0);
	}
	if (raw && !fresh && same_name(st, me, cpu)) { /* most switches: only the state is new */
		if (cfg_keys & PS_BPF_K_FIELD)
			st->key.field = state;
		st->key.ustack = st->key.kstack = -1;
	} else {
		__builtin_memset(&nk, 0, sizeof(nk));
		make_key_of(&nk, ctx, tgid, tid, cpu, 0, 0, !raw, 0);
		if (raw && (cfg_keys & PS_BPF_K_FIELD))
			nk.field = state;
		if (fresh)
			__builtin_memset(st->acc, 0, sizeof(st->acc));
		else if (!same_who(&nk, &st->key)) /* its sums were under the old name */
			spill(st);
		__builtin_memcpy(&st->key, &nk, sizeof(nk));
	}
	sw_taken(st, ctx, tgid, tid, me, nt, state, raw);
	if (!fresh)
		slice(st, wall, task, st->oncpu == 1);
	if (TASK_FIELD(raw, me, exit_state) || !on) { /* no switch-in follows */
		if (!fresh) {
			spill(st);
			bpf_map_delete_elem(&ps_offcpu, &tid);
		}
		return;
	}
	/* a thread whose last wait was long (or its first) is likely to wait
	 * long again, and may still be waiting when the sums are read: its
	 * stacks are taken now; the others' when they run again, if needed */
	st->left = (__u32)state;
	early = !cfg_offcpu_late || fresh || st->kept_last;
	if (early)
		take_stacks(st, ctx, raw ? 2 : 0, 0);
	if (fresh) /* (an entry of the map has it from the claim above) */
		st->since = now;
	st->began = now;
	st->woken = 0;
	st->oncpu = 0;
	st->ran = ran;
	st->delay = delay;
	st->due = !early;
	if (fresh && bpf_map_update_elem(&ps_offcpu, &tid, st, BPF_ANY))
		bump(PS_BPF_LOST_KEYS);
}

/* args.prev_state as sched_switch's record reports it (the kernel's
 * __trace_sched_switch_state: TASK_REPORT bits, since 4.14): preempted is
 * TASK_REPORT_MAX, an idle kernel thread TASK_REPORT_IDLE, otherwise the
 * highest of the state and exit-state bits reported. */
static __always_inline __s64 report_state(__u64 preempt, __u64 st, __u32 exit_state)
{
	__u32 s = (__u32)(st | exit_state) & 0x7f;

	if (preempt)
		return 0x100;
	if (st == 0x402) /* TASK_IDLE */
		return 0x80;
	if (st == 0x1000) /* TASK_RTLOCK_WAIT: uninterruptible */
		return 2;
	for (int i = 6; i >= 0; i--)
		if (s & (1u << i))
			return 1 << i;
	return 0;
}

/* sched_switch as a raw tracepoint with BTF (preempt, prev, next,
 * prev_state; 5.18 on: the tasks' fields read directly, no probe reads):
 * unlike a tracepoint's program, the kernel does not skip it while
 * another BPF program runs on the CPU, or a map update is under way (a
 * task preempted in one, another tool's, skipped the switch-in that
 * followed), so no switch is missed; and with the tasks at hand, the
 * intervals are in the scheduler's clock and its run-queue time is its
 * own (steal inside a switch, after the clock was read, no longer moves
 * run-queue time to the slice). */
SEC("tp_btf/sched_switch")
int ps_switch(__u64 *ctx)
{
	struct task_struct___run *prev = (void *)ctx[1], *next = (void *)ctx[2];

	offcpu(ctx, prev, next->pid, next, report_state(ctx[0], ctx[3], prev->exit_state), 1);
	return 0;
}

/* The end of __schedule (sched_exit_tp, 6.16 on), in the task that runs
 * now: a thread of the target switched in after an interval that reached
 * the threshold has its stacks taken here, once, and the interval booked
 * under them. Its kernel stack is still the one it blocked on (the program
 * and bpf_trace_run2 left out, it starts at __schedule as the switch-out's
 * does), its user registers those it entered the kernel with. */
SEC("raw_tp/sched_exit_tp")
int ps_resumed(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	__u32 *slot = bpf_map_lookup_elem(&ps_resuming, &zero);
	struct ps_oc_entry *st;

	if (!slot || !tid || *slot != tid)
		return 0;
	*slot = 0;
	if (!(st = bpf_map_lookup_elem(&ps_offcpu, &tid)) || !st->npend)
		return 0;
	take_stacks(st, ctx, 2, 1);
	st->npend = 0;
	book(st, st->pend, st->pend_state, 1);
	return 0;
}

#include "ps_offcpu_edges.bpf.h"

#endif
