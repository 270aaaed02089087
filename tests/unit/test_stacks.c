/*
 * test_stacks.c: what the symbolizer does beyond "func+0x1a", on this very
 * process and on files it maps into made-up processes: the DWARF unwinder
 * over a register and stack snapshot taken in a known call chain of this
 * -O2 test (built without frame pointers), source lines and inline frames
 * of a function inlined here, demangling (C++ as c++filt prints it, legacy
 * Rust without its hash), the vDSO, names from a JIT's /tmp/perf-PID.map
 * (re-read as it grows), "file+0xOFF" for addresses no symbol covers, and
 * one set of tables for two copies of a file with one build id.
 */
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/regs.h"
#include "perfscript.h"
#include "tap.h"

char *ps_demangle(const char *name); /* symbols/demangle.c, internal */

static volatile unsigned long sink;

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = s ? strlen(s) : 0, m = strlen(suffix);

	return s && n >= m && !strcmp(s + n - m, suffix);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ---- the unwinder, on a snapshot of this process ---- */

#if defined(__x86_64__)
#define HAVE_SNAPSHOT 1
/* Registers in sample order (PS_REGS_UNWIND_MASK: AX..IP, then R8..R15). */
static uint64_t snap_regs[17];
static unsigned char snap_stack[8192];
static uint64_t snap_size;

/* The end of the [stack] mapping, so the copy never reads past it. */
static uint64_t stack_top(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long s, e, top = 0;
	char line[512];

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &s, &e) == 2)
			top = e;
	if (f)
		fclose(f);
	return top;
}

/* What the kernel records with call-graph=dwarf: the registers where we
 * are, then the stack from the stack pointer up. */
__attribute__((noinline)) static void snapshot(void)
{
	uint64_t *r = snap_regs, top;

	__asm__ volatile("movq %%rbx, 8(%0)\n\t"
			 "movq %%rbp, 48(%0)\n\t"
			 "movq %%rsp, 56(%0)\n\t"
			 "leaq 0(%%rip), %%rax\n\t"
			 "movq %%rax, 64(%0)\n\t"
			 "movq %%r12, 104(%0)\n\t"
			 "movq %%r13, 112(%0)\n\t"
			 "movq %%r14, 120(%0)\n\t"
			 "movq %%r15, 128(%0)\n\t"
			 :
			 : "r"(r)
			 : "rax", "memory");
	top = stack_top();
	snap_size = top > r[7] ? top - r[7] : 0;
	if (snap_size > sizeof(snap_stack))
		snap_size = sizeof(snap_stack);
	memcpy(snap_stack, (const void *)(uintptr_t)r[7], snap_size);
	sink++;
}

__attribute__((noinline)) static void chain_b(void)
{
	snapshot();
	sink++;
}

__attribute__((noinline)) static void chain_a(void)
{
	chain_b();
	sink++;
}
#endif

