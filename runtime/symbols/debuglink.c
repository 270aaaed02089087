/*
 * debuglink.c: where a stripped file's debug file is on this machine, as
 * gdb and perf look for it. First by build id, under
 * /usr/lib/debug/.build-id/xx/rest.debug (its build id must be the file's);
 * then by the name and CRC its .gnu_debuglink section records: beside the
 * file, in .debug/ beside it, and under /usr/lib/debug/ followed by the
 * file's directory (the CRC-32 of the whole debug file must be the one
 * recorded: a stale debug file of an older build is refused). A file seen
 * through a process's root (/proc/PID/root/..., a container's) is looked
 * for inside that root first, then on the host: a container ships its own
 * debug files for its own build. What debuginfod fetches comes after all
 * of these (symbols/debuginfod.c).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <elfutils/libdwelf.h>

#include "symbols/internal.h"

#define DEBUG_ROOT "/usr/lib/debug"

/* The root d was opened through ("/proc/123/root"), in root; false when it
 * is the host's own path. */
static bool root_of(const struct ps_dso *d, char *root, size_t len)
{
	size_t plen, olen;

	if (!d->open_path || !d->path || strncmp(d->open_path, "/proc/", 6))
		return false;
	plen = strlen(d->path);
	olen = strlen(d->open_path);
	if (olen <= plen || strcmp(d->open_path + olen - plen, d->path) || olen - plen >= len ||
	    olen - plen < 12 || strncmp(d->open_path + olen - plen - 5, "/root", 5))
		return false;
	memcpy(root, d->open_path, olen - plen);
	root[olen - plen] = '\0';
	return true;
}

/* Whether the file at fd has the build id id (len bytes). */
static bool same_build_id(int fd, const void *id, ssize_t len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *other;
	bool same =
	    elf && dwelf_elf_gnu_build_id(elf, &other) == len && !memcmp(id, other, (size_t)len);

	elf_end(elf);
	return same;
}

/* The CRC-32 gnu_debuglink records (zlib's: the ISO 3309 one) of fd's file. */
static bool crc_is(int fd, GElf_Word want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		crc = crc32(crc, buf, (uInt)n);
	lseek(fd, 0, SEEK_SET);
	return n == 0 && (GElf_Word)crc == want;
}

/* Open path if it is a regular file; -1 otherwise. */
static int open_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* By build id under root (""): the fd, the path in found. */
static int by_build_id(const char *root, const void *id, ssize_t len, char *found, size_t flen)
{
	char *p;
	int fd;

	if (len < 2 || len > 64 ||
	    (size_t)snprintf(found, flen, "%s" DEBUG_ROOT "/.build-id/", root) + 2 * len + 8 > flen)
		return -1;
	p = found + strlen(found);
	for (ssize_t i = 0; i < len; i++)
		p += sprintf(p, i == 0 ? "%02x/" : "%02x", ((const unsigned char *)id)[i]);
	strcpy(p, ".debug");
	fd = open_file(found);
	if (fd >= 0 && !same_build_id(fd, id, len)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* By the debuglink name and CRC, in the three places under root (""). */
static int by_link(const char *root, const char *path, const char *link, GElf_Word crc, char *found,
		   size_t flen)
{
	const char *slash = strrchr(path, '/');
	int dir = slash ? (int)(slash - path) : 0;
	const char *const fmt[] = {"%s%.*s/%s", "%s%.*s/.debug/%s", "%s" DEBUG_ROOT "%.*s/%s"};

	if (!slash || strchr(link, '/'))
		return -1; /* a link names a file, not a path */
	for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		int fd;

		if ((size_t)snprintf(found, flen, fmt[i], root, dir, path, link) >= flen)
			continue;
		/* the file itself (a link that names it) is not its debug file */
		if (!strcmp(found + strlen(root), path))
			continue;
		if ((fd = open_file(found)) < 0)
			continue;
		if (crc_is(fd, crc))
			return fd;
		close(fd);
	}
	return -1;
}

/* The search itself: an fd and the path found, or -1. */
static int search(const struct ps_dso *d, Elf *img, char *found, size_t flen)
{
	char root[64];
	const char *roots[2] = {NULL, ""};
	const void *id = NULL;
	ssize_t len = img ? dwelf_elf_gnu_build_id(img, &id) : -1;
	GElf_Word crc = 0;
	const char *link = img ? dwelf_elf_gnu_debuglink(img, &crc) : NULL;
	int fd = -1;

	if (root_of(d, root, sizeof(root)))
		roots[0] = root;
	for (int r = 0; r < 2 && fd < 0; r++)
		if (roots[r] && len > 0)
			fd = by_build_id(roots[r], id, len, found, flen);
	for (int r = 0; r < 2 && fd < 0; r++)
		if (roots[r] && link && d->path)
			fd = by_link(roots[r], d->path, link, crc, found, flen);
	return fd;
}

int ps_dso__open_debug_file(struct ps_dso *d, Elf *img, char **path)
{
	char found[PATH_MAX];
	int fd;

	if (!d->local_looked) {
		d->local_looked = true;
		fd = search(d, img, found, sizeof(found));
		if (fd >= 0 && !(d->local_debug = strdup(found))) {
			close(fd);
			fd = -1;
		}
	} else { /* found (and checked) before: it is opened again */
		fd = d->local_debug ? open_file(d->local_debug) : -1;
	}
	if (fd >= 0 && !(*path = strdup(d->local_debug))) {
		close(fd);
		fd = -1;
	}
	return fd;
}
