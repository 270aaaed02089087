/*
 * budget.c: the symbolizer's memory, bounded in bytes. What it keeps per
 * file (the file's image, mapped; its symbol table and names; the cached
 * answers and their text; line tables and inline frames) is what a long
 * system-wide session accumulates as new binaries come and go, so the files
 * are kept in least-recently-used order under a budget: ps_symbols__trim,
 * which ps_symbols__maintain runs on its schedule (at the end of this
 * file) where no answer given out is still in use, gives memory back
 * until what is left is under the budget less a margin (a quarter of it,
 * 2 MiB at most, so the next file does not evict at once). In this order:
 * the Python code objects (read again if asked), the JIT maps past a
 * quarter of the budget (idlest first), the mappings kept of processes
 * that exited (so that samples taken before their exit still name their
 * code; oldest first), the pages of images read once, and then the files,
 * least recently used first. A file given back opens again at its next
 * use, at the cost of reading it again. An image counts by its pages that
 * are resident (symbols/pages.c), which is what it adds to the process's
 * RSS; the unwinders' Dwfls, which hold images, are dropped before any
 * image is (they are rebuilt at the next sample of their process).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "symbols/budget.h"
#include "symbols/internal.h"
#include "symbols/python.h"

#define PS_SYMBOLS_BUDGET_DEFAULT (128u << 20)
#define PS_SYMBOLS_SLACK	  (2u << 20) /* how far under the budget a trim goes */

size_t ps_dso__drop_pages(struct ps_dso *d, bool cold)
{
	size_t n = 0;

	/* not read since the last drop: it holds the pages that drop kept,
	 * cold now, or none (a scan of each file costs a system call or more,
	 * and a whole-host session has hundreds) */
	if (cold && !d->read_since_drop && !d->image_ages.kept && !d->cfi_ages.kept)
		return 0;
	if (cold && !d->read_since_drop)
		cold = false;
	d->read_since_drop = false;
	if (!cold) { /* and what the ages knew is moot */
		ps_page_ages__free(&d->image_ages);
		ps_page_ages__free(&d->cfi_ages);
	}
	if (d->image && d->image_mapped)
		n += ps_pages__drop(d->image, d->image_size, cold ? &d->image_ages : NULL);
	if (d->cfi_view)
		n += ps_pages__drop(d->cfi_view, d->image_size, cold ? &d->cfi_ages : NULL);
	return n;
}

size_t ps_dso__bytes(const struct ps_dso *d)
{
	size_t n = d->arena.bytes + ps_addr_cache__bytes(&d->cache) + ps_dwarf__bytes(d->dwarf) +
		   d->nsyms * sizeof(*d->syms) + d->names_size + d->nloads * sizeof(*d->loads);

	if (d->image)
		n += d->image_mapped ? ps_pages__resident(d->image, d->image_size) : d->image_size;
	if (d->cfi_view) /* and the inflated .debug_frame after the file's pages */
		n += ps_pages__resident(d->cfi_view, d->image_size) + d->cfi_size - d->image_size;
	return n + ps_page_ages__bytes(&d->image_ages) + ps_page_ages__bytes(&d->cfi_ages);
}

void ps_dso__give_back(struct ps_dso *d)
{
	ps_arena__free(&d->arena);
	ps_addr_cache__free(&d->cache);
	ps_dwarf__free(d->dwarf);
	ps_dso_names__free(d->byname);
	ps_dso__cfi_free(d);
	ps_page_ages__free(&d->image_ages);
	if (d->image_mapped)
		ps_image__unmap(d->image, d->image_size);
	else
		free(d->image);
	free(d->syms);
	free(d->names);
	free(d->loads);
	d->dwarf = NULL;
	d->byname = NULL;
	d->image = NULL;
	d->syms = NULL;
	d->names = NULL;
	d->loads = NULL;
	d->image_size = d->nsyms = d->names_size = d->nloads = 0;
	d->image_mapped = d->opened = d->usable = d->syms_read = false;
	d->same = NULL;
}

void ps_dso__evict(struct ps_dso *d)
{
	struct ps_dsos *dsos = d->owner;
	/* every ps_dsos is a ps_symbols' own */
	struct ps_symbols *syms =
	    (struct ps_symbols *)(void *)((char *)dsos - offsetof(struct ps_symbols, dsos));

	/* the unwinders' Dwfls hold Elfs over the images (a debug file that
	 * arrived from debuginfod evicted a file a live unwinder read CFI
	 * from: the next unwind of that process read unmapped memory) */
	ps_unwinders__free(syms);
	for (size_t i = 0; i < dsos->n; i++)
		if (dsos->v[i]->same == d)
			ps_dso__give_back(dsos->v[i]);
	ps_dso__give_back(d);
	dsos->evictions++;
}

void ps_dsos__drop_truncated(struct ps_dsos *dsos)
{
	for (size_t i = 0; ps_image__hits() && i < dsos->n; i++) {
		struct ps_dso *d = dsos->v[i];

		if (!d->open_path || !ps_dso__truncated(d))
			continue;
		ps_dso__evict(d);
		free(d->open_path);
		d->open_path = NULL; /* unreadable: names its mappings, resolves nothing */
		d->opened = true;
	}
}

