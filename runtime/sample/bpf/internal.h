/*
 * internal.h: the BPF backend's private state, shared by sample/bpf/load.c
 * (loading, attaching: the backend's ops), sample/bpf/forward.c (the ring
 * buffer) and sample/bpf/aggregate.c (reading the aggregation maps). One
 * ps_bpf_counter per counter a program serves (its ps_sampled.priv); one
 * ps_bpf per session that loaded anything (its sampler's bpf). What a
 * counter asked for (filters, aggregation keys) is the sampler's
 * struct ps_sample_conf. Nothing here is part of the public ABI.
 */
#ifndef PS_BPF_INTERNAL_H
#define PS_BPF_INTERNAL_H

#include <stddef.h>
#include <linux/types.h>

#include "base/pidmap.h"
#include "sample/bpf/ps_bpf.h"
#include "sample/sampler.h"

struct bpf_program;
struct ps_sample_bpf;
struct ring_buffer;

struct ps_bpf_counter {
	struct ps_sample_bpf *skel; /* loaded and attached */
	int *links;		    /* link fds: closing one detaches its program */
	bool seeded;		    /* an off-CPU aggregate told of the threads there */
	int nlinks;
	int *anchors;	  /* tracepoints and probes: the events the programs hang on */
	int nanchors;	  /* (a probe's sites, a syscall's exit for late strings) */
	int counts_fd[2]; /* aggregating: the count maps, counts_fd[active] in use */
	int active;
	/* counted on its raw tracepoint (sample/bpf/rawtp.c): the counter's
	 * fds were handed over, its value is the hits ps_raw counted */
	bool raw;
	uint64_t carried;	  /* hits of the object this one replaced */
	uint64_t base, base_ns;	  /* at the last reset */
	uint64_t on_ns, on_since; /* time on before, and since when now (0: off) */
};

struct ps_bpf {
	struct ps_sampler *m;
	int rb_fd; /* the shared BPF_MAP_TYPE_RINGBUF, -1 until loaded */
	struct ring_buffer *rb;
	size_t budget, taken; /* during a drain */
	int stop;	      /* a callback's stop value */
	uint64_t *ips;	      /* callchain scratch: 2 markers + 2 stacks */
	uint64_t regs[64];    /* a probe's registers, in perf's order */
	/* Python frames (PS_BPF_PYTHON): the processes looked at, each with
	 * its probe's answer (0: not yet) and the symbolizer that looks */
	struct ps_pidmap py_seen; /* pid -> python.c's struct py_seen */
	struct ps_symbols *syms;
	int py_fd;    /* the programs' one ps_py map, -1 until loaded */
	bool py_said; /* an unknown version was reported */
};

/* The bytes of struct ps_agg_key a counter keyed by keys (PS_AGG_*)
 * fills, and its count maps hash: a hit's cost grows with them. */
static inline size_t ps_bpf__key_size(uint32_t keys)
{
	if (keys & PS_AGG_COMM)
		return sizeof(struct ps_agg_key);
	if (keys & PS_AGG_IP)
		return offsetof(struct ps_agg_key, comm);
	if (keys & (PS_AGG_USTACK | PS_AGG_KSTACK))
		return offsetof(struct ps_agg_key, ip);
	if (keys & PS_AGG_CPU)
		return offsetof(struct ps_agg_key, user);
	if (keys & PS_AGG_TID)
		return offsetof(struct ps_agg_key, cpu);
	if (keys & PS_AGG_PID)
		return offsetof(struct ps_agg_key, tid);
	return offsetof(struct ps_agg_key, pid);
}

/* The program serving slot, or NULL when BPF does not serve it. */
static inline struct ps_bpf_counter *ps_bpf__counter(const struct ps_sampler *m, uint32_t slot)
{
	const struct ps_sampled *c = ps_sampler__counter(m, slot);

	return c && c->serving == &ps_bpf_backend ? c->priv : NULL;
}

struct ps_sample_bpf;

/* How counter c's hits reach its program. */
enum ps_bpf_kind {
	PS_BPF_KIND_PERF,	/* overflows of its fds (ps_perf) */
	PS_BPF_KIND_TRACEPOINT, /* every hit of the tracepoint (ps_tp) */
	PS_BPF_KIND_PROBE,	/* every hit of a kprobe, uprobe or USDT site (ps_kp) */
};
enum ps_bpf_kind ps_bpf__kind(const struct ps_counter *c);

/* sample/bpf/configure.c: the cfg_flags of counter c's object. */
uint32_t ps_bpf__cfg_flags(const struct ps_session *s, const struct ps_counter *c);
/* Its read-only values and map sizes, before load; 0 or -errno. */
int ps_bpf__configure(const struct ps_sampler *m, const struct ps_bpf *bs, uint32_t slot,
		      struct ps_sample_bpf *skel, int counts_fd);
