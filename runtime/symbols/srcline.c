/*
 * srcline.c: source lines and inline frames from DWARF. A file's DWARF
 * (its own .debug_* sections, or its debuginfo found offline by build id)
 * is opened through libdwfl the first time a line is asked of it, and kept:
 * libdw parses each compilation unit's line table and DIE tree once. At an
 * address the scopes that contain it (dwarf_getscopes) are walked from the
 * innermost out: every DW_TAG_inlined_subroutine is a frame, placed at the
 * line of the address for the innermost and at the call site
 * (DW_AT_call_file, DW_AT_call_line) of the frame inside it for the others,
 * until the DW_TAG_subprogram that holds them. Functions are named by their
 * linkage name, demangled, where DWARF has one (C++), else by DW_AT_name,
 * both through the abstract origin of an inlined copy. The frames of an
 * address are computed once per file and address and kept in the file's
 * arena; a file without DWARF answers 0 at the cost of a cache probe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "base/array.h"
#include "symbols/internal.h"

/* Deepest inline nesting kept per address. */
#define PS_MAX_INLINE 64

/* What libdw holds for a unit once its line table was read and its DIE
 * tree walked, which it frees only with the whole file: a line table row
 * costs about 56 bytes of RSS (Dwarf_Line, the file table, libdwfl's index
 * of them: 16 MB for the 291211 rows of Debian's libc, elfutils 0.188), a
 * unit's abbreviations about 450. */
#define PS_LIBDW_ROW_BYTES  56
#define PS_LIBDW_UNIT_BYTES 512

struct ps_dwarf {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	bool none; /* no DWARF for this file */
	struct ps_addr_cache cache;
	struct ps_addr_cache shown; /* a linkage name's address -> its demangled form */
	struct ps_addr_cache units; /* a unit's DIE offset -> its struct cu_index */
	struct ps_arena arena;
	struct ps_cu_ranges *cus; /* units by their ranges, when the file has no aranges */
	bool no_aranges;	  /* libdw found no unit for an address once */
	size_t inflated;	  /* bytes libdw decompressed its sections into */
	size_t indexed;		  /* bytes of the units' struct cu_index */
	size_t parsed;		  /* bytes libdw holds for the units it parsed */
	const void *guarded;	  /* the debug file's bytes, as libelf mapped them */
};

struct frames {
	int n;
	struct ps_srcframe f[];
};

struct cu_index;
static void cu_index_free(struct cu_index *x);

void ps_dwarf__free(struct ps_dwarf *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->units.nslots; i++)
		cu_index_free((struct cu_index *)ps_addr_cache__value(&d->units, i));
	ps_addr_cache__free(&d->units);
	ps_image__unguard(d->guarded);
	if (d->dwfl)
		dwfl_end(d->dwfl);
	ps_addr_cache__free(&d->cache);
	ps_addr_cache__free(&d->shown);
	ps_arena__free(&d->arena);
	ps_cu_ranges__free(d->cus);
	free(d);
}

size_t ps_dwarf__bytes(const struct ps_dwarf *d)
{
	if (!d)
		return 0;
	return sizeof(*d) + d->inflated + d->indexed + d->parsed + d->arena.bytes +
	       ps_addr_cache__bytes(&d->cache) + ps_addr_cache__bytes(&d->shown) +
	       ps_addr_cache__bytes(&d->units) + ps_cu_ranges__bytes(d->cus);
}

/* A debug file's compressed sections (a distribution's .debug files have
 * them all so): libdw decompresses each into memory of its own as it opens
 * them, 11 MiB for libc's, which the budget must count. The compressed
 * bytes, read once through libdwfl's private mapping of the file, are not
 * needed again: their pages go back (those libelf wrote stay). */
