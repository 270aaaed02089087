/*
 * uprobe_site.c: where a uprobe goes in an ELF file. The kernel's uprobe PMU
 * takes a path and a file offset, not an address, so a symbol's link-time
 * address is turned into the offset of the bytes that hold it through the
 * PT_LOAD segment that maps it. SystemTap's static markers (USDT, written
 * with sys/sdt.h's STAP_PROBE) are read from the file's .note.stapsdt
 * notes: each holds the marker's address, the link-time address of
 * .stapsdt.base (to correct for prelinking), its semaphore's address and
 * "provider\0name\0args". A marker may sit at several places (inlined or
 * unrolled): every site is returned. The semaphore, when there is one, goes
 * to the kernel as a file offset too (ref_ctr_offset), and the kernel keeps
 * it raised in every process that maps the file while the probe is open, so
 * code guarded by it (if (PROVIDER_NAME_ENABLED())) runs then and only then.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include "base/suggest.h"
#include "symbols/internal.h"

#define NT_STAPSDT 3

struct elf_file {
	int fd;
	Elf *elf;
	const char *raw; /* its bytes, guarded */
	size_t len;
};

static int elf_open(const char *path, struct elf_file *f)
{
	f->elf = NULL;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		if (f->elf)
			elf_end(f->elf);
		close(f->fd);
		return -ENOEXEC;
	}
	/* read in place: its owner may truncate it meanwhile (symbols/image.c) */
	f->raw = elf_rawfile(f->elf, &f->len);
	if (f->raw && ps_image__guard(f->raw, f->len) < 0)
		f->raw = NULL;
	return 0;
}

static void elf_close(struct elf_file *f)
{
	ps_image__unguard(f->raw);
	elf_end(f->elf);
	close(f->fd);
}

static int vaddr_to_offset(Elf *elf, uint64_t addr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) < 0)
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* file-backed bytes only: a .bss address has no offset */
		if (addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_filesz) {
			*off = addr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ERANGE;
}

int ps_syms__file_offset(const char *path, uint64_t addr, uint64_t *off)
{
	struct elf_file f;
	int err = elf_open(path, &f);

	if (err)
		return err;
	err = vaddr_to_offset(f.elf, addr, off);
	elf_close(&f);
	return err;
}

/* The section called name, or NULL. */
static Elf_Scn *section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(n, name))
			return scn;
	}
	return NULL;
}

struct marker {
	uint64_t pc, base, sem;
	const char *provider, *name, *args;
};

/* Decode one stapsdt note's descriptor; false when it is malformed. */
static bool decode(const char *desc, size_t len, bool is64, struct marker *m)
{
	size_t w = is64 ? 8 : 4, at = 3 * w;
	uint64_t v[3] = {0, 0, 0};

	if (len < at + 2)
		return false;
	for (int i = 0; i < 3; i++)
		memcpy(&v[i], desc + i * w, w); /* little-endian hosts only */
	m->pc = v[0];
	m->base = v[1];
	m->sem = v[2];
	m->provider = desc + at;
	at += strnlen(desc + at, len - at) + 1;
	if (at >= len)
		return false;
	m->name = desc + at;
	if (strnlen(desc + at, len - at) >= len - at)
		return false;
	at += strlen(m->name) + 1;
	m->args = at < len && strnlen(desc + at, len - at) < len - at ? desc + at : "";
	return true;
}

/* The link-time address of a global's symbol, from the file's symbol
 * tables: 0, or -ENOENT. */