__attribute__((noinline)) static void test_unwind(void)
{
#ifdef HAVE_SNAPSHOT
	static const char *const want[] = {"snapshot", "chain_b", "chain_a", "test_unwind", "main"};
	struct ps_symbols *syms = ps_symbols__new();
	struct ps_sample s = {0};
	uint64_t ips[64];
	char buf[256], got[1024] = "";
	size_t w = 0;
	double t0;
	int n, reps = 2000;

	chain_a();
	s.pid = (uint32_t)getpid();
	s.tid = (uint32_t)syscall(SYS_gettid);
	s.sample_type = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	s.regs_user = (struct ps_regs){PERF_SAMPLE_REGS_ABI_64, PS_REGS_UNWIND_MASK, snap_regs};
	s.stack = snap_stack;
	s.stack_size = snap_size;
	n = ps_symbols__unwind(syms, &s, ips, 64);
	tap_ok(n >= 5, "a -O2 stack without frame pointers unwinds: %d frames", n);
	for (int i = 0; i < n && i < 8; i++) {
		ps_symbols__resolve(syms, getpid(), ips[i], false, buf, sizeof(buf), NULL);
		buf[strcspn(buf, "+")] = '\0';
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? ";" : "", buf);
		if (w < 5 && !strcmp(buf, want[w]))
			w++;
	}
	tap_ok(w == 5, "snapshot, chain_b, chain_a, test_unwind, main in order: %s", got);
	tap_is_u64(ips[0], snap_regs[8], "the first frame is the sampled ip");
	t0 = now_ns();
	for (int i = 0; i < reps; i++)
		ps_symbols__unwind(syms, &s, ips, 64);
	tap_diag("unwind, %d frames, Dwfl cached: %.2f us", n, (now_ns() - t0) / reps / 1e3);
	s.stack_size = 0;
	tap_ok(ps_symbols__unwind(syms, &s, ips, 64) == 1 && ips[0] == snap_regs[8],
	       "no stack copy: the ip alone");
	s.regs_user.abi = PERF_SAMPLE_REGS_ABI_NONE;
	tap_is_u64(ps_symbols__unwind(syms, &s, ips, 64), -ENODATA, "no user registers: -ENODATA");
	ps_symbols__free(syms);
#else
	tap_skip("no register snapshot for this architecture in the test", "unwind");
#endif
}

/* ---- source lines and inline frames ---- */

#ifdef HAVE_SNAPSHOT
static int here_line;

static inline __attribute__((always_inline)) uint64_t here(void)
{
	uint64_t pc;

	here_line = __LINE__ + 1;
	__asm__ volatile("1: leaq 1b(%%rip), %0" : "=r"(pc)); /* this instruction's address */
	return pc;
}

static int call_line;

__attribute__((noinline)) static uint64_t inlines_here(void)
{
	call_line = __LINE__ + 1;
	return here() + sink;
}
#endif

static void test_srcframes(void)
{
	struct ps_symbols *syms = ps_symbols__new();
	const struct ps_srcframe *f = NULL;
	int n;

	n = ps_symbols__srcframes(syms, getpid(), (uint64_t)(uintptr_t)&test_srcframes, &f);
	tap_ok(n == 1 && f[0].func && !strcmp(f[0].func, "test_srcframes") &&
		   ends_with(f[0].file, "test_stacks.c") && f[0].line > 0 && !f[0].inlined,
	       "a function's entry: its name, file and line (%s %s:%u)",
	       n > 0 && f[0].func ? f[0].func : "?", n > 0 && f[0].file ? f[0].file : "?",
	       n > 0 ? f[0].line : 0);
#ifdef HAVE_SNAPSHOT
	{
		uint64_t pc = inlines_here() - sink;
		const struct ps_srcframe *g = NULL;
		double t0;

		n = ps_symbols__srcframes(syms, getpid(), pc, &f);
		tap_ok(n == 2 && f[0].inlined && f[0].func && !strcmp(f[0].func, "here") &&
			   (int)f[0].line == here_line && !f[1].inlined && f[1].func &&
			   !strcmp(f[1].func, "inlines_here") && (int)f[1].line == call_line,
		       "an inlined function: here at line %d, inlined into inlines_here at line "
		       "%d (%d frames: %s:%u, %s:%u)",
		       here_line, call_line, n, n > 0 && f[0].func ? f[0].func : "?",
		       n > 0 ? f[0].line : 0, n > 1 && f[1].func ? f[1].func : "?",
		       n > 1 ? f[1].line : 0);
		ps_symbols__srcframes(syms, getpid(), pc, &g);
		tap_ok(g == f, "the answer is cached");
		t0 = now_ns();
		n = 0;
		for (uint64_t a = (uint64_t)(uintptr_t)&test_srcframes;
		     a < (uint64_t)(uintptr_t)&test_srcframes + 20000; a++)
			n += ps_symbols__srcframes(syms, getpid(), a, &g) > 0;
		tap_diag("srcframes, 20000 distinct addresses: %.0f ns each (%d with lines)",
			 (now_ns() - t0) / 20000, n);
	}
#endif
	tap_is_u64(ps_symbols__srcframes(syms, getpid(), 0x10, &f), 0,
		   "an unmapped address has no source frames");
	ps_symbols__free(syms);
}