static size_t inflated(Dwarf *dw)
{
	Elf *elf = dw ? dwarf_getelf(dw) : NULL;
	Elf_Scn *scn = NULL;
	size_t n = 0, raw_size = 0;
	/* libdwfl maps the files it opens: no read here */
	char *raw = elf && elf_kind(elf) == ELF_K_ELF ? elf_rawfile(elf, &raw_size) : NULL;
	GElf_Shdr sh;

	/* a section libdw decompressed has its data outside the file's bytes */
	while (raw && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *data = gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
					 (sh.sh_flags & SHF_ALLOC) == 0
				     ? elf_getdata(scn, NULL)
				     : NULL;

		if (data && data->d_buf &&
		    ((char *)data->d_buf < raw || (char *)data->d_buf >= raw + raw_size))
			n += data->d_size;
	}
	if (n)
		ps_pages__drop(raw, raw_size, NULL);
	return n;
}

static struct ps_dwarf *dwarf_of(struct ps_dso *real)
{
	struct ps_dwarf *d = real->dwarf;
	Dwarf_Addr bias;

	if (d)
		return d;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->dwfl = ps_dwfl__begin_dwarf();
	if (d->dwfl) {
		dwfl_report_begin(d->dwfl);
		d->mod = ps_dso__report(real, d->dwfl, 0);
		dwfl_report_end(d->dwfl, NULL, NULL);
	}
	d->none = !d->mod || !dwfl_module_getdwarf(d->mod, &bias);
	if (!d->none) {
		Dwarf *dw = dwfl_module_getdwarf(d->mod, &bias);
		size_t n = 0;
		const char *raw = elf_rawfile(dwarf_getelf(dw), &n);

		d->inflated = inflated(dw);
		/* a debug file apart from the image (symbols/image.c guards
		 * that): read in place, and its owner may truncate it too */
		if (raw && (void *)raw != real->image && ps_image__guard(raw, n) == 0)
			d->guarded = raw;
	}
	real->owner->loads++;
	return real->dwarf = d;
}

/* The name of a function's DIE (a subprogram or an inlined copy of one).
 * libdw's strings stay put, so a linkage name is demangled once, however
 * many addresses its function has. */
static const char *die_name(struct ps_dso *real, struct ps_dwarf *d, Dwarf_Die *die)
{
	Dwarf_Attribute mem, *a = dwarf_attr_integrate(die, DW_AT_linkage_name, &mem);
	const char *name;
	const void *shown;

	if (!a)
		a = dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &mem);
	name = a ? dwarf_formstring(a) : NULL;
	if (name) {
		if (ps_addr_cache__get(&d->shown, (uintptr_t)name, &shown))
			return shown;
		shown = ps_dso__show(real, name);
		ps_addr_cache__put(&d->shown, (uintptr_t)name, shown);
		return shown;
	}
	a = dwarf_attr_integrate(die, DW_AT_name, &mem);
	return a ? dwarf_formstring(a) : NULL;
}

/* Where an inlined subroutine was called from: its call file and line. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *inl, const char **file, uint32_t *line)
{
	Dwarf_Attribute mem;
	Dwarf_Files *files;
	Dwarf_Word idx, ln;
	size_t nfiles;

	*file = NULL;
	*line = 0;
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &mem), &idx) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && idx < nfiles)
		*file = dwarf_filesrc(files, idx, NULL, NULL);
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &mem), &ln) == 0)
		*line = (uint32_t)ln;
}

/* ---- a per-CU index of where each function and inlined copy lies ----
 * dwarf_getscopes walks a compilation unit's whole DIE tree on every
 * call (tens of microseconds in a large unit); the tree is walked once per
 * unit instead, into its subprograms and inlined subroutines (nodes, with
 * their parent) and their address ranges, sorted by start. The innermost
 * node holding an address is then found by a binary search for the last
 * range starting at or below it, and, when that range ends before the
 * address, a walk up its ancestors: DWARF nests an inlined copy's ranges
 * inside its caller's, so the first ancestor holding the address is the
 * innermost. */

struct node {
	Dwarf_Die die;
	int32_t parent;		  /* index, -1 for a top-level function */
	uint32_t range0, nranges; /* its ranges, in cu_index.own */
	bool inlined;		  /* DW_TAG_inlined_subroutine */
};

struct range {
	uint64_t lo, hi;
	uint32_t node, depth;
};

struct cu_index {
	struct node *nodes;
	size_t nnodes, capnodes;
	struct range *own; /* ranges grouped by node */
	struct range *sorted;
	size_t nranges, capranges;
};

