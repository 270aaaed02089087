/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ps_offcpu.bpf.h: off-CPU time, the part of ps_sample.bpf.c that runs on
 * sched:sched_switch for an aggregate with PS_BPF_OFFCPU. When a thread of
 * the target is switched out (it is the current task: prev), its key is
 * taken there (its stacks, comm, args.prev_state: why it left the CPU)
 * and kept with the time; when that thread is switched in again (next),
 * the interval is added to the key's sum, if it is long enough. With
 * on-CPU slices asked for too (cfg_offcpu & PS_OC_ON), the entry stays from
 * the switch-in and the time until the next switch-out is added under the
 * key taken there, its state PS_STATE_ONCPU: a thread's parts then add up
 * to its whole time in the session. A dying thread's last switch-out ends
 * its last slice and keeps no entry. Intervals that find the map full are
 * counted as dropped (ps_lost[1]), like keys. The switches come to
 * ps_switch, on the raw tracepoint (kernels 5.18 on; in the scheduler's
 * clock and figures), or else to the tracepoint's own program (ps_tp, with
 * bpf_ktime_get_ns and the wake-ups ps_wakeup sees); ps_flush books what is
 * still going on before the aggregate is read. Included once, by
 * ps_sample.bpf.c, after make_key, add and in_target.
 */
#ifndef PS_OFFCPU_BPF_H
#define PS_OFFCPU_BPF_H

#define PS_OC_OFF	1    /* cfg_offcpu: sum the intervals switched out... */
#define PS_OC_ON	2    /* ...and the slices switched in */
#define PS_STATE_ONCPU	(-1) /* a slice's args.prev_state: the thread ran... */
#define PS_STATE_STOLEN (-2) /* ...or held the CPU while it did not (steal, IRQs) */

#define PS_NO_RUN (~0ull) /* waited(): the run-queue part is not known */

struct offcpu_start {
	__u64 since;	       /* the clock at the switch-out (or in) */
	__u64 woken;	       /* at its first wake-up since, 0 until then */
	__u64 oncpu;	       /* 1: since the switch-in, the key not taken yet */
	__u64 ran;	       /* the thread's sum_exec_runtime at the switch-out */
	__u64 delay;	       /* and its sched_info.run_delay */
	struct ps_agg_key key; /* taken at the switch-out */
	__u32 tgid, tid;       /* for a forwarded interval (ps_offcpu_fwd.bpf.h): */
	__s32 us, ks;	       /* its stacks, */
	__u32 has_rec, pad;    /* and whether rec is its switch's record */
	__u8 rec[PS_BPF_OC_REC];
};

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
	if (raw)
		return BPF_CORE_READ(me, se.cfs_rq, rq, clock);
	return bpf_ktime_get_ns();
}

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
	__uint(max_entries, 1); /* the loader sizes it: threads switched out at once */
	__type(key, __u32);	/* tid */
	__type(value, struct offcpu_start);
} ps_offcpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_start);
} ps_offcpu_scratch SEC(".maps"); /* a key is built here: too big for the stack */

/* A part of an interval off the CPU, under st's key (and forwarded). */
static __always_inline void part(struct offcpu_start *st, __u64 ns)
{
	add(&st->key, ns);
	if (cfg_offcpu_fwd)
		sw_forward(st, ns);
}

/* An interval off the CPU, from st's switch-out to end, is added to its
 * key, if it is long enough. Keyed by args.prev_state, its time in the run
 * queue goes under a runnable state, the rest under the state it slept in:
 * run is that time as the scheduler counted it, or PS_NO_RUN for the time
 * since the wake-up seen. A preempted thread's interval is the run
 * queue's; what the scheduler did not count of it (the clocks of two CPUs
 * apart, after a migration) goes under PS_STATE_STOLEN, as in a slice. */
static __always_inline void waited(struct offcpu_start *st, __u64 end, __u64 run)
{
	__u64 off = end - st->since;
	__s64 state = st->key.field;
	int preempted = state == 0 || state == 0x100;

	if (!(cfg_offcpu & PS_OC_OFF) || off < cfg_offcpu_min_ns)
		return;
	if (!cfg_offcpu_split || (preempted && run == PS_NO_RUN)) {
		part(st, off); /* not keyed by it, or runnable all along */
		return;
	}
	if (run == PS_NO_RUN)
		run = st->woken > st->since && st->woken <= end ? end - st->woken : 0;
	if (run > off)
		run = off;
	if (off > run) {
		st->key.field = preempted ? PS_STATE_STOLEN : state;
		part(st, off - run);
	}
	st->key.field = preempted ? state : 0;
	if (run)
		part(st, run);
}

