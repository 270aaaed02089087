/*
 * internal.h: what the parts of the symbolizer share. symbols/maps.c keeps
 * the processes and their mappings; symbols/symbols.c answers the public
 * ps_symbols__* calls from them; symbols/dso.c owns the ELF files (one
 * image per file, shared by every process that maps it and by every Dwfl
 * that reads it); symbols/user.c turns a file's addresses into names with a
 * per-file cache; symbols/demangle.c makes C++ and Rust names readable;
 * symbols/srcline.c reads DWARF lines and inline frames; symbols/unwind.c
 * unwinds sampled user stacks with one Dwfl per process; symbols/jit.c
 * reads /tmp/perf-PID.map; symbols/kernel.c owns /proc/kallsyms;
 * symbols/lookup.c goes from a name to an address (breakpoints on symbols).
 * None of this is part of the public ABI.
 */
#ifndef PS_SYMBOLS_INTERNAL_H
#define PS_SYMBOLS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include <elfutils/libdwfl.h>

#include "base/pidmap.h"
#include "perfscript.h"
#include "symbols/image.h"
#include "symbols/resolve.h"

/* ---- small shared containers (symbols/cache.c) ---- */

/* Text and small records kept until the owner goes: appended, never freed
 * one by one. */
struct ps_arena {
	struct ps_arena_block *head;
	size_t bytes; /* in all its blocks */
};
void *ps_arena__alloc(struct ps_arena *a, size_t n); /* 8-aligned; NULL on ENOMEM */
char *ps_arena__strdup(struct ps_arena *a, const char *s);
void ps_arena__free(struct ps_arena *a);

/* Address -> pointer, open addressing; past PS_CACHE_MAX entries answers
 * are still computed, only not kept. */
struct ps_addr_cache {
	struct ps_cache_slot *slots;
	size_t nslots, nused; /* nslots is 0 or a power of two */
};
/* true with *v set when addr is in the cache. */
bool ps_addr_cache__get(const struct ps_addr_cache *c, uint64_t addr, const void **v);
void ps_addr_cache__put(struct ps_addr_cache *c, uint64_t addr, const void *v);
size_t ps_addr_cache__bytes(const struct ps_addr_cache *c);
/* The value in slot i (0 <= i < nslots), NULL for an empty one: to free them. */
const void *ps_addr_cache__value(const struct ps_addr_cache *c, size_t i);
void ps_addr_cache__free(struct ps_addr_cache *c);

/* ---- ELF files (symbols/dso.c, symbols/user.c) ---- */

struct ps_load {
	uint64_t offset, filesz; /* p_offset, p_filesz */
	uint64_t vaddr;		 /* p_vaddr */
	bool exec;		 /* PF_X */
};

struct ps_fsym {
	uint64_t addr;	   /* link-time address */
	const char *name;  /* in ps_dso.names, as the symbol table has it */
	const char *shown; /* demangled (in the arena), or name; NULL until asked */
	uint32_t size;	   /* 0: up to the next symbol (32 bits: 32 bytes a symbol, not 40) */
	uint32_t rank;	   /* among names at one address, lower is preferred */
};

struct ps_dsos;
struct ps_dwarf; /* symbols/srcline.c */

/* What page drops saw of a mapping (symbols/pages.c): two bits a page,
 * kept and dropped, each words long; epoch counts the drops. */
struct ps_page_ages {
	uint64_t *bits;
	size_t words;
	size_t kept; /* pages the last drop kept */
	unsigned epoch;
};

/* One ELF file, identified by what stat() says about it (or the vDSO). Its
 * image is mapped once, when an address in it is first resolved, and every
 * Dwfl that reads the file gets an Elf over that memory (no descriptor
 * stays open). Files with the same build id share one set of tables: a
 * later one points at the first (same). */