static int by_use(const void *a, const void *b)
{
	const struct ps_dso *x = *(struct ps_dso *const *)a, *y = *(struct ps_dso *const *)b;

	return x->used < y->used ? -1 : x->used > y->used;
}

/* Every file's bytes, and the files that hold some (not the vDSO, which is
 * read once from our own process and small). */
static size_t total(struct ps_symbols *syms, struct ps_dso **held, size_t *nheld)
{
	struct ps_dsos *dsos = &syms->dsos;
	size_t sum = 0;

	*nheld = 0;
	for (size_t i = 0; i < dsos->n; i++) {
		struct ps_dso *d = dsos->v[i];

		if (!d->opened || d->same)
			continue; /* a file sharing another's tables holds nothing itself */
		sum += ps_dso__bytes(d);
		if (held && d != dsos->vdso)
			held[(*nheld)++] = d;
	}
	return sum;
}

/* Everything the budget counts: files, exited processes, Python's tables,
 * JIT maps. */
static size_t all_bytes(struct ps_symbols *syms)
{
	size_t n;

	return total(syms, NULL, &n) + ps_procs__gone_bytes(syms) + ps_python__bytes(syms) +
	       ps_pysplice__bytes(syms) + ps_jits__bytes(syms);
}

static size_t budget_of(const struct ps_symbols *syms)
{
	return syms->dsos.budget ? syms->dsos.budget : PS_SYMBOLS_BUDGET_DEFAULT;
}

static size_t drop_pages(struct ps_symbols *syms, bool cold)
{
	size_t n = 0;

	for (size_t i = 0; syms && i < syms->dsos.n; i++)
		n += ps_dso__drop_pages(syms->dsos.v[i], cold);
	return n;
}

size_t ps_symbols__drop_pages(struct ps_symbols *syms)
{
	return drop_pages(syms, false);
}

size_t ps_symbols__drop_cold_pages(struct ps_symbols *syms)
{
	return drop_pages(syms, true);
}

size_t ps_symbols__forget_answers(struct ps_symbols *syms, size_t keep)
{
	size_t n = 0;

	for (size_t i = 0; syms && i < syms->dsos.n; i++)
		n += syms->dsos.v[i]->arena.bytes + ps_addr_cache__bytes(&syms->dsos.v[i]->cache);
	if (n <= keep)
		return 0;
	for (size_t i = 0; i < syms->dsos.n; i++) {
		struct ps_dso *d = syms->dsos.v[i];

		ps_addr_cache__free(&d->cache);
		for (size_t k = 0; k < d->nsyms; k++)
			d->syms[k].shown = NULL; /* in the arena */
		ps_arena__free(&d->arena);
	}
	return n;
}

size_t ps_symbols__trim(struct ps_symbols *syms)
{
	size_t budget, low, sum, n, evicted = 0;
	struct ps_dso **held;

	if (!syms)
		return 0;
	ps_debuginfod__apply(&syms->dsos); /* a safe point: answered files reopen */
	ps_dsos__drop_truncated(&syms->dsos);
	syms->dsos.loads_trimmed = syms->dsos.loads;
	budget = budget_of(syms);
	sum = all_bytes(syms);
	if (sum <= budget)
		return 0;
	/* the Python code objects first: read again from the process if
	 * asked; then the JIT maps past a quarter of the budget, those that
	 * named nothing for longest first */
	sum -= ps_python__trim(syms);
	sum -= ps_jits__shed(syms, budget / 4);
	/* down to a little under the budget, so the next file does not evict
	 * at once: a quarter of it, 2 MiB at most, so RSS stays within that */
	low = budget - (budget / 4 < PS_SYMBOLS_SLACK ? budget / 4 : PS_SYMBOLS_SLACK);
	sum -= ps_procs__shed(syms, sum - low);
	if (sum <= low || !(held = malloc(syms->dsos.n * sizeof(*held))))
		return 0;
	/* first the files' pages read once (CFI, symbol tables): they come
	 * back from the page cache if needed, where a file given back is
	 * read again whole */
	ps_symbols__drop_pages(syms);
	sum = total(syms, held, &n);
	qsort(held, n, sizeof(*held), by_use);
	for (size_t i = 0; i < n && sum > low; i++) {
		size_t b = ps_dso__bytes(held[i]);

		ps_dso__evict(held[i]);
		sum = sum > b ? sum - b : 0;
		evicted++;
	}
	free(held);
	/* last, the exited processes a sample named (a profile may hold their
	 * addresses), oldest first: files come back, they do not */
	sum = all_bytes(syms);
	if (sum > low)
		ps_procs__shed_sampled(syms, sum - low);
#ifdef __GLIBC__
	/* what went is spread over the heap in small blocks, which free()
	 * keeps: give the whole pages among them back, or RSS never falls */
	malloc_trim(0);
#endif
	return evicted;
}