/* The thread switched in (nt, with ps_switch): its interval off the CPU
 * ends (whoever is switched out). Its time in the run queue is what the
 * scheduler added to its run_delay since its switch-out and is about to
 * add. With slices asked for, its entry stays, as the start of one. Found
 * running already, its switch-out was missed (the kernel skips a
 * tracepoint's programs on a CPU where another BPF program, or a map
 * update, is under way): counted as dropped, and the slice goes on. */
static __always_inline void switched_in(__u32 next, struct task_struct___run *nt, __u64 now)
{
	struct offcpu_start *st;
	__u64 run = PS_NO_RUN, queued;

	if (!next || !(st = bpf_map_lookup_elem(&ps_offcpu, &next)))
		return;
	if (st->oncpu) {
		bump(PS_BPF_LOST_KEYS);
		return;
	}
	if (nt) {
		queued = BPF_CORE_READ(nt, sched_info.last_queued);
		run = BPF_CORE_READ(nt, sched_info.run_delay) - st->delay +
		      (queued && queued < now ? now - queued : 0);
	}
	waited(st, now, run);
	if (!(cfg_offcpu & PS_OC_ON)) {
		bpf_map_delete_elem(&ps_offcpu, &next);
		return;
	}
	st->since = now;
	st->woken = 0;
	st->oncpu = 1;
}

/* The thread switched out ends what its entry began: a slice, from its
 * switch-in; or, that switch-in missed, an interval off the CPU and the
 * slice after it. The task clock says how long it ran (the rest of a
 * slice's wall time the hypervisor took), so the interval ends that long
 * before now: both are exact still. key: taken at this switch-out. */
static __always_inline void ended(struct offcpu_start *was, struct ps_agg_key *key, __u64 now,
				  __u64 ran, __u64 delay, int raw)
{
	__u64 wall = now - was->since, task = ran - was->ran < wall ? ran - was->ran : wall;
	__s64 state = key->field;

	if (!was->oncpu)
		waited(was, now - task, raw ? delay - was->delay : PS_NO_RUN);
	if (!(cfg_offcpu & PS_OC_ON))
		return;
	if (cfg_offcpu_split)
		key->field = PS_STATE_ONCPU;
	add(key, task);
	if (cfg_offcpu_split && was->oncpu && wall > task) {
		key->field = PS_STATE_STOLEN;
		add(key, wall - task);
	}
	key->field = state;
}

/* One switch: next is the thread switched in; ctx the program's, for the
 * stacks; raw: ctx is sched_switch's raw arguments, state the switch's
 * args.prev_state (a tracepoint's record has both). */
