/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ps_offcpu_places.bpf.h: the stacks of a place a thread waited at
 * before, remembered, so a thread that blocks again where it blocked costs
 * a lookup, not two stack walks (walks cost 1.5-7 us on the VM this was
 * measured on; the lookup about 0.5). A place is what the thread's saved
 * user registers say: its process, the system call it entered the kernel
 * by and its first argument, whether the call has returned, its user ip,
 * stack and frame pointers and the return address at the frame pointer,
 * and why it left the CPU; for a kernel thread, the thread.
 *
 * The same place nearly always means the same two stacks, but not always
 * (fdatasync waits at three places in one call), so the stacks are walked
 * again and compared at a place's 1st, 2nd, 4th and 8th use and one use in
 * PS_PLACE_CHECK after: a stack found to differ (the kernel's, or the
 * user's) is walked at that place every time from then on, the other
 * still remembered. Before that is found, its other stacks' intervals are
 * given the remembered one: about PS_PLACE_CHECK intervals a place,
 * whatever their share (a rarer second stack takes longer to find, in
 * proportion). ps_lost counts the uses, the checks, the times a place was
 * found with another stack and the intervals walked, for the reader to
 * say. A preempted thread, or one runnable after an interrupt, is
 * anywhere: it is walked every time.
 *
 * Stack ids are only good until the reader empties the stack map (each
 * take): it makes places_epoch odd first (no place used or remembered),
 * waits for the programs running, empties the map, then makes it even
 * again; a place remembered under another epoch is walked again, which
 * is a check: a stack has the same id in every epoch (its hash's).
 * Included once, by ps_offcpu.bpf.h, before take_stacks.
 */
#ifndef PS_OFFCPU_PLACES_BPF_H
#define PS_OFFCPU_PLACES_BPF_H

#define PS_PLACE_CHECK	16 /* one use in this many, after the 8th, walks again */
#define PS_PLACE_USTACK 1  /* a place's user stacks differ between waits */
#define PS_PLACE_KSTACK 2  /* its kernel stacks */
#define PS_EEXIST	17 /* bpf_get_stackid: no room for the stack (its bucket taken)... */
#define PS_ENOMEM	12 /* ...or none left in the map */

struct ps_place_key {
	__u32 tgid;
	__s32 nr;	  /* the system call; -1: it entered the kernel otherwise */
	__u64 ip, sp, fp; /* the user registers it entered by */
	__u64 ret;	  /* the return address at the frame pointer's record */
	__u64 arg;	  /* the system call's first argument */
	__s64 state;	  /* args.prev_state, as keyed */
	__u64 site;	  /* the kernel frames skipped; 0x100: late; 0x200: in a system call */
};

struct ps_place {
	__s32 us, ks;	/* the stacks' ids */
	__u32 epoch;	/* places_epoch when they were taken */
	__u32 uses;	/* since */
	__u32 unstable; /* PS_PLACE_*: the stacks seen to differ here, walked every time */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1); /* the loader sizes it: PS_PLACE_ENTRIES */
	__type(key, struct ps_place_key);
	__type(value, struct ps_place);
} ps_places SEC(".maps");

__u32 places_epoch = 0; /* odd while the reader empties the stack map */

/* The running thread's user stack, walked (-1: not keyed by it). */
static __always_inline __s32 walk_user(void *ctx)
{
	return cfg_keys & PS_BPF_K_USTACK ? bpf_get_stackid(ctx, &ps_stacks, BPF_F_USER_STACK) : -1;
}

/* Its kernel stack, walked (-1: not keyed by it). */
static __always_inline __s32 walk_kernel(void *ctx, __u64 kskip)
{
	return cfg_keys & PS_BPF_K_KSTACK ? bpf_get_stackid(ctx, &ps_stacks, kskip) : -1;
}

/* The place the running thread waits at, into k; 0: it has none worth
 * remembering. */
static __always_inline int place_of(struct ps_place_key *k, __s64 state, __u64 site)
{
	struct pt_regs___ps *r = (void *)bpf_task_pt_regs(bpf_get_current_task_btf());
	__u64 pt = bpf_get_current_pid_tgid();
	int insys = REG_INSYS(r);

	if (state == 0x100) /* preempted: anywhere */
		return 0;
	k->state = state;
	if (!REG_USER(r)) { /* a kernel thread: most wait at one place, each */
		k->tgid = (__u32)pt;
		k->site = site | 0x400;
		return 1;
	}
	/* runnable after an interrupt: anywhere; runnable in a system call
	 * or at its end: which, as their kernel stacks differ */
	k->nr = REG_NR(r);
	if (state == 0 && (insys < 0 || (!insys && k->nr < 0)))
		return 0;
	k->tgid = pt >> 32;
	k->ip = REG_IP(r);
	k->sp = REG_SP(r);
	k->fp = REG_FP(r);
	k->arg = REG_ARG(r);
	if (k->fp)
		bpf_probe_read_user(&k->ret, sizeof(k->ret), (void *)(k->fp + 8));
	k->site = site | (insys > 0 ? 0x200 : 0);
	return 1;
}

/* Whether a walk's ids say nothing of the place: the stack map had no
 * room for one of its stacks then. */
static __always_inline int no_room(__s32 us, __s32 ks)
{
	return us == -PS_EEXIST || ks == -PS_EEXIST || us == -PS_ENOMEM || ks == -PS_ENOMEM;
}

/* Whether the n-th use of a place walks its stacks again to compare: the
 * 1st, 2nd, 4th and 8th, then one in PS_PLACE_CHECK. */
static __always_inline int checked_use(__u32 n)
{
	return n <= 8 ? !(n & (n - 1)) : !(n % PS_PLACE_CHECK);
}

/* The stacks of the running thread, which left the CPU in state: those
 * remembered for its place, or walked (and remembered, or compared with
 * those remembered: a stack has the same id in every epoch, its hash). A
 * place whose kernel stacks differ between waits (or its user stacks)
 * walks that one every time and may still remember the other. */
static __always_inline void stacks_at_place(void *ctx, __u64 kskip, int late, __s64 state,
					    __s32 *us, __s32 *ks)
{
	__u32 epoch = places_epoch, bad = 0;
	struct ps_place_key k;
	struct ps_place *p, v;
	int placed, check;

	__builtin_memset(&k, 0, sizeof(k));
	placed = !(epoch & 1) && place_of(&k, state, kskip | (late ? 0x100 : 0));
	p = placed ? bpf_map_lookup_elem(&ps_places, &k) : NULL;
	if (!p || p->unstable == (PS_PLACE_USTACK | PS_PLACE_KSTACK)) {
		*us = walk_user(ctx);
		*ks = walk_kernel(ctx, kskip);
		bump(PS_BPF_PLACE_WALKED);
		if (p || !placed || no_room(*us, *ks)) /* (no room: no verdict) */
			return;
		v.us = *us;
		v.ks = *ks;
		v.epoch = epoch;
		v.uses = 0;
		v.unstable = 0;
		v.pad = 0;
		bpf_map_update_elem(&ps_places, &k, &v, BPF_ANY);
		return;
	}
	/* the first use since the stack map was emptied is a check too */
	check = p->epoch != epoch || checked_use(++p->uses);
	*us = check || (p->unstable & PS_PLACE_USTACK) ? walk_user(ctx) : p->us;
	*ks = check || (p->unstable & PS_PLACE_KSTACK) ? walk_kernel(ctx, kskip) : p->ks;
	if (!check) {
		bump(PS_BPF_PLACE_USED);
		return;
	}
	if (no_room(*us, *ks)) {
		bump(PS_BPF_PLACE_WALKED);
		return;
	}
	if (!(p->unstable & PS_PLACE_USTACK) && *us != p->us)
		bad |= PS_PLACE_USTACK;
	if (!(p->unstable & PS_PLACE_KSTACK) && *ks != p->ks)
		bad |= PS_PLACE_KSTACK;
	if (bad) {
		p->unstable |= bad;
		bump(PS_BPF_PLACE_WRONG);
	}
	p->epoch = epoch;
	bump(PS_BPF_PLACE_CHECKED);
}

#endif
