/*
 * dso.c: the ELF files behind user-space mappings. Each file is known once
 * per ps_symbols by its device, inode, mtime and size, however many
 * processes map it and at whatever address, so its tables and caches are
 * shared by all of them and keyed by link-time address, which ASLR does not
 * change. A file is read only when an address in it is first resolved or
 * unwound through, its symbol table only when one is first named
 * (symbols/user.c: a system-wide session sees far more mappings than it
 * ever names): it is mapped into memory once, its descriptor closed, and
 * every Dwfl that needs it (to read its symbols, its DWARF, or to unwind a
 * process that maps it: symbols/cfi.c may give unwinders a second view of
 * the file) gets an Elf over that image from our find_elf callback, so no
 * descriptor stays open next to the perf fds and the kernel's page cache
 * holds the only copy. Two files with one build id (a library seen through
 * two mount namespaces) share the first one's tables: answers are cached per
 * (build id, address). The vDSO has no file: the kernel maps the same image
 * into every process, so ours is copied and serves all of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "base/array.h"
#include "symbols/internal.h"

/* NULL: libdwfl's default search path. Never written: every thread and
 * session reads it. */
static char *debuginfo_path;

/* The module's ELF is the image of the ps_dso set as its userdata. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct ps_dso *d = *userdata;

	(void)mod;
	(void)modname;
	(void)base;
	(void)file_name;
	*elfp = d && d->image ? elf_memory(d->image, d->image_size) : NULL;
	return -1;
}

/* Debuginfo from the local disk (symbols/debuglink.c: by build id, by
 * .gnu_debuglink, in a container's root first), else the file
 * symbols/debuginfod.c fetched for it. Never dwfl_standard_find_debuginfo:
 * it would ask debuginfod itself, on the sampling path, when
 * DEBUGINFOD_URLS is set. */
int ps_dso__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			   const char *file_name, const char *debuglink, GElf_Word crc,
			   char **debuginfo_file_name)
{
	struct ps_dso *d = *userdata;
	Elf *img = d && d->image ? elf_memory(d->image, d->image_size) : NULL;
	int fd = -1;

	(void)mod;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink;
	(void)crc;
	if (img)
		fd = ps_dso__open_debug_file(d, img, debuginfo_file_name);
	elf_end(img);
	if (fd >= 0 || !d || !d->debug_path)
		return fd;
	fd = open(d->debug_path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !(*debuginfo_file_name = strdup(d->debug_path))) {
		close(fd);
		return -1;
	}
	return fd;
}

static const Dwfl_Callbacks callbacks = {
    .find_elf = find_elf,
    .find_debuginfo = ps_dso__find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

/* An unwinder wants call frame information only: .eh_frame, or the file's
 * own .debug_frame. A separate debug file (libc6-dbg's, a fetched one) is
 * not looked for: libdwfl would open it, and inflate every compressed
 * section of it, for each process's Dwfl, where a walk ends without
 * .eh_frame (its outermost frame); under exec churn that was a quarter of
 * a whole-host agent's CPU. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink, GElf_Word crc,
			char **debuginfo_file_name)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	(void)debuglink;
	(void)crc;
	(void)debuginfo_file_name;
	return -1;
}

/* An unwinder's Elf: the image, or its view for libdw's CFI (cfi.c). */
static int find_cfi_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			char **file_name, Elf **elfp)
{
	(void)mod;
	(void)modname;
	(void)base;
	(void)file_name;
	*elfp = ps_dso__cfi_elf(*userdata);
	return -1;
}

