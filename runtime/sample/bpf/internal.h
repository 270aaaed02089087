/*
 * internal.h: the in-kernel path's private state, shared by sample/bpf/load.c
 * (choosing the path, loading, attaching), sample/bpf/forward.c (the ring buffer) and
 * sample/bpf/aggregate.c (reading the aggregation maps). One ps_bpf_counter per
 * counter that was configured or took the BPF path; one ps_bpf_session per
 * session that loaded anything. Nothing here is part of the public ABI.
 */
#ifndef PS_BPF_INTERNAL_H
#define PS_BPF_INTERNAL_H

#include <linux/types.h>

#include "core/internal.h"
#include "sample/bpf/ps_bpf.h"

struct ps_sample_bpf;
struct bpf_link;
struct ring_buffer;

struct ps_bpf_counter {
	bool configured; /* ps_session__set_bpf was called */
	enum ps_backend backend;
	unsigned mode; /* PS_BPF_FORWARD | PS_BPF_AGGREGATE */
	pid_t *pids;
	size_t npids;
	pid_t tid;
	int *cpus;
	size_t ncpus;
	enum ps_bpf_priv priv;
	uint64_t every;
	uint32_t keys, entries;

	struct ps_sample_bpf *skel; /* loaded and attached: the counter is on BPF */
	struct bpf_link **links;
	int nlinks;
	int anchor_fd;	    /* tracepoints: the event the program hangs on, or -1 */
	uint64_t lost_told; /* reserve failures already reported as records */
	uint64_t passed;    /* perf-path fallback: overflows that passed, for every */
};

struct ps_bpf_session {
	int rb_fd; /* the shared BPF_MAP_TYPE_RINGBUF, -1 until loaded */
	struct ring_buffer *rb;
	size_t budget, taken; /* during a drain */
	int stop;	      /* a callback's stop value */
	uint64_t *ips;	      /* callchain scratch: 2 markers + 2 stacks */
	char fallback[320];
};

/* sample/bpf/load.c: the session's state, created on first use; NULL on ENOMEM. */
struct ps_bpf_session *ps_bpf__session(struct ps_session *s);
/* sample/bpf/forward.c: libbpf's ring_buffer callback: one forwarded record. */
int ps_bpf__on_record(void *ctx, void *data, size_t size);
/* sample/bpf/forward.c: read a stack of the counter's stack map, leaf first; how many frames. */
size_t ps_bpf__stack(const struct ps_bpf_counter *b, int id, uint64_t *ips, size_t max);

#endif