#define PS_DSO_PY_SYMS 4
struct ps_dso {
	struct ps_dsos *owner;
	char *path;		    /* as the process named it */
	char *open_path;	    /* where we can open it; NULL: unreadable or in memory */
	const char *base_name;	    /* the last part of path */
	struct ps_file_stamp stamp; /* the file as first seen: read only while it is still it */

	bool opened;	/* tried to open */
	bool usable;	/* an ELF image with loads: offsets map to addresses */
	bool syms_read; /* its symbol table was read (ps_dso__open_symbols) */
	void *image;	/* the file's bytes */
	size_t image_size;
	bool image_mapped; /* munmap, not free */
	/* what unwinders read CFI from (symbols/cfi.c): the image, or a
	 * second mapping of cfi_size bytes: sections hidden (its
	 * .eh_frame_hdr after .eh_frame), or .debug_frame alone, inflated
	 * past the file's end (its debug sections compressed) */
	enum { PS_CFI_UNKNOWN, PS_CFI_AS_IS, PS_CFI_HIDE, PS_CFI_FRAME } cfi_state;
	void *cfi_view;
	size_t cfi_size;
	struct ps_page_ages image_ages, cfi_ages; /* which pages drops keep (symbols/pages.c) */
	bool read_since_drop; /* opened for an answer or unwound through since the last drop */
	int e_type;
	uint8_t build_id[20];
	size_t build_id_len;
	struct ps_dso *same; /* an earlier file with this build id, whose tables serve */
	struct ps_load *loads;
	size_t nloads;
	uint64_t low, high; /* link-time range: first PT_LOAD page-aligned .. last end */

	/* a CPython file's functions that a Python stack's splice looks for
	 * (symbols/pysplice.c): their link-time addresses, UINT64_MAX for
	 * none; py_state 0 not looked, 1 found, -1 not a CPython file */
	int8_t py_state;
	uint64_t py_syms[PS_DSO_PY_SYMS];

	struct ps_fsym *syms; /* sorted by address, one per address */
	size_t nsyms;
	char *names;		     /* what syms[].name point into */
	struct ps_dso_names *byname; /* name -> address (symbols/lookup.c), NULL until asked */
	struct ps_addr_cache cache;  /* address -> "func+0x1a" (or ps_no_symbol) */
	struct ps_dwarf *dwarf;	     /* lines and inline frames, NULL until asked */
	struct ps_arena arena;
	size_t names_size;
	uint64_t used;	  /* ps_dsos.tick when last opened for an answer (symbols/budget.c) */
	bool bare;	  /* no symbol table, no debug file: a stripped file */
	char *debug_path; /* its debug file, from debuginfod (symbols/debuginfod.c) */
	/* its debug file on this machine (symbols/debuglink.c), looked for
	 * once: the symbol table's and the DWARF's Dwfl both want it, and a
	 * debuglink's CRC reads the whole file */
	char *local_debug;
	bool local_looked;
	bool truncated;		 /* its file shrank under a read (symbols/image.c) */
	unsigned long hits_seen; /* ps_image__hits() when last checked */
};

/* Every ps_dso a ps_symbols has seen, and the settings they follow. */
struct ps_dsos {
	struct ps_dso **v;
	size_t n, cap;
	struct ps_dso *vdso;	       /* the kernel's vDSO image, read once from our own process */
	bool raw_names;		       /* no demangling */
	uint64_t tick;		       /* bumped per ps_dso__open: recency for the LRU */
	struct ps_fetcher *fetch;      /* debuginfod questions (symbols/debuginfod.c) */
	uint64_t debuginfod_budget_ns; /* what the session may wait for answers */
	bool debuginfod_set;	       /* else 2 s */
	bool debuginfod_off;
	bool no_lines; /* ps_symbols__set_lines(false): DWARF is never read */
	bool settling; /* the session's end: a new question is waited for */
	size_t budget; /* bytes the files' tables and images may hold (0: default) */
	uint64_t evictions;
	uint64_t loads, loads_trimmed; /* images and DWARF read: so far, at the last trim */
	uint64_t loads_weighed;	       /* at the last ps_symbols__over */
};

