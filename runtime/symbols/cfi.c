/*
 * cfi.c: the image an unwinder's libdw reads call frame information from.
 * libdw (0.188) takes .eh_frame_hdr's binary search table only when that
 * section comes before .eh_frame in the section headers, as GNU ld and lld
 * lay them out by default. The LLVM project's own libraries as Debian
 * builds them (libLLVM, libclang, libc++, libomp) have it after, and libdw
 * then parses every FDE of the file at the first lookup its cache misses,
 * and keeps them all: 10 ms and 12.8 MB for libLLVM, again in each
 * process's Dwfl. Without section headers libdw
 * finds the table through the PT_GNU_EH_FRAME program header instead (0.05
 * ms, 0.6 MB). So a file laid out so gets, for the unwinders only, a
 * second copy-on-write mapping whose ELF header says it has no sections
 * (one page of its own); its symbols, lines and everything else are read
 * from the image as it is.
 *
 * A file whose debug sections are compressed (Go's, by default; gcc -gz)
 * gets a second mapping too. Where .eh_frame has no entry for a pc (all
 * of a Go program, which has no .eh_frame; anyone's outermost frame) libdw
 * looks for .debug_frame, and to find it inflates every debug section of
 * the file into the process's Dwfl: 20 MB for a 30 MB Go program, again
 * for each of its processes, outside the budget (an agent's RSS rose from
 * 21 to 43 MB as a Go program started). In the view .debug_frame is the
 * only debug section, inflated once after the file's end and shared by
 * every process; the others lose their names, so libdw passes them by.
 */
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "symbols/internal.h"

/* Whether elf has a PT_GNU_EH_FRAME and its .eh_frame_hdr section comes
 * after .eh_frame. */
static bool hdr_after_frame(Elf *elf)
{
	size_t shstrndx, nphdr, frame = 0, hdr = 0;
	bool table = false;

	if (elf_getphdrnum(elf, &nphdr) < 0 || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return false;
	for (size_t i = 0; i < nphdr && !table; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		table = ph && ph->p_type == PT_GNU_EH_FRAME;
	}
	for (Elf_Scn *scn = NULL; table && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name =
		    gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;

		if (name && !strcmp(name, ".eh_frame"))
			frame = elf_ndxscn(scn);
		else if (name && !strcmp(name, ".eh_frame_hdr"))
			hdr = elf_ndxscn(scn);
	}
	return frame && hdr > frame;
}

/* The file mapped again, its section headers hidden; NULL if it cannot
 * be (it changed since its image was mapped). */
static void *hidden_sections(const struct ps_dso *d)
{
	size_t size = 0;
	unsigned char *p = d->open_path ? ps_image__map(d->open_path, &d->stamp, &size) : NULL;

	if (p && size != d->image_size) {
		ps_image__unmap(p, size);
		p = NULL;
	}
	if (!p)
		return NULL;
	if (p[EI_CLASS] == ELFCLASS64 && d->image_size >= sizeof(Elf64_Ehdr)) {
		Elf64_Ehdr *eh = (Elf64_Ehdr *)p;

		eh->e_shoff = 0;
		eh->e_shnum = 0;
		eh->e_shstrndx = SHN_UNDEF;
	} else if (p[EI_CLASS] == ELFCLASS32 && d->image_size >= sizeof(Elf32_Ehdr)) {
		Elf32_Ehdr *eh = (Elf32_Ehdr *)p;

		eh->e_shoff = 0;
		eh->e_shnum = 0;
		eh->e_shstrndx = SHN_UNDEF;
	}
	return p;
}

/* Whether name is a DWARF section's name, plain or GNU's compressed form. */
static bool debug_name(const char *name)
{
	return name && (!strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8));
}

/* Whether elf has a compressed debug section. */
static bool compressed_debug(Elf *elf)
{
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name =
		    gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;

		if (debug_name(name) && ((sh.sh_flags & SHF_COMPRESSED) || name[1] == 'z'))
			return true;
	}
	return false;
}

/* In the view p (its section headers at shoff), section i as the frame
 * view has it: .debug_frame (frame) inflated at `at`, its size `size`,
 * the other debug sections nameless and without contents. */
#define FRAME_ONLY(Ehdr, Shdr)                                                                     \
	do {                                                                                       \
		const Ehdr *eh = (const Ehdr *)p;                                                  \
		Shdr *sh = (Shdr *)(p + eh->e_shoff) + i;                                          \
                                                                                                   \
		if (eh->e_shentsize != sizeof(Shdr) || eh->e_shoff > len ||                        \
		    (i + 1) * sizeof(Shdr) > len - eh->e_shoff)                                    \
			return false;                                                              \
		sh->sh_flags &= ~(__typeof__(sh->sh_flags))SHF_COMPRESSED;                         \
		if (i != frame) {                                                                  \
			sh->sh_name = 0;                                                           \
			sh->sh_type = SHT_NOBITS;                                                  \
		} else {                                                                           \
			sh->sh_name += zlib; /* ".zdebug_frame" + 1: ".debug_frame" */             \
			sh->sh_offset = at;                                                        \
			sh->sh_size = size;                                                        \
			sh->sh_addralign = 1;                                                      \
		}                                                                                  \
	} while (0)

static bool frame_only_section(unsigned char *p, size_t len, size_t i, size_t frame, bool zlib,
			       size_t at, size_t size)
{
	if (p[EI_CLASS] == ELFCLASS64)
		FRAME_ONLY(Elf64_Ehdr, Elf64_Shdr);
	else
		FRAME_ONLY(Elf32_Ehdr, Elf32_Shdr);
	return true;
}

