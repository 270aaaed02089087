/*
 * user.c: the ELF files behind user-space mappings. Each file is
 * known once per ps_symbols by its device, inode, mtime and size, however
 * many processes map it and at whatever address, so its PT_LOAD table, its
 * symbols and its result cache are shared by all of them, and keyed by
 * link-time address, which ASLR does not change. A file is read only when an
 * address in it is first resolved (a system-wide session sees far more
 * mappings than it ever samples): libdwfl picks its best symbol table (its
 * own symtab, its debuginfo's, found offline by build-id under
 * /usr/lib/debug, never through debuginfod, else dynsym), the code symbols
 * are copied into a sorted array, and the file is closed again. A profile
 * resolves the same few hot addresses over and over, so every answer (misses
 * too) is kept in an open-addressing table per file with its text in an
 * arena; past PS_DSO_CACHE_MAX entries answers are computed but not kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "base/array.h"
#include "symbols/internal.h"

#define PS_DSO_CACHE_MAX (1u << 20)
#define PS_ARENA_BLOCK	 65536

struct ps_load {
	uint64_t offset, filesz; /* p_offset, p_filesz */
	int64_t adj;		 /* p_vaddr - p_offset + libdwfl bias */
};

struct ps_fsym {
	uint64_t addr, size; /* module addresses; size 0: up to the next symbol */
	const char *name;    /* in ps_dso.names */
	uint32_t rank;	     /* among names at one address, lower is preferred */
};

struct ps_cache_slot {
	uint64_t key;	 /* module address + 1; 0 marks an empty slot */
	const char *str; /* in the arena, or ps_no_symbol */
};

struct ps_arena_block {
	struct ps_arena_block *next;
	size_t used;
	char data[];
};

struct ps_dso {
	char *path;	 /* as the process named it */
	char *open_path; /* where we can open it */
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;

	bool opened; /* tried to open */
	bool usable; /* opened as ELF with loads: offsets map to addresses */
	struct ps_load *loads;
	size_t nloads;
	struct ps_fsym *syms; /* sorted by address, one per address */
	size_t nsyms;
	char *names;		     /* what syms[].name point into */
	struct ps_dso_names *byname; /* name -> address (symbols/lookup.c), NULL until asked */

	struct ps_cache_slot *slots;
	size_t nslots, nused; /* nslots is 0 or a power of two */
	struct ps_arena_block *arena;
};

static const char ps_no_symbol[] = "";

static char *debuginfo_path; /* NULL: libdwfl's default search path */

/* Debuginfo only from the local disk, by build-id (/usr/lib/debug/.build-id):
 * dwfl_standard_find_debuginfo would also ask debuginfod when
 * DEBUGINFOD_URLS is set, and a profiler must not download while it runs. */
static const Dwfl_Callbacks ps_dwfl_callbacks = {
    /* Never called: every module is reported with an open fd. */
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_build_id_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

static bool same_file(const struct ps_dso *d, const struct stat *st)
{
	return d->dev == st->st_dev && d->ino == st->st_ino && d->size == st->st_size &&
	       d->mtime.tv_sec == st->st_mtim.tv_sec && d->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static struct ps_dso *dsos_add(struct ps_dsos *dsos, const char *path, const char *open_path)
{
	struct ps_dso *d;

	if (ps_array__reserve(&dsos->v, &dsos->cap, dsos->n + 1, sizeof(*dsos->v)))
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->path = strdup(path);
	d->open_path = open_path ? strdup(open_path) : NULL;
	if (!d->path || (open_path && !d->open_path)) {
		free(d->path);
		free(d->open_path);
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	dsos->v[dsos->n++] = d;
	return d;
}

struct ps_dso *ps_dsos__get(struct ps_dsos *dsos, const char *path, const char *open_path)
{
	struct ps_dso *d;
	struct stat st;

	if (stat(open_path, &st) < 0)
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		errno = ENOEXEC;
		return NULL;
	}
	/* Mappings arrive at mmap time, not per sample: a scan is cheap enough. */
	for (size_t i = 0; i < dsos->n; i++)
		if (dsos->v[i]->open_path && same_file(dsos->v[i], &st))
			return dsos->v[i];
	d = dsos_add(dsos, path, open_path);
	if (!d)
		return NULL;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->mtime = st.st_mtim;
	d->size = st.st_size;
	return d;
}

struct ps_dso *ps_dsos__get_unreadable(struct ps_dsos *dsos, const char *path)
{
	struct ps_dso *d;

	for (size_t i = 0; i < dsos->n; i++)
		if (!dsos->v[i]->open_path && !strcmp(dsos->v[i]->path, path))
			return dsos->v[i];
	d = dsos_add(dsos, path, NULL);
	if (d)
		d->opened = true; /* and failed: never tried again */
	return d;
}

static void dso_free(struct ps_dso *d)
{
	struct ps_arena_block *b, *next;

	if (!d)
		return;
	for (b = d->arena; b; b = next) {
		next = b->next;
		free(b);
	}
	ps_dso_names__free(d->byname);
	free(d->slots);
	free(d->syms);
	free(d->names);
	free(d->loads);
	free(d->path);
	free(d->open_path);
	free(d);
}

void ps_dsos__free(struct ps_dsos *dsos)
{
	for (size_t i = 0; i < dsos->n; i++)
		dso_free(dsos->v[i]);
	free(dsos->v);
	dsos->v = NULL;
	dsos->n = dsos->cap = 0;
}

const char *ps_dso__name(const struct ps_dso *dso)
{
	return dso->path;
}

struct ps_dso_names **ps_dso__byname(struct ps_dso *dso)
{
	return &dso->byname;
}

/* Record the PT_LOAD segments: the link between a mapping's file offset and
 * the module's addresses. */
static int read_loads(struct ps_dso *d, Dwfl_Module *mod)
{
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t nphdr;

	if (!elf || elf_getphdrnum(elf, &nphdr) < 0)
		return -ENOENT;
	d->loads = calloc(nphdr ? nphdr : 1, sizeof(*d->loads));
	if (!d->loads)
		return -ENOMEM;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD)
			continue;
		d->loads[d->nloads++] = (struct ps_load){
		    .offset = ph->p_offset,
		    .filesz = ph->p_filesz,
		    .adj = (int64_t)(ph->p_vaddr - ph->p_offset + bias),
		};
	}
	return d->nloads ? 0 : -ENOENT;
}