static __always_inline void offcpu(void *ctx, __u32 next, struct task_struct___run *nt, __s64 state,
				   int raw)
{
	struct task_struct___run *me = (void *)bpf_get_current_task();
	__u64 now = clock_now(raw, me), pt = bpf_get_current_pid_tgid();
	__u32 zero = 0, tgid = pt >> 32, tid = (__u32)pt, cpu = bpf_get_smp_processor_id();
	__u64 ran = BPF_CORE_READ(me, se.sum_exec_runtime),
	      delay = BPF_CORE_READ(me, sched_info.run_delay);
	struct offcpu_start *st, *was = NULL;

	if (raw)
		rq_minus_ktime = (__s64)(now - bpf_ktime_get_ns());
	switched_in(next, nt, now);
	/* the thread switched out: one the target had at its last switch (its
	 * counters may be gone if it is exiting), or a thread of the target */
	if (tid)
		was = bpf_map_lookup_elem(&ps_offcpu, &tid);
	if (!was && (!tid || !on || !in_target(tgid, cpu)))
		return;
	if (!was && (cfg_flags & PS_BPF_F_PIDS) && !bpf_map_lookup_elem(&ps_pids, &tgid))
		return;
	if (!was && cfg_tid && tid != cfg_tid)
		return;
	st = bpf_map_lookup_elem(&ps_offcpu_scratch, &zero);
	if (!st)
		return;
	__builtin_memset(&st->key, 0, sizeof(st->key));
	make_key(&st->key, ctx, tgid, tid, cpu, 0, 0, !raw);
	if (raw && (cfg_keys & PS_BPF_K_FIELD))
		st->key.field = state;
	sw_taken(st, ctx, tgid, tid, me, nt, state, raw);
	if (was)
		ended(was, &st->key, now, ran, delay, raw);
	if (BPF_CORE_READ(me, exit_state) || !on) { /* no switch-in follows */
		if (was)
			bpf_map_delete_elem(&ps_offcpu, &tid);
		return;
	}
	st->since = now;
	st->woken = 0;
	st->oncpu = 0;
	st->ran = ran;
	st->delay = delay;
	if (bpf_map_update_elem(&ps_offcpu, &tid, st, BPF_ANY))
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

/* sched_switch as a raw tracepoint (preempt, prev, next, prev_state; 5.18
 * on): unlike a tracepoint's program, the kernel does not skip it while
 * another BPF program runs on the CPU, or a map update is under way (a
 * task preempted in one, another tool's, skipped the switch-in that
 * followed), so no switch is missed; and with the tasks at hand, the
 * intervals are in the scheduler's clock and its run-queue time is its
 * own (steal inside a switch, after the clock was read, no longer moves
 * run-queue time to the slice). */
SEC("raw_tp/sched_switch")
int ps_switch(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct___run *prev = (void *)ctx->args[1], *nt = (void *)ctx->args[2];
	struct task_struct___ps *next = (void *)ctx->args[2];

	offcpu(ctx, BPF_CORE_READ(next, pid), nt,
	       report_state(ctx->args[0], ctx->args[3], BPF_CORE_READ(prev, exit_state)), 1);
	return 0;
}

/* The scratch entry, made for a thread seen before any switch of its (a
 * new thread, the command at its exec, one the target had): its ids and
 * times, no stacks yet; its name is the caller's to put in. NULL when
 * there is no scratch. */
static __always_inline struct offcpu_start *unswitched(__u32 tgid, __u32 tid, __u64 since,
						       __u64 ran, __u64 delay, __u64 oncpu)
{
	__u32 zero = 0;
	struct offcpu_start *st = bpf_map_lookup_elem(&ps_offcpu_scratch, &zero);

	if (!st)
		return NULL;
	__builtin_memset(&st->key, 0, sizeof(st->key));
	st->since = since;
	st->woken = 0;
	st->oncpu = oncpu;
	st->ran = ran;
	st->delay = delay;
	st->key.ustack = st->key.kstack = -1;
	st->tgid = tgid;
	st->tid = tid;
	st->us = st->ks = -1;
	st->has_rec = 0;
	if (cfg_keys & (PS_BPF_K_PID | PS_BPF_K_USTACK | PS_BPF_K_IP))
		st->key.pid = tgid;
	if (cfg_keys & PS_BPF_K_TID)
		st->key.tid = tid;
	return st;
}

/* The command's exec (ps_exec): its thread is running, and its time is the
 * target's from now on, a slice begun, under its new name. */
static __always_inline void offcpu_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct___run *me = (void *)bpf_get_current_task();
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pt;
	struct offcpu_start *st =
	    unswitched(pt >> 32, tid, clock_now_away(), BPF_CORE_READ(me, se.sum_exec_runtime),
		       BPF_CORE_READ(me, sched_info.run_delay), 1);

	if (!st)
		return;
	if (cfg_keys & PS_BPF_K_COMM)
		bpf_probe_read_kernel_str(&st->key.comm, sizeof(st->key.comm),
					  (void *)ctx->args[1]);
	if (bpf_map_update_elem(&ps_offcpu, &tid, st, BPF_ANY))
		bump(PS_BPF_LOST_KEYS);
}

/* A thread the target had before the counter started, told by the reader
 * (ps_bpf__offcpu_seed, through BPF_PROG_TEST_RUN, from /proc): args are
 * its tid, tgid, state (as args.prev_state), name (two words), on-CPU and
 * run-delay ns (schedstat). Off the CPU from now as far as is known: a
 * thread blocked all session long is then seen. One that switched already
 * has its entry, which stays. */
