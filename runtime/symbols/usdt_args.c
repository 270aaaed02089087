/*
 * usdt_args.c: where a USDT marker's arguments are. sys/sdt.h writes each
 * argument's operand into the marker's note as the assembler saw it, after
 * its size in bytes (negative: signed), "-4@%edi 8@-16(%rbp) 4@$7
 * 8@counter(%rip)" on x86-64, "-4@w0 8@[sp, 16] 8@[x1]" on arm64: a
 * register, memory at a register plus a displacement, a constant, or a
 * global (a symbol, relative to the program counter). Each becomes a
 * ps_usdt_arg, registers in asm/perf_regs.h numbering, which the perf path
 * reads from a sample's registers and stack copy and the BPF path at the
 * event. A global's symbol is looked up in the file by the caller.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/regs.h"
#include "symbols/resolve.h"

#if defined(__x86_64__)
static const struct {
	const char *names[4]; /* 64, 32, 16, 8 bits */
	int reg;
} x86_regs[] = {
    {{"rax", "eax", "ax", "al"}, PERF_REG_X86_AX},
    {{"rbx", "ebx", "bx", "bl"}, PERF_REG_X86_BX},
    {{"rcx", "ecx", "cx", "cl"}, PERF_REG_X86_CX},
    {{"rdx", "edx", "dx", "dl"}, PERF_REG_X86_DX},
    {{"rsi", "esi", "si", "sil"}, PERF_REG_X86_SI},
    {{"rdi", "edi", "di", "dil"}, PERF_REG_X86_DI},
    {{"rbp", "ebp", "bp", "bpl"}, PERF_REG_X86_BP},
    {{"rsp", "esp", "sp", "spl"}, PERF_REG_X86_SP},
    {{"r8", "r8d", "r8w", "r8b"}, PERF_REG_X86_R8},
    {{"r9", "r9d", "r9w", "r9b"}, PERF_REG_X86_R9},
    {{"r10", "r10d", "r10w", "r10b"}, PERF_REG_X86_R10},
    {{"r11", "r11d", "r11w", "r11b"}, PERF_REG_X86_R11},
    {{"r12", "r12d", "r12w", "r12b"}, PERF_REG_X86_R12},
    {{"r13", "r13d", "r13w", "r13b"}, PERF_REG_X86_R13},
    {{"r14", "r14d", "r14w", "r14b"}, PERF_REG_X86_R14},
    {{"r15", "r15d", "r15w", "r15b"}, PERF_REG_X86_R15},
    {{"rip", "eip", NULL, NULL}, PERF_REG_X86_IP},
};

/* "%name" at *p, past it: the register, or -1. */
static int reg_at(const char **p)
{
	const char *s = *p;
	size_t n;

	if (*s != '%')
		return -1;
	s++;
	n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789");
	for (size_t i = 0; i < sizeof(x86_regs) / sizeof(x86_regs[0]); i++)
		for (int w = 0; w < 4; w++)
			if (x86_regs[i].names[w] && strlen(x86_regs[i].names[w]) == n &&
			    !strncmp(s, x86_regs[i].names[w], n)) {
				*p = s + n;
				return x86_regs[i].reg;
			}
	return -1;
}

