/*
 * test_image.c: files the symbolizer maps (symbols/image.c) are read only
 * if they are still the file that was mapped, a FIFO in their place never
 * blocks the open, and a read past the end of a file truncated meanwhile
 * reads zeros and marks the image changed instead of ending the process
 * with SIGBUS; a SIGBUS elsewhere still goes where it went before.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/internal.h"
#include "tap.h"

#define PAGES 8

static size_t page;
static sigjmp_buf jump;

static void caught(int sig)
{
	siglongjmp(jump, sig);
}

static struct ps_file_stamp stamp_of(const char *path)
{
	struct stat st;

	stat(path, &st);
	return (struct ps_file_stamp){
	    .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size, .mtime = st.st_mtim};
}

static void write_file(const char *path, char fill)
{
	char *buf = malloc(PAGES * page);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	memset(buf, fill, PAGES * page);
	if (fd < 0 || write(fd, buf, PAGES * page) != (ssize_t)(PAGES * page))
		printf("Bail out! cannot write %s\n", path);
	close(fd);
	free(buf);
}

static void truncation(const char *path)
{
	struct ps_file_stamp want = stamp_of(path);
	size_t size = 0;
	volatile char *m = ps_image__map(path, &want, &size);
	unsigned long hits = ps_image__hits();
	char first = 0, last = 1;

	tap_ok(m && size == PAGES * page, "the file as it was mapped is mapped (%zu bytes)", size);
	if (!m)
		return;
	tap_ok(!ps_image__changed((void *)m), "not changed while nothing was cut");
	if (truncate(path, (off_t)page) < 0)
		printf("Bail out! cannot truncate %s\n", path);
	first = m[0];
	last = m[PAGES * page - 1]; /* past the new end: SIGBUS, handled */
	tap_ok(first == 'a', "the page before the new end still reads the file ('%c')", first);
	tap_ok(last == 0, "a page past the new end reads zeros, not SIGBUS (%d)", last);
	tap_ok(ps_image__changed((void *)m), "and the image is marked changed");
	tap_is_u64(ps_image__hits() - hits, 1, "one truncated read counted");
	ps_image__unmap((void *)m, size);
}

static void other_files(const char *path, const char *dir)
{
	struct ps_file_stamp want = stamp_of(path);
	char other[512], fifo[512];
	size_t size = 0;
	void *m;

	/* another file renamed over the path */
	snprintf(other, sizeof(other), "%s/other", dir);
	write_file(other, 'b');
	rename(other, path);
	errno = 0;
	m = ps_image__map(path, &want, &size);
	tap_ok(!m && errno == ESTALE, "another file renamed over the path is refused (ESTALE: %s)",
	       strerror(errno));
	/* the same file, rewritten: another size or mtime */
	want = stamp_of(path);
	want.size += 1;
	tap_ok(!ps_image__map(path, &want, &size), "the same inode with another size is refused");
	/* a FIFO: refused at once, not an open that waits for a writer */
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	mkfifo(fifo, 0600);
	want = stamp_of(fifo);
	alarm(5);
	m = ps_image__map(fifo, &want, &size);
	alarm(0);
	tap_ok(!m, "a FIFO is refused without waiting for a writer");
	unlink(fifo);
}

/* A SIGBUS outside every image is not ours: the handler there before runs. */
static void not_ours(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	volatile char *m = mmap(NULL, PAGES * page, PROT_READ, MAP_SHARED, fd, 0);
	int sig;

	close(fd);
	if (m == MAP_FAILED || truncate(path, 0) < 0) {
		tap_ok(0, "a mapping of our own to fault on");
		return;
	}
	sig = sigsetjmp(jump, 1);
	if (sig == 0) {
		(void)m[PAGES * page - 1];
		tap_ok(0, "a SIGBUS outside the images reaches the previous handler");
	} else {
		tap_is_i64(sig, SIGBUS, "a SIGBUS outside the images reaches the previous handler");
	}
	munmap((void *)m, PAGES * page);
}

int main(void)
{
	char dir[] = "/tmp/perfscript-image-XXXXXX", path[512];

	page = (size_t)sysconf(_SC_PAGESIZE);
	signal(SIGBUS, caught); /* the handler before ours, for not_ours */
	if (!mkdtemp(dir)) {
		printf("Bail out! cannot make a folder\n");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/lib.so", dir);
	write_file(path, 'a');
	truncation(path);
	write_file(path, 'a');
	other_files(path, dir);
	write_file(path, 'a');
	not_ours(path);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