/* The exit tracepoint of a syscall entry counter, or NULL. */
const struct ps_tp_format *ps_bpf__exit_tracepoint(const struct ps_counter *c);
/* Its pid, CPU and target sets, after load; 0 or -errno. */
int ps_bpf__fill_maps(const struct ps_session *s, const struct ps_counter *c,
		      struct ps_sample_bpf *skel);
/* An aggregating counter's two count maps (before load), and the first put
 * in the program's slot (after); 0 or -errno. */
int ps_bpf__make_counts(const struct ps_counter *c, uint32_t flags, struct ps_bpf_counter *b);
int ps_bpf__put_counts(struct ps_sample_bpf *skel, struct ps_bpf_counter *b);

/* sample/bpf/rawtp.c: whether c is counted on its raw tracepoint (ps_raw)
 * rather than through perf events; prog on the raw tracepoint name, its
 * link into b->links (0, or -errno: -ENOENT when there is none of that
 * name); its time on; its value (the backend's count op). */
bool ps_bpf__raw_count(const struct ps_session *s, const struct ps_counter *c);
bool ps_bpf__raw_offcpu(const struct ps_session *s, const struct ps_counter *c);
void ps_bpf__configure_offcpu(const struct ps_counter *c, const struct ps_sample_conf *b,
			      uint32_t keys, struct ps_sample_bpf *skel);
int ps_bpf__raw_link(struct ps_bpf_counter *b, const char *name, const struct bpf_program *prog);
void ps_bpf__raw_switched(struct ps_bpf_counter *b, bool on);
/* b, attached, takes over from the counter's object before it (if any):
 * its hits and times; its clock starts if it is on already. */
void ps_bpf__raw_start(struct ps_sampler *m, uint32_t slot, struct ps_bpf_counter *b);
int ps_bpf__count(struct ps_sampler *m, uint32_t slot, struct ps_value *v, bool reset);
bool ps_bpf__counts_hits(struct ps_sampler *m, uint32_t slot);

/* sample/bpf/usdt.c: a USDT counter's program reads its marker's
 * arguments: the map's size and the flag before load, each site's
 * arguments after; 0 or -errno. */
int ps_bpf__usdt_configure(const struct ps_counter *c, struct ps_sample_bpf *skel);
int ps_bpf__usdt_fill(const struct ps_counter *c, struct ps_sample_bpf *skel);

/* sample/bpf/forward.c: slot key of ps_lost (PS_BPF_LOST_*), summed over CPUs. */
int ps_bpf__percpu_sum(const struct ps_bpf_counter *b, __u32 key, uint64_t *sum);
/* sample/bpf/forward.c: libbpf's ring_buffer callback: one forwarded record. */
int ps_bpf__on_record(void *ctx, void *data, size_t size);
/* sample/bpf/forward.c: drain the ring buffer (the backend's drain op). */
int ps_bpf__drain(struct ps_sampler *m, int fd, size_t budget);
/* sample/bpf/forward.c: reserve failures of slot's program (the lost op). */
int ps_bpf__lost(struct ps_sampler *m, uint32_t slot, uint64_t *lost);
/* sample/bpf/forward.c: read a stack of the counter's stack map, leaf first; how many frames. */
size_t ps_bpf__stack(const struct ps_bpf_counter *b, int id, uint64_t *ips, size_t max);
/* sample/bpf/python.c: on a sample of pid by b's program, which walks
 * Python frames: the first of each process tells the program where its
 * interpreter is (later samples carry its frames). */
void ps_bpf__python_seen(struct ps_bpf *bs, const struct ps_bpf_counter *b, uint32_t pid);
/* The size of what py_seen keeps per pid (python.c's struct py_seen). */
size_t ps_bpf__python_seen_size(void);

/* sample/bpf/python.c: 0, or -EOPNOTSUPP with msg saying why c's program
 * cannot do what c asks (a user stack or Python frames of a tracepoint). */
int ps_bpf__refuse(const struct ps_counter *c, char *msg, size_t msglen);

/* sample/bpf/offcpu.c: an off-CPU aggregate's threads that were there
 * before its counter started (-p, -a), told to it when it starts; what is
 * still going on, booked up to now before it is read. */
void ps_bpf__offcpu_seed(const struct ps_session *s, struct ps_sample_bpf *skel);
void ps_bpf__offcpu_flush(const struct ps_bpf_counter *b);
/* Empty b's stack map but for the stacks its off-CPU entries still hold. */
void ps_bpf__empty_stacks(const struct ps_bpf_counter *b, size_t key_size);
/* The sampler's settle: ps_bpf__offcpu_flush of each that forwards. */
void ps_bpf__offcpu_settle(struct ps_sampler *m);

#endif
