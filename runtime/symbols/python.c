/*
 * python.c: CPython frames in native profiles. A process runs a CPython
 * when it maps python3.N or libpython3.N and defines _PyRuntime; the table
 * below gives, per version, where the interpreter keeps its threads, each
 * thread its newest frame, each frame its code object and position, and
 * each code object its names and line table. The BPF program walks the
 * frames at the sample (sample/bpf); this side names them afterwards, from
 * the process's memory (process_vm_readv): code objects live as long as
 * the functions they belong to, so each is read once and cached.
 *
 * A frame becomes a made-up address, PS_PY_BASE + 16 * its index in one
 * table of (pid, code object, line) + 8, above every user address (x86-64
 * and arm64 user space ends below 2^56), so that profiles can count it as
 * they count any frame and name it at the end (the address a byte before
 * it, where a return address is looked up, names it too): "py::QUALNAME:FILE", with
 * FILE:LINE as its source line, the form perf gives CPython's own
 * trampolines (3.12's -X perf).
 *
 * The offsets come from each version's own headers (the internal ones,
 * built with Py_BUILD_CORE); tests/e2e/python.sh compiles them against
 * every CPython on the machine and compares with the table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"
#include "symbols/pycode.h"
#include "symbols/python.h"

#define PS_PY_BASE	 0x0100000000000000ull
#define PS_PY_MAX_FRAMES (1u << 20) /* distinct (pid, code, line) named */
#define PS_PY_MAX_CODES	 65536	    /* code objects cached before a flush */
#define PS_PY_CODE_BYTES                                                                           \
	(8u << 20)		     /* ...or bytes of them (a hostile process's                   \
				      * 70000 code objects may share one 64 KiB line table) */
#define PS_PY_NAME_BYTES (32u << 20) /* frames named, kept for good: past it, one name */
#define PS_PY_STACKS	 256	     /* whole stacks remembered (direct-mapped)... */
#define PS_PY_STACK_MAX	 16	     /* ...of at most this many frames */

static const struct ps_py_layout layouts[] = {
    {.minor = 10,
     .runtime_head = 32,
     .interp_threads = 8,
     .ts_next = 8,
     .ts_thread_id = 176,
     .ts_frame = 24,
     .cframe_frame = -1,
     .f_back = 24,
     .f_code = 32,
     .f_at = 96,
     .f_entry = -1,
     .f_owner = -1,
     .at_size = 4,
     .co_name = 112,
     .co_qualname = -1,
     .co_filename = 104,
     .co_firstlineno = 40,
     .co_linetable = 120,
     .co_code = 48,
     .ascii_size = 48,
     .compact_size = 72},
    {.minor = 11,
     .runtime_head = 40,
     .interp_threads = 16,
     .ts_next = 8,
     .ts_thread_id = 152,
     .ts_frame = 56,
     .cframe_frame = 8,
     .f_back = 48,
     .f_code = 32,
     .f_at = 56,
     .f_entry = 68,
     .f_owner = 69,
     .at_size = 8,
     .co_name = 120,
     .co_qualname = 128,
     .co_filename = 112,
     .co_firstlineno = 72,
     .co_linetable = 136,
     .co_code = 184,
     .ascii_size = 48,
     .compact_size = 72},
    {.minor = 12,
     .runtime_head = 40,
     .interp_threads = 72,
     .ts_next = 8,
     .ts_thread_id = 136,
     .ts_frame = 56,
     .cframe_frame = 0,
     .f_back = 8,
     .f_code = 0,
     .f_at = 56,
     .f_entry = -1,
     .f_owner = 70,
     .at_size = 8,
     .co_name = 120,
     .co_qualname = 128,
     .co_filename = 112,
     .co_firstlineno = 68,
     .co_linetable = 136,
     .co_code = 192,
     .ascii_size = 40,
     .compact_size = 56},
    {.minor = 13,
     .runtime_head = 632,
     .interp_threads = 7344,
     .ts_next = 8,
     .ts_thread_id = 152,
     .ts_frame = 72,
     .cframe_frame = -1,
     .f_back = 8,
     .f_code = 0,
     .f_at = 56,
     .f_entry = -1,
     .f_owner = 70,
     .at_size = 8,
     .co_name = 120,
     .co_qualname = 128,
     .co_filename = 112,
     .co_firstlineno = 68,
     .co_linetable = 136,
     .co_code = 200,
     .ascii_size = 40,
     .compact_size = 56},
};