/* The inflated size of a compressed section (its ELF compression header,
 * or GNU's "ZLIB" and a big-endian size), 0 if it says none. */
static size_t inflated_size(Elf_Scn *scn, const GElf_Shdr *sh, bool zlib)
{
	GElf_Chdr ch;
	Elf_Data *raw;
	const unsigned char *b;
	size_t n = 0;

	if (sh->sh_flags & SHF_COMPRESSED)
		return gelf_getchdr(scn, &ch) ? (size_t)ch.ch_size : 0;
	if (!zlib)
		return (size_t)sh->sh_size;
	raw = elf_rawdata(scn, NULL);
	b = raw ? raw->d_buf : NULL;
	if (!b || raw->d_size < 12 || memcmp(b, "ZLIB", 4))
		return 0;
	for (int i = 4; i < 12; i++)
		n = n << 8 | b[i];
	return n;
}

/* .debug_frame inflated into the view p, at `at` (size bytes): libelf
 * inflates it over the view, whose pages are ours. */
static bool inflate_frame(unsigned char *p, size_t len, size_t frame, bool zlib, size_t at,
			  size_t size)
{
	Elf *elf = elf_memory((char *)p, len);
	Elf_Scn *scn = elf ? elf_getscn(elf, frame) : NULL;
	GElf_Shdr sh;
	Elf_Data *data = NULL;
	bool ok = false;

	if (scn && gelf_getshdr(scn, &sh) &&
	    ((sh.sh_flags & SHF_COMPRESSED) ? elf_compress(scn, 0, 0) >= 0
	     : zlib			    ? elf_compress_gnu(scn, 0, 0) >= 0
					    : true))
		data = elf_getdata(scn, NULL);
	if (data && data->d_size == size) {
		memcpy(p + at, data->d_buf, size);
		ok = true;
	}
	elf_end(elf);
	return ok;
}

/* The file mapped again with .debug_frame its only debug section,
 * inflated after the file's end, the view's size in *view_size; NULL if
 * it cannot be (it changed, its byte order is not ours, it is malformed). */
static void *frame_only(const struct ps_dso *d, size_t *view_size)
{
	Elf *elf = elf_memory(d->image, d->image_size);
	size_t shstrndx, frame = 0, at = (d->image_size + 7) & ~(size_t)7, size = 0, len = 0;
	unsigned char *p = NULL;
	bool zlib = false, ok = true;
	GElf_Ehdr ehm, *eh = elf ? gelf_getehdr(elf, &ehm) : NULL;

	if (!eh || elf_getshdrstrndx(elf, &shstrndx) < 0 ||
	    eh->e_ident[EI_DATA] !=
		(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
		goto out;
	for (Elf_Scn *scn = NULL; !frame && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name =
		    gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;

		if (!name || (strcmp(name, ".debug_frame") && strcmp(name, ".zdebug_frame")))
			continue;
		zlib = name[1] == 'z';
		size = inflated_size(scn, &sh, zlib);
		frame = size ? elf_ndxscn(scn) : 0;
	}
	p = d->open_path
		? ps_image__map_more(d->open_path, &d->stamp, &len, at - d->image_size + size)
		: NULL;
	*view_size = at + size;
	if (p && len != d->image_size) {
		ps_image__unmap(p, len + at - d->image_size + size);
		p = NULL;
	}
	if (!p)
		goto out;
	if (frame)
		ok = inflate_frame(p, d->image_size, frame, zlib, at, size);
	for (Elf_Scn *scn = NULL; ok && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && debug_name(elf_strptr(elf, shstrndx, sh.sh_name)))
			ok = frame_only_section(p, d->image_size, elf_ndxscn(scn), frame, zlib, at,
						size);
	}
	if (!ok) {
		ps_image__unmap(p, *view_size);
		p = NULL;
	}
out:
	elf_end(elf);
	return p;
}

Elf *ps_dso__cfi_elf(struct ps_dso *d)
{
	if (!d || !d->image)
		return NULL;
	if (d->cfi_state == PS_CFI_UNKNOWN) {
		Elf *elf = elf_memory(d->image, d->image_size);

		d->cfi_state = !elf		       ? PS_CFI_AS_IS
			       : hdr_after_frame(elf)  ? PS_CFI_HIDE
			       : compressed_debug(elf) ? PS_CFI_FRAME
						       : PS_CFI_AS_IS;
		elf_end(elf);
		d->cfi_size = d->image_size;
		if (d->cfi_state == PS_CFI_HIDE)
			d->cfi_view = hidden_sections(d);
		else if (d->cfi_state == PS_CFI_FRAME)
			d->cfi_view = frame_only(d, &d->cfi_size);
		if (!d->cfi_view) {
			d->cfi_state = PS_CFI_AS_IS;
			d->cfi_size = d->image_size;
		}
	}
	return elf_memory(d->cfi_view ? d->cfi_view : d->image, d->cfi_size);
}

void ps_dso__cfi_free(struct ps_dso *d)
{
	if (d->cfi_view)
		ps_image__unmap(d->cfi_view, d->cfi_size);
	d->cfi_view = NULL;
	d->cfi_size = 0;
	ps_page_ages__free(&d->cfi_ages);
	d->cfi_state = PS_CFI_UNKNOWN;
}
