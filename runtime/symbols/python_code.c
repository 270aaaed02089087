/*
 * python_code.c: a CPython code object as another process holds it, read
 * with process_vm_readv: its qualified name and file (str objects, compact
 * ones: the compiler makes no other kind for names), its first line and
 * its line table, and from that table the line a frame is at. 3.10's
 * table is (bytes, line delta) pairs; 3.11's location table is entries of
 * code units, each with a line delta in one of several forms (the format
 * is described in CPython's Objects/locations.md).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "symbols/internal.h"
#include "symbols/pycode.h"
#include "symbols/python.h"

#define PS_PY_MAX_LINETAB 65536
#define PS_PY_NAME_MAX	  256

static bool read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};

	return addr && process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

static uint64_t read_u64(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;

	return read_mem(pid, addr, &v, sizeof(v)) ? v : 0;
}

/* A str object's text as UTF-8 (compact strings only: every name and
 * file name the compiler makes is one); NULL when it cannot be read. */
static char *read_str(pid_t pid, const struct ps_py_layout *l, uint64_t obj)
{
	unsigned char head[80], raw[PS_PY_NAME_MAX * 4];
	uint64_t len;
	unsigned state, kind;
	char *out, *o;

	if (!read_mem(pid, obj, head, (size_t)l->compact_size))
		return NULL;
	memcpy(&len, head + 16, 8);
	memcpy(&state, head + 32, 4);
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4))
		return NULL; /* not compact: a legacy string */
	if (len > PS_PY_NAME_MAX)
		len = PS_PY_NAME_MAX;
	if (!read_mem(pid, obj + (uint64_t)((state >> 6) & 1 ? l->ascii_size : l->compact_size),
		      raw, len * kind) ||
	    !(out = o = malloc(len * 4 + 1)))
		return NULL;
	for (uint64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1	 ? raw[i]
			     : kind == 2 ? ((uint16_t *)raw)[i]
					 : ((uint32_t *)raw)[i];

		if (c < 0x80) {
			*o++ = (char)c;
		} else if (c < 0x800) {
			*o++ = (char)(0xc0 | c >> 6), *o++ = (char)(0x80 | (c & 63));
		} else if (c < 0x10000) {
			*o++ = (char)(0xe0 | c >> 12), *o++ = (char)(0x80 | ((c >> 6) & 63));
			*o++ = (char)(0x80 | (c & 63));
		} else {
			*o++ = (char)(0xf0 | c >> 18), *o++ = (char)(0x80 | ((c >> 12) & 63));
			*o++ = (char)(0x80 | ((c >> 6) & 63)), *o++ = (char)(0x80 | (c & 63));
		}
	}
	*o = '\0';
	return out;
}

/* Whether obj is a code object: its type is named "code". */
static bool is_code(pid_t pid, uint64_t obj)
{
	char name[8] = "";
	uint64_t type = read_u64(pid, obj + 8), tp_name = type ? read_u64(pid, type + 24) : 0;

	return tp_name && read_mem(pid, tp_name, name, 5) && !memcmp(name, "code", 5);
}

void ps_pycode__read(pid_t pid, const struct ps_py_layout *l, struct ps_pycode *c)
{
	uint64_t name =
	    read_u64(pid, c->addr + (uint64_t)(l->co_qualname >= 0 ? l->co_qualname : l->co_name));
	uint64_t file = read_u64(pid, c->addr + (uint64_t)l->co_filename);
	uint64_t tab = read_u64(pid, c->addr + (uint64_t)l->co_linetable), size = 0;
	int32_t first = 0;

	/* a code object freed since the sample, its memory reused, is left unnamed */
	if ((c->name_obj && read_u64(pid, c->addr + (uint64_t)l->co_name) != c->name_obj) ||
	    !is_code(pid, c->addr) || !(c->name = read_str(pid, l, name)))
		return;
	c->file = read_str(pid, l, file);
	if (read_mem(pid, c->addr + (uint64_t)l->co_firstlineno, &first, 4))
		c->firstline = first;
	/* bytes objects: ob_size at 16, the bytes at 32 */
	size = tab ? read_u64(pid, tab + 16) : 0;
	if (size && size <= PS_PY_MAX_LINETAB && (c->linetab = malloc(size))) {
		if (read_mem(pid, tab + 32, c->linetab, size))
			c->linetab_size = size;
	}
	c->code_start = l->minor >= 11 ? c->addr + (uint64_t)l->co_code : 0;
}

