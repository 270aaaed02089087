/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ps_offcpu.bpf.h: off-CPU time, the part of ps_sample.bpf.c that runs on
 * sched:sched_switch for an aggregate with PS_BPF_OFFCPU. When a thread of
 * the target is switched out (it is the current task: prev), its key is
 * taken there (its stacks, comm, args.prev_state: why it left the CPU)
 * and kept with the time; when that thread is switched in again (next),
 * the interval is added to the key's sum, if it is long enough. Intervals
 * that find the map full are counted as dropped (ps_lost[1]), like keys.
 * Included once, by ps_sample.bpf.c, after make_key, add and in_target.
 */
#ifndef PS_OFFCPU_BPF_H
#define PS_OFFCPU_BPF_H

struct offcpu_start {
	__u64 since;	       /* bpf_ktime_get_ns at the switch-out */
	__u64 woken;	       /* at its first wake-up since, 0 until then */
	struct ps_agg_key key; /* taken there */
};

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

static __always_inline void offcpu(void *ctx)
{
	__u64 now = bpf_ktime_get_ns(), pt = bpf_get_current_pid_tgid();
	__u32 zero = 0, next = 0, tgid = pt >> 32, tid = (__u32)pt,
	      cpu = bpf_get_smp_processor_id();
	struct offcpu_start *st;

	/* the thread switched in: its interval ends (whoever is switched out).
	 * Keyed by args.prev_state, a sleep's time after its wake-up is the run
	 * queue's: it goes under the runnable state (0), the rest under the
	 * state it slept in. */
	bpf_probe_read_kernel(&next, sizeof(next), (char *)ctx + cfg_next_pid_off);
	if (next && (st = bpf_map_lookup_elem(&ps_offcpu, &next))) {
		if (now - st->since >= cfg_offcpu_min_ns) {
			if (cfg_offcpu_split && st->woken > st->since && st->woken <= now) {
				add(&st->key, st->woken - st->since);
				st->key.field = 0;
				add(&st->key, now - st->woken);
			} else {
				add(&st->key, now - st->since);
			}
		}
		bpf_map_delete_elem(&ps_offcpu, &next);
	}
	/* the thread switched out: a thread of the target, counters on */
	if (!tid || !on || !in_target(tgid, cpu))
		return;
	if ((cfg_flags & PS_BPF_F_PIDS) && !bpf_map_lookup_elem(&ps_pids, &tgid))
		return;
	if (cfg_tid && tid != cfg_tid)
		return;
	st = bpf_map_lookup_elem(&ps_offcpu_scratch, &zero);
	if (!st)
		return;
	__builtin_memset(&st->key, 0, sizeof(st->key));
	st->since = now;
	st->woken = 0;
	make_key(&st->key, ctx, tgid, tid, cpu, 0, 0, 1);
	if (bpf_map_update_elem(&ps_offcpu, &tid, st, BPF_ANY))
		bump(1);
}

/* A thread of the target switched out is woken: the rest of its wait is
 * in the run queue. */
SEC("raw_tp/sched_wakeup")
int ps_wakeup(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct___ps *p = (void *)ctx->args[0];
	__u32 tid = BPF_CORE_READ(p, pid);
	struct offcpu_start *st = bpf_map_lookup_elem(&ps_offcpu, &tid);

	if (st && !st->woken)
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
	__u32 tid = BPF_CORE_READ(p, pid), tgid = BPF_CORE_READ(p, tgid), zero = 0;
	struct offcpu_start *st;

	if (!on || !tid || !(cfg_flags & PS_BPF_F_TGT_TREE) ||
	    !bpf_map_lookup_elem(&ps_targets, &tgid))
		return 0;
	st = bpf_map_lookup_elem(&ps_offcpu_scratch, &zero);
	if (!st)
		return 0;
	__builtin_memset(&st->key, 0, sizeof(st->key));
	st->since = st->woken = bpf_ktime_get_ns();
	st->key.ustack = st->key.kstack = -1;
	if (cfg_keys & (PS_BPF_K_PID | PS_BPF_K_USTACK | PS_BPF_K_IP))
		st->key.pid = tgid;
	if (cfg_keys & PS_BPF_K_TID)
		st->key.tid = tid;
	if (cfg_keys & PS_BPF_K_COMM)
		BPF_CORE_READ_STR_INTO(&st->key.comm, p, comm);
	if (bpf_map_update_elem(&ps_offcpu, &tid, st, BPF_NOEXIST))
		bump(1);
	return 0;
}

#endif
