/*
 * regs.h: the sampled registers a DWARF unwinder needs, per architecture.
 * call-graph=dwarf asks the kernel for these user registers
 * (PS_REGS_UNWIND_MASK as sample_regs_user, event/terms.c) and the unwinder
 * (symbols/unwind.c) hands them to libdwfl in DWARF numbering: PS_REGS_DWARF
 * lists, for each DWARF register 0..PS_REGS_NDWARF-1, the kernel's
 * asm/perf_regs.h number of the same register. An architecture without an
 * entry here gets PS_REGS_UNWIND_MASK 0, and call-graph=dwarf is refused.
 */
#ifndef PS_BASE_REGS_H
#define PS_BASE_REGS_H

#if defined(__x86_64__)
#include <asm/perf_regs.h>
/* DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15, then rip (the
 * return address column). */
#define PS_REGS_DWARF                                                                              \
	{                                                                                          \
		PERF_REG_X86_AX, PERF_REG_X86_DX, PERF_REG_X86_CX, PERF_REG_X86_BX,                \
		    PERF_REG_X86_SI, PERF_REG_X86_DI, PERF_REG_X86_BP, PERF_REG_X86_SP,            \
		    PERF_REG_X86_R8, PERF_REG_X86_R9, PERF_REG_X86_R10, PERF_REG_X86_R11,          \
		    PERF_REG_X86_R12, PERF_REG_X86_R13, PERF_REG_X86_R14, PERF_REG_X86_R15,        \
		    PERF_REG_X86_IP                                                                \
	}
#define PS_REGS_NDWARF 17
#define PS_REG_IP      PERF_REG_X86_IP
#define PS_REG_SP      PERF_REG_X86_SP
/* The general registers only: flags and segments say nothing about frames. */
#define PS_REGS_UNWIND_MASK                                                                        \
	(((1ull << (PERF_REG_X86_IP + 1)) - 1) |                                                   \
	 (((1ull << (PERF_REG_X86_R15 + 1)) - 1) & ~((1ull << PERF_REG_X86_R8) - 1)))
#elif defined(__aarch64__)
#include <asm/perf_regs.h>
/* DWARF x0..x30 and sp are the kernel's numbers; the pc is set apart. */
#define PS_REGS_DWARF                                                                              \
	{                                                                                          \
		0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,  \
		    23, 24, 25, 26, 27, 28, 29, 30, PERF_REG_ARM64_SP                              \
	}
#define PS_REGS_NDWARF	    32
#define PS_REG_IP	    PERF_REG_ARM64_PC
#define PS_REG_SP	    PERF_REG_ARM64_SP
#define PS_REGS_UNWIND_MASK ((1ull << (PERF_REG_ARM64_PC + 1)) - 1)
#else
#define PS_REGS_UNWIND_MASK 0ull
#endif

#include <stddef.h>
#include <stdint.h>

/* A probe's integer arguments by the calling convention, and the return
 * register of a return probe (s:arg(n), s.retval; aggregate keys argN and
 * retval), in asm/perf_regs.h numbering. */
#if defined(__x86_64__)
#define PS_ARG_REGS                                                                                \
	{                                                                                          \
		PERF_REG_X86_DI, PERF_REG_X86_SI, PERF_REG_X86_DX, PERF_REG_X86_CX,                \
		    PERF_REG_X86_R8, PERF_REG_X86_R9                                               \
	}
#define PS_NARG_REGS 6
#define PS_RET_REG   PERF_REG_X86_AX
#elif defined(__aarch64__)
#define PS_ARG_REGS                                                                                \
	{                                                                                          \
		0, 1, 2, 3, 4, 5, 6, 7                                                             \
	}
#define PS_NARG_REGS 8
#define PS_RET_REG   0
#else
#define PS_ARG_REGS                                                                                \
	{                                                                                          \
		0                                                                                  \
	}
#define PS_NARG_REGS 0
#define PS_RET_REG   0
#endif

/* A probe's registers as a BPF program sees them (the kernel's struct
 * pt_regs, the UAPI's bpf_user_pt_regs_t): where register reg (asm/perf_regs.h
 * numbering) is in it, or -1 when it is not there or the architecture is
 * not known here. */
int ps_regs__pt_offset(unsigned reg);
/* The registers of mask that pt (size bytes of pt_regs) holds, into out in
 * perf's order (the lowest register number first, as a sample lays them
 * out); returns the mask of those present. out has room for 64. */
uint64_t ps_regs__from_pt(const void *pt, size_t size, uint64_t mask, uint64_t *out);

#endif /* PS_BASE_REGS_H */
