/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ps_offcpu_fwd.bpf.h: off-CPU intervals as samples, for an off-CPU
 * aggregate that forwards (a sample probe on its counter). Each part of an
 * interval that is kept is sent through the ring buffer as well as summed:
 * the record of the switch-out that began it (sched_switch's fields, its
 * prev_state the part's state), the part's nanoseconds as its period, the
 * stacks taken at the switch-out, and with call-graph=dwarf the thread's
 * user registers and up to cfg_offcpu_stack bytes of its user stack as
 * they were then, for the unwinder in user space. Those are kept per
 * thread in ps_oc_stacks, an LRU map: a thread it had no room for has
 * intervals without a user stack. Included by ps_offcpu.bpf.h.
 */
#ifndef PS_OFFCPU_FWD_BPF_H
#define PS_OFFCPU_FWD_BPF_H

/* sched_switch's fields, in cfg_sw_off's order */
enum {
	SW_PREV_COMM,
	SW_PREV_PID,
	SW_PREV_PRIO,
	SW_PREV_STATE,
	SW_NEXT_COMM,
	SW_NEXT_PID,
	SW_NEXT_PRIO,
	SW_FIELDS
};

const volatile __u32 cfg_offcpu_fwd = 0;	 /* 1: kept parts are forwarded too */
const volatile __u32 cfg_offcpu_stack = 0;	 /* with this many bytes of user stack */
const volatile __s32 cfg_sw_off[SW_FIELDS] = {}; /* where each field is in the record, or -1 */

struct oc_stack {
	__u64 size; /* bytes of stack read at the switch-out; 0: none */
	__u8 regs[sizeof(bpf_user_pt_regs_t)];
	__u8 data[PS_BPF_OC_STACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1); /* the loader sizes it */
	__type(key, __u32);	/* tid */
	__type(value, struct oc_stack);
} ps_oc_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct oc_stack);
} ps_oc_scratch SEC(".maps"); /* a new thread's entry is made from it */

struct task_struct___prio {
	int prio;
	char comm[16];
} __attribute__((preserve_access_index));

/* n bytes of src (kernel memory) into field f of a switch record. */
static __always_inline void sw_put(__u8 *rec, int f, const void *src, __u32 n)
{
	__s32 off = cfg_sw_off[f];

	if (off >= 0 && off + n <= PS_BPF_OC_REC)
		bpf_probe_read_kernel(rec + (off & (PS_BPF_OC_REC - 1)), n, src);
}

/* The record of a switch seen by ps_switch (the raw tracepoint has none):
 * prev is the task switched out, next the one switched in. */
static __always_inline void sw_record(__u8 *rec, void *prev, void *next, __s64 state)
{
	struct task_struct___prio *p = prev, *n = next;
	struct task_struct___ps *pp = prev, *np = next;
	int prio, pid;

	__builtin_memset(rec, 0, PS_BPF_OC_REC);
	sw_put(rec, SW_PREV_COMM, &p->comm, 16);
	pid = BPF_CORE_READ(pp, pid);
	sw_put(rec, SW_PREV_PID, &pid, 4);
	prio = BPF_CORE_READ(p, prio);
	sw_put(rec, SW_PREV_PRIO, &prio, 4);
	sw_put(rec, SW_PREV_STATE, &state, 8);
	sw_put(rec, SW_NEXT_COMM, &n->comm, 16);
	pid = BPF_CORE_READ(np, pid);
	sw_put(rec, SW_NEXT_PID, &pid, 4);
	prio = BPF_CORE_READ(n, prio);
	sw_put(rec, SW_NEXT_PRIO, &prio, 4);
}

/* The current task's user registers and stack, at its switch-out, into
 * its entry of ps_oc_stacks (none for a kernel thread). A read that
 * crosses the top of the stack fails: then a half, down to 512 bytes. */