static int symbol_value(Elf *elf, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *n;

			if (gelf_getsym(data, (int)i, &sym) && sym.st_shndx != SHN_UNDEF &&
			    (n = elf_strptr(elf, sh.sh_link, sym.st_name)) && !strcmp(n, name)) {
				*value = sym.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* The site's arguments from its note; a global's symbol becomes its
 * link-time address (an operand not understood, or a symbol not found,
 * leaves nargs < 0 and the operand in bad). */
static void site_args(Elf *elf, const char *spec, struct ps_usdt_site *site)
{
	site->nargs =
	    ps_usdt__parse(spec, site->args, PS_USDT_MAX_ARGS, site->bad, sizeof(site->bad));
	for (int i = 0; i < site->nargs; i++) {
		struct ps_usdt_arg *a = &site->args[i];
		uint64_t v;

		if (a->kind != PS_USDT_GLOBAL)
			continue;
		if (symbol_value(elf, a->symbol, &v)) {
			snprintf(site->bad, sizeof(site->bad), "%s", a->text);
			site->nargs = -ENOENT;
			return;
		}
		a->val += (int64_t)v;
	}
}

int ps_syms__usdt(const char *path, const char *provider, const char *name,
		  struct ps_usdt_site *sites, size_t max, char *near, size_t nearlen)
{
	struct ps_suggest sg;
	char want[256], cand[256];
	struct elf_file f;
	GElf_Shdr sh, bsh;
	Elf_Scn *scn = NULL;
	uint64_t base_addr = 0;
	size_t found = 0;
	int err = elf_open(path, &f);

	if (near && nearlen)
		near[0] = '\0';
	if (err)
		return err;
	snprintf(want, sizeof(want), "%s:%s", provider, name);
	ps_suggest__init(&sg, want, strlen(want));
	if (section(f.elf, ".stapsdt.base", &bsh))
		base_addr = bsh.sh_addr;
	while ((scn = elf_nextscn(f.elf, scn))) {
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			struct marker m;
			uint64_t pc, sem;

			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
			    memcmp((char *)data->d_buf + noff, "stapsdt", 8) ||
			    !decode((char *)data->d_buf + doff, nh.n_descsz,
				    gelf_getclass(f.elf) == ELFCLASS64, &m))
				continue;
			if (strcmp(m.provider, provider) || strcmp(m.name, name)) {
				snprintf(cand, sizeof(cand), "%s:%s", m.provider, m.name);
				ps_suggest__try(&sg, cand);
				continue;
			}
			/* prelink moved the file: move the marker with it */
			pc = m.pc + (base_addr && m.base ? base_addr - m.base : 0);
			sem = m.sem ? m.sem + (base_addr && m.base ? base_addr - m.base : 0) : 0;
			if (found < max) {
				sites[found].semaphore = 0;
				sites[found].pc = pc;
				site_args(f.elf, m.args, &sites[found]);
				if ((err = vaddr_to_offset(f.elf, pc, &sites[found].offset)) < 0 ||
				    (sem && (err = vaddr_to_offset(f.elf, sem,
								   &sites[found].semaphore)) < 0))
					goto out;
			}
			found++;
		}
	}
	if (!found && near && nearlen)
		snprintf(near, nearlen, "%s", sg.best);
	err = (int)found;
out:
	elf_close(&f);
	return err;
}

/* Kernel memory, for s:kernel_string(): /proc/kcore is an ELF core whose
 * PT_LOAD segments map kernel virtual addresses to file offsets. Root only
 * (the file is 0400), and lockdown may refuse it. */
int ps_symbols__kernel_read(uint64_t addr, void *buf, size_t len)
{
	struct elf_file f = {.fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC)};
	size_t n = 0;
	ssize_t got = -1;
	int err = -ERANGE;

	if (!buf || !len)
		return -EINVAL;
	if (f.fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	/* ELF_C_READ reads headers on demand: the file claims terabytes */
	if (!(f.elf = elf_begin(f.fd, ELF_C_READ, NULL)) || elf_getphdrnum(f.elf, &n) < 0) {
		err = -ENOEXEC;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f.elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    addr < ph.p_vaddr || addr >= ph.p_vaddr + ph.p_memsz)
			continue;
		if (len > ph.p_vaddr + ph.p_memsz - addr)
			len = ph.p_vaddr + ph.p_memsz - addr;
		got = pread(f.fd, buf, len, (off_t)(addr - ph.p_vaddr + ph.p_offset));
		err = got < 0 ? -errno : (int)got;
		break;
	}
out:
	if (f.elf)
		elf_end(f.elf);
	close(f.fd);
	return err;
}
