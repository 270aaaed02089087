/*
 * ps_forward.bpf.h: the compact record a hit becomes in the ring buffer
 * (every event but the tracepoints forwarded whole, ps_whole.bpf.h), with
 * a USDT marker's arguments after its registers (ps_usdt.bpf.h).
 */
/* The site's arguments into out (ps_usdt.bpf.h); how many. */
static __always_inline __u32 usdt_args(void *ctx, __u64 ip, __u64 *out)
{
	__u32 site = (__u32)bpf_get_attach_cookie(ctx);
	struct ps_bpf_usdt *u = bpf_map_lookup_elem(&ps_usdt, &site);
	__u32 n;

	if (!u)
		return 0;
	n = u->nargs < PS_BPF_USDT_ARGS ? u->nargs : PS_BPF_USDT_ARGS;
	for (__u32 i = 0; i < PS_BPF_USDT_ARGS && i < n; i++)
		out[i] = usdt_arg(ctx, ip, u, i);
	return n;
}

static __always_inline void fill(struct ps_bpf_rec *r, void *ctx, __u64 ip, __u32 user,
				 __u64 period, __u64 addr, __u32 tgid, __u32 tid, __u32 cpu)
{
	r->handle = cfg_handle;
	r->ip = ip;
	r->time = bpf_ktime_get_ns();
	r->period = period;
	r->addr = addr;
	r->pid = tgid;
	r->tid = tid;
	r->cpu = cpu;
	r->user = user;
	r->raw_size = r->strings_size = r->regs_size = r->stack_size = 0;
	r->py_room = r->py_n = 0;
	r->args_n = 0;
	r->cgroup = bpf_get_current_cgroup_id();
	r->ustack = r->kstack = -1;
	if (cfg_flags & PS_BPF_F_CALLCHAIN) {
		r->ustack = bpf_get_stackid(ctx, &ps_stacks, BPF_F_USER_STACK);
		if (!user)
			r->kstack = bpf_get_stackid(ctx, &ps_stacks, 0);
	}
}

/* A compact record, reserved in the ring and written in place: every
 * event but the tracepoints forwarded whole. */
static __always_inline void forward(void *ctx, __u64 ip, __u32 user, __u64 period, __u64 addr,
				    __u32 tgid, __u32 tid, __u32 cpu, int tracepoint)
{
	/* cfg_raw_size is read-only data: a constant to the verifier */
	struct ps_bpf_rec *r =
	    bpf_ringbuf_reserve(&ps_events,
				sizeof(*r) + (tracepoint ? cfg_raw_size : 0) +
				    (cfg_usdt ? PS_BPF_USDT_ARGS * sizeof(__s64) : 0),
				0);

	if (!r) {
		bump(PS_BPF_LOST_RING);
		return;
	}
	fill(r, ctx, ip, user, period, addr, tgid, tid, cpu);
	/* a tracepoint's record, fields and all: ctx points at it */
	if (tracepoint && cfg_raw_size && cfg_raw_size <= PS_BPF_RAW_MAX &&
	    bpf_probe_read_kernel(r + 1, cfg_raw_size, ctx) == 0)
		r->raw_size = cfg_raw_size;
	if (cfg_usdt && cfg_raw_size <= PS_BPF_RAW_MAX) /* after the registers */
		r->args_n = usdt_args(ctx, ip, (__u64 *)((char *)(r + 1) + cfg_raw_size));
	bpf_ringbuf_submit(r, wake_flags(r->time));
}
