/*
 * lookup.c: from a symbol name to an address, for breakpoints
 * written mem:SYMBOL. The address -> name side (symbols/user.c) is on the
 * per-sample path and keeps only code symbols, sorted by address; this side
 * is asked a few times per session and needs data symbols too, so each file
 * gets a second table, built on the first lookup in it and kept with its
 * ps_dso: the STT_OBJECT and STT_FUNC symbols of the best symbol table
 * libdwfl finds (the file's symtab, its debuginfo's, else dynsym), sorted by
 * name, global before weak before local where a name repeats. A process's
 * address is the symbol's link-time address plus the bias of the file's
 * mapping, which ld.so makes the same for every segment, so the code
 * mapping the symbolizer already knows places a variable in .data or .bss
 * too. A command not yet exec'd has no mappings: only an ET_EXEC file's
 * link-time addresses are its runtime ones.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "base/suggest.h"
#include "symbols/internal.h"

/* Files looked at per process; a process maps far fewer ELF files. */
#define PS_LOOKUP_MAX_FILES 4096

struct ps_name_sym {
	const char *name; /* in ps_dso_names.blob, without any @VERSION */
	uint64_t addr;	  /* module (link-time) address */
	uint32_t rank;	  /* 0 global, 1 weak, 2 local */
};

struct ps_dso_names {
	struct ps_name_sym *v; /* sorted by name, then rank */
	size_t n;
	char *blob;
	int etype; /* e_type: ET_EXEC, ET_DYN, ... */
};

void ps_dso_names__free(struct ps_dso_names *t)
{
	if (!t)
		return;
	free(t->v);
	free(t->blob);
	free(t);
}

static int name_cmp(const void *a, const void *b)
{
	const struct ps_name_sym *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int read_names(struct ps_dso_names *t, Dwfl_Module *mod)
{
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	int n = dwfl_module_getsymtab(mod);
	size_t total = 0;
	char *p;

	if (!elf || !gelf_getehdr(elf, &eh))
		return -ENOENT;
	t->etype = eh.e_type;
	if (n <= 1)
		return 0;
	t->v = malloc((size_t)n * sizeof(*t->v));
	if (!t->v)
		return -ENOMEM;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);

		if (!name || !*name || sym.st_shndx == SHN_UNDEF || (int)shndx == -1 ||
		    (type != STT_OBJECT && type != STT_FUNC))
			continue;
		t->v[t->n++] = (struct ps_name_sym){
		    .name = name,
		    .addr = addr,
		    .rank = bind == STB_GLOBAL ? 0
			    : bind == STB_WEAK ? 1
					       : 2,
		};
		total += strcspn(name, "@") + 1;
	}
	/* Own copies: the Dwfl, and the file, go when this returns. */
	t->blob = p = malloc(total ? total : 1);
	if (!p)
		return -ENOMEM;
	/* ld writes a copy-relocated variable into the executable's symtab
	 * as "environ@GLIBC_2.2.5": the name written in a breakpoint has no
	 * version, and the copy is the one the program uses. */
	for (size_t i = 0; i < t->n; i++) {
		size_t len = strcspn(t->v[i].name, "@");

		memcpy(p, t->v[i].name, len);
		p[len] = '\0';
		t->v[i].name = p;
		p += len + 1;
	}
	qsort(t->v, t->n, sizeof(*t->v), name_cmp);
	return 0;
}

/* The file's name table, read on first use; NULL when the file does not
 * read as ELF (asked again next time: lookups are rare) or on ENOMEM. */
static struct ps_dso_names *dso_names(struct ps_dso *dso)
{
	struct ps_dso_names **slot = ps_dso__byname(dso), *t;
	Dwfl_Module *mod = NULL;
	struct ps_dso *real;
	Dwfl *dwfl;
	int err = -ENOENT;