static int fsym_cmp(const void *a, const void *b)
{
	const struct ps_fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Copy the code symbols out of the best symbol table libdwfl found (symtab of
 * the file or of its debuginfo, else dynsym) into a sorted array: libdwfl's
 * own address lookup scans every symbol on every call (~100 us in libc). */
static int read_syms(struct ps_dso *d, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	size_t k = 0, total = 0;
	char *p;

	if (n <= 1)
		return 0; /* no symbols: every address stays hex */
	d->syms = malloc((size_t)n * sizeof(*d->syms));
	if (!d->syms)
		return -ENOMEM;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		uint32_t under = 0;

		if (!name || !*name || sym.st_shndx == SHN_UNDEF || (int)shndx == -1)
			continue;
		/* Local untyped symbols are mostly labels and mapping markers. */
		if (type != STT_FUNC && type != STT_GNU_IFUNC &&
		    !(type == STT_NOTYPE && bind != STB_LOCAL))
			continue;
		while (name[under] == '_' && under < 3)
			under++;
		/* Aliases share an address: prefer the plain name (getpid over
		 * __getpid), then global over weak over local binding. */
		d->syms[k++] = (struct ps_fsym){
		    .addr = addr,
		    .size = sym.st_size,
		    .name = name,
		    .rank = under * 4 + (bind == STB_GLOBAL ? 0
					 : bind == STB_WEAK ? 1
							    : 2),
		};
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
	/* Own copies of the names, so that the file and libdwfl can go: a
	 * system-wide profile maps thousands of files, and each open Dwfl would
	 * hold a descriptor next to the perf fds. */
	d->names = p = malloc(total ? total : 1);
	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < d->nsyms; i++) {
		size_t len = strlen(d->syms[i].name) + 1;

		memcpy(p, d->syms[i].name, len);
		d->syms[i].name = p;
		p += len;
	}
	return 0;
}