/* The ps_dso for path (opened as open_path, which differs from path for a
 * process in another mount namespace), created on first sight. The ELF file
 * itself is read only when an address in it is first resolved. NULL and
 * errno when open_path cannot be stat()ed, or (ESTALE) is not the file
 * want names (a device and inode; NULL or inode 0: any file). */
struct ps_dso *ps_dsos__get(struct ps_dsos *dsos, const char *path, const char *open_path,
			    const struct ps_file_stamp *want);
/* A file that is gone (" (deleted)") or unreadable: a ps_dso that only names
 * its mappings and resolves nothing. NULL on ENOMEM. */
struct ps_dso *ps_dsos__get_unreadable(struct ps_dsos *dsos, const char *path);
/* The readable file already known as device dev, inode ino, or NULL: a
 * mapping record that names its file's inode needs no stat() of it. */
struct ps_dso *ps_dsos__by_id(struct ps_dsos *dsos, dev_t dev, uint64_t ino);
/* The vDSO, as the kernel maps it into every process (a copy of ours). NULL
 * when this process has none. */
struct ps_dso *ps_dsos__vdso(struct ps_dsos *dsos);
/* Forget every cached answer (the naming settings changed). */
void ps_dsos__flush(struct ps_dsos *dsos);
void ps_dsos__free(struct ps_dsos *dsos);
const char *ps_dso__name(const struct ps_dso *dso);
/* Map the file and read its headers once: 0, or -ENOENT (not ELF,
 * unreadable), -ENOMEM. On success *real is the ps_dso whose tables serve
 * (dso, or its same). Enough to place and unwind it: its symbols are read
 * by ps_dso__open_symbols, when an address in it is first named. */
int ps_dso__open(struct ps_dso *dso, struct ps_dso **real);
/* symbols/cfi.c: an Elf for an unwinder's Dwfl over the file (NULL without
 * an image), and the mapping it may have made, given back. */
Elf *ps_dso__cfi_elf(struct ps_dso *dso);
void ps_dso__cfi_free(struct ps_dso *dso);
/* The same, with the symbol table read (once; symbols/user.c). */
int ps_dso__open_symbols(struct ps_dso *dso, struct ps_dso **real);
/* The constant c such that a runtime address a in a mapping of this file at
 * file offset pgoff is the link-time address a - start + pgoff + c. -ENOENT
 * when the file does not open as ELF or no PT_LOAD covers pgoff. */
int ps_dso__offset_adjust(struct ps_dso *dso, uint64_t pgoff, int64_t *adj);
/* Report the file into dwfl so that its link-time address a is at a + bias.
 * Every Dwfl of the symbolizer is made by ps_dwfl__begin (or _unwind), whose find_elf
 * hands libdwfl an Elf over the dso's image. NULL when libdwfl refuses. */
Dwfl *ps_dwfl__begin(void);
/* The same for an unwinder: no separate debug file is looked for. */
Dwfl *ps_dwfl__begin_unwind(void);
/* The same for DWARF lookups: a stripped file's debug file is opened
 * without the sections they never read (symbols/debugfile.c). */
Dwfl *ps_dwfl__begin_dwarf(void);
/* symbols/debuglink.c: the debug file of d (image img) on this machine, by
 * build id, then by .gnu_debuglink (its CRC checked), in the root d was
 * seen through first: its fd, the path in *path (malloc'd), or -1. */
int ps_dso__open_debug_file(struct ps_dso *d, Elf *img, char **path);
/* libdwfl's find_debuginfo callback of those Dwfls: ps_dso__open_debug_file,
 * else the file debuginfod fetched. */
int ps_dso__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			   const char *file_name, const char *debuglink, GElf_Word crc,
			   char **debuginfo_file_name);
Dwfl_Module *ps_dso__report(struct ps_dso *dso, Dwfl *dwfl, int64_t bias);
/* "func+0x1a" for a link-time address, from the cache or the symbol table;
 * -ENOENT when no symbol covers it (that answer is cached too). */
