/*
 * ps_usdt.bpf.h: a USDT marker's arguments, read at the event where the
 * marker's note says they are: a register of the probe's, memory at one
 * plus a displacement (a stack slot), a global (its link-time address
 * moved as the site is), a constant. The site is the link's cookie; the
 * loader (sample/bpf/usdt.c) writes each site's arguments into ps_usdt.
 * Forwarded records carry them all (ps_forward.bpf.h); an aggregation keys
 * by one (cfg_field_usdt, field()).
 */
const volatile __u32 cfg_usdt = 0;	 /* a USDT marker's counter: its arguments go along */
const volatile __u32 cfg_field_usdt = 0; /* PS_BPF_K_FIELD: its argument N, 1.. */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* the loader sizes it: one entry a site */
	__type(key, __u32);
	__type(value, struct ps_bpf_usdt);
} ps_usdt SEC(".maps");

/* Argument i of site u, sign- or zero-extended; 0 when unreadable. */
static __always_inline __u64 usdt_arg(void *ctx, __u64 ip, struct ps_bpf_usdt *u, __u32 i)
{
	struct ps_bpf_usdt_arg *a;
	__u32 size, bits;
	__u64 v = 0, at = 0;

	if (i >= PS_BPF_USDT_ARGS)
		return 0;
	a = &u->args[i];
	size = a->size;
	if (size < 1 || size > 8)
		size = 8;
	if (a->kind == PS_BPF_USDT_CONST) {
		v = a->val;
	} else {
		if (a->kind != PS_BPF_USDT_GLOBAL)
			bpf_probe_read_kernel(&at, sizeof(at), (char *)ctx + (a->pt_off & 0x3f8));
		if (a->kind == PS_BPF_USDT_REG)
			v = at;
		else if (bpf_probe_read_user(&v, size,
					     (void *)(a->kind == PS_BPF_USDT_GLOBAL
							  ? a->val + ip - u->pc
							  : at + a->val)))
			v = 0;
	}
	bits = size * 8;
	if (bits < 64) {
		v &= (1ull << bits) - 1;
		if (a->is_signed && (v >> (bits - 1)) & 1)
			v |= ~0ull << bits;
	}
	return v;
}

/* Argument n (from 1) of the site this hit is at, for an aggregation key. */
static __always_inline __s64 usdt_field(void *ctx, __u64 ip, __u32 n)
{
	__u32 site = (__u32)bpf_get_attach_cookie(ctx);
	struct ps_bpf_usdt *u = bpf_map_lookup_elem(&ps_usdt, &site);

	return u && n >= 1 && n <= u->nargs ? (__s64)usdt_arg(ctx, ip, u, n - 1) : 0;
}
