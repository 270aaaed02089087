/*
 * pages.c: the pages of the files' mapped images that this process holds.
 * An image is mapped private and only read, so its pages are the page
 * cache's: unmapping them (MADV_DONTNEED) takes them out of our RSS and a
 * later read faults them in again, from the page cache, with the pages
 * around it (the kernel's fault-around: 16 by default).
 * What is resident is told by /proc/self/pagemap (present, and a file
 * page rather than a copy we wrote).
 *
 * Unwinding reads a few pages of a busy library's CFI again and again (the
 * top of its .eh_frame_hdr table, its hot functions' FDEs) and many others
 * once. Giving everything back every few seconds cycles the first kind in
 * and out, a sawtooth as tall as the hot set; so a drop that ages the
 * pages keeps a page that came back since the drop before it (read in two
 * periods in a row), and tests each kept page again every PS_AGE_RETEST
 * drops, a slice of them at each, by dropping it: if it is still hot it
 * comes back and is kept again. Two bits a page remember this.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbols/internal.h"

#define PS_AGE_RETEST 8

/* PAGEMAP_SCAN (Linux 6.7; the headers here may predate it): the runs of
 * pages of a range that have the asked categories, holes skipped in the
 * page tables themselves. Where it is missing, pagemap's entries, read
 * eight bytes a page (a 110 MB library's range takes 54 reads). */
#ifndef PAGEMAP_SCAN
struct page_region {
	uint64_t start, end, categories;
};
struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN	_IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_FILE	(1 << 2)
#define PAGE_IS_PRESENT (1 << 3)
#endif

/* /proc/self/pagemap, opened once for every thread and session (or -1). */
static int pagemap;
static pthread_once_t pagemap_once = PTHREAD_ONCE_INIT;

static void open_pagemap(void)
{
	pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
}

static int pagemap_fd(void)
{
	pthread_once(&pagemap_once, open_pagemap);
	return pagemap;
}

bool ps_pages__no_scan;

typedef void each_run_fn(void *ctx, size_t at, size_t k);

static int scan_ioctl(int fd, size_t first, size_t n, uint64_t mask, each_run_fn *each, void *ctx)
{
	static atomic_bool missing; /* the kernel has no PAGEMAP_SCAN: for every thread */
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct page_region v[64];
	struct pm_scan_arg arg = {.size = sizeof(arg),
				  .start = first * page,
				  .end = (first + n) * page,
				  .vec = (uintptr_t)v,
				  .vec_len = 64,
				  .category_mask = mask,
				  .return_mask = mask};

	if (missing || ps_pages__no_scan)
		return 1;
	while (arg.start < arg.end) {
		int got = ioctl(fd, PAGEMAP_SCAN, &arg);

		if (got < 0 && arg.start == first * page && (errno == ENOTTY || errno == EINVAL)) {
			missing = true; /* an older kernel */
			return 1;
		}
		if (got < 0 || arg.walk_end <= arg.start)
			return -1;
		for (int i = 0; i < got; i++)
			each(ctx, v[i].start / page - first, (v[i].end - v[i].start) / page);
		arg.start = arg.walk_end;
	}
	return 0;
}

/* Calls each(ctx, at, k) for every run of pages [first+at, first+at+k)
 * present in this process (file pages only: the clean ones), in order. */
static int scan(size_t first, size_t n, bool file_only, each_run_fn *each, void *ctx)
{
	uint64_t mask = PAGE_IS_PRESENT | (file_only ? PAGE_IS_FILE : 0), ent[512];
	int fd = pagemap_fd(), r = fd < 0 ? -1 : scan_ioctl(fd, first, n, mask, each, ctx);

	if (r <= 0)
		return r;
	for (size_t at = 0; at < n; at += 512) {
		size_t k = n - at < 512 ? n - at : 512;

		if (pread(fd, ent, k * sizeof(*ent), (off_t)((first + at) * sizeof(*ent))) !=
		    (ssize_t)(k * sizeof(*ent)))
			return -1;
		for (size_t i = 0, j; i < k; i = j + 1) {
			for (j = i;
			     j < k && (ent[j] >> 63 & 1) && (!file_only || (ent[j] >> 61 & 1));)
				j++;
			if (j > i)
				each(ctx, at + i, j - i);
		}
	}
	return 0;
}

