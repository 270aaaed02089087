/*
 * usdt.c: a USDT marker's arguments for its program (ps_forward.bpf.h),
 * which reads them at the event: each site's, as core/usdt.c and the
 * marker's note give them, into ps_usdt at the site's index, which is the
 * cookie of the site's link (sample/bpf/load.c). A register becomes its
 * offset in the probe's pt_regs; a site whose register the program cannot
 * see gets no arguments, and s:arg(n) then says why.
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf_perf_event.h>

#include "base/regs.h"
#include "core/view.h"
#include "sample/bpf/internal.h"
#include "symbols/resolve.h"
#include "ps_sample.skel.h"

_Static_assert(PS_BPF_USDT_CONST == PS_USDT_CONST && PS_BPF_USDT_REG == PS_USDT_REG &&
		   PS_BPF_USDT_MEM == PS_USDT_MEM && PS_BPF_USDT_GLOBAL == PS_USDT_GLOBAL &&
		   PS_BPF_USDT_ARGS == PS_USDT_MAX_ARGS,
	       "the program reads the arguments as symbols/resolve.h writes them");

int ps_bpf__usdt_configure(const struct ps_counter *c, struct ps_sample_bpf *skel)
{
	size_t n;

	if (!ps_counter__usdt_sites(c, &n))
		return 0;
	skel->rodata->cfg_usdt = 1;
	return bpf_map__set_max_entries(skel->maps.ps_usdt, (__u32)n);
}

/* One site's arguments as the program reads them; false when one is in a
 * register it cannot see. */
static bool site_of(const struct ps_usdt_site *site, struct ps_bpf_usdt *u)
{
	memset(u, 0, sizeof(*u));
	u->pc = site->pc;
	for (int i = 0; i < site->nargs; i++) {
		const struct ps_usdt_arg *a = &site->args[i];
		struct ps_bpf_usdt_arg *b = &u->args[i];
		int off = a->kind == PS_USDT_REG || a->kind == PS_USDT_MEM
			      ? ps_regs__pt_offset((unsigned)a->reg)
			      : 0;

		if (off < 0)
			return false;
		*b = (struct ps_bpf_usdt_arg){.val = a->val,
					      .pt_off = (__u16)off,
					      .kind = a->kind,
					      .size = a->size,
					      .is_signed = a->is_signed};
	}
	u->nargs = site->nargs > 0 ? (__u32)site->nargs : 0;
	return true;
}

int ps_bpf__usdt_fill(const struct ps_counter *c, struct ps_sample_bpf *skel)
{
	const struct ps_usdt_site *sites;
	struct ps_bpf_usdt u;
	size_t n;
	int err = 0;

	if (!(sites = ps_counter__usdt_sites(c, &n)))
		return 0;
	for (__u32 k = 0; k < n && !err; k++) {
		if (!site_of(&sites[k], &u))
			memset(&u, 0, sizeof(u)); /* s:arg(n) says why on the host */
		err =
		    bpf_map__update_elem(skel->maps.ps_usdt, &k, sizeof(k), &u, sizeof(u), BPF_ANY);
	}
	return err;
}
