/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ps_offcpu_sums.bpf.h: how ps_offcpu.bpf.h adds an interval: split into
 * its parts (blocked, then runnable after the wake-up), and added under
 * the thread's key with the interval's stacks, or, without stacks, summed
 * in the thread's own entry by state (acc) until its key changes or the
 * map is read. Included once, by ps_offcpu.bpf.h, after its maps.
 */
#ifndef PS_OFFCPU_SUMS_BPF_H
#define PS_OFFCPU_SUMS_BPF_H

static __always_inline int acc_slot(__s64 s)
{
	switch (s) {
	case 1: /* S */
		return 0;
	case 2: /* D */
		return 1;
	case 0: /* runnable after a wake-up, or not keyed by the state */
		return 2;
	case 0x100: /* preempted */
		return 3;
	case PS_STATE_STOLEN:
		return 4;
	case PS_STATE_ONCPU:
		return 5;
	case 0x80: /* I */
		return 6;
	}
	return -1;
}

static __always_inline __s64 acc_state(int i)
{
	switch (i) {
	case 0:
		return 1;
	case 1:
		return 2;
	case 3:
		return 0x100;
	case 4:
		return PS_STATE_STOLEN;
	case 5:
		return PS_STATE_ONCPU;
	case 6:
		return 0x80;
	}
	return 0;
}

/* The parts of an interval off the CPU, from since (st's last booking) to end,
 * keyed by args.prev_state: its time in the run queue goes under a
 * runnable state, the rest under the state it slept in. run is that time
 * as the scheduler counted it, or PS_NO_RUN for the time since the
 * wake-up seen. A preempted thread's interval is the run queue's; what the
 * scheduler did not count of it (the clocks of two CPUs apart, after a
 * migration) goes under PS_STATE_STOLEN, as in a slice. */
static __always_inline void parts_of(struct ps_oc_entry *st, __u64 since, __u64 end, __u64 run,
				     __u64 ns[2], __s64 state[2])
{
	__u64 off = end - since;
	__s64 s = st->key.field;
	int preempted = s == 0 || s == 0x100;

	ns[1] = 0;
	state[0] = state[1] = s;
	if (!cfg_offcpu_split || (preempted && run == PS_NO_RUN)) {
		ns[0] = off; /* not keyed by it, or runnable all along */
		return;
	}
	if (run == PS_NO_RUN)
		run = st->woken > since && st->woken <= end ? end - st->woken : 0;
	if (run > off)
		run = off;
	ns[0] = off - run;
	state[0] = preempted ? PS_STATE_STOLEN : s;
	ns[1] = run;
	state[1] = preempted ? s : 0;
}

/* A part without stacks, ns in state: summed in the entry. */
static __always_inline void add_short(struct ps_oc_entry *st, __u64 ns, __s64 state)
{
	int i = acc_slot(state);
	struct ps_agg_key k;

	if (i >= 0 && i < PS_ACC_N) {
		__sync_fetch_and_add(&st->acc[i], ns); /* the reader's flush takes them */
		return;
	}
	__builtin_memcpy(&k, &st->key, sizeof(k));
	k.field = state;
	k.ustack = k.kstack = -1;
	add(&k, ns);
}

/* The entry's sums into the map, under its key without stacks (the
 * owner, at a change of the key, and the reader's flush may do it at
 * once: each sum is taken whole by one of them). */
static __always_inline void spill(struct ps_oc_entry *st)
{
	struct ps_agg_key k;
	__u64 v;

	__builtin_memcpy(&k, &st->key, sizeof(k));
	k.ustack = k.kstack = -1;
	for (int i = 0; i < PS_ACC_N; i++) {
		if (!st->acc[i] || !(v = __sync_lock_test_and_set(&st->acc[i], 0)))
			continue;
		k.field = acc_state(i);
		add(&k, v);
	}
}

/* The parts added under st's key: kept (the whole interval reached the
 * threshold), with its stacks and forwarded; otherwise without stacks. */
static __always_inline void book(struct ps_oc_entry *st, const __u64 ns[2], const __s64 state[2],
				 int kept)
{
	struct ps_agg_key k;

	if (!kept) {
		for (int i = 0; i < 2; i++)
			if (ns[i])
				add_short(st, ns[i], state[i]);
		return;
	}
	__builtin_memcpy(&k, &st->key, sizeof(k));
	for (int i = 0; i < 2; i++) {
		if (!ns[i])
			continue;
		k.field = state[i];
		add(&k, ns[i]);
		if (cfg_offcpu_fwd)
			sw_forward(st, ns[i], state[i]);
	}
}

#endif