/* The symbol covering a module address, or NULL. */
static const struct ps_fsym *find_sym(const struct ps_dso *d, uint64_t addr)
{
	size_t lo = 0, hi = d->nsyms;
	const struct ps_fsym *s;

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

int ps_dso__report(const struct ps_dso *dso, struct Dwfl **dwflp, struct Dwfl_Module **modp)
{
	Dwfl_Module *mod;
	Dwfl *dwfl;
	int fd;

	if (!dso->open_path)
		return -ENOENT;
	fd = open(dso->open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	dwfl = dwfl_begin(&ps_dwfl_callbacks);
	if (!dwfl) {
		close(fd);
		return -ENOMEM;
	}
	dwfl_report_begin(dwfl);
	/* Base 0 with add_p_vaddr: the module sits at its link-time addresses. */
	mod = dwfl_report_elf(dwfl, dso->path, dso->open_path, fd, 0, true);
	if (!mod)
		close(fd); /* libdwfl takes the fd only on success */
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod) {
		dwfl_end(dwfl);
		return -ENOENT;
	}
	*dwflp = dwfl;
	*modp = mod;
	return 0;
}

/* Read what resolving needs from the file, then let go of it. */
static int dso_open(struct ps_dso *d)
{
	Dwfl_Module *mod = NULL;
	Dwfl *dwfl = NULL;
	int err;

	if (d->opened)
		return d->usable ? 0 : -ENOENT;
	d->opened = true;
	err = ps_dso__report(d, &dwfl, &mod);
	if (err)
		return err == -ENOMEM ? err : -ENOENT;
	err = read_loads(d, mod);
	if (!err)
		err = read_syms(d, mod);
	dwfl_end(dwfl);
	d->usable = !err;
	return err;
}

int ps_dso__offset_adjust(struct ps_dso *dso, uint64_t pgoff, int64_t *adj)
{
	int err = dso_open(dso);

	if (err)
		return err;
	/* pgoff is page-aligned and p_offset need not be: the mapping of a
	 * segment starts at p_offset rounded down to a page. */
	for (size_t i = 0; i < dso->nloads; i++) {
		const struct ps_load *l = &dso->loads[i];
		uint64_t first = l->offset & ~(uint64_t)0xfff;

		if (pgoff >= first && pgoff < l->offset + l->filesz) {
			*adj = l->adj;
			return 0;
		}
	}
	return -ENOENT;
}

/* Room for n bytes in the arena; arena_commit() then keeps what was used. */
static char *arena_reserve(struct ps_dso *d, size_t n)
{
	struct ps_arena_block *b = d->arena;

	if (!b || b->used + n > PS_ARENA_BLOCK) {
		size_t size = n > PS_ARENA_BLOCK ? n : PS_ARENA_BLOCK;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->used = 0;
		b->next = d->arena;
		d->arena = b;
	}
	return b->data + b->used;
}

static void arena_commit(struct ps_dso *d, size_t n)
{
	d->arena->used += n;
}

static inline size_t slot_of(uint64_t key, size_t mask)
{
	/* Fibonacci hashing: code addresses differ mostly in their low bits. */
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

static int cache_grow(struct ps_dso *d)
{
	size_t n = d->nslots ? d->nslots * 2 : 256;
	struct ps_cache_slot *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < d->nslots; i++) {
		size_t j;

		if (!d->slots[i].key)
			continue;
		for (j = slot_of(d->slots[i].key, n - 1); slots[j].key; j = (j + 1) & (n - 1))
			;
		slots[j] = d->slots[i];
	}
	free(d->slots);
	d->slots = slots;
	d->nslots = n;
	return 0;
}

static void cache_put(struct ps_dso *d, uint64_t key, const char *str)
{
	size_t j;

	/* Keep the load under a half so probes stay short. */
	if (d->nused >= PS_DSO_CACHE_MAX || ((d->nused + 1) * 2 > d->nslots && cache_grow(d) < 0))
		return; /* a cache that cannot grow only costs time */
	for (j = slot_of(key, d->nslots - 1); d->slots[j].key; j = (j + 1) & (d->nslots - 1))
		;
	d->slots[j] = (struct ps_cache_slot){.key = key, .str = str};
	d->nused++;
}

int ps_dso__lookup(struct ps_dso *dso, uint64_t mod_addr, const char **str)
{
	uint64_t key = mod_addr + 1, off = 0;
	const struct ps_fsym *sym;
	size_t size;
	char *text;
	int n;

	if (dso->nslots) {
		size_t mask = dso->nslots - 1;

		for (size_t j = slot_of(key, mask); dso->slots[j].key; j = (j + 1) & mask) {
			if (dso->slots[j].key == key) {
				*str = dso->slots[j].str;
				return *str == ps_no_symbol ? -ENOENT : 0;
			}
		}
	}
	if (dso_open(dso) < 0) {
		*str = ps_no_symbol;
		return -ENOENT;
	}
	sym = find_sym(dso, mod_addr);
	if (!sym) {
		cache_put(dso, key, ps_no_symbol);
		*str = ps_no_symbol;
		return -ENOENT;
	}
	off = mod_addr - sym->addr;
	size = strlen(sym->name) + sizeof("+0x") + 16;
	text = arena_reserve(dso, size);
	if (!text)
		return -ENOMEM;
	n = snprintf(text, size, "%s+0x%" PRIx64, sym->name, off);
	arena_commit(dso, (size_t)n + 1);
	*str = text;
	cache_put(dso, key, *str);
	return 0;
}