int ps_dso__lookup(struct ps_dso *dso, uint64_t addr, const char **str);
/* symbols/user.c: the symbol table's own name for a link-time address
 * ("set_binding_values.part.0", a mangled name), NULL when none covers it. */
const char *ps_dso__raw_name(struct ps_dso *dso, uint64_t addr);
/* symbols/user.c: the link-time address of the symbol covering a link-time
 * address, or -ENOENT. */
int ps_dso__symbol_start(struct ps_dso *dso, uint64_t addr, uint64_t *start);
/* symbols/plt.c: "name@plt" entries for the PLT stubs of a reported
 * module (x86-64), their names malloc'ed; ps_plt__free frees them. */
struct ps_plt_syms {
	struct ps_fsym *v;
	size_t n, cap;
	size_t bytes; /* of the names, with their NULs */
};
int ps_plt__read(Dwfl_Module *mod, struct ps_plt_syms *out);
void ps_plt__free(struct ps_plt_syms *p);
/* symbols/user.c: the shown (demangled unless raw names) form of a name. */
const char *ps_dso__show(struct ps_dso *dso, const char *name);
/* Where the file keeps its name -> address table (symbols/lookup.c). */
struct ps_dso_names **ps_dso__byname(struct ps_dso *dso);
void ps_dso_names__free(struct ps_dso_names *t);
/* symbols/lookup.c: the link-time address of the symbol named name in the
 * file (data symbols too), or -ENOENT. */
int ps_dso__address_of(struct ps_dso *dso, const char *name, uint64_t *addr);

/* symbols/demangle.c: the readable form of a C++ (Itanium) or Rust (legacy
 * or v0) name, malloc'd; NULL when name is not mangled or does not demangle. */
char *ps_demangle(const char *name);

/* symbols/budget.c: free what the file's opening made (image, symbols,
 * DWARF, caches), back to "not opened yet", keeping what names the file. */
void ps_dso__give_back(struct ps_dso *d);

/* symbols/budget.c: what dso's tables, caches and image hold now, its
 * image counted by the pages resident; give them back (the file opens again
 * at its next use; files sharing its tables by build id go back with it). */
size_t ps_dso__bytes(const struct ps_dso *dso);
/* symbols/pages.c: unmap the pages of [addr, addr+len), a private file
 * mapping, that this process has and never wrote (/proc/self/pagemap: a
 * file page, not a copy): the file gives them again if they are read. A
 * page written stays. The bytes dropped. */
/* With ages, the pages read again since the drop before this one stay
 * (each re-tested every few drops): see pages.c. */
size_t ps_pages__drop(void *addr, size_t len, struct ps_page_ages *ages);
void ps_page_ages__free(struct ps_page_ages *ages);
size_t ps_page_ages__bytes(const struct ps_page_ages *ages);
/* The bytes of [image, image+size) resident in this process. */
size_t ps_pages__resident(const void *image, size_t size);
/* Read pagemap's entries even where PAGEMAP_SCAN works (tests set it, to
 * check what older kernels get). */
extern bool ps_pages__no_scan;
/* symbols/budget.c: give back the pages of d's mapped image this process
 * only read (a file sharing another's image, or one read into memory, has
 * none to give); cold: those not read again since the drop before. */
size_t ps_dso__drop_pages(struct ps_dso *d, bool cold);
void ps_dso__evict(struct ps_dso *dso);
/* Whether d's file was truncated under a read of it (symbols/image.c):
 * what is read of it then is zeros, so it answers nothing more, and the
 * next trim (a safe point: no unwinder is running) gives it back. Cheap
 * until some image met a truncation. */
bool ps_dso__truncated(struct ps_dso *d);
/* Give back, for good, the files truncated under a read (at a safe point). */
void ps_dsos__drop_truncated(struct ps_dsos *dsos);
/* symbols/srcline.c: what its caches hold. */
size_t ps_dwarf__bytes(const struct ps_dwarf *d);

