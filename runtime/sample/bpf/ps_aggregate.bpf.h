/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ps_aggregate.bpf.h: the part of ps_sample.bpf.c that counts in the
 * kernel: the key of a hit (the fields cfg_keys asks for), and adding to it
 * in the per-CPU hash in ps_counts' slot (a count, or the nanoseconds of an
 * off-CPU interval). Included once, by ps_sample.bpf.c, after field() and
 * the maps.
 */
#ifndef PS_AGGREGATE_BPF_H
#define PS_AGGREGATE_BPF_H

/* The aggregation key of this hit: the fields cfg_keys asks for; its
 * stacks too unless stacks is 0 (an off-CPU interval's may come later). */
static __always_inline void make_key_of(struct ps_agg_key *k, void *ctx, __u32 tgid, __u32 tid,
					__u32 cpu, __u64 ip, __u32 user, int tracepoint, int stacks)
{
	if (tracepoint && (cfg_keys & PS_BPF_K_FIELD))
		k->field = field(ctx, ip);
	/* user addresses mean something only with their process: keep the pid
	 * for the symbolizer (keys that differ only by it are summed in Lua) */
	if (cfg_keys & (PS_BPF_K_PID | PS_BPF_K_USTACK | PS_BPF_K_IP))
		k->pid = tgid;
	if (cfg_keys & PS_BPF_K_TID)
		k->tid = tid;
	if (cfg_keys & PS_BPF_K_CPU)
		k->cpu = cpu;
	if (cfg_keys & PS_BPF_K_COMM)
		bpf_get_current_comm(k->comm, sizeof(k->comm));
	if (cfg_keys & PS_BPF_K_IP) {
		k->ip = ip;
		k->user = user;
	}
	k->ustack = k->kstack = -1;
	if (!stacks)
		return;
	if (cfg_keys & PS_BPF_K_USTACK)
		k->ustack = bpf_get_stackid(ctx, &ps_stacks, BPF_F_USER_STACK);
	/* from sched_switch's raw tracepoint, the walk starts in the program
	 * and bpf_trace_run4: left out, it ends where a tracepoint's does */
	if ((cfg_keys & PS_BPF_K_KSTACK) && !user)
		k->kstack = bpf_get_stackid(ctx, &ps_stacks, cfg_offcpu_raw ? 2 : 0);
}

static __always_inline void make_key(struct ps_agg_key *k, void *ctx, __u32 tgid, __u32 tid,
				     __u32 cpu, __u64 ip, __u32 user, int tracepoint)
{
	make_key_of(k, ctx, tgid, tid, cpu, ip, user, tracepoint, 1);
}

/* Add n to key k's count in the map in slot 0 (dropped when it is full). */
static __always_inline void add(const struct ps_agg_key *k, __u64 n)
{
	__u32 zero = 0;
	void *counts = bpf_map_lookup_elem(&ps_counts, &zero);
	__u64 *v;

	if (!counts) {
		bump(PS_BPF_LOST_KEYS);
		return;
	}
	v = bpf_map_lookup_elem(counts, k);
	if (v) {
		*v += n; /* this CPU's count: nothing else writes it */
		return;
	}
	if (bpf_map_update_elem(counts, k, &n, BPF_NOEXIST) == 0)
		return;
	/* another CPU inserted it first, or the map is full */
	v = bpf_map_lookup_elem(counts, k);
	if (v)
		*v += n;
	else
		bump(PS_BPF_LOST_KEYS);
}

static __always_inline void aggregate(void *ctx, __u32 tgid, __u32 tid, __u32 cpu, __u64 ip,
				      __u32 user, int tracepoint)
{
	struct ps_agg_key k = {};

	make_key(&k, ctx, tgid, tid, cpu, ip, user, tracepoint);
	add(&k, 1);
}

#endif