const struct ps_py_layout *ps_python__layouts(size_t *n)
{
	*n = sizeof(layouts) / sizeof(layouts[0]);
	return layouts;
}

/* One named frame: what a made-up address stands for. */
struct pyname {
	pid_t pid;
	uint64_t code, name_obj;
	int line;
	char *func; /* "py::QUALNAME:FILE" */
	const char *file;
};

/* A sample's frames as read and what they were named: a profile's samples
 * repeat a few stacks, so one hash and one compare name the whole stack. */
struct pystack {
	pid_t pid;
	uint32_t n; /* 0: empty */
	struct ps_pyframe in[PS_PY_STACK_MAX];
	uint64_t out[PS_PY_STACK_MAX];
	bool entry[PS_PY_STACK_MAX];
};

struct ps_pysyms {
	struct ps_symbols *syms;
	struct pystack *stacks;	 /* PS_PY_STACKS, made at the first stack */
	struct ps_pycode *codes; /* open addressing by (pid, addr), cap a power of two */
	size_t ncodes, capcodes;
	size_t code_bytes;    /* what the cached code objects' copies hold */
	struct pyname *names; /* by index: PS_PY_BASE + i */
	size_t nnames, capnames;
	size_t name_bytes; /* what the names' strings hold */
	uint64_t over;	   /* the address frames get past PS_PY_NAME_BYTES, or 0 */
	size_t *byname;	   /* open addressing over names, by (pid, code, line); cap 2*capnames */
	size_t capbyname;
	struct ps_pidmap versions; /* pid -> const struct ps_py_layout *, probed once */
};

static size_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
	return (size_t)(((a * 0x9e3779b97f4a7c15ull) ^ b ^ (c * 0xff51afd7ed558ccdull)) *
			    0x9e3779b97f4a7c15ull >>
			20);
}

static void free_codes(struct ps_pysyms *ps)
{
	for (size_t i = 0; i < ps->capcodes; i++) {
		free(ps->codes[i].name);
		free(ps->codes[i].file);
		free(ps->codes[i].linetab);
	}
	free(ps->codes);
	ps->codes = NULL;
	ps->ncodes = ps->capcodes = ps->code_bytes = 0;
}

static size_t code_size(const struct ps_pycode *c)
{
	return (c->name ? strlen(c->name) + 1 : 0) + (c->file ? strlen(c->file) + 1 : 0) +
	       (c->linetab ? c->linetab_size : 0);
}

/* The cached code object addr of pid, read now if it is new; NULL on
 * ENOMEM. Past PS_PY_MAX_CODES the cache starts again: names already
 * given keep their strings (struct pyname owns its own). */
