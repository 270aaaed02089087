/*
 * image.c: the bytes of the files the symbolizer reads, mapped
 * copy-on-write, and the rules that make reading them safe in a root
 * process whatever the files' owners do.
 *
 * A file is opened only if it is still the file that was mapped (device
 * and inode, and size and mtime when known): whatever another user renames
 * or links over its path (a FIFO, which would block the open for good; a
 * root-only file, whose names would be served; another library) is
 * refused, and a FIFO cannot block the open (O_NONBLOCK).
 *
 * An owner may also truncate a file while it is mapped: reading a page past
 * the new end raises SIGBUS. Every image is registered here, and a SIGBUS
 * at an address inside one puts a page of zeros there and marks the image
 * changed, so the read goes on (its answer is wrong, as is any answer about
 * a file rewritten under us) and the symbolizer drops the image at its next
 * use. A SIGBUS anywhere else goes to the disposition there was before.
 * The table is one per process, as signal handlers are, and lock-free: the
 * handler may run on any thread at any time.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/internal.h"

#define GUARDS 8192 /* images mapped at once (the budget evicts long before) */

enum { FREE, CLAIMED, LIVE };

static struct guard {
	atomic_int state;
	atomic_uintptr_t start;
	atomic_size_t len;
	atomic_bool hit;
} guards[GUARDS];

static atomic_ulong hits;
static struct sigaction previous;
static uintptr_t page_mask;
static pthread_once_t installed = PTHREAD_ONCE_INIT;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;

	for (size_t i = 0; i < GUARDS; i++) {
		struct guard *g = &guards[i];
		uintptr_t start;

		if (atomic_load_explicit(&g->state, memory_order_acquire) != LIVE)
			continue;
		start = atomic_load_explicit(&g->start, memory_order_relaxed);
		if (a < start || a - start >= atomic_load_explicit(&g->len, memory_order_relaxed))
			continue;
		if (mmap((void *)(a & page_mask), ~page_mask + 1, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			break;
		atomic_store(&g->hit, true);
		atomic_fetch_add(&hits, 1);
		return; /* the read is tried again, and reads zeros */
	}
	if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction)
		previous.sa_sigaction(sig, si, uc);
	else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN)
		previous.sa_handler(sig);
	else
		signal(SIGBUS, SIG_DFL); /* the access faults again and ends the process */
}

static void install(void)
{
	struct sigaction sa;

	page_mask = ~((uintptr_t)sysconf(_SC_PAGESIZE) - 1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &previous);
}

int ps_image__guard(const void *p, size_t len)
{
	pthread_once(&installed, install);
	for (size_t i = 0; i < GUARDS; i++) {
		int expect = FREE;

		if (!atomic_compare_exchange_strong(&guards[i].state, &expect, CLAIMED))
			continue;
		atomic_store_explicit(&guards[i].start, (uintptr_t)p, memory_order_relaxed);
		atomic_store_explicit(&guards[i].len, len, memory_order_relaxed);
		atomic_store_explicit(&guards[i].hit, false, memory_order_relaxed);
		atomic_store_explicit(&guards[i].state, LIVE, memory_order_release);
		return 0;
	}
	return -ENOSPC;
}

static struct guard *guard_of(const void *p)
{
	for (size_t i = 0; p && i < GUARDS; i++)
		if (atomic_load(&guards[i].state) == LIVE &&
		    atomic_load(&guards[i].start) == (uintptr_t)p)
			return &guards[i];
	return NULL;
}

void ps_image__unguard(const void *p)
{
	struct guard *g = guard_of(p);

	if (g)
		atomic_store(&g->state, FREE);
}

bool ps_image__changed(const void *p)
{
	struct guard *g = guard_of(p);

	return g && atomic_load(&g->hit);
}

unsigned long ps_image__hits(void)
{
	return atomic_load_explicit(&hits, memory_order_relaxed);
}

bool ps_image__same_file(const struct stat *st, const struct ps_file_stamp *want)
{
	return S_ISREG(st->st_mode) && st->st_dev == want->dev && st->st_ino == want->ino &&
	       (!want->size || st->st_size == want->size) &&
	       (!want->mtime.tv_sec || (st->st_mtim.tv_sec == want->mtime.tv_sec &&
					st->st_mtim.tv_nsec == want->mtime.tv_nsec));
}

void *ps_image__map(const char *path, const struct ps_file_stamp *want, size_t *size)
{
	return ps_image__map_more(path, want, size, 0);
}

void *ps_image__map_more(const char *path, const struct ps_file_stamp *want, size_t *size,
			 size_t more)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), err = ESTALE;
	struct stat st;
	void *p = MAP_FAILED;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && ps_image__same_file(&st, want) && st.st_size > 0) {
		/* copy-on-write: libelf may write into an image it reads
		 * (relocating, decompressing in place), never into the file;
		 * the room after it is anonymous, over which the file goes */
		p = mmap(NULL, (size_t)st.st_size + more, PROT_READ | PROT_WRITE,
			 more ? MAP_PRIVATE | MAP_ANONYMOUS : MAP_PRIVATE, more ? -1 : fd, 0);
		err = errno;
		if (p != MAP_FAILED && more &&
		    mmap(p, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd,
			 0) == MAP_FAILED) {
			err = errno;
			munmap(p, (size_t)st.st_size + more);
			p = MAP_FAILED;
		}
	}
	close(fd);
	if (p == MAP_FAILED) {
		errno = err;
		return NULL;
	}
	if (ps_image__guard(p, (size_t)st.st_size) < 0) {
		munmap(p, (size_t)st.st_size + more);
		errno = ENOSPC;
		return NULL;
	}
	*size = (size_t)st.st_size;
	return p;
}

void ps_image__unmap(void *p, size_t size)
{
	if (!p)
		return;
	ps_image__unguard(p);
	munmap(p, size);
}
