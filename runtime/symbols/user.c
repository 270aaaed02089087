/*
 * user.c: from a link-time address in an ELF file to "func+0x1a". When an
 * address in a file is first named (ps_dso__open_symbols; unwinding
 * through a file needs only its headers, symbols/dso.c), libdwfl picks
 * its best symbol table (its own symtab, its debuginfo's, found offline
 * by build id under /usr/lib/debug, never through debuginfod, else
 * dynsym) and the code symbols are copied into a sorted array, because
 * libdwfl's own address lookup scans every symbol on every call (~100 us
 * in libc). A name is demangled once, when it is first shown, and every
 * answer, a miss too, goes into the file's address cache with its text in
 * the file's arena.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#include "symbols/internal.h"

static const char ps_no_symbol[] = "";

static int fsym_cmp(const void *a, const void *b)
{
	const struct ps_fsym *x = a, *y = b;
	size_t lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	return lx > ly ? -1 : lx < ly; /* the longest name last of all */
}

/* Which of several names at one address to show, lowest first, as perf
 * chooses: a sized symbol, then a strong one over a weak one, a global one
 * over a local one, then fewer leading underscores (so the vDSO shows
 * __vdso_clock_gettime, not its weak alias clock_gettime). */
static uint32_t rank_of(const GElf_Sym *sym, const char *name)
{
	int bind = GELF_ST_BIND(sym->st_info);
	uint32_t under = 0;

	while (name[under] == '_' && under < 3)
		under++;
	return (sym->st_size ? 0 : 64) + (bind == STB_WEAK ? 32 : 0) +
	       (bind == STB_LOCAL ? 16 : 0) + under;
}

/* Own copies of the names, so that the Dwfl can go, without the symbol
 * version a symtab may append ("__libc_start_main@@GLIBC_2.34"); "@plt"
 * stays. */
static int copy_names(struct ps_dso *d, size_t total)
{
	char *p = malloc(total ? total : 1);

	if (!p)
		return -ENOMEM;
	d->names = p;
	d->names_size = total;
	for (size_t i = 0; i < d->nsyms; i++) {
		size_t len = strcspn(d->syms[i].name, "@");

		if (!strcmp(d->syms[i].name + len, "@plt"))
			len += 4; /* a PLT stub's name (symbols/plt.c), no version */

		memcpy(p, d->syms[i].name, len);
		p[len] = '\0';
		d->syms[i].name = p;
		p += len + 1;
	}
	return 0;
}

/* Whether section shndx of elf holds code: an untyped symbol there is an
 * assembly entry point (_start), elsewhere a data label. */
static bool in_code(Elf *elf, GElf_Word shndx)
{
	GElf_Shdr mem, *sh = elf ? gelf_getshdr(elf_getscn(elf, shndx), &mem) : NULL;

	return sh && (sh->sh_flags & SHF_EXECINSTR);
}

static int read_syms(struct ps_dso *d, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	size_t k = 0, total = 0;
	struct ps_plt_syms plt;
	int err;

	if ((err = ps_plt__read(mod, &plt)) < 0)
		return err;
	if (n < 1)
		n = 1;
	if (n + plt.n <= 1)
		return 0; /* no symbols: every address shows as file+offset */
	d->syms = malloc(((size_t)n + plt.n) * sizeof(*d->syms));
	if (!d->syms) {
		ps_plt__free(&plt);
		return -ENOMEM;
	}
	for (size_t i = 0; i < plt.n; i++)
		d->syms[k++] = plt.v[i];
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf = NULL;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !*name || sym.st_shndx == SHN_UNDEF || (int)shndx == -1)
			continue;
		/* Untyped symbols count in code sections only, as perf counts
		 * them, and never the $x/$d mapping markers of ARM. */
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    !(type == STT_NOTYPE && name[0] != '$' && in_code(elf, shndx)))
			continue;
		d->syms[k++] = (struct ps_fsym){
		    .addr = addr,
		    .size = sym.st_size < UINT32_MAX ? (uint32_t)sym.st_size : UINT32_MAX,
		    .name = name,
		    .rank = rank_of(&sym, name)};
	}
	qsort(d->syms, k, sizeof(*d->syms), fsym_cmp);
	/* One entry per address, the preferred name with the largest size. */
	d->nsyms = 0;
	for (size_t i = 0; i < k; i++) {
		struct ps_fsym *last = d->nsyms ? &d->syms[d->nsyms - 1] : NULL;

		if (last && last->addr == d->syms[i].addr) {
			if (d->syms[i].size > last->size)
				last->size = d->syms[i].size;
			continue;
		}
		d->syms[d->nsyms++] = d->syms[i];
		total += strlen(d->syms[i].name) + 1;
	}
	err = copy_names(d, total);
	ps_plt__free(&plt);
	if (d->nsyms < k) { /* duplicates went: give their room back */
		struct ps_fsym *v = realloc(d->syms, (d->nsyms ? d->nsyms : 1) * sizeof(*v));

		if (v)
			d->syms = v;
	}
	/* the names are copied: the symbol and hash tables' pages (10 MB of
	 * libLLVM's) go back; a later read of the image (DWARF, CFI) faults
	 * in what it needs from the page cache */
	if (!err)
		ps_dso__drop_pages(d, false);
	return err;
}

