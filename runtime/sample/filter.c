/*
 * filter.c: the user-space version of a counter's in-kernel filters (pid
 * set, thread, CPU set, user or kernel mode, every Nth), for a counter that
 * asked for them (ps_session__set_bpf) but is served by the perf ring: AUTO
 * fell back because BPF could not load, or the perf path was asked for by
 * name. The rules are the BPF program's (sample/bpf/ps_sample.bpf.c), so a
 * script sees the same samples on either path.
 */
#include "sample/sampler.h"

static bool has_pid(const struct ps_sample_conf *f, uint32_t pid)
{
	for (size_t i = 0; i < f->npids; i++)
		if ((uint32_t)f->pids[i] == pid)
			return true;
	return f->npids == 0;
}

static bool has_cpu(const struct ps_sample_conf *f, uint32_t cpu)
{
	for (size_t i = 0; i < f->ncpus; i++)
		if ((uint32_t)f->cpus[i] == cpu)
			return true;
	return f->ncpus == 0;
}

bool ps_filter__keep(struct ps_sampled *c, const struct ps_sample *smp)
{
	const struct ps_sample_conf *f = &c->conf;
	uint16_t mode = smp->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool user = mode == PERF_RECORD_MISC_USER || mode == PERF_RECORD_MISC_GUEST_USER;

	if (!f->configured)
		return true;
	if (!has_pid(f, smp->pid) || (f->tid && (uint32_t)f->tid != smp->tid) ||
	    !has_cpu(f, smp->cpu))
		return false;
	if ((f->priv == PS_PRIV_USER && !user) || (f->priv == PS_PRIV_KERNEL && user))
		return false;
	return f->every <= 1 || c->passed++ % f->every == f->every - 1;
}
