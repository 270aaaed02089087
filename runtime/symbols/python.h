/*
 * python.h: what the layers above the symbolizer ask of its CPython side
 * (symbols/python.c): whether a process runs a CPython it knows, with
 * where its threads are and the layout of its version's structures (the
 * BPF program walks them), and names for the frames a sample carried.
 */
#ifndef PS_SYMBOLS_PYTHON_H
#define PS_SYMBOLS_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ps_symbols;
struct ps_pyframe;

/* Offsets, in bytes, of one CPython version's fields (x86-64 and arm64
 * release builds; -1 where the version has no such field). */
struct ps_py_layout {
	int minor;				 /* 3.minor */
	int16_t runtime_head;			 /* _PyRuntimeState.interpreters.head */
	int16_t interp_threads;			 /* PyInterpreterState: its first thread */
	int16_t ts_next, ts_thread_id, ts_frame; /* PyThreadState; ts_frame: 3.11/3.12 cframe */
	int16_t cframe_frame;			 /* _PyCFrame.current_frame */
	int16_t f_back, f_code, f_at, f_entry, f_owner; /* the frame */
	int16_t at_size;				/* of f_at: 4, 3.10's int f_lasti; 8 */
	int16_t co_name, co_qualname, co_filename, co_firstlineno, co_linetable, co_code;
	int16_t ascii_size, compact_size; /* sizeof PyASCIIObject, PyCompactUnicodeObject */
};

struct ps_python {
	const struct ps_py_layout *layout;
	uint64_t runtime; /* the address of _PyRuntime in the process */
};

/* Whether pid runs a CPython: 0 with *py filled; -ENOENT when it does not
 * (no libpython or python3.N mapped, no _PyRuntime); -ENOTSUP for a
 * version the table does not know (version, when not NULL, says which:
 * "3.9"); -errno. */
int ps_python__probe(struct ps_symbols *syms, pid_t pid, struct ps_python *py, char *version,
		     size_t versionlen);

/* The table's versions, for docs and tests: their layouts, how many. */
const struct ps_py_layout *ps_python__layouts(size_t *n);

/* The n frames of a sample of pid, innermost first, as addresses the
 * symbolizer names ("py::FUNC:FILE", with FILE:LINE as their source line):
 * out[i] for frame i, entry[i] when it was the outermost of one call of the
 * eval loop. Frames it cannot read are named "py::[unknown]". How many. */
size_t ps_python__frames(struct ps_symbols *syms, pid_t pid, const struct ps_pyframe *py, size_t n,
			 uint64_t *out, bool *entry);

/* What the Python tables hold, in bytes (within the symbolizer's budget),
 * and what giving back the cached code objects freed (their names stay). */
size_t ps_python__bytes(const struct ps_symbols *syms);
size_t ps_python__trim(struct ps_symbols *syms);

/* pid runs another program (an exec) or is gone (its pid may come back
 * as another process): what was read of its CPython goes. */
void ps_python__forget(struct ps_symbols *syms, pid_t pid);
/* Everything the symbolizer holds of pid goes, its mappings too, now (a
 * prober that reads a process once keeps nothing of it: symbols/gone.c). */
void ps_python__drop(struct ps_symbols *syms, pid_t pid);
/* Whether addr is such a made-up address of a Python frame. */
bool ps_python__is_frame(uint64_t addr);
/* The minor version of a CPython file's base name ("python3.11",
 * "libpython3.12.so.1.0"), -1 for any other file. */
int ps_python__minor(const char *base);

#endif /* PS_SYMBOLS_PYTHON_H */
