/*
 * internal.h: what the three parts of the symbolizer share.
 * symbols/symbols.c keeps the processes and their mappings and implements the public
 * ps_symbols__* calls; symbols/user.c owns the ELF files (one libdwfl module
 * per file, shared by every process mapping it) and their per-address result
 * caches; symbols/kernel.c owns the /proc/kallsyms table; symbols/lookup.c
 * goes the other way, from a name to an address (breakpoints on symbols),
 * with its own per-file table. None of this is part of the public ABI.
 */
#ifndef PS_SYMBOLS_INTERNAL_H
#define PS_SYMBOLS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "perfscript.h"

/* One ELF file on disk, identified by what stat() says about it. */
struct ps_dso;
/* Every ps_dso a ps_symbols has seen. */
struct ps_dsos {
	struct ps_dso **v;
	size_t n, cap;
};

/* The ps_dso for path (opened as open_path, which differs from path for a
 * process in another mount namespace), created on first sight. The ELF file
 * itself is opened only when an address in it is first resolved. NULL and
 * errno when open_path cannot be stat()ed. */
struct ps_dso *ps_dsos__get(struct ps_dsos *dsos, const char *path, const char *open_path);
/* A file that is gone (" (deleted)") or unreadable: a ps_dso that only names
 * its mappings and resolves nothing. NULL on ENOMEM. */
struct ps_dso *ps_dsos__get_unreadable(struct ps_dsos *dsos, const char *path);
void ps_dsos__free(struct ps_dsos *dsos);
const char *ps_dso__name(const struct ps_dso *dso);
/* The constant c such that a runtime address a in a mapping of this file at
 * file offset pgoff is the module address a - start + pgoff + c. -ENOENT when
 * the file does not open as ELF or no PT_LOAD covers pgoff. */
int ps_dso__offset_adjust(struct ps_dso *dso, uint64_t pgoff, int64_t *adj);
/* "func+0x1a" for a module address, from the cache or libdwfl; -ENOENT when
 * no symbol covers it (that answer is cached too). */
int ps_dso__lookup(struct ps_dso *dso, uint64_t mod_addr, const char **str);

/* Open the file into a new Dwfl, at its link-time addresses: 0 with *dwfl
 * (the caller's, for dwfl_end) and *mod, -ENOENT or -ENOMEM. */
struct Dwfl;
struct Dwfl_Module;
int ps_dso__report(const struct ps_dso *dso, struct Dwfl **dwfl, struct Dwfl_Module **mod);
/* Where the file keeps its name -> address table (symbols/lookup.c). */
struct ps_dso_names;
struct ps_dso_names **ps_dso__byname(struct ps_dso *dso);
void ps_dso_names__free(struct ps_dso_names *t);

/* symbols/symbols.c: the usable ELF files pid maps, each once, in address order,
 * with the bias of its mapping (runtime address = module address + bias).
 * pid's mappings are read from /proc when not known yet. Returns how many
 * (at most max), or -ESRCH (pid gone), -ENOMEM. */
int ps_syms__proc_files(struct ps_symbols *syms, pid_t pid, struct ps_dso **dsos, int64_t *bias,
			size_t max);
/* symbols/symbols.c: the ps_dso of a file by path (the command's executable), or NULL and errno. */
struct ps_dso *ps_syms__file(struct ps_symbols *syms, const char *path);

/* symbols/lookup.c: find name in pid's mapped files; on -ENOENT, near (when
 * not NULL) gets the closest name of those files, or "". */
int ps_syms__lookup(struct ps_symbols *syms, pid_t pid, const char *name, uint64_t *addr,
		    char *near, size_t nearlen);
/* symbols/lookup.c: find name in an executable file that is not running yet.
 * Its link-time address is the runtime one only for ET_EXEC: a PIE (ET_DYN)
 * gives -EADDRNOTAVAIL, a file that is not ELF -ENOEXEC, no such symbol
 * -ENOENT (near filled as above). */
int ps_syms__lookup_exec(struct ps_symbols *syms, const char *path, const char *name,
			 uint64_t *addr, char *near, size_t nearlen);

/* symbols/lookup.c: name's link-time address in the ELF file at path, PIE or
 * not, and the file's e_type: 0, -ENOEXEC (not ELF), -ENOENT (near filled). */
int ps_syms__file_symbol(struct ps_symbols *syms, const char *path, const char *name,
			 uint64_t *addr, int *etype, char *near, size_t nearlen);

/* symbols/probe.c: where a uprobe goes in an ELF file. */
/* The file offset of link-time address addr (the PT_LOAD that maps it):
 * 0, -ENOEXEC (not ELF), -ERANGE (no segment maps it), -errno. */
int ps_syms__file_offset(const char *path, uint64_t addr, uint64_t *off);
/* One site of a SystemTap USDT marker (.note.stapsdt), as file offsets. */
struct ps_usdt_site {
	uint64_t offset;    /* of the marker's nop */
	uint64_t semaphore; /* of its semaphore, 0 when it has none */
};
/* Up to max sites of provider:name in path; returns how many there are (may
 * be more than max), 0 for none (near gets "provider:name" of the nearest
 * marker, or ""), -ENOEXEC, -errno. */
int ps_syms__usdt(const char *path, const char *provider, const char *name,
		  struct ps_usdt_site *sites, size_t max, char *near, size_t nearlen);

/* The kernel's symbols, from /proc/kallsyms. */
struct ps_ksyms;
/* 0 with *out set (even when addresses are hidden: see ps_ksyms__hidden). */
int ps_ksyms__load(struct ps_ksyms **out);
void ps_ksyms__free(struct ps_ksyms *ks);
bool ps_ksyms__hidden(const struct ps_ksyms *ks);
/* 0 with "name+0x10" in buf and the dso, or -ENOENT. */
int ps_ksyms__resolve(const struct ps_ksyms *ks, uint64_t addr, char *buf, size_t len,
		      const char **dso);

#endif