static const Dwfl_Callbacks unwind_callbacks = {
    .find_elf = find_cfi_elf,
    .find_debuginfo = no_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

Dwfl *ps_dwfl__begin(void)
{
	elf_version(EV_CURRENT);
	return dwfl_begin(&callbacks);
}

Dwfl *ps_dwfl__begin_unwind(void)
{
	elf_version(EV_CURRENT);
	return dwfl_begin(&unwind_callbacks);
}

Dwfl_Module *ps_dso__report(struct ps_dso *dso, Dwfl *dwfl, int64_t bias)
{
	struct ps_dso *d;
	Dwfl_Module *mod;
	void **ud;

	/* opened again if it was given back since its mapping was placed (a
	 * budget's trim, a debug file that arrived): an unwinder made then
	 * found no CFI in it, and its stacks ended there */
	if (ps_dso__open(dso, &d) < 0 || !d->usable)
		return NULL;
	mod =
	    dwfl_report_module(dwfl, dso->path, d->low + (uint64_t)bias, d->high + (uint64_t)bias);
	if (!mod || !dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
		return NULL;
	*ud = d;
	return mod;
}

static struct ps_dso *dsos_add(struct ps_dsos *dsos, const char *path, const char *open_path)
{
	struct ps_dso *d;
	const char *slash;

	if (ps_array__reserve(&dsos->v, &dsos->cap, dsos->n + 1, sizeof(*dsos->v)))
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->owner = dsos;
	d->path = strdup(path);
	d->open_path = open_path ? strdup(open_path) : NULL;
	if (!d->path || (open_path && !d->open_path)) {
		free(d->path);
		free(d->open_path);
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	slash = strrchr(d->path, '/');
	d->base_name = slash ? slash + 1 : d->path;
	dsos->v[dsos->n++] = d;
	return d;
}

struct ps_dso *ps_dsos__get(struct ps_dsos *dsos, const char *path, const char *open_path,
			    const struct ps_file_stamp *want)
{
	struct ps_dso *d;
	struct stat st;

	if (stat(open_path, &st) < 0)
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		errno = ENOEXEC;
		return NULL;
	}
	if (want && want->ino && (st.st_dev != want->dev || st.st_ino != want->ino)) {
		errno = ESTALE; /* renamed or linked over since it was mapped */
		return NULL;
	}
	/* Mappings arrive at mmap time, not per sample: a scan is cheap enough. */
	for (size_t i = 0; i < dsos->n; i++)
		if (dsos->v[i]->open_path && ps_image__same_file(&st, &dsos->v[i]->stamp))
			return dsos->v[i];
	d = dsos_add(dsos, path, open_path);
	if (!d)
		return NULL;
	d->stamp = (struct ps_file_stamp){
	    .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size, .mtime = st.st_mtim};
	return d;
}

struct ps_dso *ps_dsos__by_id(struct ps_dsos *dsos, dev_t dev, uint64_t ino)
{
	for (size_t i = 0; ino && i < dsos->n; i++)
		if (dsos->v[i]->open_path && dsos->v[i]->stamp.ino == (ino_t)ino &&
		    dsos->v[i]->stamp.dev == dev)
			return dsos->v[i];
	return NULL;
}

struct ps_dso *ps_dsos__get_unreadable(struct ps_dsos *dsos, const char *path)
{
	struct ps_dso *d;

	for (size_t i = 0; i < dsos->n; i++)
		if (!dsos->v[i]->open_path && !dsos->v[i]->image && !strcmp(dsos->v[i]->path, path))
			return dsos->v[i];
	d = dsos_add(dsos, path, NULL);
	if (d)
		d->opened = true; /* and failed: never tried again */
	return d;
}

/* The size of our [vdso] mapping, from /proc/self/maps. */
static size_t vdso_size(uint64_t at)
{
	FILE *f = fopen("/proc/self/maps", "re");
	unsigned long long start, end;
	char line[256];
	size_t size = 0;

	while (f && !size && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &start, &end) == 2 &&
		    start == at)
			size = end - start;
	if (f)
		fclose(f);
	return size;
}

struct ps_dso *ps_dsos__vdso(struct ps_dsos *dsos)
{
	uint64_t at = getauxval(AT_SYSINFO_EHDR);
	struct ps_dso *d;
	size_t size;

	if (dsos->vdso || !at)
		return dsos->vdso;
	size = vdso_size(at);
	if (!size)
		return NULL;
	d = dsos_add(dsos, "[vdso]", NULL);
	if (!d)
		return NULL;
	d->image = malloc(size);
	if (d->image) {
		memcpy(d->image, (const void *)(uintptr_t)at, size);
		d->image_size = size;
	} else {
		d->opened = true; /* names its mappings, resolves nothing */
	}
	return dsos->vdso = d;
}

void ps_dsos__flush(struct ps_dsos *dsos)
{
	for (size_t i = 0; i < dsos->n; i++) {
		struct ps_dso *d = dsos->v[i];

		ps_addr_cache__free(&d->cache);
		for (size_t k = 0; k < d->nsyms; k++)
			d->syms[k].shown = NULL;
		ps_dwarf__free(d->dwarf);
		d->dwarf = NULL;
		ps_arena__free(&d->arena);
	}
}

static void dso_free(struct ps_dso *d)
{
	if (!d)
		return;
	ps_dso__give_back(d);
	free(d->path);
	free(d->open_path);
	free(d->debug_path);
	free(d->local_debug);
	free(d);
}

void ps_dsos__free(struct ps_dsos *dsos)
{
	ps_debuginfod__free(dsos);
	for (size_t i = 0; i < dsos->n; i++)
		dso_free(dsos->v[i]);
	free(dsos->v);
	dsos->v = NULL;
	dsos->vdso = NULL;
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

/* The file's bytes, if it is still the file first seen (symbols/image.c). */
static int map_image(struct ps_dso *d)
{
	if (d->image)
		return 0;
	if (!d->open_path || !(d->image = ps_image__map(d->open_path, &d->stamp, &d->image_size)))
		return -ENOENT;
	d->image_mapped = true;
	d->owner->loads++; /* a trim is due (ps_symbols__grew) */
	return 0;
}

/* e_type, the PT_LOAD table, the link-time range and the build id. */
static int read_headers(struct ps_dso *d, Elf *elf)
{
	GElf_Ehdr eh;
	size_t nphdr;
	const void *id;
	ssize_t idlen;
	bool first = true;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getphdrnum(elf, &nphdr) < 0)
		return -ENOENT;
	d->e_type = eh.e_type;
	d->loads = calloc(nphdr ? nphdr : 1, sizeof(*d->loads));
	if (!d->loads)
		return -ENOMEM;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD)
			continue;
		/* where libdwfl starts a module: the first load, aligned down */
		if (first)
			d->low = ph->p_vaddr & -(ph->p_align ? ph->p_align : 1);
		first = false;
		if (ph->p_vaddr + ph->p_memsz > d->high)
			d->high = ph->p_vaddr + ph->p_memsz;
		d->loads[d->nloads++] = (struct ps_load){.offset = ph->p_offset,
							 .filesz = ph->p_filesz,
							 .vaddr = ph->p_vaddr,
							 .exec = (ph->p_flags & PF_X) != 0};
	}
	/* no .symtab: a stripped file, whose own names are the dynamic ones */
	d->bare = true;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			d->bare = false;
	}
	idlen = dwelf_elf_gnu_build_id(elf, &id);
	if (idlen > 0 && (size_t)idlen <= sizeof(d->build_id)) {
		memcpy(d->build_id, id, (size_t)idlen);
		d->build_id_len = (size_t)idlen;
	}
	return d->nloads ? 0 : -ENOENT;
}

