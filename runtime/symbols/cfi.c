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

Elf *ps_dso__cfi_elf(struct ps_dso *d)
{
	if (!d || !d->image)
		return NULL;
	if (d->cfi_state == PS_CFI_UNKNOWN) {
		Elf *elf = elf_memory(d->image, d->image_size);

		d->cfi_state = elf && hdr_after_frame(elf) ? PS_CFI_HIDE : PS_CFI_AS_IS;
		elf_end(elf);
		if (d->cfi_state == PS_CFI_HIDE && !(d->cfi_view = hidden_sections(d)))
			d->cfi_state = PS_CFI_AS_IS;
	}
	return elf_memory(d->cfi_view ? d->cfi_view : d->image, d->image_size);
}

void ps_dso__cfi_free(struct ps_dso *d)
{
	if (d->cfi_view)
		ps_image__unmap(d->cfi_view, d->image_size);
	d->cfi_view = NULL;
	ps_page_ages__free(&d->cfi_ages);
	d->cfi_state = PS_CFI_UNKNOWN;
}