static void cu_index_free(struct cu_index *x)
{
	if (!x)
		return;
	free(x->nodes);
	free(x->own);
	free(x->sorted);
	free(x);
}

static int add_node(struct cu_index *x, Dwarf_Die *die, int32_t parent, uint32_t depth)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	struct node *n;

	if (ps_array__reserve(&x->nodes, &x->capnodes, x->nnodes + 1, sizeof(*x->nodes)))
		return -ENOMEM;
	n = &x->nodes[x->nnodes];
	*n = (struct node){.die = *die,
			   .parent = parent,
			   .range0 = (uint32_t)x->nranges,
			   .inlined = dwarf_tag(die) == DW_TAG_inlined_subroutine};
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (ps_array__reserve(&x->own, &x->capranges, x->nranges + 1, sizeof(*x->own)))
			return -ENOMEM;
		x->own[x->nranges++] =
		    (struct range){.lo = lo, .hi = hi, .node = (uint32_t)x->nnodes, .depth = depth};
		n->nranges++;
	}
	return (int)x->nnodes++;
}

/* Tags whose children may hold code. */
static bool may_hold_code(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_module:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_partial_unit:
	case DW_TAG_compile_unit:
		return true;
	default:
		return false;
	}
}

static int walk(struct cu_index *x, Dwarf_Die *parent_die, int32_t parent, uint32_t depth)
{
	Dwarf_Die child, imported;
	Dwarf_Attribute mem;
	int err = 0;

	if (depth > 256 || dwarf_child(parent_die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child), me = parent;

		if (tag == DW_TAG_imported_unit) {
			/* dwz moved shared DIEs to a partial unit */
			if (dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &mem), &imported))
				err = walk(x, &imported, parent, depth + 1);
			continue;
		}
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			me = add_node(x, &child, parent, depth);
			if (me < 0)
				return me;
		}
		if (may_hold_code(tag))
			err = walk(x, &child, me, depth + 1);
	} while (!err && dwarf_siblingof(&child, &child) == 0);
	return err;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static struct cu_index *cu_index_build(Dwarf_Die *cu)
{
	struct cu_index *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	if (walk(x, cu, -1, 0) < 0 ||
	    !(x->sorted = malloc((x->nranges ? x->nranges : 1) * sizeof(*x->sorted)))) {
		cu_index_free(x);
		return NULL;
	}
	if (x->nranges) { /* x->own is NULL without ranges: memcpy(dst, NULL, 0) is undefined */
		memcpy(x->sorted, x->own, x->nranges * sizeof(*x->sorted));
		qsort(x->sorted, x->nranges, sizeof(*x->sorted), range_cmp);
	}
	return x;
}

static bool node_has(const struct cu_index *x, const struct node *n, uint64_t pc)
{
	for (uint32_t i = 0; i < n->nranges; i++)
		if (pc >= x->own[n->range0 + i].lo && pc < x->own[n->range0 + i].hi)
			return true;
	return false;
}

