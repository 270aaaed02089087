/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ps_rawtp.bpf.h: a tracepoint counter counted and aggregated here, on the
 * raw tracepoint (sample/bpf/configure.c says when: in-kernel aggregation
 * only, keyed by what needs no record field but a raw argument). With no
 * perf event on the tracepoint the kernel neither fills the event's record
 * nor walks the perf events of each hit, which is most of what a hit cost
 * on ps_tp's path; the counter's value is the hits counted in ps_lost[2],
 * read by sample/bpf/aggregate.c. Included once, by ps_sample.bpf.c.
 */
#ifndef PS_RAWTP_BPF_H
#define PS_RAWTP_BPF_H

SEC("raw_tp")
int ps_raw(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tgid = pt >> 32, cpu = bpf_get_smp_processor_id();
	struct ps_agg_key k = {};

	if (!on || !in_target_of(tgid, cpu, 1))
		return 0;
	bump(PS_BPF_HITS);
	make_key(&k, ctx, tgid, (__u32)pt, cpu, 0, 0, 0);
	/* raw_syscalls' id or ret: the second argument (cfg_raw_arg is 1) */
	if (cfg_raw_arg == 1)
		k.field = (__s64)ctx->args[1];
	add(&k, 1);
	return 0;
}

#endif