static struct ps_pycode *code_of(struct ps_pysyms *ps, pid_t pid, const struct ps_py_layout *l,
				 uint64_t addr, uint64_t name_obj)
{
	size_t mask, i;

	if (ps->ncodes >= PS_PY_MAX_CODES || ps->code_bytes >= PS_PY_CODE_BYTES)
		free_codes(ps);
	if (!ps->codes) {
		ps->capcodes = 1024;
		if (!(ps->codes = calloc(ps->capcodes, sizeof(*ps->codes))))
			return NULL;
	} else if (2 * (ps->ncodes + 1) > ps->capcodes) {
		struct ps_pycode *old = ps->codes, *v = calloc(ps->capcodes * 2, sizeof(*v));
		size_t oldcap = ps->capcodes;

		if (!v)
			return NULL;
		ps->codes = v;
		ps->capcodes *= 2;
		for (size_t k = 0; k < oldcap; k++) {
			if (!old[k].addr)
				continue;
			for (i = hash3((uint64_t)old[k].pid, old[k].addr, old[k].name_obj) &
				 (ps->capcodes - 1);
			     v[i].addr; i = (i + 1) & (ps->capcodes - 1))
				;
			v[i] = old[k];
		}
		free(old);
	}
	mask = ps->capcodes - 1;
	for (i = hash3((uint64_t)pid, addr, name_obj) & mask; ps->codes[i].addr; i = (i + 1) & mask)
		if (ps->codes[i].addr == addr && ps->codes[i].pid == pid &&
		    ps->codes[i].name_obj == name_obj)
			return &ps->codes[i];
	ps->codes[i] = (struct ps_pycode){.pid = pid, .addr = addr, .name_obj = name_obj};
	ps->ncodes++;
	ps_pycode__read(pid, l, &ps->codes[i]);
	ps->code_bytes += code_size(&ps->codes[i]);
	return &ps->codes[i];
}

static bool grow_names(struct ps_pysyms *ps)
{
	size_t cap = ps->capnames ? ps->capnames * 2 : 1024, *by;
	struct pyname *v;

	if (cap > PS_PY_MAX_FRAMES || !(v = realloc(ps->names, cap * sizeof(*v))))
		return false;
	ps->names = v;
	if (!(by = malloc(2 * cap * sizeof(*by))))
		return false;
	memset(by, 0xff, 2 * cap * sizeof(*by));
	for (size_t k = 0; k < ps->nnames; k++) {
		size_t i =
		    hash3((uint64_t)v[k].pid, v[k].code ^ v[k].name_obj, (uint64_t)v[k].line) &
		    (2 * cap - 1);

		while (by[i] != SIZE_MAX)
			i = (i + 1) & (2 * cap - 1);
		by[i] = k;
	}
	free(ps->byname);
	ps->byname = by;
	ps->capnames = cap;
	ps->capbyname = 2 * cap;
	return true;
}

/* The made-up address of frame (pid, code, line), named on first use. */
static uint64_t name_frame(struct ps_pysyms *ps, pid_t pid, const struct ps_pycode *c, int line)
{
	size_t i, mask;
	struct pyname *nm;
	const char *func = c && c->name ? c->name : "[unknown]";
	const char *file = c && c->file ? c->file : "";
	uint64_t code = c ? c->addr : 0, name_obj = c ? c->name_obj : 0;

	if (ps->over)
		return ps->over; /* past PS_PY_NAME_BYTES: every new frame is this one */
	if (ps->nnames + 1 > ps->capnames && !grow_names(ps))
		return 0;
	mask = ps->capbyname - 1;
	for (i = hash3((uint64_t)pid, code ^ name_obj, (uint64_t)line) & mask;
	     ps->byname[i] != SIZE_MAX; i = (i + 1) & mask) {
		nm = &ps->names[ps->byname[i]];
		if (nm->pid == pid && nm->code == code && nm->name_obj == name_obj &&
		    nm->line == line)
			return PS_PY_BASE + 16 * ps->byname[i] + 8;
	}
	nm = &ps->names[ps->nnames];
	*nm = (struct pyname){.pid = pid, .code = code, .name_obj = name_obj, .line = line};
	if ((c ? asprintf(&nm->func, "py::%s:%s", func, file)
	       : asprintf(&nm->func, "py::[unknown]")) < 0)
		return 0;
	nm->file = c ? nm->func + 4 + strlen(func) + 1 : ""; /* the file part of it */
	ps->byname[i] = ps->nnames;
	ps->name_bytes += strlen(nm->func) + 1 + sizeof(*nm) + 2 * sizeof(size_t);
	if (ps->name_bytes > PS_PY_NAME_BYTES) { /* the last one: a name for the rest */
		free(nm->func);
		if (!(nm->func = strdup("py::[over the symbolizer's budget]")))
			return 0;
		nm->file = "";
		nm->pid = -1;
		ps->over = PS_PY_BASE + 16 * ps->nnames + 8;
	}
	return PS_PY_BASE + 16 * ps->nnames++ + 8;
}

