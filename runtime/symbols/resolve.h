/*
 * resolve.h: what the counter core asks the symbolizer when a counter opens:
 * the address of a breakpoint's symbol in a running process or a program
 * not started yet, and where a uprobe or a USDT marker goes in an ELF file.
 * Only these: the symbolizer's private structures stay in symbols/internal.h,
 * so the core rebuilds when these calls change, not when the symbolizer's
 * insides do.
 */
#ifndef PS_SYMBOLS_RESOLVE_H
#define PS_SYMBOLS_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ps_symbols;

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

/* symbols/uprobe_site.c: where a uprobe goes in an ELF file. */
/* The file offset of link-time address addr (the PT_LOAD that maps it):
 * 0, -ENOEXEC (not ELF), -ERANGE (no segment maps it), -errno. */
int ps_syms__file_offset(const char *path, uint64_t addr, uint64_t *off);
/* symbols/usdt_args.c: one argument of a USDT marker, where its note says
 * it is. */
enum ps_usdt_kind {
	PS_USDT_CONST,	/* val */
	PS_USDT_REG,	/* register reg */
	PS_USDT_MEM,	/* size bytes at register reg + val */
	PS_USDT_GLOBAL, /* size bytes at link-time address val, moved as the file is */
};
struct ps_usdt_arg {
	uint8_t kind, size; /* size: 1, 2, 4 or 8 bytes */
	bool is_signed;
	int16_t reg; /* asm/perf_regs.h numbering */
	int64_t val;
	char symbol[64]; /* a global's, while parsed */
	char text[32];	 /* the operand as the note writes it */
};
#define PS_USDT_MAX_ARGS 12
/* The arguments of spec ("-4@%edi 8@-8(%rbp)"): how many, or -EINVAL
 * (bad gets the operand not understood), -E2BIG (more than max),
 * -EOPNOTSUPP (an architecture whose operands are not known). */
int ps_usdt__parse(const char *spec, struct ps_usdt_arg *args, int max, char *bad, size_t badlen);
/* v, the bytes read for a, sign- or zero-extended as a says. */
int64_t ps_usdt__extend(const struct ps_usdt_arg *a, uint64_t v);

/* One site of a SystemTap USDT marker (.note.stapsdt), as file offsets,
 * with its arguments. */
struct ps_usdt_site {
	uint64_t offset;    /* of the marker's nop */
	uint64_t semaphore; /* of its semaphore, 0 when it has none */
	uint64_t pc;	    /* its link-time address: a global's moves with it */
	int nargs;	    /* < 0: its note's operands are not understood */
	struct ps_usdt_arg args[PS_USDT_MAX_ARGS];
	char bad[32]; /* with nargs < 0, the operand */
};
/* Up to max sites of provider:name in path; returns how many there are (may
 * be more than max), 0 for none (near gets "provider:name" of the nearest
 * marker, or ""), -ENOEXEC, -errno. */
int ps_syms__usdt(const char *path, const char *provider, const char *name,
		  struct ps_usdt_site *sites, size_t max, char *near, size_t nearlen);

#endif /* PS_SYMBOLS_RESOLVE_H */
