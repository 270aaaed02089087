/*
 * pycode.h: what symbols/python.c keeps of a CPython code object and how
 * symbols/python_code.c reads one (the two files share it, nothing else).
 */
#ifndef PS_SYMBOLS_PYCODE_H
#define PS_SYMBOLS_PYCODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* symbols/python_code.c: one code object of one process, read once. */
#define PS_PYCODE_LINES 4
struct ps_py_layout;
struct ps_pycode {
	pid_t pid;
	uint64_t addr, name_obj; /* the code object, and its co_name at the sample */
	char *name, *file;	 /* NULL: not a code object we could read */
	int firstline;
	unsigned char *linetab;
	size_t linetab_size;
	uint64_t code_start; /* 3.11+: the address of its first instruction */
	struct {
		uint64_t at;
		int line;	  /* 0: none yet */
	} lines[PS_PYCODE_LINES]; /* the last positions asked, by position */
};
/* Read c->addr of pid (c->name stays NULL when it is not, or no longer, a
 * code object); the line of a frame at `at` in it (ps_pyframe.at). */
void ps_pycode__read(pid_t pid, const struct ps_py_layout *l, struct ps_pycode *c);
int ps_pycode__line(const struct ps_py_layout *l, struct ps_pycode *c, uint64_t at);

#endif /* PS_SYMBOLS_PYCODE_H */
