/*
 * ring.h: a reader of one perf mmap ring buffer (runtime/sample/perf/ring.c), either
 * mapped from a perf_event fd or laid over memory the caller provides, so
 * unit tests can build synthetic rings without a kernel. Reading is a batch:
 * ps_ring__begin() takes the kernel's data_head once (acquire), each
 * ps_ring__next() hands back one record in place or, when it wraps the end
 * of the data area, copied into the ring's scratch buffer, and ps_ring__end()
 * publishes the new data_tail (release) so the kernel may reuse the space.
 * Nothing here allocates or makes a syscall while reading.
 */
#ifndef PS_RING_H
#define PS_RING_H

#include <stdint.h>
#include <stddef.h>
#include <linux/perf_event.h>

/* A record's size is a u16: the scratch buffer always holds one whole record. */
#define PS_RING_SCRATCH 65536u

struct ps_ring {
	struct perf_event_mmap_page *meta;
	const unsigned char *data; /* the data area, size bytes (a power of two) */
	uint64_t size, mask;
	uint64_t head, tail;	/* this batch: head as read, tail as consumed so far */
	uint64_t malformed;	/* corrupt stretches skipped */
	unsigned char *scratch; /* PS_RING_SCRATCH bytes, 8-aligned */
	void *map;		/* our mapping, NULL over caller memory */
	size_t map_len;
	int fd; /* the carrier fd, -1 over caller memory */
	int cpu;
};

/* Map (1 + pages) pages of fd; pages is a power of two. 0 or -errno. */
int ps_ring__map(struct ps_ring *r, int fd, int cpu, size_t pages);
/* Read a ring laid out by the caller: the control page and a data area of
 * data_size bytes (a power of two, >= 8). 0 or -EINVAL/-ENOMEM. */
int ps_ring__init_mem(struct ps_ring *r, struct perf_event_mmap_page *meta, void *data,
		      size_t data_size);
/* Unmap and free; the fd stays open (it belongs to the caller). Accepts a
 * zeroed or already-closed ring. */
void ps_ring__close(struct ps_ring *r);

/* Start a batch: how many bytes are waiting. */
static inline uint64_t ps_ring__begin(struct ps_ring *r)
{
	r->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	r->tail = r->meta->data_tail; /* only we write it */
	return r->head - r->tail;
}

/* The next record of the batch: 1 with *rec set (valid until the next call
 * or ps_ring__end), 0 when the batch is empty, -EBADMSG when the ring holds
 * no valid record here (counted in malformed; the batch then jumps to head,
 * so nothing past the mapping is ever read). */
int ps_ring__next(struct ps_ring *r, const struct perf_event_header **rec);

/* How full the ring is now, in thousandths of its data area (outside a
 * batch: it reads the kernel's head and the tail last given back). */
static inline unsigned ps_ring__fill(const struct ps_ring *r)
{
	uint64_t used = __atomic_load_n(&r->meta->data_head, __ATOMIC_RELAXED) - r->meta->data_tail;

	return used >= r->size ? 1000u : (unsigned)(used * 1000 / r->size);
}

/* Give the consumed space back to the kernel. */
static inline void ps_ring__end(struct ps_ring *r)
{
	__atomic_store_n(&r->meta->data_tail, r->tail, __ATOMIC_RELEASE);
}

#endif /* PS_RING_H */