/* An opened file with the same build id, whose tables then serve d too. */
static struct ps_dso *same_build_id(const struct ps_dso *d)
{
	const struct ps_dsos *dsos = d->owner;

	if (!d->build_id_len)
		return NULL;
	for (size_t i = 0; i < dsos->n; i++) {
		const struct ps_dso *o = dsos->v[i];

		if (o != d && o->usable && !o->same && o->build_id_len == d->build_id_len &&
		    !memcmp(o->build_id, d->build_id, d->build_id_len))
			return dsos->v[i];
	}
	return NULL;
}

bool ps_dso__truncated(struct ps_dso *d)
{
	unsigned long hits = ps_image__hits();

	if (d->hits_seen != hits) { /* a truncation met somewhere: this one? */
		d->hits_seen = hits;
		d->truncated |= ps_image__changed(d->image) || ps_image__changed(d->cfi_view);
	}
	return d->truncated;
}

int ps_dso__open(struct ps_dso *d, struct ps_dso **real)
{
	Elf *elf;
	int err;

	if (!d->opened) {
		d->opened = true;
		elf_version(EV_CURRENT);
		err = map_image(d);
		if (err)
			return err;
		elf = elf_memory(d->image, d->image_size);
		err = elf ? read_headers(d, elf) : -ENOENT;
		elf_end(elf);
		if (err)
			return err;
		d->same = same_build_id(d);
		d->usable = true;
		if (d->same) {
			/* the first file's image serves: give this mapping back */
			if (d->image_mapped)
				ps_image__unmap(d->image, d->image_size);
			else
				free(d->image);
			d->image = NULL;
		}
	}
	if (d->usable && ps_dso__truncated(d->same ? d->same : d))
		return -ENOENT;
	if (!d->usable)
		return -ENOENT;
	*real = d->same ? d->same : d;
	(*real)->used = d->used = ++d->owner->tick;
	(*real)->read_since_drop = true;
	return 0;
}

int ps_dso__offset_adjust(struct ps_dso *dso, uint64_t pgoff, int64_t *adj)
{
	struct ps_dso *d;
	int err = ps_dso__open(dso, &d);

	if (err)
		return err;
	/* pgoff is page-aligned and p_offset need not be: the mapping of a
	 * segment starts at p_offset rounded down to a page. A page may hold
	 * the end of one segment and the start of the next (lld packs them:
	 * its read-only and executable segments often share page 0), so two
	 * segments can cover pgoff; the symbolizer tracks executable mappings
	 * only, and the executable segment is the one mapped there. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < dso->nloads; i++) {
			const struct ps_load *l = &dso->loads[i];
			uint64_t first = l->offset & ~(uint64_t)0xfff;

			if ((pass == 0 && !l->exec) || pgoff < first ||
			    pgoff >= l->offset + l->filesz)
				continue;
			*adj = (int64_t)(l->vaddr - l->offset);
			return 0;
		}
	return -ENOENT;
}