/* The innermost node holding pc, or -1. */
static int32_t innermost(const struct cu_index *x, uint64_t pc)
{
	size_t lo = 0, hi = x->nranges;
	int32_t n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->sorted[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	for (n = (int32_t)x->sorted[lo - 1].node; n >= 0; n = x->nodes[n].parent)
		if (node_has(x, &x->nodes[n], pc))
			return n;
	return -1;
}

/* The index of the unit holding cu, built on first use. */
static struct cu_index *cu_index_of(struct ps_dso *real, struct ps_dwarf *d, Dwarf_Die *cu)
{
	uint64_t key = dwarf_dieoffset(cu);
	const void *hit;
	struct cu_index *x;

	if (ps_addr_cache__get(&d->units, key, &hit))
		return (struct cu_index *)hit;
	x = cu_index_build(cu);
	if (x) {
		Dwarf_Lines *lines;
		size_t nlines = 0;

		ps_addr_cache__put(&d->units, key, x);
		if (!ps_addr_cache__get(&d->units, key, &hit)) { /* not kept: do not leak */
			cu_index_free(x);
			return NULL;
		}
		/* a big unit's tree is hundreds of KB: the budget counts it, and
		 * a trim is due as after a file's load */
		d->indexed += sizeof(*x) + x->capnodes * sizeof(*x->nodes) +
			      (x->capranges + x->nranges) * sizeof(*x->sorted);
		/* the lookup read the unit's line table already: this only counts */
		if (dwarf_getsrclines(cu, &lines, &nlines) != 0)
			nlines = 0;
		d->parsed += PS_LIBDW_UNIT_BYTES + nlines * PS_LIBDW_ROW_BYTES;
		real->owner->loads++;
	}
	return x;
}

/* The unit holding addr, and its line, when libdw finds none (no
 * .debug_aranges): through the units' own ranges. */
static Dwarf_Die *unit_by_ranges(struct ps_dwarf *d, uint64_t addr, Dwarf_Die *mem,
				 Dwarf_Addr *bias, const char **file, int *lineno)
{
	Dwarf *dbg = dwfl_module_getdwarf(d->mod, bias);
	Dwarf_Line *l;

	if (!dbg || !ps_cu_ranges__find(&d->cus, dbg, addr - *bias, mem))
		return NULL;
	d->no_aranges = true;
	if ((l = dwarf_getsrc_die(mem, addr - *bias))) {
		*file = dwarf_linesrc(l, NULL, NULL);
		dwarf_lineno(l, lineno);
	}
	return mem;
}

/* Compute the frames at addr into f (room for PS_MAX_INLINE + 1). */
static int compute(struct ps_dso *real, struct ps_dwarf *d, uint64_t addr, struct ps_srcframe *f)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die mem, *cu = d->no_aranges ? NULL : dwfl_module_addrdie(d->mod, addr, &bias);
	Dwfl_Line *l = cu ? dwfl_module_getsrc(d->mod, addr) : NULL;
	const char *file = NULL;
	int lineno = 0, n = 0;
	struct cu_index *x;
	int32_t k;
	uint32_t line;

	if (l)
		file = dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL);
	else if (!cu)
		cu = unit_by_ranges(d, addr, &mem, &bias, &file, &lineno);
	x = cu ? cu_index_of(real, d, cu) : NULL;
	k = x ? innermost(x, addr - bias) : -1;
	line = lineno > 0 ? (uint32_t)lineno : 0;
	for (; k >= 0 && n <= PS_MAX_INLINE; k = x->nodes[k].parent) {
		struct node *nd = &x->nodes[k];

		f[n++] = (struct ps_srcframe){.func = die_name(real, d, &nd->die),
					      .file = file,
					      .line = line,
					      .inlined = nd->inlined};
		if (!nd->inlined)
			break;
		call_site(cu, &nd->die, &file, &line);
	}
	if (n == 0 && file) /* a line without a function DIE (assembly) */
		f[n++] = (struct ps_srcframe){.file = file, .line = line};
	return n;
}

int ps_dso__srcframes(struct ps_dso *dso, uint64_t addr, const struct ps_srcframe **frames)
{
	struct ps_srcframe f[PS_MAX_INLINE + 1];
	struct ps_dso *real;
	struct ps_dwarf *d;
	struct frames *kept;
	const void *hit;
	int n;

	*frames = NULL;
	/* with its symbols: reading them is what asks debuginfod for a
	 * stripped file's debug file, where its lines are */
	if (dso->owner->no_lines || ps_dso__open_symbols(dso, &real) < 0)
		return 0;
	d = dwarf_of(real);
	if (!d)
		return -ENOMEM;
	if (d->none)
		return 0;
	if (ps_addr_cache__get(&d->cache, addr, &hit)) {
		kept = (struct frames *)hit;
		*frames = kept ? kept->f : NULL;
		return kept ? kept->n : 0;
	}
	n = compute(real, d, addr, f);
	kept = NULL;
	if (n > 0) {
		kept = ps_arena__alloc(&d->arena, sizeof(*kept) + (size_t)n * sizeof(f[0]));
		if (!kept)
			return -ENOMEM;
		kept->n = n;
		memcpy(kept->f, f, (size_t)n * sizeof(f[0]));
		*frames = kept->f;
	}
	ps_addr_cache__put(&d->cache, addr, kept);
	return n;
}
