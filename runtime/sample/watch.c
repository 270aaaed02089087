/*
 * watch.c: what the sampling backends share of the sampler: how big a
 * ring is, when it wakes the loop, and the list of sources (ring fds, the
 * BPF ring buffer) the loop watches, each with the backend that drains it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "base/array.h"
#include "sample/sampler.h"

size_t ps_sampler__ring_pages(const struct ps_sampler *m)
{
	/* a call-graph=dwarf sample is ~8 KiB: the default ring would hold
	 * 128 of them, an eighth of a second at 1 kHz */
	if (!m->ring_pages && m->user_stacks)
		return PS_RING_PAGES_STACKS;
	return m->ring_pages ? m->ring_pages : PS_RING_PAGES_DEFAULT;
}

/* Wake the poller when a quarter of the ring is full, not on every record:
 * at 100k samples/s per-record wakeups would cost more than the samples. A
 * quarter leaves three quarters of headroom for the time the loop takes to
 * get there; the loop's periodic drain bounds the latency of slow streams. */
uint32_t ps_sampler__wakeup_bytes(const struct ps_sampler *m)
{
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t bytes = ps_sampler__ring_pages(m) * (uint64_t)(psz > 0 ? psz : 4096) / 4;

	return bytes > UINT32_MAX ? UINT32_MAX : bytes ? (uint32_t)bytes : 1;
}

int ps_sampler__watch(struct ps_sampler *m, int fd, const struct ps_backend_ops *backend)
{
	if (ps_array__reserve(&m->watch, &m->capwatch, m->nwatch + 1, sizeof(*m->watch)) ||
	    ps_array__reserve_exact(&m->fds, m->capwatch, sizeof(*m->fds)))
		return -ENOMEM;
	m->watch[m->nwatch] = (struct ps_watch){.fd = fd, .backend = backend};
	m->fds[m->nwatch++] = fd;
	return 0;
}