SEC("raw_tp/sched_switch")
int ps_seed(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tid = (__u32)ctx->args[0];
	__u64 name[2] = {ctx->args[3], ctx->args[4]};
	struct offcpu_start *st = tid ? unswitched((__u32)ctx->args[1], tid, clock_now_away(),
						   ctx->args[5], ctx->args[6], 0)
				      : NULL;

	if (!st)
		return 0;
	if (cfg_keys & PS_BPF_K_COMM)
		__builtin_memcpy(st->key.comm, name, sizeof(name));
	if (cfg_offcpu_split)
		st->key.field = (__s64)ctx->args[2];
	bpf_map_update_elem(&ps_offcpu, &tid, st, BPF_NOEXIST);
	return 0;
}

/* Waits and slices still going on are booked up to now, read before the
 * aggregate is (ps_flush, run by the reader through BPF_PROG_TEST_RUN): a
 * thread blocked all session long, or running, is then in the figures,
 * and its entry goes on from now. */
struct flush_ctx {
	__u64 now;
};

static long flush_one(void *map, __u32 *tid, struct offcpu_start *st, struct flush_ctx *fc)
{
	__u64 now = fc->now, booked = now - st->since;
	__s64 state = st->key.field;

	(void)map;
	(void)tid;
	if (now <= st->since)
		return 0;
	if (st->oncpu) { /* its task clock is behind: the wall time, all run */
		if (cfg_offcpu & PS_OC_ON) {
			if (cfg_offcpu_split)
				st->key.field = PS_STATE_ONCPU;
			add(&st->key, booked);
		}
		st->ran += booked;
	} else {
		if (booked < cfg_offcpu_min_ns) /* it may pass later */
			return 0;
		waited(st, now, PS_NO_RUN);
		st->woken = 0;
	}
	st->key.field = state;
	st->since = now;
	return 0;
}

SEC("raw_tp/sched_switch")
int ps_flush(struct bpf_raw_tracepoint_args *ctx)
{
	struct flush_ctx fc = {clock_now_away()};

	(void)ctx;
	bpf_for_each_map_elem(&ps_offcpu, flush_one, &fc, 0);
	return 0;
}

/* A thread of the target switched out is woken: the rest of its wait is
 * in the run queue. */
SEC("raw_tp/sched_wakeup")
int ps_wakeup(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct___ps *p = (void *)ctx->args[0];
	__u32 tid = BPF_CORE_READ(p, pid);
	struct offcpu_start *st = bpf_map_lookup_elem(&ps_offcpu, &tid);

	if (st && !st->woken && !st->oncpu)
		st->woken = bpf_ktime_get_ns();
	return 0;
}

/* A new thread of the target waits for its first run: that wait is the run
 * queue's too (schedstat counts it), under the key of a thread that has not
 * run yet: its ids and name, no stacks. */
SEC("raw_tp/sched_wakeup_new")
int ps_wakeup_new(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct___ps *p = (void *)ctx->args[0];
	struct task_struct___run *r = (void *)p;
	__u32 tid = BPF_CORE_READ(p, pid), tgid = BPF_CORE_READ(p, tgid);
	struct offcpu_start *st;
	__u64 since;

	if (!on || !tid || !(cfg_flags & PS_BPF_F_TGT_TREE) ||
	    !bpf_map_lookup_elem(&ps_targets, &tgid))
		return 0;
	/* with ps_switch, in the run queue's clock: since it was queued */
	since = cfg_offcpu_raw ? BPF_CORE_READ(r, sched_info.last_queued) : 0;
	if (!since)
		since = clock_now(cfg_offcpu_raw, r);
	st = unswitched(tgid, tid, since, BPF_CORE_READ(r, se.sum_exec_runtime),
			BPF_CORE_READ(r, sched_info.run_delay), 0);
	if (!st)
		return 0;
	st->woken = since; /* runnable from the start */
	if (cfg_keys & PS_BPF_K_COMM)
		BPF_CORE_READ_STR_INTO(&st->key.comm, p, comm);
	if (bpf_map_update_elem(&ps_offcpu, &tid, st, BPF_NOEXIST))
		bump(PS_BPF_LOST_KEYS);
	return 0;
}

#endif
