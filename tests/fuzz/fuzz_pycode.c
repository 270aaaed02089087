/*
 * fuzz_pycode.c: libFuzzer target for the reader of CPython code objects
 * (symbols/python_code.c), which takes a process's memory as it finds it:
 * a hostile process shapes its code objects, str objects and line tables
 * at will. The input is a memory image: its first byte picks a CPython
 * version's layout, the rest is the image, and every 8-byte word in it
 * whose top byte is 0xa5 is a pointer into it (its low 32 bits the offset,
 * taken modulo the image's size), so that the image's pointers land in the
 * image; the others point anywhere, as a hostile process's may. The code
 * object is at offset 8. tests/fuzz/corpus/pycode has images of real
 * shape (tests/fuzz/pycode_seeds.py made them).
 * The reader reads the image from this very process, as it reads another
 * one's, then the line of a few positions is asked of what it read.
 * Whatever the image holds, it must read or refuse it, never read or write
 * outside what it allocated, nor leak.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/internal.h"
#include "symbols/pycode.h"
#include "symbols/python.h"
#include "symbols/resolve.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

/* python.c's links to the rest of the symbolizer, not under test here */
struct ps_proc *ps_procs__known(struct ps_symbols *syms, pid_t pid)
{
	(void)syms;
	(void)pid;
	return NULL;
}

int ps_syms__lookup(struct ps_symbols *syms, pid_t pid, const char *name, uint64_t *addr,
		    char *near, size_t nearlen)
{
	(void)syms, (void)pid, (void)name, (void)addr, (void)near, (void)nearlen;
	return -ENOENT;
}

void ps_pysplice__forget(struct ps_symbols *syms, pid_t pid)
{
	(void)syms, (void)pid;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	size_t nl = 0;
	const struct ps_py_layout *layouts = ps_python__layouts(&nl);
	struct ps_pycode c = {0};
	uint64_t *img;
	size_t words;

	if (n < 1 + 64 || n > 1 + 65536 || !nl)
		return 0;
	words = (n - 1 + 7) / 8;
	if (!(img = calloc(words, 8)))
		return 0;
	memcpy(img, d + 1, n - 1);
	for (size_t i = 0; i < words; i++)
		if (img[i] >> 56 == 0xa5)
			img[i] = (uint64_t)(uintptr_t)img + (img[i] & 0xffffffffu) % (n - 1);
	c.pid = getpid();
	c.addr = (uint64_t)(uintptr_t)img + 8;
	ps_pycode__read(c.pid, &layouts[d[0] % nl], &c);
	if (c.name)
		for (size_t k = 0; k < 8; k++)
			(void)ps_pycode__line(&layouts[d[0] % nl], &c, c.code_start + img[k % words] % 4096);
	free(c.name);
	free(c.file);
	free(c.linetab);
	free(img);
	return 0;
}
