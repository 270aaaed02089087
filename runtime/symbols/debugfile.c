/*
 * debugfile.c: the Dwfl that reads a file's DWARF (inline frames, source
 * lines: symbols/srcline.c). For a stripped file its debug file, found by
 * build-id under /usr/lib/debug or fetched by debuginfod, is handed to
 * libdwfl as the module's own ELF, opened here first so that the sections
 * those lookups never read are left out: libdw inflates every compressed
 * debug section as it opens a file, and a distribution's debug files are
 * compressed whole. Location lists are the largest of them (1.4 MB of the
 * 10 MB libc's debug file inflates to); macros and name indexes go too.
 * The debug file has the file's program headers, so its addresses and
 * libdwfl's bias are the file's. Anything else (a file with its own DWARF,
 * no debug file here) goes the usual way (symbols/dso.c).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "symbols/internal.h"

/* Debug sections no lookup of srcline.c reads (libdw knows them by name). */
static const char *const unread[] = {
    ".debug_loc",	   ".debug_loclists",	  ".debug_macro",
    ".debug_macinfo",	   ".debug_pubnames",	  ".debug_pubtypes",
    ".debug_gnu_pubnames", ".debug_gnu_pubtypes", ".debug_names",
};

static bool has_section(Elf *elf, const char *const *names, size_t n, bool hide)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	bool found = false;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return false;
	while ((scn = elf_nextscn(elf, scn)) && gelf_getshdr(scn, &sh)) {
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);

		for (size_t i = 0; name && i < n; i++) {
			if (strcmp(name, names[i]) || sh.sh_type == SHT_NOBITS)
				continue;
			found = true;
			if (hide) { /* libdw passes over a section without data */
				sh.sh_type = SHT_NOBITS;
				gelf_update_shdr(scn, &sh);
			}
		}
	}
	return found;
}

/* The debug file of the stripped image img, opened: its fd, the Elf in
 * *out and its path in *path; -1 if there is none here. On this machine
 * (symbols/debuglink.c: by build id, by .gnu_debuglink, in a container's
 * root first), else what debuginfod fetched, whose build id must be the
 * file's. */
static int open_debug(struct ps_dso *d, Elf *img, Elf **out, char **path)
{
	const void *id, *id2;
	ssize_t len = dwelf_elf_gnu_build_id(img, &id), len2;
	int fd = ps_dso__open_debug_file(d, img, path);

	if (fd < 0 && d->debug_path) {
		bool same;

		fd = open(d->debug_path, O_RDONLY | O_CLOEXEC);
		*out = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
		len2 = *out ? dwelf_elf_gnu_build_id(*out, &id2) : -1;
		same = len2 == len && len > 0 && !memcmp(id, id2, (size_t)len); /* before elf_end */
		elf_end(*out);
		if (fd >= 0 && (!same || !(*path = strdup(d->debug_path)))) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		return -1;
	/* a private mapping: the section headers changed below stay ours */
	if (!(*out = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL))) {
		free(*path);
		*path = NULL;
		close(fd);
		return -1;
	}
	has_section(*out, unread, sizeof(unread) / sizeof(*unread), true);
	return fd;
}

static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	static const char *const dwarf[] = {".debug_info", ".debug_line"};
	struct ps_dso *d = *userdata;
	Elf *img = d && d->image ? elf_memory(d->image, d->image_size) : NULL, *dbg = NULL;
	int fd;

	(void)mod;
	(void)modname;
	(void)base;
	*elfp = img;
	if (!img || has_section(img, dwarf, 2, false) ||
	    (fd = open_debug(d, img, &dbg, file_name)) < 0)
		return -1; /* libdwfl finds the DWARF in img, or looks for a debug file */
	elf_end(img);
	*elfp = dbg;
	return fd; /* libdwfl owns both now */
}

static const Dwfl_Callbacks callbacks = {
    .find_elf = find_elf,
    .find_debuginfo = ps_dso__find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

Dwfl *ps_dwfl__begin_dwarf(void)
{
	elf_version(EV_CURRENT);
	return dwfl_begin(&callbacks);
}
