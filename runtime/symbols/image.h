/*
 * image.h: files' bytes, read safely whatever their owners do
 * (symbols/image.c): a file mapped only while it is still the file a
 * mapping named, and reads of it that a truncation cannot end with SIGBUS.
 */
#ifndef PS_SYMBOLS_IMAGE_H
#define PS_SYMBOLS_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

/* A file as a mapping knows it: device and inode, and (0 when unknown)
 * size and mtime. */
struct ps_file_stamp {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

/* path mapped copy-on-write if it is still the file want names (a regular
 * file; its size and mtime too when set), opened without blocking, and
 * guarded; NULL + errno (ESTALE: another file is there now). */
void *ps_image__map(const char *path, const struct ps_file_stamp *want, size_t *size);
/* The same with more bytes of zeros after the file's (*size is the
 * file's); ps_image__unmap takes *size + more. */
void *ps_image__map_more(const char *path, const struct ps_file_stamp *want, size_t *size,
			 size_t more);
void ps_image__unmap(void *p, size_t size);
/* A SIGBUS reading [p, p + len) (its file truncated) gives zeros there and
 * marks the range changed, instead of ending the process. -ENOSPC when
 * too many ranges are guarded. */
int ps_image__guard(const void *p, size_t len);
void ps_image__unguard(const void *p);
/* Whether a read of the range guarded at p met a truncated file, and how
 * many such reads there were in all (cheap: check that first). */
bool ps_image__changed(const void *p);
unsigned long ps_image__hits(void);
bool ps_image__same_file(const struct stat *st, const struct ps_file_stamp *want);

#endif /* PS_SYMBOLS_IMAGE_H */
