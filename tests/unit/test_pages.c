/*
 * test_pages.c: the symbolizer gives back the pages of the files it mapped
 * and only read (symbols/pages.c), all of them or the cold ones, and tells
 * what is resident, through PAGEMAP_SCAN and through pagemap's entries as
 * older kernels have them. A file of 256 pages, each holding its own
 * number, is mapped private. A read fault maps the pages around it too (the
 * kernel's fault-around, 16 pages by default), so the pages read here are
 * 32 apart, and which are resident is asked of /proc/self/pagemap by the
 * test itself.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/internal.h"
#include "tap.h"

#define PAGES 256

static size_t page;
static int pagemap;

/* Whether page p of m is in this process's page table. */
static bool present(const char *m, size_t p)
{
	uint64_t e = 0;

	return pread(pagemap, &e, sizeof(e),
		     (off_t)((uintptr_t)(m + p * page) / page * sizeof(e))) == sizeof(e) &&
	       (e >> 63 & 1);
}

static size_t count_present(const char *m)
{
	size_t n = 0;

	for (size_t p = 0; p < PAGES; p++)
		n += present(m, p);
	return n;
}

/* Reads page p of m; whether it holds its number. */
static bool touch(const char *m, size_t p)
{
	return *(const volatile uint32_t *)(m + p * page) == (uint32_t)p;
}

static void test_mode(const char *file, const char *how)
{
	struct ps_page_ages ages = {0};
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	char *m = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	size_t n, kept, drops;

	close(fd);
	if (!tap_ok(m != MAP_FAILED, "%s: the file mapped", how))
		return;
	tap_ok(count_present(m) == 0 && ps_pages__resident(m, PAGES * page) == 0,
	       "%s: nothing resident before a read", how);
	touch(m, 0);
	touch(m, 64);
	m[128 * page] = 1; /* a copy of its own: never given back */
	n = count_present(m);
	tap_ok(present(m, 0) && present(m, 64) && ps_pages__resident(m, PAGES * page) == n * page,
	       "%s: pages read and written resident, as pagemap counts them (%zu)", how, n);
	ps_pages__drop(m, PAGES * page, NULL);
	tap_ok(!present(m, 0) && !present(m, 64) && present(m, 128) && count_present(m) == 1,
	       "%s: all read pages given back, the written one kept", how);
	tap_ok(touch(m, 0) && touch(m, 64) && m[128 * page] == 1,
	       "%s: read again, from the file, the same bytes", how);

	/* ages: a page read once goes; one read again since the last drop stays */
	ps_pages__drop(m, PAGES * page, &ages);
	tap_ok(!present(m, 0) && !present(m, 64) && count_present(m) == 1,
	       "%s: the first aged drop gives back every page read once", how);
	touch(m, 0);
	touch(m, 192);
	ps_pages__drop(m, PAGES * page, &ages);
	tap_ok(present(m, 0) && !present(m, 192) && !present(m, 64),
	       "%s: page 0, read again since the drop, is kept; page 192, read once, went", how);
	/* kept pages are tested again, a slice per drop: all within 8 drops */
	for (drops = 0; drops < 8 && count_present(m) > 1; drops++)
		ps_pages__drop(m, PAGES * page, &ages);
	kept = count_present(m);
	tap_ok(kept == 1 && drops > 1,
	       "%s: unread, the kept pages went a slice at a time, all within %zu drops of 8", how,
	       drops);
	tap_ok(touch(m, 0) && touch(m, 192) && m[128 * page] == 1 &&
		   ps_page_ages__bytes(&ages) == 2 * (PAGES / 64) * sizeof(uint64_t),
	       "%s: their bytes read again; two bits a page remembered", how);
	ps_page_ages__free(&ages);
	tap_ok(!ages.bits && ps_page_ages__bytes(&ages) == 0, "%s: ages freed", how);
	munmap(m, PAGES * page);
}

int main(void)
{
	char file[] = "/tmp/perfscript-pages-XXXXXX";
	int fd = mkstemp(file);
	char *buf;

	page = (size_t)sysconf(_SC_PAGESIZE);
	pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	buf = calloc(PAGES, page);
	for (size_t p = 0; buf && p < PAGES; p++)
		*(uint32_t *)(buf + p * page) = (uint32_t)p;
	if (fd < 0 || pagemap < 0 || !buf ||
	    write(fd, buf, PAGES * page) != (ssize_t)(PAGES * page)) {
		printf("Bail out! cannot write %s or read pagemap\n", file);
		return 1;
	}
	close(fd);
	free(buf);
	test_mode(file, "PAGEMAP_SCAN");
	ps_pages__no_scan = true;
	test_mode(file, "pagemap");
	unlink(file);
	return tap_done();
}
