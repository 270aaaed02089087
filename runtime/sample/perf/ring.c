/*
 * ring.c: reading one perf mmap ring buffer. The kernel writes records at
 * data_head and we free space by advancing data_tail; head is loaded with
 * acquire so the record bytes it covers are visible, tail is stored with
 * release so the kernel never overwrites a record we are still reading.
 * Records are read in place except one that wraps the end of the data area,
 * which is copied into a scratch buffer of the largest possible record size
 * (header.size is a u16). Every size is checked against what the batch holds
 * before a byte is read: a record shorter than its header, not a multiple of
 * 8 (the kernel pads every record to 8), longer than the ring or than what
 * lies before head is corruption, and the batch then skips to head.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sample/perf/ring.h"

static int init_common(struct ps_ring *r, size_t data_size)
{
	if (data_size < 8 || (data_size & (data_size - 1)))
		return -EINVAL;
	r->size = data_size;
	r->mask = data_size - 1;
	r->scratch = malloc(PS_RING_SCRATCH);
	return r->scratch ? 0 : -ENOMEM;
}

int ps_ring__init_mem(struct ps_ring *r, struct perf_event_mmap_page *meta, void *data,
		      size_t data_size)
{
	if (!r || !meta || !data)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->fd = r->cpu = -1;
	r->meta = meta;
	r->data = data;
	return init_common(r, data_size);
}

int ps_ring__map(struct ps_ring *r, int fd, int cpu, size_t pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t len, data_off, data_size;
	void *m;
	int err;

	if (!r || fd < 0 || pages == 0 || (pages & (pages - 1)) || psz <= 0)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->fd = r->cpu = -1;
	len = (1 + pages) * (size_t)psz;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	r->map = m;
	r->map_len = len;
	r->meta = m;
	/* data_offset/data_size are filled since Linux 4.1; before, data follows page 0 */
	data_off = r->meta->data_offset ? r->meta->data_offset : (size_t)psz;
	data_size = r->meta->data_size ? r->meta->data_size : pages * (size_t)psz;
	if (data_off + data_size > len) {
		ps_ring__close(r);
		return -EIO;
	}
	r->data = (unsigned char *)m + data_off;
	err = init_common(r, data_size);
	if (err) {
		ps_ring__close(r);
		return err;
	}
	r->fd = fd;
	r->cpu = cpu;
	return 0;
}

void ps_ring__close(struct ps_ring *r)
{
	if (!r)
		return;
	if (r->map)
		munmap(r->map, r->map_len);
	free(r->scratch);
	r->map = NULL;
	r->scratch = NULL;
	r->meta = NULL;
	r->data = NULL;
	r->fd = -1;
}

/* Copy len bytes starting at ring offset off, wrapping at the end of the data area. */
static void copy_wrapped(const struct ps_ring *r, uint64_t off, void *dst, size_t len)
{
	size_t first = (size_t)(r->size - off);

	if (first > len)
		first = len;
	memcpy(dst, r->data + off, first);
	memcpy((unsigned char *)dst + first, r->data, len - first);
}

int ps_ring__next(struct ps_ring *r, const struct perf_event_header **rec)
{
	uint64_t avail = r->head - r->tail, off = r->tail & r->mask;
	struct perf_event_header h;

	if (avail == 0)
		return 0;
	/* More than the ring holds means head or tail is garbage, not a full ring. */
	if (avail > r->size || avail < sizeof(h))
		goto corrupt;
	if (off + sizeof(h) <= r->size)
		memcpy(&h, r->data + off, sizeof(h));
	else
		copy_wrapped(r, off, &h, sizeof(h));
	if (h.size < sizeof(h) || (h.size & 7) || h.size > avail)
		goto corrupt;
	if (off + h.size <= r->size) {
		*rec = (const struct perf_event_header *)(const void *)(r->data + off);
	} else {
		copy_wrapped(r, off, r->scratch, h.size);
		*rec = (const struct perf_event_header *)(void *)r->scratch;
	}
	r->tail += h.size;
	return 1;
corrupt:
	r->malformed++;
	r->tail = r->head;
	return -EBADMSG;
}