static bool bit(const uint64_t *v, size_t i)
{
	return v[i / 64] >> (i % 64) & 1;
}

static void set_bit(uint64_t *v, size_t i, bool on)
{
	if (on)
		v[i / 64] |= 1ull << (i % 64);
	else
		v[i / 64] &= ~(1ull << (i % 64));
}

static void clear_bits(uint64_t *v, size_t from, size_t to)
{
	for (; from < to && from % 64; from++)
		set_bit(v, from, false);
	for (; from + 64 <= to; from += 64)
		v[from / 64] = 0;
	for (; from < to; from++)
		set_bit(v, from, false);
}

struct dropping {
	char *base; /* the range's first page */
	size_t page, next, dropped;
	struct ps_page_ages *ages;
};

static void unmap(struct dropping *d, size_t at, size_t k)
{
	if (k && !madvise(d->base + at * d->page, k * d->page, MADV_DONTNEED))
		d->dropped += k * d->page;
}

/* Whether page p, resident, goes now, as the header says. */
static bool goes(struct ps_page_ages *a, size_t p)
{
	uint64_t *kept = a->bits, *dropped = a->bits + a->words;
	bool go = bit(kept, p) ? (p + a->epoch) % PS_AGE_RETEST == 0 /* a slice is tested */
			       : !bit(dropped, p); /* came back since the last drop: kept */

	set_bit(kept, p, !go);
	set_bit(dropped, p, go);
	a->kept += !go;
	return go;
}

static void drop_run(void *ctx, size_t at, size_t k)
{
	struct dropping *d = ctx;
	struct ps_page_ages *a = d->ages;
	size_t from = at;

	if (!a) {
		unmap(d, at, k);
		return;
	}
	/* pages not resident since the last run: neither kept nor dropped */
	clear_bits(a->bits, d->next, at);
	clear_bits(a->bits + a->words, d->next, at);
	for (size_t p = at; p < at + k; p++)
		if (!goes(a, p)) {
			unmap(d, from, p - from);
			from = p + 1;
		}
	unmap(d, from, at + k - from);
	d->next = at + k;
}

size_t ps_pages__drop(void *addr, size_t len, struct ps_page_ages *a)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), first = (uintptr_t)addr / page,
	       n = ((uintptr_t)addr + len + page - 1) / page - first;
	struct dropping d = {.base = (char *)(first * page), .page = page, .ages = a};

	if (a && !a->bits) {
		a->words = (n + 63) / 64;
		if (!(a->bits = calloc(2 * a->words, sizeof(*a->bits))))
			d.ages = a = NULL; /* then all of them */
	}
	if (a)
		a->kept = 0;
	if (scan(first, n, true, drop_run, &d) < 0 || !a)
		return d.dropped;
	clear_bits(a->bits, d.next, n);
	clear_bits(a->bits + a->words, d.next, n);
	a->epoch++;
	return d.dropped;
}

void ps_page_ages__free(struct ps_page_ages *a)
{
	free(a->bits);
	*a = (struct ps_page_ages){0};
}

size_t ps_page_ages__bytes(const struct ps_page_ages *a)
{
	return 2 * a->words * sizeof(*a->bits);
}

static void count_run(void *ctx, size_t at, size_t k)
{
	(void)at;
	*(size_t *)ctx += k;
}

/* The pages of [image, image+size) in this process's memory: those its
 * page table has, so a page of a shared library that other processes keep
 * in the page cache counts only once it was read here; without pagemap,
 * mincore's page cache answer. */
size_t ps_pages__resident(const void *image, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (size + page - 1) / page, in = 0;
	unsigned char vec[4096];

	if (!scan((uintptr_t)image / page, n, false, count_run, &in))
		return in * page;
	in = 0;
	for (size_t at = 0; at < n; at += sizeof(vec)) {
		size_t k = n - at < sizeof(vec) ? n - at : sizeof(vec);

		if (mincore((char *)image + at * page, k * page, vec) < 0)
			return size; /* cannot tell: count it all */
		for (size_t i = 0; i < k; i++)
			in += vec[i] & 1;
	}
	return in * page;
}
