/*
 * regs.c: one register out of a sample's sampled registers. It sits in
 * base/, below everything, because the sample decoder (sample/perf/) fills
 * the registers while the DWARF unwinder (symbols/) and the probe argument
 * readers read them.
 */
#include <errno.h>
#include <string.h>
#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/bpf_perf_event.h>
#endif

#include "base/bits.h"
#include "base/regs.h"
#include "perfscript.h"

int ps_sample__reg(const struct ps_sample *s, bool intr, unsigned reg, uint64_t *value)
{
	const struct ps_regs *r;
	uint64_t below;

	if (!s || reg >= 64)
		return -ENOENT;
	r = intr ? &s->regs_intr : &s->regs_user;
	if (!r->regs || !(r->mask & (1ull << reg)))
		return -ENOENT;
	below = r->mask & ((1ull << reg) - 1);
	if (value)
		*value = r->regs[ps_bits__count(below)];
	return 0;
}

#if defined(__x86_64__)
#define PT(field) (int)offsetof(bpf_user_pt_regs_t, field)
static const int pt_offset[] = {
    [PERF_REG_X86_AX] = PT(rax) + 1,  [PERF_REG_X86_BX] = PT(rbx) + 1,
    [PERF_REG_X86_CX] = PT(rcx) + 1,  [PERF_REG_X86_DX] = PT(rdx) + 1,
    [PERF_REG_X86_SI] = PT(rsi) + 1,  [PERF_REG_X86_DI] = PT(rdi) + 1,
    [PERF_REG_X86_BP] = PT(rbp) + 1,  [PERF_REG_X86_SP] = PT(rsp) + 1,
    [PERF_REG_X86_IP] = PT(rip) + 1,  [PERF_REG_X86_FLAGS] = PT(eflags) + 1,
    [PERF_REG_X86_CS] = PT(cs) + 1,   [PERF_REG_X86_SS] = PT(ss) + 1,
    [PERF_REG_X86_R8] = PT(r8) + 1,   [PERF_REG_X86_R9] = PT(r9) + 1,
    [PERF_REG_X86_R10] = PT(r10) + 1, [PERF_REG_X86_R11] = PT(r11) + 1,
    [PERF_REG_X86_R12] = PT(r12) + 1, [PERF_REG_X86_R13] = PT(r13) + 1,
    [PERF_REG_X86_R14] = PT(r14) + 1, [PERF_REG_X86_R15] = PT(r15) + 1,
};
#define NPT (int)(sizeof(pt_offset) / sizeof(pt_offset[0]))
#elif defined(__aarch64__)
#define NPT (PERF_REG_ARM64_PC + 1)
#else
#define NPT 0
#endif

/* Entries hold the offset + 1: 0 is "not there". */
int ps_regs__pt_offset(unsigned reg)
{
#if defined(__aarch64__)
	/* user_pt_regs: x0..x30, sp, pc, as perf numbers them */
	return reg < NPT ? (int)(reg * sizeof(uint64_t)) : -1;
#elif defined(__x86_64__)
	return (int)reg < NPT ? pt_offset[reg] - 1 : -1;
#else
	(void)reg;
	return -1;
#endif
}

uint64_t ps_regs__from_pt(const void *pt, size_t size, uint64_t mask, uint64_t *out)
{
	uint64_t have = 0;
	size_t n = 0;

	for (unsigned reg = 0; reg < 64 && reg < (unsigned)NPT; reg++) {
		int off = ps_regs__pt_offset(reg);

		if (!(mask & (1ull << reg)) || off < 0 || (size_t)off + 8 > size)
			continue;
		memcpy(&out[n++], (const char *)pt + off, 8);
		have |= 1ull << reg;
	}
	return have;
}