/* ---- names ---- */

static void test_demangle(void)
{
	static const struct {
		const char *mangled, *want;
	} cases[] = {
	    {"_ZNK3geo6detail5AccumIdE3runERKSt6vectorIdSaIdEE.isra.0",
	     "geo::detail::Accum<double>::run(std::vector<double, std::allocator<double> > "
	     "const&) const [clone .isra.0]"},
	    {"_ZN4core3ptr13drop_in_place17h0123456789abcdefE", "core::ptr::drop_in_place"},
	    {"_ZN66_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..drop..Drop$GT$4drop17h"
	     "0123456789abcdefE",
	     "<alloc::vec::Vec<T> as core::ops::drop::Drop>::drop"},
	    {"_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h9f3a0c5e7b21d846E",
	     "std::rt::lang_start::{{closure}}"},
	    /* a C++ name whose last part merely looks like a hash keeps it */
	    {"_ZN3foo3bar17h0123456789abcdeEE", "foo::bar::h0123456789abcdeE"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = ps_demangle(cases[i].mangled);

		tap_ok(got && !strcmp(got, cases[i].want), "demangle %s: %s", cases[i].mangled,
		       got ? got : "(null)");
		free(got);
	}
	tap_ok(!ps_demangle("main") && !ps_demangle("_Zbogus"),
	       "a C name or a malformed one is left alone");
}

/* The vDSO's __vdso_clock_gettime (or its alias clock_gettime). */
static void test_vdso(void)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR), addr = 0;
	struct ps_symbols *syms;
	const char *dso = NULL;
	char buf[256];
	Elf *elf;
	Elf_Scn *scn = NULL;

	if (!base) {
		tap_skip("this process has no vDSO", "vDSO symbol");
		return;
	}
	elf_version(EV_CURRENT);
	/* the image is readable in place: libelf only reads it here */
	elf = elf_memory((char *)(uintptr_t)base, 8192);
	while (elf && (scn = elf_nextscn(elf, scn)) && !addr) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (gelf_getsym(data, (int)i, &sym) &&
			    (n = elf_strptr(elf, sh.sh_link, sym.st_name)) &&
			    !strcmp(n, "__vdso_clock_gettime"))
				addr = base + sym.st_value;
		}
	}
	elf_end(elf);
	if (!addr) {
		tap_skip("the vDSO has no __vdso_clock_gettime", "vDSO symbol");
		return;
	}
	syms = ps_symbols__new();
	ps_symbols__resolve(syms, getpid(), addr + 4, false, buf, sizeof(buf), &dso);
	tap_ok(!strcmp(buf, "__vdso_clock_gettime+0x4") && dso && !strcmp(dso, "[vdso]"),
	       "the vDSO resolves: %s in %s", buf, dso ? dso : "(null)");
	ps_symbols__free(syms);
}

/* A made-up process with one mapping: MMAP2 as a ring would deliver it. */
static void map_into(struct ps_symbols *syms, pid_t pid, uint64_t start, uint64_t len,
		     uint64_t pgoff, const char *file)
{
	struct ps_record r = {.type = PERF_RECORD_MMAP2,
			      .pid = (uint32_t)pid,
			      .tid = (uint32_t)pid,
			      .addr = start,
			      .len = len,
			      .pgoff = pgoff,
			      .prot = PROT_READ | PROT_EXEC,
			      .filename = file};

	ps_symbols__record(syms, &r);
}