/* symbols/debuginfod.c: ask for a stripped file's debug file (when
 * $DEBUGINFOD_URLS says where), on a thread of its own; give answered files
 * their debug file (at a safe point: their tables are given back); wait
 * for answers still coming within the session's budget; stop. */
struct ps_fetcher;
void ps_debuginfod__want(struct ps_dsos *dsos, const struct ps_dso *d);
void ps_debuginfod__apply(struct ps_dsos *dsos);
/* Whether a debug file arrived that ps_debuginfod__apply has not given yet. */
bool ps_debuginfod__answered(const struct ps_dsos *dsos);
/* The debug file of d, waiting for it within the session's budget; NULL
 * when none came. */
const char *ps_debuginfod__wait(struct ps_dsos *dsos, const struct ps_dso *d);
void ps_debuginfod__settle(struct ps_dsos *dsos);
void ps_debuginfod__free(struct ps_dsos *dsos);

/* symbols/cuindex.c: the compilation unit holding a link-time address,
 * from the units' own ranges (for files with no .debug_aranges, as Go
 * writes them); the index is built at the first call into *r. */
struct ps_cu_ranges;
bool ps_cu_ranges__find(struct ps_cu_ranges **r, Dwarf *dbg, uint64_t addr, Dwarf_Die *cu);
size_t ps_cu_ranges__bytes(const struct ps_cu_ranges *r);
void ps_cu_ranges__free(struct ps_cu_ranges *r);

/* symbols/srcline.c: the source frames at a link-time address of dso
 * (inlined functions innermost first, then the one holding them); the count,
 * 0 without DWARF for it, or -ENOMEM. Cached per file and address. */
int ps_dso__srcframes(struct ps_dso *dso, uint64_t addr, const struct ps_srcframe **frames);
void ps_dwarf__free(struct ps_dwarf *d);

/* ---- processes (symbols/maps.c) ---- */

struct ps_map {
	uint64_t start, end, pgoff;
	struct ps_dso *dso; /* NULL for anonymous code, [vsyscall], ... */
	const char *label;  /* what *dso reports */
	int64_t adj;	    /* link-time address = addr + adj, once adj_state == 1 */
	int adj_state;	    /* 0 not computed, 1 valid, -1 unresolvable */
	uint32_t born;	    /* the process's epoch when it was mapped */
	uint32_t died;	    /* a retired one's: the epoch that replaced it */
};

/* Mappings replaced or unmapped (by an exec) a process keeps, so that its
 * earlier samples are named by what was mapped then: the newest ones. */
#define PS_RETIRED_MAPS 256

struct ps_unwinder; /* symbols/unwind.c */
struct ps_jitmap;   /* symbols/jit.c */

struct ps_proc {
	pid_t pid;
	bool from_proc;	  /* read from /proc (or tried), so not read again lazily */
	bool tracked;	  /* records follow its mappings (MMAP2, FORK, COMM) */
	uint64_t read_ns; /* when /proc/PID/maps was last read (CLOCK_MONOTONIC_COARSE) */
	struct ps_map *maps;
	size_t n, cap, hint;
	uint32_t gen; /* bumped whenever the mappings change */
	/* bumped when a mapping is replaced or unmapped, not when one is
	 * added: a sample's epoch says which mappings were live at it */
	uint32_t epoch;
	struct ps_map *retired; /* oldest first, at most PS_RETIRED_MAPS */
	size_t nretired, capretired;
	struct ps_unwinder *uw;
	struct ps_jitmap *jit;
	uint32_t gone; /* 0 while alive, else its number among exits (symbols/gone.c) */
	bool sampled;  /* a sample named it: a profile may hold its addresses */
	/* it maps a CPython with perf trampolines (3.12 and later), as of
	 * generation py_gen - 1 (symbols/pytrampoline.c; 0: not looked) */
	bool py_trampolines;
	uint32_t py_gen;
};

