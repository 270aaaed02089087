/*
 * symbolize.c: how fast ps_symbols names distinct addresses with their
 * inline frames and source lines. BIN is mapped, as a ring's MMAP2 would
 * announce it, into a made-up process at an ASLR-like base, and every 4th
 * byte of its .text (link-time addresses, written to ADDRS for addr2line)
 * is resolved once with ps_symbols__resolve and ps_symbols__srcframes: no
 * answer comes from the cache, each costs what a profile's first sight of
 * an address costs. Prints one line:
 *   addresses=N per_s=R named=.. with_lines=.. inlined_frames=.. first_ms=..
 * usage: symbolize BIN ADDRS
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perfscript.h"

#define BASE 0x555500000000ull
#define PID  0x3ffffff2

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* .text's link-time address and size. */
static int text_of(const char *bin, uint64_t *addr, uint64_t *size)
{
	int fd = open(bin, O_RDONLY), found = -1;
	Elf_Scn *scn = NULL;
	size_t shstr;
	Elf *elf;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_getshdrstrndx(elf, &shstr) == 0) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstr, sh.sh_name)) &&
			    !strcmp(name, ".text")) {
				*addr = sh.sh_addr;
				*size = sh.sh_size;
				found = 0;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

int main(int argc, char **argv)
{
	struct ps_symbols *syms = ps_symbols__new();
	uint64_t text, size, named = 0, lines = 0, inl = 0, n = 0;
	struct ps_record r = {.type = PERF_RECORD_MMAP2, .pid = PID, .tid = PID, .addr = BASE,
			      .prot = PROT_READ | PROT_EXEC};
	char path[4096], buf[1024];
	struct stat st;
	double t0, t1, first = 0;
	FILE *out;

	if (argc != 3 || !realpath(argv[1], path) || stat(path, &st) || text_of(path, &text, &size)) {
		fprintf(stderr, "usage: symbolize BIN ADDRS (BIN an ELF file with .text)\n");
		return 2;
	}
	out = fopen(argv[2], "w");
	if (!out || !syms)
		return 1;
	r.len = (uint64_t)st.st_size;
	r.filename = path;
	ps_symbols__record(syms, &r);
	for (uint64_t a = text; a < text + size; a += 4)
		fprintf(out, "%#llx\n", (unsigned long long)a);
	fclose(out);
	t0 = now_ms();
	for (uint64_t a = text; a < text + size; a += 4, n++) {
		const struct ps_srcframe *f;
		int k;

		named += ps_symbols__resolve(syms, PID, BASE + a, false, buf, sizeof(buf), NULL) == 0;
		k = ps_symbols__srcframes(syms, PID, BASE + a, &f);
		lines += k > 0 && f[0].file;
		inl += k > 1 ? (uint64_t)k - 1 : 0;
		if (n == 0)
			first = now_ms() - t0; /* the file read and its DWARF opened */
	}
	t1 = now_ms();
	printf("addresses=%llu per_s=%.0f named=%llu with_lines=%llu inlined_frames=%llu "
	       "first_ms=%.1f\n",
	       (unsigned long long)n, n / ((t1 - t0) / 1e3), (unsigned long long)named,
	       (unsigned long long)lines, (unsigned long long)inl, first);
	ps_symbols__free(syms);
	return 0;
}