static int read_symbols(struct ps_dso *d)
{
	Dwfl *dwfl = ps_dwfl__begin();
	Dwfl_Module *mod;
	int err;

	if (!dwfl)
		return -ENOMEM;
	dwfl_report_begin(dwfl);
	mod = ps_dso__report(d, dwfl, 0);
	dwfl_report_end(dwfl, NULL, NULL);
	err = mod ? read_syms(d, mod) : -ENOENT;
	if (mod && d->bare) {
		const char *debugfile = NULL;

		/* reading the symbols looked for a debug file beside it */
		dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
		d->bare = !debugfile;
	}
	dwfl_end(dwfl);
	if (d->bare && !d->debug_path)
		ps_debuginfod__want(d->owner, d);
	return err;
}

static void free_symbols(struct ps_dso *d)
{
	free(d->syms);
	free(d->names);
	d->syms = NULL;
	d->names = NULL;
	d->nsyms = d->names_size = 0;
}

/* At the session's end (the reports), a stripped file waits for its debug
 * file and reads its symbols again with it. */
static int read_symbols_settled(struct ps_dso *d)
{
	int err = read_symbols(d);
	const char *path;

	if (err || !d->bare || d->debug_path || !d->owner->settling ||
	    !(path = ps_debuginfod__wait(d->owner, d)) || !(d->debug_path = strdup(path)))
		return err;
	free_symbols(d);
	return read_symbols(d);
}

int ps_dso__open_symbols(struct ps_dso *dso, struct ps_dso **real)
{
	int err = ps_dso__open(dso, real);

	if (err || (*real)->syms_read)
		return err;
	(*real)->syms_read = true;
	/* a file without symbols still has offsets: only memory is fatal,
	 * and the next name asked tries again */
	if (read_symbols_settled(*real) == -ENOMEM) {
		free_symbols(*real);
		(*real)->syms_read = false;
		return -ENOMEM;
	}
	return 0;
}

/* The symbol covering a link-time address, or NULL. */
static struct ps_fsym *find_sym(struct ps_dso *d, uint64_t addr)
{
	size_t lo = 0, hi = d->nsyms;
	struct ps_fsym *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &d->syms[lo - 1];
	/* A sized symbol ends where it says (padding after it is nobody's); an
	 * unsized one runs to the next symbol. */
	if (s->size ? addr - s->addr >= s->size : lo == d->nsyms)
		return NULL;
	return s;
}

const char *ps_dso__show(struct ps_dso *d, const char *name)
{
	char *readable, *kept;

	if (d->owner->raw_names || name[0] != '_')
		return name;
	readable = ps_demangle(name);
	if (!readable)
		return name;
	kept = ps_arena__strdup(&d->arena, readable);
	free(readable);
	return kept ? kept : name;
}

const char *ps_dso__raw_name(struct ps_dso *dso, uint64_t addr)
{
	struct ps_fsym *sym;
	struct ps_dso *d;

	if (ps_dso__open_symbols(dso, &d) < 0 || !(sym = find_sym(d, addr)))
		return NULL;
	return sym->name;
}

int ps_dso__symbol_start(struct ps_dso *dso, uint64_t addr, uint64_t *start)
{
	struct ps_fsym *sym;
	struct ps_dso *d;

	if (ps_dso__open_symbols(dso, &d) < 0 || !(sym = find_sym(d, addr)))
		return -ENOENT;
	*start = sym->addr;
	return 0;
}

int ps_dso__lookup(struct ps_dso *dso, uint64_t addr, const char **str)
{
	struct ps_fsym *sym;
	struct ps_dso *d;
	const void *hit;
	size_t size;
	char *text;

	if (ps_dso__open_symbols(dso, &d) < 0) {
		*str = ps_no_symbol;
		return -ENOENT;
	}
	if (ps_addr_cache__get(&d->cache, addr, &hit)) {
		*str = hit;
		return *str == ps_no_symbol ? -ENOENT : 0;
	}
	sym = find_sym(d, addr);
	if (!sym) {
		ps_addr_cache__put(&d->cache, addr, ps_no_symbol);
		*str = ps_no_symbol;
		return -ENOENT;
	}
	if (!sym->shown)
		sym->shown = ps_dso__show(d, sym->name);
	size = strlen(sym->shown) + sizeof("+0x") + 16;
	text = ps_arena__alloc(&d->arena, size);
	if (!text)
		return -ENOMEM;
	snprintf(text, size, "%s+0x%" PRIx64, sym->shown, addr - sym->addr);
	*str = text;
	ps_addr_cache__put(&d->cache, addr, text);
	return 0;
}