/* 3.10's line table: (bytes, line delta) pairs from co_firstlineno, a delta
 * of -128 a range with no line. */
static int line_310(const struct ps_pycode *c, uint64_t byte)
{
	int64_t line = c->firstline; /* 32768 deltas of 127 from INT_MAX: 64 bits */
	uint64_t end = 0;

	for (size_t i = 0; i + 1 < c->linetab_size; i += 2) {
		uint64_t start = end;
		int8_t delta = (int8_t)c->linetab[i + 1];

		end = start + c->linetab[i];
		if (delta != -128)
			line += delta;
		if (byte >= start && byte < end)
			return delta == -128 || line < INT_MIN || line > INT_MAX ? c->firstline
										 : (int)line;
	}
	return c->firstline;
}

static uint64_t varint(const unsigned char *t, size_t n, size_t *i)
{
	uint64_t v = 0;
	unsigned shift = 0;
	unsigned char b;

	do {
		if (*i >= n || shift > 56)
			return v;
		b = t[(*i)++];
		v |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static int64_t svarint(const unsigned char *t, size_t n, size_t *i)
{
	uint64_t u = varint(t, n, i);

	return u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
}

/* 3.11's location table: entries of (code units, kind), each kind with a
 * line delta of its own form. unit: the instruction's index. */
static int line_311(const struct ps_pycode *c, uint64_t unit)
{
	const unsigned char *t = c->linetab;
	size_t n = c->linetab_size, i = 0;
	int64_t line = c->firstline;
	uint64_t at = 0;

	while (i < n) {
		unsigned char b = t[i++];
		unsigned kind = (b >> 3) & 15, len = (b & 7) + 1;
		int64_t delta = 0;

		if (kind == 14) { /* long: line, end line, columns */
			delta = svarint(t, n, &i);
			varint(t, n, &i), varint(t, n, &i), varint(t, n, &i);
		} else if (kind == 13) { /* no columns */
			delta = svarint(t, n, &i);
		} else if (kind >= 10 && kind <= 12) { /* one line, two columns */
			delta = kind - 10;
			i += 2;
		} else if (kind < 10) { /* short form: one byte of columns */
			i += 1;
		}
		/* a hostile table's varints may be anything: a line beyond an
		 * int is no line (and no signed overflow) */
		if (kind != 15 && (delta > INT_MAX || delta < -(int64_t)INT_MAX ||
				   (line += delta) > INT_MAX || line < INT_MIN))
			return c->firstline;
		if (unit >= at && unit < at + len)
			return kind == 15 ? c->firstline : (int)line;
		at += len;
	}
	return c->firstline;
}

static int line_at(const struct ps_py_layout *l, const struct ps_pycode *c, uint64_t at)
{
	if (!c->linetab_size)
		return c->firstline;
	if (l->minor < 11)
		return (int64_t)(int32_t)at < 0 ? c->firstline
						: line_310(c, (uint64_t)(int32_t)at * 2);
	if (at < c->code_start || (at - c->code_start) / 2 > (1u << 24))
		return c->firstline;
	return line_311(c, (at - c->code_start) / 2);
}

/* The last few positions asked of a code object are remembered: a loop's
 * samples come back to the same instructions. */
int ps_pycode__line(const struct ps_py_layout *l, struct ps_pycode *c, uint64_t at)
{
	unsigned i = (unsigned)(at >> 1) % PS_PYCODE_LINES;

	if (c->lines[i].at != at || !c->lines[i].line) {
		c->lines[i].at = at;
		c->lines[i].line = line_at(l, c, at);
	}
	return c->lines[i].line;
}