/* An exited process, as the FIFOs of symbols/gone.c hold it. */
struct ps_gone {
	pid_t pid;
	uint32_t seq;
};

struct ps_gone_fifo {
	struct ps_gone *v; /* a ring of a fixed capacity, allocated on first use */
	size_t head, n;
};

#define PS_NOTICES 8
struct ps_symbols {
	struct ps_pidmap procs; /* pid -> struct ps_proc * */
	struct ps_proc *last;
	struct ps_dsos dsos;
	struct ps_ksyms *ksyms;
	int ksyms_err; /* 1 until the first try, then 0 or -errno */
	struct ps_unwinders *unwinders;
	struct ps_gone_fifo recent, sampled; /* exited processes, oldest first (symbols/gone.c) */
	uint32_t gone_seq;
	struct ps_pysyms *py;	    /* symbols/python.c, made on first use */
	struct ps_pysplice *splice; /* symbols/pysplice.c, made on first use */
	/* what the user should hear of (a JIT map refused, and why), oldest
	 * first, at most PS_NOTICES at once (ps_symbols__notice takes them) */
	char notices[PS_NOTICES][200];
	unsigned notice_head, notice_n;
	/* ps_symbols__maintain's schedule: calls since the clock was read, the
	 * seconds of the last trim, page drop and forgetting, a trim due at
	 * once (the budget changed) */
	struct {
		unsigned calls;
		int64_t trimmed, paged, forgot;
		bool due;
	} upkeep;
};
/* Queue a notice for the user (symbols.c); a full queue drops it. */
__attribute__((format(printf, 2, 3))) void ps_symbols__tell(struct ps_symbols *syms,
							    const char *fmt, ...);

/* symbols/python.c: its state's end; the name (and source line, when line
 * is not NULL) of a Python frame's made-up address, or -ENOENT. */
void ps_python__free(struct ps_symbols *syms);
/* symbols/pysplice.c: its state's end and bytes; pid's answers go. */
void ps_pysplice__free(struct ps_symbols *syms);
size_t ps_pysplice__bytes(const struct ps_symbols *syms);
void ps_pysplice__forget(struct ps_symbols *syms, pid_t pid);
int ps_python__resolve(struct ps_symbols *syms, uint64_t addr, const char **func,
		       struct ps_srcframe *line);

struct ps_proc *ps_procs__find(struct ps_symbols *syms, pid_t pid);
/* The entry for pid, made empty if it is new. NULL on ENOMEM. */
struct ps_proc *ps_procs__get(struct ps_symbols *syms, pid_t pid);
/* The entry for pid with its mappings, read from /proc once when pid was
 * never seen; NULL on ENOMEM. */
struct ps_proc *ps_procs__known(struct ps_symbols *syms, pid_t pid);
void ps_procs__free(struct ps_symbols *syms);
/* Forget p: its mappings, its unwinder, its entry. */
void ps_procs__drop(struct ps_symbols *syms, struct ps_proc *p);
/* symbols/gone.c: pid's process exited; older exited ones may go. */
void ps_procs__exited(struct ps_symbols *syms, pid_t pid);
size_t ps_procs__gone_count(struct ps_symbols *syms); /* exited processes kept */
void ps_procs__free_gone(struct ps_symbols *syms);
/* symbols/gone.c: what the exited processes kept hold; drop the oldest of
 * them no sample named until about want bytes are freed (what was freed). */
size_t ps_procs__gone_bytes(struct ps_symbols *syms);
size_t ps_procs__shed(struct ps_symbols *syms, size_t want);
/* The same for every exited process, the oldest first, a sample named it or
 * not (its addresses are then named as unknown). */
size_t ps_procs__shed_sampled(struct ps_symbols *syms, size_t want);
/* The mapping holding addr, or NULL. */
struct ps_map *ps_proc__lookup(struct ps_proc *p, uint64_t addr);
/* The same for a lookup asked now (perfmon.symbolize, a profile's names):
 * a process only /proc tells about, no records following it, that misses
 * addr is read again (it may have mapped a library since), at most every
 * 20 ms. */