bool ps_symbols__grew(const struct ps_symbols *syms)
{
	return syms && syms->dsos.loads != syms->dsos.loads_trimmed;
}

bool ps_symbols__over(struct ps_symbols *syms)
{
	size_t n;

	if (!syms || syms->dsos.loads == syms->dsos.loads_weighed)
		return false;
	syms->dsos.loads_weighed = syms->dsos.loads;
	return total(syms, NULL, &n) + ps_procs__gone_bytes(syms) >
	       budget_of(syms) + PS_SYMBOLS_SLACK;
}

void ps_symbols__set_debuginfod(struct ps_symbols *syms, double wait_s)
{
	if (!syms)
		return;
	syms->dsos.debuginfod_off = wait_s < 0;
	syms->dsos.debuginfod_set = true;
	syms->dsos.debuginfod_budget_ns = wait_s > 0 ? (uint64_t)(wait_s * 1e9) : 0;
}

void ps_symbols__settle(struct ps_symbols *syms)
{
	if (!syms)
		return;
	ps_debuginfod__settle(&syms->dsos);
	ps_jits__recheck(syms);
}

void ps_symbols__set_lines(struct ps_symbols *syms, bool on)
{
	if (!syms)
		return;
	syms->dsos.no_lines = !on;
	for (size_t i = 0; !on && i < syms->dsos.n; i++) {
		ps_dwarf__free(syms->dsos.v[i]->dwarf);
		syms->dsos.v[i]->dwarf = NULL;
	}
}

bool ps_symbols__lines(const struct ps_symbols *syms)
{
	return syms && !syms->dsos.no_lines;
}

void ps_symbols__set_budget(struct ps_symbols *syms, size_t bytes)
{
	if (!syms)
		return;
	syms->dsos.budget = bytes;
	syms->upkeep.due = true; /* kept to at the next ps_symbols__maintain */
}

/* Cached answers kept past each forgetting: a profile's hot addresses fit
 * many times over; past it, a long whole-host session's long tail of
 * distinct addresses is what grows. */
#define PS_KEEP_ANSWERS (1u << 20)
#define PS_UPKEEP_CALLS 1024 /* calls between reads of the clock */

void ps_symbols__maintain(struct ps_symbols *syms, uint64_t now_ns)
{
	struct timespec ts;
	int64_t now;

	/* a clock read per sample would cost more than the check: every
	 * 1024th call, or when a file was read (memory may have jumped) or
	 * its debug file arrived */
	if (!syms ||
	    (!now_ns && ++syms->upkeep.calls % PS_UPKEEP_CALLS && !ps_symbols__grew(syms) &&
	     !syms->upkeep.due && !ps_debuginfod__answered(&syms->dsos)))
		return;
	if (!now_ns) {
		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		now = ts.tv_sec;
	} else {
		now = (int64_t)(now_ns / 1000000000u);
	}
	if (!syms->upkeep.paged) /* the schedule starts at the first call */
		syms->upkeep.paged = syms->upkeep.forgot = now;
	/* a trim walks every file's resident pages: when a file was read
	 * since the last (once a second at most), at once past the budget,
	 * when a debug file arrived (the trim gives it to its file), and every
	 * 10 s for what grows without a read (answers, processes that exited) */
	if (syms->upkeep.due || ps_symbols__over(syms) || ps_debuginfod__answered(&syms->dsos) ||
	    (ps_symbols__grew(syms) && now != syms->upkeep.trimmed) ||
	    now - syms->upkeep.trimmed >= 10) {
		syms->upkeep.trimmed = now;
		syms->upkeep.due = false;
		ps_symbols__trim(syms);
	}
	if (now - syms->upkeep.paged >= 2) {
		syms->upkeep.paged = now;
		ps_symbols__drop_cold_pages(syms);
	}
	if (now - syms->upkeep.forgot >= 10) {
		syms->upkeep.forgot = now;
		ps_symbols__forget_answers(syms, PS_KEEP_ANSWERS);
	}
}

void ps_symbols__give_back(struct ps_symbols *syms)
{
	if (!syms)
		return;
	ps_symbols__trim(syms);
	ps_symbols__drop_cold_pages(syms);
	ps_symbols__forget_answers(syms, PS_KEEP_ANSWERS);
}

int ps_symbols__stats(struct ps_symbols *syms, struct ps_symbols_stats *st)
{
	size_t n = 0;

	if (!syms || !st || st->sz < sizeof(*st))
		return -EINVAL;
	*st = (struct ps_symbols_stats){.sz = sizeof(*st)};
	for (size_t i = 0; i < syms->dsos.n; i++)
		n += syms->dsos.v[i]->opened && !syms->dsos.v[i]->same;
	st->files = syms->dsos.n;
	st->files_open = n;
	st->bytes = all_bytes(syms);
	st->budget = budget_of(syms);
	st->evictions = syms->dsos.evictions;
	st->processes = syms->procs.n;
	st->exited = ps_procs__gone_count(syms);
	st->unwinders = syms->unwinders ? ps_unwinders__count(syms->unwinders) : 0;
	return 0;
}