/* One operand: %reg, $imm, [disp](%reg), sym[+-disp](%rip). */
static int operand(const char *s, struct ps_usdt_arg *a)
{
	char *end;

	if (*s == '$') {
		a->kind = PS_USDT_CONST;
		a->val = strtoll(s + 1, &end, 0);
		return *end || end == s + 1 ? -EINVAL : 0;
	}
	if (*s == '%') {
		a->kind = PS_USDT_REG;
		return (a->reg = (int16_t)reg_at(&s)) < 0 || *s ? -EINVAL : 0;
	}
	a->val = 0;
	if (isalpha((unsigned char)*s) || *s == '_' || *s == '.') { /* a symbol */
		size_t n = strcspn(s, "+-(");

		if (n >= sizeof(a->symbol))
			return -EINVAL;
		memcpy(a->symbol, s, n);
		a->symbol[n] = '\0';
		s += n;
	}
	if (*s == '+' || *s == '-' || isdigit((unsigned char)*s)) {
		a->val = strtoll(s, &end, 0);
		s = end;
	}
	if (*s++ != '(')
		return -EINVAL;
	a->reg = (int16_t)reg_at(&s);
	if (a->reg < 0 || strcmp(s, ")")) /* an index register: not made by sys/sdt.h's "nor" */
		return -EINVAL;
	if (a->reg == PERF_REG_X86_IP) {
		if (!a->symbol[0])
			return -EINVAL;
		a->kind = PS_USDT_GLOBAL;
		return 0;
	}
	a->kind = PS_USDT_MEM;
	return a->symbol[0] ? -EINVAL : 0;
}
#elif defined(__aarch64__)
/* "xN", "wN", "sp" at *p, past it: the register, or -1. */
static int reg_at(const char **p)
{
	const char *s = *p;
	char *end;
	long n;

	if (!strncmp(s, "sp", 2)) {
		*p = s + 2;
		return PERF_REG_ARM64_SP;
	}
	if (*s != 'x' && *s != 'w')
		return -1;
	n = strtol(s + 1, &end, 10);
	if (end == s + 1 || n < 0 || n > 30)
		return -1;
	*p = end;
	return (int)n;
}

/* One operand: xN/wN/sp, [reg], [reg, disp], an immediate. */
static int operand(const char *s, struct ps_usdt_arg *a)
{
	char *end;

	if (isdigit((unsigned char)*s) || *s == '-' || *s == '#') {
		a->kind = PS_USDT_CONST;
		a->val = strtoll(s + (*s == '#'), &end, 0);
		return *end ? -EINVAL : 0;
	}
	if (*s != '[') {
		a->kind = PS_USDT_REG;
		return (a->reg = (int16_t)reg_at(&s)) < 0 || *s ? -EINVAL : 0;
	}
	s++;
	a->kind = PS_USDT_MEM;
	if ((a->reg = (int16_t)reg_at(&s)) < 0)
		return -EINVAL;
	a->val = 0;
	if (*s == ',') {
		s += 1 + strspn(s + 1, " ");
		a->val = strtoll(s + (*s == '#'), &end, 0);
		s = end;
	}
	return strcmp(s, "]") ? -EINVAL : 0;
}
#else
static int operand(const char *s, struct ps_usdt_arg *a)
{
	(void)s;
	(void)a;
	return -EOPNOTSUPP;
}
#endif

int ps_usdt__parse(const char *spec, struct ps_usdt_arg *args, int max, char *bad, size_t badlen)
{
	int n = 0;

	while (*spec) {
		char tok[96];
		size_t len;
		char *at, *end;
		long size;
		int err;

		spec += strspn(spec, " ");
		if (!*spec)
			break;
		len = strcspn(spec, " ");
		/* "8@[sp, 16]": arm64's memory operands hold a space */
		if (memchr(spec, '[', len) && !memchr(spec, ']', len))
			len += strcspn(spec + len, "]") + 1;
		if (len >= sizeof(tok) || n == max) {
			snprintf(bad, badlen, "%.*s", (int)len, spec);
			return -E2BIG;
		}
		memcpy(tok, spec, len);
		tok[len] = '\0';
		spec += len;
		memset(&args[n], 0, sizeof(args[n]));
		size = strtol(tok, &end, 10);
		at = end;
		err = *at == '@' && size != 0 && labs(size) <= 8 ? operand(at + 1, &args[n])
								 : -EINVAL;
		if (err) {
			snprintf(bad, badlen, "%s", tok);
			return err;
		}
		args[n].size = (uint8_t)labs(size);
		args[n].is_signed = size < 0;
		snprintf(args[n].text, sizeof(args[n].text), "%s", at + 1);
		n++;
	}
	return n;
}

/* v as an argument of size bytes, sign- or zero-extended. */
int64_t ps_usdt__extend(const struct ps_usdt_arg *a, uint64_t v)
{
	unsigned bits = a->size * 8u;

	if (bits >= 64)
		return (int64_t)v;
	v &= (1ull << bits) - 1;
	if (a->is_signed && (v >> (bits - 1)) & 1)
		v |= ~0ull << bits;
	return (int64_t)v;
}
