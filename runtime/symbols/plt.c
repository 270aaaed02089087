/*
 * plt.c: names for the entries of a file's procedure linkage table, as
 * "memcpy@plt", so that a sample in a PLT stub is not charged to whatever
 * symbol precedes the table (_init, for most executables). The symbol
 * tables do not name the stubs; the relocations do, by the GOT slot each
 * stub jumps through. On x86-64 every stub (.plt, .plt.sec with IBT,
 * .plt.got; GNU ld and lld alike) holds one "jmp *disp32(%rip)", so each
 * slot is decoded and its GOT address looked up among the JUMP_SLOT and
 * GLOB_DAT relocations. Other architectures get no PLT names yet.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#include "base/array.h"
#include "symbols/internal.h"

#define R_JUMP_SLOT 7 /* R_X86_64_JUMP_SLOT */
#define R_GLOB_DAT  6 /* R_X86_64_GLOB_DAT */

struct got_name {
	uint64_t got;
	const char *name; /* in the ELF's string table */
};

struct plt_scan {
	struct got_name *v;
	size_t n, cap;
};

static int by_got(const void *a, const void *b)
{
	const struct got_name *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/* The GOT slots the dynamic symbols' relocations fill, of every SHT_RELA
 * section linked to the dynamic symbol table. */
static int read_relocs(Elf *elf, struct plt_scan *s)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Scn *symscn;
		Elf_Data *rel, *syms;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !(symscn = elf_getscn(elf, sh.sh_link)) || !gelf_getshdr(symscn, &symsh) ||
		    symsh.sh_type != SHT_DYNSYM || !(rel = elf_getdata(scn, NULL)) ||
		    !(syms = elf_getdata(symscn, NULL)) || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *name;
			size_t type;

			if (!gelf_getrela(rel, (int)i, &r))
				break;
			type = GELF_R_TYPE(r.r_info);
			if ((type != R_JUMP_SLOT && type != R_GLOB_DAT) || !GELF_R_SYM(r.r_info) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) ||
			    !(name = elf_strptr(elf, symsh.sh_link, sym.st_name)) || !*name)
				continue;
			if (ps_array__reserve(&s->v, &s->cap, s->n + 1, sizeof(*s->v)))
				return -ENOMEM;
			s->v[s->n++] = (struct got_name){.got = r.r_offset, .name = name};
		}
	}
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), by_got);
	return 0;
}

static const char *got_lookup(const struct plt_scan *s, uint64_t got)
{
	struct got_name key = {.got = got};
	const struct got_name *hit = bsearch(&key, s->v, s->n, sizeof(*s->v), by_got);

	return hit ? hit->name : NULL;
}

/* The GOT address a stub of bytes p[0..len) at addr jumps through: its
 * first "ff 25 disp32" in the first 8 bytes (after an endbr64, a bnd
 * prefix). 0 when there is none (PLT0, an IBT .plt's push-and-jump). */
static uint64_t stub_target(const unsigned char *p, size_t len, uint64_t addr)
{
	for (size_t i = 0; i + 6 <= len && i <= 8; i++) {
		int32_t disp;

		if (p[i] != 0xff || p[i + 1] != 0x25)
			continue;
		memcpy(&disp, p + i + 2, sizeof(disp));
		return addr + i + 6 + (uint64_t)(int64_t)disp;
	}
	return 0;
}

/* Append "name@plt" entries for the stubs of section scn to *out. */
static int scan_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, uint64_t bias,
			const struct plt_scan *s, struct ps_plt_syms *out)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t step = sh->sh_entsize >= 8 ? sh->sh_entsize : 16;

	(void)elf;
	if (!data || !data->d_buf || data->d_size < step)
		return 0;
	for (size_t off = 0; off + step <= data->d_size; off += step) {
		uint64_t addr = sh->sh_addr + off;
		uint64_t got = stub_target((const unsigned char *)data->d_buf + off, step, addr);
		const char *name = got ? got_lookup(s, got) : NULL;
		size_t len;
		char *text;

		if (!name)
			continue;
		len = strlen(name) + sizeof("@plt");
		if (ps_array__reserve(&out->v, &out->cap, out->n + 1, sizeof(*out->v)) ||
		    !(text = malloc(len)))
			return -ENOMEM;
		snprintf(text, len, "%s@plt", name);
		out->v[out->n++] =
		    (struct ps_fsym){.addr = addr + bias, .size = (uint32_t)step, .name = text};
		out->bytes += len;
	}
	return 0;
}

int ps_plt__read(Dwfl_Module *mod, struct ps_plt_syms *out)
{
	GElf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	size_t shstr;
	struct plt_scan s = {0};
	Elf_Scn *scn = NULL;
	int err;

	*out = (struct ps_plt_syms){0};
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstr) < 0)
		return 0;
	if ((err = read_relocs(elf, &s)) < 0 || !s.n)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(name = elf_strptr(elf, shstr, sh.sh_name)))
			continue;
		if (strcmp(name, ".plt") && strcmp(name, ".plt.sec") && strcmp(name, ".plt.got"))
			continue;
		if ((err = scan_section(elf, scn, &sh, bias, &s, out)) < 0)
			goto out;
	}
out:
	free(s.v);
	if (err < 0)
		ps_plt__free(out);
	return err;
}

void ps_plt__free(struct ps_plt_syms *p)
{
	for (size_t i = 0; i < p->n; i++)
		free((char *)p->v[i].name);
	free(p->v);
	*p = (struct ps_plt_syms){0};
}
