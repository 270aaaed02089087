/*
 * llvmloop.c: a long-lived process whose hot code lies in a large shared
 * library, libLLVM (110 MB, about 30000 exported functions), for the fleet
 * benches: it parses a module of IR, optimises it (instcombine, GVN, loop
 * passes) and prints it, over and over, busy for DUTY percent of each
 * 100 ms, for SECS seconds. libLLVM is opened with dlopen, so the build
 * needs neither it nor its headers; without it the program says so and
 * exits 2. It prints "llvmloop: running" once the library is loaded.
 *   llvmloop [SECS [DUTY]]      (default 60 s, 20%)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void *ref; /* every LLVM-C handle is a pointer */

static struct {
	ref (*context_create)(void);
	void (*context_dispose)(ref);
	ref (*buffer_copy)(const char *, size_t, const char *);
	int (*parse_ir)(ref, ref, ref *, char **);
	ref (*pm_create)(void);
	void (*pm_dispose)(ref);
	int (*pm_run)(ref, ref);
	void (*add_instcombine)(ref), (*add_gvn)(ref), (*add_licm)(ref), (*add_rotate)(ref),
	    (*add_cfg)(ref);
	char *(*print)(ref);
	void (*dispose_message)(char *);
	void (*dispose_module)(ref);
} llvm;

static const char *const names[] = {
    "LLVMContextCreate",	    "LLVMContextDispose",
    "LLVMCreateMemoryBufferWithMemoryRangeCopy", "LLVMParseIRInContext",
    "LLVMCreatePassManager",	    "LLVMDisposePassManager",
    "LLVMRunPassManager",	    "LLVMAddInstructionCombiningPass",
    "LLVMAddGVNPass",		    "LLVMAddLICMPass",
    "LLVMAddLoopRotatePass",	    "LLVMAddCFGSimplificationPass",
    "LLVMPrintModuleToString",	    "LLVMDisposeMessage",
    "LLVMDisposeModule",
};

static int load(void)
{
	const char *libs[] = {"libLLVM-14.so.1", "libLLVM-15.so.1", "libLLVM.so"};
	void *h = NULL, **slot = (void **)&llvm;

	for (size_t i = 0; !h && i < sizeof(libs) / sizeof(libs[0]); i++)
		h = dlopen(libs[i], RTLD_NOW);
	if (!h)
		return fprintf(stderr, "llvmloop: no libLLVM here: %s\n", dlerror()), -1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!(slot[i] = dlsym(h, names[i])))
			return fprintf(stderr, "llvmloop: libLLVM has no %s\n", names[i]), -1;
	return 0;
}

/* A module of n functions, each a loop the passes can work on. */
static char *module_text(int n)
{
	static const char fn[] =
	    "define i32 @f%d(i32 %%n) {\n"
	    "entry:\n  br label %%loop\n"
	    "loop:\n  %%i = phi i32 [0, %%entry], [%%i2, %%loop]\n"
	    "  %%s = phi i32 [%d, %%entry], [%%s2, %%loop]\n"
	    "  %%m = mul i32 %%i, %%i\n  %%t = add i32 %%m, %d\n  %%s2 = add i32 %%s, %%t\n"
	    "  %%i2 = add i32 %%i, 1\n  %%c = icmp slt i32 %%i2, %%n\n"
	    "  br i1 %%c, label %%loop, label %%exit\n"
	    "exit:\n  ret i32 %%s2\n}\n";
	size_t cap = (size_t)n * 512, used = 0;
	char *s = malloc(cap);

	for (int i = 0; s && i < n; i++)
		used += (size_t)snprintf(s + used, cap - used, fn, i, i, i * 7);
	return s;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One round: parse, optimise, print. */
static void round_trip(const char *text)
{
	ref ctx = llvm.context_create(), buf, mod = NULL, pm;
	char *err = NULL, *out;

	buf = llvm.buffer_copy(text, strlen(text), "llvmloop");
	if (llvm.parse_ir(ctx, buf, &mod, &err)) { /* takes buf */
		fprintf(stderr, "llvmloop: %s\n", err ? err : "bad IR");
		exit(1);
	}
	pm = llvm.pm_create();
	llvm.add_cfg(pm);
	llvm.add_rotate(pm);
	llvm.add_licm(pm);
	llvm.add_instcombine(pm);
	llvm.add_gvn(pm);
	llvm.pm_run(pm, mod);
	out = llvm.print(mod);
	llvm.dispose_message(out);
	llvm.pm_dispose(pm);
	llvm.dispose_module(mod);
	llvm.context_dispose(ctx);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 60, duty = argc > 2 ? atof(argv[2]) / 100 : 0.2;
	double end = now_s() + secs;
	char *text;

	if (load() < 0)
		return 2;
	if (!(text = module_text(40)))
		return 1;
	printf("llvmloop: running\n"); /* libLLVM is mapped: tests wait for this */
	fflush(stdout);
	while (now_s() < end) {
		double slice = now_s(), busy = slice + 0.1 * duty;
		struct timespec rest;

		while (now_s() < busy)
			round_trip(text);
		rest.tv_sec = 0;
		rest.tv_nsec = (long)((slice + 0.1 - now_s()) * 1e9);
		if (rest.tv_nsec > 0)
			nanosleep(&rest, NULL);
	}
	free(text);
	return 0;
}