size_t ps_python__bytes(const struct ps_symbols *syms)
{
	const struct ps_pysyms *ps = syms->py;

	if (!ps)
		return 0;
	return ps->code_bytes + ps->capcodes * sizeof(*ps->codes) + ps->name_bytes +
	       ps->capnames * sizeof(*ps->names) + ps->capbyname * sizeof(*ps->byname) +
	       (ps->stacks ? PS_PY_STACKS * sizeof(*ps->stacks) : 0);
}

size_t ps_python__trim(struct ps_symbols *syms)
{
	size_t n =
	    syms->py ? syms->py->code_bytes + syms->py->capcodes * sizeof(*syms->py->codes) : 0;

	if (syms->py)
		free_codes(syms->py); /* read again when asked: names given keep theirs */
	return n;
}

void ps_python__forget(struct ps_symbols *syms, pid_t pid)
{
	struct ps_pysyms *ps = syms->py;

	if (!ps || !ps_pidmap__get(&ps->versions, pid))
		return;			    /* no CPython was named in pid */
	ps_pidmap__del(&ps->versions, pid); /* what was read says nothing of a new program */
	ps_pysplice__forget(syms, pid);
	free_codes(ps);
	for (size_t i = 0; ps->stacks && i < PS_PY_STACKS; i++)
		if (ps->stacks[i].pid == pid)
			ps->stacks[i].n = 0;
}

bool ps_python__is_frame(uint64_t addr)
{
	return addr >= PS_PY_BASE && addr < PS_PY_BASE + 16ull * PS_PY_MAX_FRAMES;
}

static struct ps_pysyms *pysyms(struct ps_symbols *syms)
{
	if (!syms->py && (syms->py = calloc(1, sizeof(*syms->py)))) {
		syms->py->syms = syms;
		ps_pidmap__init(&syms->py->versions, sizeof(const struct ps_py_layout *));
	}
	return syms->py;
}

void ps_python__free(struct ps_symbols *syms)
{
	struct ps_pysyms *ps = syms->py;

	if (!ps)
		return;
	free_codes(ps);
	free(ps->stacks);
	for (size_t i = 0; i < ps->nnames; i++)
		free(ps->names[i].func);
	free(ps->names);
	free(ps->byname);
	ps_pidmap__free(&ps->versions);
	free(ps);
	syms->py = NULL;
}

/* "python3.11", "libpython3.11.so.1.0", "python3.13d": the minor version. */
int ps_python__minor(const char *base)
{
	int minor = -1;

	if (!strncmp(base, "lib", 3))
		base += 3;
	if (sscanf(base, "python3.%d", &minor) != 1)
		return -1;
	return minor;
}

/* The layout of pid's CPython, from the file names of its mappings
 * (minor: the version found, -1 for none); NULL when the table has none. */
static const struct ps_py_layout *layout_of(struct ps_symbols *syms, pid_t pid, int *minor)
{
	struct ps_proc *p = ps_procs__known(syms, pid);
	size_t n;

	*minor = -1;
	for (size_t i = 0; p && i < p->n && *minor < 0; i++)
		if (p->maps[i].dso)
			*minor = ps_python__minor(p->maps[i].dso->base_name);
	ps_python__layouts(&n);
	for (size_t i = 0; *minor >= 0 && i < n; i++)
		if (layouts[i].minor == *minor)
			return &layouts[i];
	return NULL;
}

