/*
 * forward.c: the in-kernel path's way back to user space. Records the BPF
 * programs forward through the session's one BPF ring buffer become the same
 * struct ps_sample the perf path delivers (stack ids become a callchain),
 * reserve failures counted in the kernel become lost samples, and filters
 * of counters that fell back to the perf path are applied here instead.
 */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample/bpf/internal.h"
#include "ps_sample.skel.h"

#define PS_STOP_BUDGET (-EINTR) /* our own stop of ring_buffer__consume */

int ps_session__bpf_fd(const struct ps_session *s)
{
	return s && s->bpf && s->bpf->rb ? ring_buffer__epoll_fd(s->bpf->rb) : -1;
}

bool ps_bpf__keep(struct ps_session *s, struct ps_counter *c, const struct ps_sample *smp)
{
	const struct ps_bpf_counter *b = c->bpf;
	uint16_t mode = smp->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool user = mode == PERF_RECORD_MISC_USER || mode == PERF_RECORD_MISC_GUEST_USER;
	bool found = b->npids == 0;

	(void)s;
	if (!b->configured)
		return true;
	for (size_t i = 0; i < b->npids && !found; i++)
		found = (uint32_t)b->pids[i] == smp->pid;
	if (!found || (b->tid && (uint32_t)b->tid != smp->tid))
		return false;
	found = b->ncpus == 0;
	for (size_t i = 0; i < b->ncpus && !found; i++)
		found = (uint32_t)b->cpus[i] == smp->cpu;
	if (!found || (b->priv == PS_PRIV_USER && !user) || (b->priv == PS_PRIV_KERNEL && user))
		return false;
	return b->every <= 1 || c->bpf->passed++ % b->every == b->every - 1;
}

int ps_bpf__lost(const struct ps_session *s, const struct ps_counter *c, uint64_t *lost)
{
	int ncpu = libbpf_num_possible_cpus();
	__u32 key = 0;
	uint64_t *v;
	int err;

	(void)s;
	*lost = 0;
	if (!c->bpf || !c->bpf->skel)
		return -ENOENT;
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = bpf_map__lookup_elem(c->bpf->skel->maps.ps_lost, &key, sizeof(key), v,
				   (size_t)ncpu * sizeof(*v), 0);
	for (int i = 0; !err && i < ncpu; i++)
		*lost += v[i];
	free(v);
	return err;
}

size_t ps_bpf__stack(const struct ps_bpf_counter *b, int id, uint64_t *ips, size_t max)
{
	uint64_t buf[PS_BPF_STACK_DEPTH];
	__u32 key = (__u32)id;
	size_t n = 0;

	if (id < 0 || !b->skel ||
	    bpf_map__lookup_elem(b->skel->maps.ps_stacks, &key, sizeof(key), buf, sizeof(buf), 0))
		return 0;
	while (n < PS_BPF_STACK_DEPTH && n < max && buf[n])
		ips[n] = buf[n], n++;
	return n;
}

/* [PERF_CONTEXT_KERNEL, kernel frames, PERF_CONTEXT_USER, user frames], as
 * the perf ring lays out a callchain. */
static void chain(struct ps_bpf_session *bs, const struct ps_bpf_counter *b,
		  const struct ps_bpf_rec *r, struct ps_sample *smp)
{
	size_t n = 0, max = 2 * PS_BPF_STACK_DEPTH + 2, k;

	if (!bs->ips && !(bs->ips = malloc(max * sizeof(*bs->ips))))
		return;
	if (r->kstack >= 0) {
		bs->ips[n++] = (uint64_t)PERF_CONTEXT_KERNEL;
		k = ps_bpf__stack(b, r->kstack, bs->ips + n, PS_BPF_STACK_DEPTH);
		n = k ? n + k : n - 1;
	}
	if (r->ustack >= 0) {
		bs->ips[n++] = (uint64_t)PERF_CONTEXT_USER;
		k = ps_bpf__stack(b, r->ustack, bs->ips + n, PS_BPF_STACK_DEPTH);
		n = k ? n + k : n - 1;
	}
	smp->ips = bs->ips;
	smp->nr_ips = n;
	smp->sample_type |= PERF_SAMPLE_CALLCHAIN;
}

int ps_bpf__on_record(void *ctx, void *data, size_t size)
{
	struct ps_session *s = ctx;
	struct ps_bpf_session *bs = s->bpf;
	const struct ps_bpf_rec *r = data;
	struct ps_counter *c;
	struct ps_sample smp;
	int rc = 0;

	if (size < sizeof(*r)) {
		s->smp.total.malformed++;
		goto next;
	}
	c = ps_session__slot(s, r->handle);
	if (!c || !c->bpf || !c->bpf->skel)
		goto next; /* a freed or detached counter's leftovers */
	memset(&smp, 0, sizeof(smp));
	smp.handle = r->handle;
	smp.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			  PERF_SAMPLE_PERIOD | (c->attr.sample_type & PERF_SAMPLE_ADDR);
	smp.ip = r->ip;
	smp.addr = r->addr;
	smp.time = r->time;
	smp.period = r->period ? r->period : c->attr.sample_period;
	smp.pid = r->pid;
	smp.tid = r->tid;
	smp.cpu = r->cpu;
	smp.misc = r->user ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL;
	smp.read_format = c->attr.read_format;
	if (r->ustack >= 0 || r->kstack >= 0)
		chain(bs, c->bpf, r, &smp);
	c->st.samples++;
	s->smp.total.samples++;
	if (s->smp.ops.sample)
		rc = s->smp.ops.sample(&smp, s->smp.ops.ctx);
	if (rc < 0) {
		bs->stop = rc;
		return rc;
	}
next:
	if (bs->budget && ++bs->taken >= bs->budget)
		return PS_STOP_BUDGET;
	return 0;
}

/* Tell ops->record of reserve failures since the last check. */
static void check_lost(struct ps_session *s)
{
	for (uint32_t i = 0; i < s->nslots; i++) {
		struct ps_counter *c = &s->slots[i];
		struct ps_record r;
		uint64_t lost;

		if (!c->live || !c->bpf || !c->bpf->skel || ps_bpf__lost(s, c, &lost) ||
		    lost <= c->bpf->lost_told)
			continue;
		memset(&r, 0, sizeof(r));
		r.type = PERF_RECORD_LOST_SAMPLES;
		r.handle = ps_session__handle(s, i);
		r.lost = lost - c->bpf->lost_told;
		c->bpf->lost_told = lost;
		c->st.lost += r.lost;
		s->smp.total.lost += r.lost;
		if (s->smp.ops.record)
			s->smp.ops.record(&r, s->smp.ops.ctx);
	}
}

int ps_session__bpf_drain(struct ps_session *s, size_t budget, bool lost)
{
	struct ps_bpf_session *bs = s ? s->bpf : NULL;
	int n = 0;

	if (!s)
		return -EINVAL;
	if (bs && bs->rb) {
		bs->budget = budget;
		bs->taken = 0;
		bs->stop = 0;
		n = ring_buffer__consume(bs->rb);
		if (bs->stop)
			return bs->stop;
		if (n == PS_STOP_BUDGET)
			n = (int)bs->taken;
	}
	if (lost && bs)
		check_lost(s);
	return n;
}
