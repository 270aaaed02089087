/*
 * forward.c: the BPF backend's way back to user space. Records the programs
 * forward through the session's one BPF ring buffer become the same struct
 * ps_sample the perf ring gives (stack ids become a callchain) and go down
 * the sampler's one delivery path; reserve failures counted in the kernel
 * are the lost samples, settled whenever a drain empties the ring buffer.
 */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/regs.h"
#include "sample/bpf/internal.h"
#include "ps_sample.skel.h"

#define PS_STOP_BUDGET (-EINTR) /* our own stop of ring_buffer__consume */

int ps_bpf__percpu_sum(const struct ps_bpf_counter *b, __u32 key, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;
	int err;

	*sum = 0;
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = bpf_map__lookup_elem(b->skel->maps.ps_lost, &key, sizeof(key), v,
				   (size_t)ncpu * sizeof(*v), 0);
	for (int i = 0; !err && i < ncpu; i++)
		*sum += v[i];
	free(v);
	return err;
}

int ps_bpf__lost(struct ps_sampler *m, uint32_t slot, uint64_t *lost)
{
	const struct ps_bpf_counter *b = ps_bpf__counter(m, slot);

	*lost = 0;
	if (!b || !b->skel)
		return -ENOENT;
	return ps_bpf__percpu_sum(b, PS_BPF_LOST_RING, lost);
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
static void chain(struct ps_bpf *bs, const struct ps_bpf_counter *b, const struct ps_bpf_rec *r,
		  struct ps_sample *smp)
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

/* An off-CPU interval's user registers and stack at its switch-out, p the
 * n bytes after its record and strings: the sample then unwinds as a
 * perf ring's call-graph=dwarf sample does. */
static void user_stack(struct ps_bpf *bs, const struct ps_counter *c, const struct ps_bpf_rec *r,
		       const char *p, size_t n, struct ps_sample *smp)
{
	if (r->regs_size > n || r->stack_size > n - r->regs_size)
		return; /* malformed: left without */
	smp->regs_user.mask =
	    ps_regs__from_pt(p, r->regs_size, ps_counter__attr(c)->sample_regs_user, bs->regs);
	smp->regs_user.abi = PERF_SAMPLE_REGS_ABI_64;
	smp->regs_user.regs = bs->regs;
	smp->stack = p + r->regs_size;
	smp->stack_size = r->stack_size;
	smp->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
}

/* A sample's CPython frames and user stack (ps_python.bpf.h): the frames
 * in their room right after the record, then the registers and stack. */
static void user_side(struct ps_bpf *bs, const struct ps_bpf_counter *b, const struct ps_counter *c,
		      const struct ps_bpf_rec *r, size_t size, struct ps_sample *smp)
{
	const char *p = (const char *)(r + 1);

	if (r->py_n && r->py_n <= r->py_room / sizeof(struct ps_pyframe)) {
		smp->py = (const struct ps_pyframe *)p;
		smp->py_n = r->py_n;
	}
	if (r->regs_size)
		user_stack(bs, c, r, p + r->py_room, size - sizeof(*r) - r->py_room, smp);
	if (r->py_room)
		ps_bpf__python_seen(bs, b, r->pid);
}

/* A probe's record carries its registers: a uprobe's are the task's user
 * registers, a kprobe's those at the breakpoint, as the perf path samples
 * them (s:arg(n), s.retval); then a USDT marker's arguments, read at the
 * event (core/usdt.c takes them from smp.raw). */
static void probe_side(struct ps_bpf *bs, const struct ps_counter *c, const struct ps_bpf_rec *r,
		       size_t size, struct ps_sample *smp)
{
	bool user = ps_counter__attr(c)->sample_type & PERF_SAMPLE_REGS_USER;
	struct ps_regs *regs = user ? &smp->regs_user : &smp->regs_intr;

	regs->mask = ps_regs__from_pt(r + 1, r->raw_size,
				      user ? ps_counter__attr(c)->sample_regs_user
					   : ps_counter__attr(c)->sample_regs_intr,
				      bs->regs);
	regs->abi = PERF_SAMPLE_REGS_ABI_64;
	regs->regs = bs->regs;
	smp->sample_type |= user ? PERF_SAMPLE_REGS_USER : PERF_SAMPLE_REGS_INTR;
	if (r->args_n && r->args_n <= PS_BPF_USDT_ARGS &&
	    r->raw_size + 8u * r->args_n <= size - sizeof(*r)) {
		smp->raw = (const char *)(r + 1) + r->raw_size;
		smp->raw_size = 8u * r->args_n;
	}
}

int ps_bpf__on_record(void *ctx, void *data, size_t size)
{
	struct ps_bpf *bs = ctx;
	struct ps_sampler *m = bs->m;
	const struct ps_bpf_rec *r = data;
	const struct ps_counter *c;
	const struct ps_bpf_counter *b;
	struct ps_sample smp;
	int rc;

	if (size < sizeof(*r)) {
		ps_sampler__malformed(m, PS_NO_SLOT);
		goto next;
	}
	c = ps_session__counter_of(m->s, r->handle);
	b = c ? ps_bpf__counter(m, ps_session__slot_of(m->s, c)) : NULL;
	if (!b || !b->skel)
		goto next; /* a freed or detached counter's leftovers */
	memset(&smp, 0, sizeof(smp));
	smp.handle = r->handle;
	smp.sample_type =
	    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
	    PERF_SAMPLE_PERIOD |
	    (ps_counter__attr(c)->sample_type & (PERF_SAMPLE_ADDR | PERF_SAMPLE_CGROUP));
	smp.ip = r->ip;
	smp.addr = r->addr;
	smp.cgroup = smp.sample_type & PERF_SAMPLE_CGROUP ? r->cgroup : 0;
	smp.time = r->time;
	smp.period = r->period ? r->period : ps_counter__attr(c)->sample_period;
	smp.pid = r->pid;
	smp.tid = r->tid;
	smp.cpu = r->cpu;
	smp.misc = r->user ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL;
	smp.read_format = ps_counter__attr(c)->read_format;
	if (r->ustack >= 0 || r->kstack >= 0)
		chain(bs, b, r, &smp);
	if (ps_bpf__kind(c) == PS_BPF_KIND_PERF && r->py_room <= size - sizeof(*r))
		user_side(bs, b, c, r, size, &smp);
	else if (ps_bpf__kind(c) == PS_BPF_KIND_PROBE && r->raw_size <= size - sizeof(*r))
		probe_side(bs, c, r, size, &smp);
	else if (r->raw_size && r->raw_size <= size - sizeof(*r)) {
		size_t at = sizeof(*r) + ((r->raw_size + 7u) & ~7u);

		smp.raw = r + 1;
		smp.raw_size = r->raw_size;
		smp.sample_type |= PERF_SAMPLE_RAW;
		if (r->strings_size && at <= size && r->strings_size <= size - at) {
			smp.strings = (const char *)data + at;
			smp.strings_size = r->strings_size;
		}
		if (r->regs_size && at <= size && r->strings_size <= size - at)
			user_stack(bs, c, r, (const char *)data + at + r->strings_size,
				   size - at - r->strings_size, &smp);
	}
	rc = ps_sampler__deliver(m, &(struct ps_delivery){.from = &ps_bpf_backend,
							  .slot = ps_session__slot_of(m->s, c),
							  .sample = &smp});
	if (rc < 0) {
		bs->stop = rc;
		return rc;
	}
next:
	if (bs->budget && ++bs->taken >= bs->budget)
		return PS_STOP_BUDGET;
	return 0;
}

int ps_sample__string(const struct ps_sample *s, uint32_t offset, const char **str, size_t *len,
		      bool *cut)
{
	const unsigned char *p = s ? s->strings : NULL, *end = p ? p + s->strings_size : NULL;

	while (p && (size_t)(end - p) >= sizeof(struct ps_bpf_str)) {
		struct ps_bpf_str e;
		size_t n;

		memcpy(&e, p, sizeof(e));
		n = e.len > 0 ? (size_t)e.len : 0;
		if (n > (size_t)(end - p) - sizeof(e))
			break; /* malformed: not ours to read further */
		if (e.offset == offset) {
			if (e.len < 0)
				return e.len;
			if (n == 0 || p[sizeof(e) + n - 1] != '\0')
				return -EFAULT;
			*str = (const char *)p + sizeof(e);
			*len = n - 1;
			*cut = n == PS_BPF_STR_MAX;
			return 0;
		}
		p += sizeof(e) + ((n + 7) & ~(size_t)7);
	}
	return -ENOENT;
}

int ps_bpf__drain(struct ps_sampler *m, int fd, size_t budget)
{
	struct ps_bpf *bs = m->bpf;
	int n;

	if (!bs || !bs->rb || fd != ring_buffer__epoll_fd(bs->rb))
		return -EBADF;
	bs->budget = budget;
	bs->taken = 0;
	bs->stop = 0;
	n = ring_buffer__consume(bs->rb);
	if (bs->stop)
		return bs->stop;
	if (n == PS_STOP_BUDGET)
		return (int)bs->taken; /* a full budget: more may wait */
	/* the ring buffer is empty: losses the programs counted show now (one
	 * map read per counter, at most once per wakeup or drain timer) */
	ps_sampler__settle_lost(m, &ps_bpf_backend);
	return n;
}