int ps_python__probe(struct ps_symbols *syms, pid_t pid, struct ps_python *py, char *version,
		     size_t versionlen)
{
	int minor, err;

	if (version && versionlen)
		version[0] = '\0';
	py->layout = layout_of(syms, pid, &minor);
	if (minor < 0)
		return -ENOENT;
	err = ps_syms__lookup(syms, pid, "_PyRuntime", &py->runtime, NULL, 0);
	if (err)
		return err;
	if (version && versionlen)
		snprintf(version, versionlen, "3.%d", minor);
	return py->layout ? 0 : -ENOTSUP;
}

/* The remembered stack slot of (pid, py[0..n)): NULL when n is too deep. */
static struct pystack *stack_slot(struct ps_pysyms *ps, pid_t pid, const struct ps_pyframe *py,
				  size_t n)
{
	uint64_t h = (uint64_t)pid * 0x9e3779b97f4a7c15ull ^ n;

	if (n == 0 || n > PS_PY_STACK_MAX ||
	    (!ps->stacks && !(ps->stacks = calloc(PS_PY_STACKS, sizeof(*ps->stacks)))))
		return NULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ py[i].code ^ py[i].at * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull;
	return &ps->stacks[(h >> 40) % PS_PY_STACKS];
}

/* Each frame named (ps_python__frames, for a stack not remembered). */
static size_t name_frames(struct ps_pysyms *ps, pid_t pid, const struct ps_pyframe *py, size_t n,
			  uint64_t *out, bool *entry)
{
	const struct ps_py_layout *const *lp = ps ? ps_pidmap__get(&ps->versions, pid) : NULL;
	const struct ps_py_layout *l = NULL, **put;
	size_t k = 0;
	int minor;

	if (ps && !lp && (l = layout_of(ps->syms, pid, &minor)) &&
	    (put = ps_pidmap__put(&ps->versions, pid)))
		*put = l, lp = (const struct ps_py_layout *const *)put;
	if (!lp)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t addr = py[i].code & ~7ull;
		struct ps_pycode *c = code_of(ps, pid, *lp, addr, py[i].name);
		uint64_t a = name_frame(ps, pid, c && c->name ? c : NULL,
					c && c->name ? ps_pycode__line(*lp, c, py[i].at) : 0);

		if (!a)
			break;
		entry[k] = py[i].code & PS_PYFRAME_ENTRY;
		out[k++] = a;
	}
	return k;
}

size_t ps_python__frames(struct ps_symbols *syms, pid_t pid, const struct ps_pyframe *py, size_t n,
			 uint64_t *out, bool *entry)
{
	struct ps_pysyms *ps = syms ? pysyms(syms) : NULL;
	struct pystack *st = ps ? stack_slot(ps, pid, py, n) : NULL;
	size_t k;

	if (st && st->n == n && st->pid == pid && !memcmp(st->in, py, n * sizeof(*py))) {
		memcpy(out, st->out, n * sizeof(*out));
		memcpy(entry, st->entry, n * sizeof(*entry));
		return n;
	}
	k = name_frames(ps, pid, py, n, out, entry);
	if (st && k == n) {
		*st = (struct pystack){.pid = pid, .n = (uint32_t)n};
		memcpy(st->in, py, n * sizeof(*py));
		memcpy(st->out, out, n * sizeof(*out));
		memcpy(st->entry, entry, n * sizeof(*entry));
	}
	return k;
}

/* The name and source line of a made-up address (symbols.c asks). */
int ps_python__resolve(struct ps_symbols *syms, uint64_t addr, const char **func,
		       struct ps_srcframe *line)
{
	struct ps_pysyms *ps = syms->py;
	size_t i = (size_t)((addr - PS_PY_BASE) >> 4);

	if (!ps || !ps_python__is_frame(addr) || i >= ps->nnames)
		return -ENOENT;
	*func = ps->names[i].func;
	if (line)
		*line = (struct ps_srcframe){
		    .func = ps->names[i].func,
		    .file = *ps->names[i].file ? ps->names[i].file : NULL,
		    .line = (uint32_t)(ps->names[i].line > 0 ? ps->names[i].line : 0)};
	return 0;
}
