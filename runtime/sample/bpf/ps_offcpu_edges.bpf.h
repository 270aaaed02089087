/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ps_offcpu_edges.bpf.h: the threads ps_offcpu.bpf.h sees other than at
 * their switches: a command at its exec, one the target had before its
 * counter started (ps_seed, run by the reader from /proc), a new thread
 * waiting for its first run, a wake-up that splits a sleep; and ps_flush,
 * which books what is still going on before an aggregate is read.
 * Included once, by ps_offcpu.bpf.h.
 */
#ifndef PS_OFFCPU_EDGES_BPF_H
#define PS_OFFCPU_EDGES_BPF_H

/* The scratch entry, made for a thread seen before any switch of its (a
 * new thread, the command at its exec, one the target had): its ids,
 * times and task's start (born; 0: not known), no stacks yet; its name is
 * the caller's to put in. NULL when there is no scratch. */
static __always_inline struct ps_oc_entry *
unswitched(__u32 tgid, __u32 tid, __u64 born, __u64 since, __u64 ran, __u64 delay, __u64 oncpu)
{
	__u32 zero = 0;
	struct ps_oc_entry *st = bpf_map_lookup_elem(&ps_offcpu_scratch, &zero);

	if (!st)
		return NULL;
	__builtin_memset(&st->key, 0, sizeof(st->key));
	st->since = st->began = since;
	st->woken = 0;
	st->oncpu = oncpu;
	st->npend = st->due = 0;
	st->left = 0;
	st->kept_last = 1;
	st->born = born;
	__builtin_memset(st->acc, 0, sizeof(st->acc));
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
	struct ps_oc_entry *st = unswitched(
	    pt >> 32, tid, BPF_CORE_READ(me, start_time), clock_now_away(),
	    BPF_CORE_READ(me, se.sum_exec_runtime), BPF_CORE_READ(me, sched_info.run_delay), 1);

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
	struct ps_oc_entry *st = tid ? unswitched((__u32)ctx->args[1], tid, 0, clock_now_away(),
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

static long flush_one(void *map, __u32 *tid, struct ps_oc_entry *st, struct flush_ctx *fc)
{
	__u64 now = fc->now, on = st->oncpu, since = st->since;

	(void)map;
	(void)tid;
	/* booked up to now, unless the thread's own switch claims it first
	 * (since moved: it books it itself) */
	if (now > since && __sync_val_compare_and_swap(&st->since, since, now) == since) {
		if (on) { /* its task clock is behind: the wall time, all run */
			slice(st, now - since, now - since, 1);
			st->ran += now - since;
		} else { /* with its stacks if they are known by now */
			waited(st, since, now, PS_NO_RUN, 0);
			st->woken = 0;
		}
	}
	spill(st);
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
	struct ps_oc_entry *st = bpf_map_lookup_elem(&ps_offcpu, &tid);

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
	struct ps_oc_entry *st, *old;
	__u64 since;

	if (!on || !tid || !(cfg_flags & PS_BPF_F_TGT_TREE) ||
	    !bpf_map_lookup_elem(&ps_targets, &tgid))
		return 0;
	/* with ps_switch, in the run queue's clock: since it was queued */
	since = cfg_offcpu_raw ? BPF_CORE_READ(r, sched_info.last_queued) : 0;
	if (!since)
		since =
		    cfg_offcpu_raw ? BPF_CORE_READ(r, se.cfs_rq, rq, clock) : bpf_ktime_get_ns();
	st = unswitched(tgid, tid, BPF_CORE_READ(r, start_time), since,
			BPF_CORE_READ(r, se.sum_exec_runtime),
			BPF_CORE_READ(r, sched_info.run_delay), 0);
	if (!st)
		return 0;
	st->woken = since; /* runnable from the start */
	if (cfg_keys & PS_BPF_K_COMM)
		BPF_CORE_READ_STR_INTO(&st->key.comm, p, comm);
	/* an entry of its tid is an earlier thread's, gone unseen */
	if ((old = bpf_map_lookup_elem(&ps_offcpu, &tid)))
		retire(old);
	if (bpf_map_update_elem(&ps_offcpu, &tid, st, BPF_ANY))
		bump(PS_BPF_LOST_KEYS);
	return 0;
}

#endif
