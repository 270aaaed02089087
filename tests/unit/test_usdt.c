/*
 * test_usdt.c: a USDT marker's operands as sys/sdt.h writes them into its
 * note (symbols/usdt_args.c): registers of every width, memory at a
 * register plus a displacement, globals, constants, the sign and size of
 * each; and the operands it does not make, refused with the one at fault.
 * The end-to-end tests read real markers (tests/e2e/seams.sh).
 */
#include <errno.h>
#include <string.h>

#include "base/regs.h"
#include "symbols/resolve.h"
#include "tap.h"

static void one(const char *spec, int kind, int size, bool sign, int reg, long long val,
		const char *sym)
{
	struct ps_usdt_arg a[PS_USDT_MAX_ARGS];
	char bad[32] = "";
	int n = ps_usdt__parse(spec, a, PS_USDT_MAX_ARGS, bad, sizeof(bad));

	tap_ok(n == 1 && a[0].kind == kind && a[0].size == size && a[0].is_signed == sign &&
		   (reg < 0 || a[0].reg == reg) && a[0].val == val && !strcmp(a[0].symbol, sym),
	       "'%s': kind %d, %d bytes, %s, reg %d, %lld %s", spec, n == 1 ? a[0].kind : -1,
	       n == 1 ? a[0].size : 0, sign ? "signed" : "unsigned", reg, val, sym);
}

static void refused(const char *spec, int err, const char *at)
{
	struct ps_usdt_arg a[PS_USDT_MAX_ARGS];
	char bad[32] = "";
	int n = ps_usdt__parse(spec, a, PS_USDT_MAX_ARGS, bad, sizeof(bad));

	tap_ok(n == err && !strcmp(bad, at), "'%s' refused (%d), at '%s'", spec, n, bad);
}

int main(void)
{
	struct ps_usdt_arg a[PS_USDT_MAX_ARGS];
	char bad[32];

#if defined(__x86_64__)
	one("-4@%edi", PS_USDT_REG, 4, true, PERF_REG_X86_DI, 0, "");
	one("8@%rax", PS_USDT_REG, 8, false, PERF_REG_X86_AX, 0, "");
	one("1@%sil", PS_USDT_REG, 1, false, PERF_REG_X86_SI, 0, "");
	one("-2@%r9w", PS_USDT_REG, 2, true, PERF_REG_X86_R9, 0, "");
	one("-8@-8(%rsp)", PS_USDT_MEM, 8, true, PERF_REG_X86_SP, -8, "");
	one("4@16(%rbp)", PS_USDT_MEM, 4, false, PERF_REG_X86_BP, 16, "");
	one("8@(%rbx)", PS_USDT_MEM, 8, false, PERF_REG_X86_BX, 0, "");
	one("-8@usdt_global(%rip)", PS_USDT_GLOBAL, 8, true, -1, 0, "usdt_global");
	one("4@tbl+12(%rip)", PS_USDT_GLOBAL, 4, false, -1, 12, "tbl");
	one("-4@$42", PS_USDT_CONST, 4, true, -1, 42, "");
	one("8@$-5", PS_USDT_CONST, 8, false, -1, -5, "");
	tap_is_i64(ps_usdt__parse("-8@%rax -8@-8(%rsp) -8@usdt_global(%rip) -4@$42 -4@%edi", a,
				  PS_USDT_MAX_ARGS, bad, sizeof(bad)),
		   5, "a note of five operands gives five arguments");
	tap_is_str(a[4].text, "%edi", "each keeps its text for messages");
	refused("8@(%rax,%rbx,4)", -EINVAL, "8@(%rax,%rbx,4)");
	refused("4@%ah", -EINVAL, "4@%ah");
	refused("8@%rax 16@%rbx", -EINVAL, "16@%rbx");
	refused("8@12(%rip)", -EINVAL, "8@12(%rip)");
#elif defined(__aarch64__)
	one("-4@w0", PS_USDT_REG, 4, true, 0, 0, "");
	one("8@x19", PS_USDT_REG, 8, false, 19, 0, "");
	one("8@[sp, 16]", PS_USDT_MEM, 8, false, PERF_REG_ARM64_SP, 16, "");
	one("-4@[x1]", PS_USDT_MEM, 4, true, 1, 0, "");
	one("8@[x29, -8]", PS_USDT_MEM, 8, false, 29, -8, "");
	one("4@5", PS_USDT_CONST, 4, false, -1, 5, "");
	tap_is_i64(ps_usdt__parse("-4@w0 8@[sp, 16] 4@5", a, PS_USDT_MAX_ARGS, bad, sizeof(bad)), 3,
		   "a note with a memory operand's space gives three arguments");
	refused("8@q0", -EINVAL, "8@q0");
#else
	tap_skip("no USDT operands known for this architecture", "USDT operands");
#endif
	tap_is_i64(ps_usdt__parse("", a, PS_USDT_MAX_ARGS, bad, sizeof(bad)), 0,
		   "a marker without arguments has none");
	refused("x@%rax", -EINVAL, "x@%rax");
	tap_is_i64(
	    ps_usdt__extend(&(struct ps_usdt_arg){.size = 4, .is_signed = true}, 0xfffffffbu), -5,
	    "a signed 4-byte value is sign-extended");
	tap_ok(ps_usdt__extend(&(struct ps_usdt_arg){.size = 2}, 0x12345678u) == 0x5678,
	       "an unsigned 2-byte value keeps its low bytes");
	return tap_done();
}