static __always_inline void sw_stack(__u32 tid)
{
	struct pt_regs___ps *regs;
	struct oc_stack *sk;
	__u32 zero = 0;
	__u64 sp;

	regs = (struct pt_regs___ps *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!cfg_offcpu_stack || !TASK_USER(regs))
		return;
	sk = bpf_map_lookup_elem(&ps_oc_stacks, &tid);
	if (!sk) {
		struct oc_stack *fresh = bpf_map_lookup_elem(&ps_oc_scratch, &zero);

		if (!fresh)
			return;
		fresh->size = 0;
		bpf_map_update_elem(&ps_oc_stacks, &tid, fresh, BPF_ANY);
		if (!(sk = bpf_map_lookup_elem(&ps_oc_stacks, &tid)))
			return;
	}
	sk->size = 0;
	if (bpf_probe_read_kernel(sk->regs, sizeof(sk->regs), regs))
		return;
	sp = TASK_SP(regs);
	for (int i = 0; i < 5; i++) {
		__u32 size = cfg_offcpu_stack >> i;

		if (size < 512 || size > PS_BPF_OC_STACK)
			break;
		if (!bpf_probe_read_user(sk->data, size, (void *)sp)) {
			sk->size = size;
			break;
		}
	}
}

/* One part of an interval, ns long, as a sample: st is its entry, taken
 * at the switch-out; state the part's (the key's field when split). */
static __always_inline void sw_forward(struct ps_oc_entry *st, __u64 ns, __s64 state)
{
	struct oc_stack *sk =
	    cfg_offcpu_stack ? bpf_map_lookup_elem(&ps_oc_stacks, &st->tid) : NULL;
	/* the sizes are read-only data: constants to the verifier */
	struct ps_bpf_rec *r =
	    bpf_ringbuf_reserve(&ps_events,
				sizeof(*r) + PS_BPF_OC_REC +
				    (cfg_offcpu_stack ? sizeof(sk->regs) + cfg_offcpu_stack : 0),
				0);
	__u8 *raw;

	if (!r) {
		bump(PS_BPF_LOST_RING);
		return;
	}
	r->handle = cfg_handle;
	r->ip = r->addr = 0;
	r->time = bpf_ktime_get_ns();
	r->period = ns;
	r->pid = st->tgid;
	r->tid = st->tid;
	r->cpu = bpf_get_smp_processor_id();
	r->user = 0; /* a switch is in the kernel */
	r->ustack = st->us;
	r->kstack = st->ks;
	r->raw_size = PS_BPF_OC_REC;
	r->strings_size = r->regs_size = r->stack_size = 0;
	r->py_room = r->py_n = 0;
	r->cgroup = 0; /* the thread's is not at hand at its switch-in */
	raw = (__u8 *)(r + 1);
	__builtin_memcpy(raw, st->rec, PS_BPF_OC_REC);
	if (!st->has_rec) { /* seen before a switch-out of its: its ids and name */
		__builtin_memset(raw, 0, PS_BPF_OC_REC);
		sw_put(raw, SW_PREV_PID, &st->tid, 4);
		sw_put(raw, SW_PREV_COMM, st->key.comm, 16);
	}
	if (cfg_offcpu_split || !st->has_rec)
		sw_put(raw, SW_PREV_STATE, &state, 8);
	if (cfg_offcpu_stack && sk && sk->size && sk->size <= cfg_offcpu_stack) {
		__u8 *regs = raw + PS_BPF_OC_REC;

		__builtin_memcpy(regs, sk->regs, sizeof(sk->regs));
		bpf_probe_read_kernel(regs + sizeof(sk->regs), cfg_offcpu_stack, sk->data);
		r->regs_size = sizeof(sk->regs);
		r->stack_size = sk->size;
	}
	bpf_ringbuf_submit(r, wake_flags(r->time));
}

/* What a forwarded interval needs from its switch-out: the thread's ids
 * and the switch's record (the tracepoint's own, or made from prev and
 * next at the raw tracepoint). Its stacks come from oc_stacks. */
static __always_inline void sw_taken(struct ps_oc_entry *st, void *ctx, __u32 tgid, __u32 tid,
				     void *prev, void *next, __s64 state, int raw)
{
	st->tgid = tgid;
	st->tid = tid;
	st->us = st->ks = -1;
	if (!cfg_offcpu_fwd)
		return;
	st->has_rec = 1;
	if (raw)
		sw_record(st->rec, prev, next, state);
	else if (bpf_probe_read_kernel(st->rec, PS_BPF_OC_REC, ctx))
		st->has_rec = 0;
}

#endif
