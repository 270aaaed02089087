/*
 * pytrampoline.c: CPython's perf trampolines. From 3.12, with perf support
 * on (-X perf, PYTHONPERFSUPPORT=1), the interpreter enters each Python
 * function through a small copy of _Py_trampoline_func_start that it
 * writes into anonymous memory, one after the other, and names in its perf map
 * "py::QUALNAME:FILE"; on x86-64 "sub $8,%rsp; call *%rcx; add $8,%rsp;
 * ret", without a frame pointer or CFI. A frame in one sits at its call's
 * return, start + 6 (stepped back to + 5, as every return address is).
 * The unwinder steps over such frames by hand (symbols/unwind.c), and a
 * Python stack leaves them out where it puts the Python frames (each
 * would stand twice: symbols/pysplice.c). One is known by its perf-map name or, where the map
 * names nothing yet (the interpreter writes it after the code, and the map
 * is read again at most every 20 ms), by its bytes, read from the process.
 */
#include <string.h>
#include <sys/uio.h>

#include "symbols/internal.h"
#include "symbols/python.h"

/* Whether p maps a CPython that may write trampolines, from its files'
 * names, looked at again when its mappings change: no other process pays a
 * map lookup or a read of its memory for its anonymous frames. */
static bool runs_trampolines(struct ps_proc *p)
{
	if (p->py_gen != p->gen + 1) {
		p->py_trampolines = false;
		for (size_t i = 0; i < p->n && !p->py_trampolines; i++)
			p->py_trampolines =
			    p->maps[i].dso && ps_python__minor(p->maps[i].dso->base_name) >= 12;
		p->py_gen = p->gen + 1;
	}
	return p->py_trampolines;
}

bool ps_proc__python_trampoline(struct ps_proc *p, uint64_t pc)
{
#if defined(__x86_64__)
	static const unsigned char code[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
					     0x48, 0x83, 0xc4, 0x08, 0xc3};
	unsigned char got[sizeof(code)];
	uint64_t start;
	const char *name;
	struct iovec local = {got, sizeof(got)},
		     remote = {(void *)(uintptr_t)(pc - 5), sizeof(got)};

	if (!runs_trampolines(p))
		return false;
	if (ps_jit__entry(p, pc, &start, &name) == 0)
		return pc - start == 5 && !strncmp(name, "py::", 4);
	return process_vm_readv(p->pid, &local, 1, &remote, 1, 0) == (ssize_t)sizeof(got) &&
	       !memcmp(got, code, sizeof(code));
#else
	(void)p;
	(void)pc;
	return false;
#endif
}