	if (*slot)
		return *slot;
	if (ps_dso__open(dso, &real) < 0 || !(dwfl = ps_dwfl__begin()))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t) {
		dwfl_report_begin(dwfl);
		mod = ps_dso__report(real, dwfl, 0);
		dwfl_report_end(dwfl, NULL, NULL);
		err = mod ? read_names(t, mod) : -ENOENT;
	}
	dwfl_end(dwfl);
	if (err) {
		ps_dso_names__free(t);
		return NULL;
	}
	return *slot = t;
}

/* The preferred entry named name, or NULL. */
static const struct ps_name_sym *find_name(const struct ps_dso_names *t, const char *name)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && !strcmp(t->v[lo].name, name) ? &t->v[lo] : NULL;
}

int ps_dso__address_of(struct ps_dso *dso, const char *name, uint64_t *addr)
{
	const struct ps_dso_names *t = dso_names(dso);
	const struct ps_name_sym *sym = t ? find_name(t, name) : NULL;

	if (!sym)
		return -ENOENT;
	*addr = sym->addr;
	return 0;
}

static void suggest(const struct ps_dso_names *t, struct ps_suggest *s)
{
	for (size_t i = 0; i < t->n; i++)
		ps_suggest__try(s, t->v[i].name);
}

static void set_near(char *near, size_t nearlen, const struct ps_suggest *s)
{
	if (near && nearlen)
		snprintf(near, nearlen, "%s", s->best);
}

int ps_syms__lookup(struct ps_symbols *syms, pid_t pid, const char *name, uint64_t *addr,
		    char *near, size_t nearlen)
{
	struct ps_dso **dsos = malloc(PS_LOOKUP_MAX_FILES * sizeof(*dsos));
	int64_t *bias = malloc(PS_LOOKUP_MAX_FILES * sizeof(*bias));
	struct ps_suggest s;
	int n, err = -ENOENT;

	if (near && nearlen)
		near[0] = '\0';
	if (!dsos || !bias) {
		err = -ENOMEM;
		goto cleanup;
	}
	n = ps_syms__proc_files(syms, pid, dsos, bias, PS_LOOKUP_MAX_FILES);
	if (n < 0) {
		err = n;
		goto cleanup;
	}
	/* In address order: the executable (mapped low) before its libraries. */
	for (int i = 0; i < n; i++) {
		const struct ps_dso_names *t = dso_names(dsos[i]);
		const struct ps_name_sym *sym = t ? find_name(t, name) : NULL;

		if (sym) {
			*addr = sym->addr + (uint64_t)bias[i];
			err = 0;
			goto cleanup;
		}
	}
	ps_suggest__init(&s, name, strlen(name));
	for (int i = 0; i < n; i++)
		if (*ps_dso__byname(dsos[i]))
			suggest(*ps_dso__byname(dsos[i]), &s);
	set_near(near, nearlen, &s);
cleanup:
	free(dsos);
	free(bias);
	return err;
}

int ps_syms__file_symbol(struct ps_symbols *syms, const char *path, const char *name,
			 uint64_t *addr, int *etype, char *near, size_t nearlen)
{
	struct ps_dso *dso = ps_syms__file(syms, path);
	const struct ps_dso_names *t;
	const struct ps_name_sym *sym;
	struct ps_suggest s;

	if (near && nearlen)
		near[0] = '\0';
	if (!dso)
		return -errno;
	t = dso_names(dso);
	if (!t)
		return -ENOEXEC; /* a script, say: its interpreter is what runs */
	if (etype)
		*etype = t->etype;
	sym = find_name(t, name);
	if (sym) {
		*addr = sym->addr;
		return 0;
	}
	ps_suggest__init(&s, name, strlen(name));
	suggest(t, &s);
	set_near(near, nearlen, &s);
	return -ENOENT;
}

int ps_syms__lookup_exec(struct ps_symbols *syms, const char *path, const char *name,
			 uint64_t *addr, char *near, size_t nearlen)
{
	int etype = 0, err = ps_syms__file_symbol(syms, path, name, addr, &etype, near, nearlen);

	/* A name that is not there is that, PIE or not; only a name that is
	 * there has an address we cannot know before exec. */
	if (!err && etype != ET_EXEC)
		return -EADDRNOTAVAIL;
	return err;
}