struct ps_map *ps_procs__lookup_now(struct ps_symbols *syms, struct ps_proc *p, uint64_t addr);
/* symbols/epochs.c: keep e, which the next epoch no longer maps; whether
 * m over e changes what e's addresses are named; the mapping that held
 * addr at epoch (PS_EPOCH_NOW: the live one), as ps_procs__lookup_now
 * finds it. */
void ps_proc__retire(struct ps_proc *p, const struct ps_map *e);
bool ps_map__renames(const struct ps_map *e, const struct ps_map *m);
struct ps_map *ps_procs__lookup_at(struct ps_symbols *syms, struct ps_proc *p, uint64_t addr,
				   uint32_t epoch);
/* CLOCK_MONOTONIC_COARSE in ns: for "read again after a while" checks. */
uint64_t ps_coarse_ns(void);

/* Whether m's file-to-module adjustment is known (computed once). */
bool ps_map__adjust(struct ps_map *m);

/* symbols/maps.c: the usable ELF files pid maps, each once, in address
 * order, with the bias of its mapping (runtime address = link-time address
 * + bias). pid's mappings are read from /proc when not known yet. Returns
 * how many (at most max), or -ESRCH (pid gone), -ENOMEM. */
int ps_syms__proc_files(struct ps_symbols *syms, pid_t pid, struct ps_dso **dsos, int64_t *bias,
			size_t max);
/* symbols/maps.c: the ps_dso of a file by path (the command's executable),
 * or NULL and errno. */
struct ps_dso *ps_syms__file(struct ps_symbols *syms, const char *path);

/* symbols/unwind.c */
void ps_unwinder__free(struct ps_symbols *syms, struct ps_unwinder *uw);
void ps_unwinders__free(struct ps_symbols *syms);
size_t ps_unwinders__count(const struct ps_unwinders *l);

/* symbols/jit.c: "name+0x10" for addr from /tmp/perf-PID.map (re-read when
 * it grows), with *dso the map's path; -ENOENT when the map has no entry. */
int ps_jit__lookup(struct ps_symbols *syms, struct ps_proc *p, uint64_t addr, char *buf, size_t len,
		   const char **dso);
void ps_jit__free(struct ps_jitmap *j);
/* The entry of p's map that holds addr (read, or read again, as a lookup
 * does): its start and name; -ENOENT, -ENOMEM. */
int ps_jit__entry(struct ps_proc *p, uint64_t addr, uint64_t *start, const char **name);
/* symbols/pytrampoline.c: p's pc is in a CPython perf trampoline. */
bool ps_proc__python_trampoline(struct ps_proc *p, uint64_t pc);
/* What the processes' maps hold, in bytes; and the maps that named nothing
 * for a while given back, longest idle first, until they hold at most keep
 * bytes (read again when asked): what that freed. */
size_t ps_jits__bytes(struct ps_symbols *syms);
size_t ps_jits__shed(struct ps_symbols *syms, size_t keep);
/* Before the reports: each map is looked at again at its next miss, however
 * recently it was (a JIT may write its map as it exits). */
void ps_jits__recheck(struct ps_symbols *syms);

/* Finding a name's address and a probe's file offset: symbols/resolve.h,
 * the interface the counter core uses too. */

/* ---- the kernel (symbols/kernel.c) ---- */

struct ps_ksyms;
/* 0 with *out set (even when addresses are hidden: see ps_ksyms__hidden). */
int ps_ksyms__load(struct ps_ksyms **out);
void ps_ksyms__free(struct ps_ksyms *ks);
bool ps_ksyms__hidden(const struct ps_ksyms *ks);
/* 0 with "name+0x10" in buf and the dso, or -ENOENT. */
int ps_ksyms__resolve(const struct ps_ksyms *ks, uint64_t addr, char *buf, size_t len,
		      const char **dso);

#endif
