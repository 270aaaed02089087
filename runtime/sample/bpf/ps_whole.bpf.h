/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ps_whole.bpf.h: the part of ps_sample.bpf.c that forwards a tracepoint's
 * record whole: its __data_loc strings however long (an exec's filename),
 * and the user strings its pointer fields name (a syscall's path), read at
 * the event, while the process and its memory are there. A string whose
 * page is not in memory at a syscall's entry is read again at its exit
 * (ps_tp_exit), when the kernel has faulted it in. Included once, by
 * ps_sample.bpf.c, after the helpers it uses (fill, wake_flags, bump).
 */
#ifndef PS_WHOLE_BPF_H
#define PS_WHOLE_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PS_BPF_SCRATCH); /* the loader shrinks it when cfg_whole is 0 */
} ps_scratch SEC(".maps");

/* A syscall's record whose string was not in memory at its entry (a
 * literal in a page of the program never touched yet): kept by thread until
 * the syscall's exit, when the kernel has copied the string in and so
 * faulted its page in, and sent then with its entry's time. */
struct late {
	struct ps_bpf_rec rec;
	__u64 ptr[PS_BPF_NSTR];
	__u8 raw[PS_BPF_LATE_RAW];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH); /* a thread that never returns is evicted */
	__uint(max_entries, 1);		     /* the loader sizes it */
	__type(key, __u32);
	__type(value, struct late);
} ps_late SEC(".maps");

/* The strings of the record in buf (its raw_size set), from the pointers
 * of the record at ctx, or those kept in ptr: after it, at *pos on return.
 * True when one was not in memory (-EFAULT from a pointer not NULL). */
static __always_inline int read_strings(__u8 *buf, void *ctx, const __u64 *ptr, __u32 *end)
{
	struct ps_bpf_rec *r = (struct ps_bpf_rec *)buf;
	__u32 pos = sizeof(*r) + ((r->raw_size + 7) & ~7u);
	int missing = 0;

	for (int i = 0; i < PS_BPF_NSTR && i < cfg_nstr; i++) {
		struct ps_bpf_str *e;
		const char *up = 0;
		long n;

		barrier_var(pos);
		if (pos > PS_BPF_SCRATCH - sizeof(*e) - PS_BPF_STR_MAX)
			break;
		e = (struct ps_bpf_str *)(buf + pos);
		if (ptr)
			up = (const char *)ptr[i];
		else
			bpf_probe_read_kernel(&up, sizeof(up), (char *)ctx + cfg_str_off[i]);
		n = up ? bpf_probe_read_user_str(e + 1, PS_BPF_STR_MAX, up) : -14; /* -EFAULT */
		missing |= up && n < 0;
		e->offset = cfg_str_off[i];
		e->len = (__s32)n;
		pos += sizeof(*e) + (n > 0 ? (((__u32)n + 7) & (2 * PS_BPF_STR_MAX - 8)) : 0);
	}
	r->strings_size = pos - sizeof(*r) - ((r->raw_size + 7) & ~7u);
	*end = pos;
	return missing;
}

/* Keep the record in buf for the syscall's exit; false when the map
 * cannot take it (it is sent now, its string missing). */
static __always_inline int keep_late(__u8 *buf, void *ctx, __u32 tid)
{
	struct ps_bpf_rec *r = (struct ps_bpf_rec *)buf;
	struct late *l = (struct late *)(buf + PS_BPF_SCRATCH - sizeof(struct late));
	__u32 n = r->raw_size;

	/* the scratch's end is free: the strings stop a string's room short */
	l->rec = *r;
	for (int i = 0; i < PS_BPF_NSTR; i++) {
		l->ptr[i] = 0;
		if (i < cfg_nstr)
			bpf_probe_read_kernel(&l->ptr[i], 8, (char *)ctx + cfg_str_off[i]);
	}
	if (n >= PS_BPF_LATE_RAW)
		return 0;
	barrier_var(n);
	n &= PS_BPF_LATE_RAW - 1; /* the verifier's bound, on the register it checks */
	bpf_probe_read_kernel(l->raw, n, ctx);
	return bpf_map_update_elem(&ps_late, &tid, l, BPF_ANY) == 0;
}

/* A tracepoint's whole record: its length is where its last __data_loc
 * field ends (an exec's 4095-byte filename included), cut at PS_BPF_DYN_RAW;
 * then the strings its user-string fields point to, read now, while the
 * process and its memory are there (a short-lived one's are gone by the
 * time user space could read them). Put together in the per-CPU scratch,
 * as its length is known only here, and copied to the ring. */
static __always_inline void forward_whole(void *ctx, __u64 ip, __u32 user, __u64 period, __u32 tgid,
					  __u32 tid, __u32 cpu)
{
	__u32 zero = 0, need = cfg_raw_size, pos;
	__u8 *buf = bpf_map_lookup_elem(&ps_scratch, &zero);
	struct ps_bpf_rec *r = (struct ps_bpf_rec *)buf;

	if (!buf) {
		bump(PS_BPF_LOST_RING);
		return;
	}
	fill(r, ctx, ip, user, period, 0, tgid, tid, cpu);
	for (int i = 0; i < PS_BPF_NSTR && i < cfg_nloc; i++) {
		__u32 loc = 0, end;

		bpf_probe_read_kernel(&loc, sizeof(loc), (char *)ctx + cfg_loc_off[i]);
		end = cfg_loc_base[i] + (loc & 0xffff) + (loc >> 16);
		need = end > need ? end : need;
	}
	if (need > PS_BPF_DYN_RAW)
		need = PS_BPF_DYN_RAW;
	barrier_var(need);
	need &= 2 * PS_BPF_DYN_RAW - 1; /* the verifier's bound, on the register it checks */
	if (bpf_probe_read_kernel(r + 1, need, ctx) == 0)
		r->raw_size = need;
	if (read_strings(buf, ctx, NULL, &pos) && cfg_late && r->raw_size < PS_BPF_LATE_RAW &&
	    keep_late(buf, ctx, tid))
		return; /* ps_tp_exit sends it */
	barrier_var(pos);
	if (pos > PS_BPF_SCRATCH)
		return;
	if (bpf_ringbuf_output(&ps_events, buf, pos, wake_flags(r->time)))
		bump(PS_BPF_LOST_RING);
}

/* The syscall's exit: a record kept at its entry is sent, its strings
 * read again now that the kernel has faulted their pages in. */
SEC("tracepoint")
int ps_tp_exit(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0, pos, n;
	struct late *l = bpf_map_lookup_elem(&ps_late, &tid);
	__u8 *buf;

	if (!l)
		return 1;
	buf = bpf_map_lookup_elem(&ps_scratch, &zero);
	if (!buf) {
		bpf_map_delete_elem(&ps_late, &tid);
		bump(PS_BPF_LOST_RING);
		return 1;
	}
	*(struct ps_bpf_rec *)buf = l->rec;
	n = l->rec.raw_size;
	barrier_var(n);
	n &= PS_BPF_LATE_RAW - 1; /* kept only when shorter */
	bpf_probe_read_kernel(buf + sizeof(struct ps_bpf_rec), n, l->raw);
	read_strings(buf, NULL, l->ptr, &pos);
	bpf_map_delete_elem(&ps_late, &tid);
	barrier_var(pos);
	if (pos <= PS_BPF_SCRATCH &&
	    bpf_ringbuf_output(&ps_events, buf, pos, wake_flags(bpf_ktime_get_ns())))
		bump(PS_BPF_LOST_RING);
	return 1; /* the kernel goes on to every perf event on the tracepoint */
}

#endif