static void test_jit(void)
{
	const pid_t pid = 0x3ffffff1; /* no such process */
	struct ps_symbols *syms = ps_symbols__new();
	char path[64], buf[256];
	const char *dso = NULL;
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	f = fopen(path, "w");
	if (!f) {
		tap_skip("cannot write /tmp", "JIT map");
		ps_symbols__free(syms);
		return;
	}
	fprintf(f, "10000000 40 jitted_add\n10000040 100 LuaJIT trace 7 at app.lua:12\n");
	fclose(f);
	map_into(syms, pid, 0x10000000, 0x10000, 0, "//anon");
	err = ps_symbols__resolve(syms, pid, 0x10000010, false, buf, sizeof(buf), &dso);
	tap_ok(err == 0 && !strcmp(buf, "jitted_add+0x10") && dso && !strcmp(dso, path),
	       "a JIT's perf map names its code: %s in %s", buf, dso ? dso : "(null)");
	ps_symbols__resolve(syms, pid, 0x10000045, false, buf, sizeof(buf), NULL);
	tap_is_str(buf, "LuaJIT trace 7 at app.lua:12+0x5", "names may have spaces");
	err = ps_symbols__resolve(syms, pid, 0x10000200, false, buf, sizeof(buf), &dso);
	tap_ok(err == -ENOENT && !strcmp(buf, "0x10000200") && !strcmp(dso, "[anon]"),
	       "code the map does not list stays hex in [anon]: %s", buf);
	f = fopen(path, "a");
	fprintf(f, "10000200 20 compiled_later\n");
	fclose(f);
	usleep(50000); /* past the symbolizer's recheck interval */
	ps_symbols__resolve(syms, pid, 0x10000204, false, buf, sizeof(buf), NULL);
	tap_is_str(buf, "compiled_later+0x4", "the map is read again when it grows");
	unlink(path);
	ps_symbols__free(syms);
}

/* Unresolved addresses say file and offset; a file with one build id is
 * read once for two paths. */
static void test_offsets(const char *workload)
{
	struct ps_symbols *syms = ps_symbols__new();
	const struct ps_srcframe *a = NULL, *b = NULL;
	char buf[256], copy[] = "/tmp/ps-test-stacks-XXXXXX", cmd[512];
	const char *dso = NULL;
	uint64_t hot = 0;
	int err, fd;

	map_into(syms, 4242, 0x400000, 0x1000, 0x3000, "/nonexistent/lib.so.1");
	err = ps_symbols__resolve(syms, 4242, 0x400010, false, buf, sizeof(buf), &dso);
	tap_ok(err == -ENOENT && !strcmp(buf, "lib.so.1+0x3010") &&
		   !strcmp(dso, "/nonexistent/lib.so.1"),
	       "an address in a file without symbols is file+offset: %s", buf);
	fd = mkstemp(copy);
	if (fd < 0 || !*workload || access(workload, R_OK)) {
		tap_skip("no workload helper or no /tmp", "build id sharing");
		ps_symbols__free(syms);
		return;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", workload, copy);
	if (system(cmd) == 0) {
		/* the same ELF at different places in two processes */
		map_into(syms, 5001, 0x555500000000ull, 0x100000, 0, workload);
		map_into(syms, 5002, 0x555600000000ull, 0x100000, 0, copy);
		ps_symbols__lookup(syms, 5001, "hot_spin", &hot);
		ps_symbols__srcframes(syms, 5001, hot, &a);
		ps_symbols__srcframes(syms, 5002, hot - 0x555500000000ull + 0x555600000000ull, &b);
		tap_ok(hot && a && a == b, "two copies of one build id share their answers");
	} else {
		tap_skip("cp failed", "build id sharing");
	}
	unlink(copy);
	ps_symbols__free(syms);
}

int main(void)
{
	const char *workload = getenv("WORKLOAD");
	char path[4096];

	/* a mapping names its file by absolute path */
	if (!realpath(workload && *workload ? workload : "build/tests/workload", path))
		path[0] = '\0';
	test_unwind();
	test_srcframes();
	test_demangle();
	test_vdso();
	test_jit();
	test_offsets(path);
	return tap_done();
}
