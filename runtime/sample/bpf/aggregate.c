/*
 * aggregate.c: reading what a counter's program counted in the kernel.
 * Keys are listed first and looked up after, so counts that arrive during
 * a read land in this read or the next, never in neither; stacks are read
 * from the counter's stack map by id. Taking and clearing swap an empty
 * count map into the program's slot: the kernel returns from that update
 * only when no program can still be using the old map (map-in-map updates
 * wait for running programs), so the old one is read and emptied whole,
 * and no count is lost or counted twice. Clearing also empties the stack
 * map, so it does not fill up across intervals.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/array.h"
#include "sample/bpf/internal.h"
#include "ps_sample.skel.h"

/* The program of h when it aggregates, with its keys in *keys. */
static struct ps_bpf_counter *aggregating(const struct ps_session *s, ps_handle h, uint32_t *keys,
					  int *err)
{
	const struct ps_counter *c = ps_session__counter_of(s, h);
	struct ps_bpf_counter *b =
	    c ? ps_bpf__counter(ps_session__sampler(s), ps_session__slot_of(s, c)) : NULL;

	*err = 0;
	if (!c) {
		*err = -PS_ERR_HANDLE;
		return NULL;
	}
	if (!ps_counter__is_open(c) && (ps_counter__sampled(c)->conf.mode & PS_BPF_AGGREGATE))
		return NULL; /* not open yet (a signal before the counters opened): nothing counted
			      */
	if (!b || !b->skel || !(ps_counter__sampled(c)->conf.mode & PS_BPF_AGGREGATE)) {
		*err = -EOPNOTSUPP; /* not aggregating in the kernel (perf path or not asked) */
		return NULL;
	}
	*keys = ps_counter__sampled(c)->conf.keys;
	return b;
}

/* Every key of map fd, malloc'd; returns how many or -errno. */
static long list_keys(int fd, size_t ksz, void **out)
{
	size_t cap = 0, n = 0;
	char *keys = NULL, *prev = NULL;

	for (;;) {
		if (ps_array__reserve(&keys, &cap, n + 1, ksz)) {
			free(keys);
			return -ENOMEM;
		}
		prev = n ? keys + (n - 1) * ksz : NULL;
		if (bpf_map_get_next_key(fd, prev, keys + n * ksz)) {
			if (errno == ENOENT)
				break;
			free(keys);
			return -errno;
		}
		n++;
	}
	*out = keys;
	return (long)n;
}

/* Hand every key of count map fd to fn, with its stacks. */
static int read_counts(struct ps_bpf_counter *b, uint32_t fields, int fd, ps_agg_fn fn, void *ctx)
{
	uint64_t ustack[PS_BPF_STACK_DEPTH], kstack[PS_BPF_STACK_DEPTH]; /* 2 KiB, per call */
	size_t ksz = ps_bpf__key_size(fields);
	char *keys = NULL;
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *percpu = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*percpu)) : NULL;
	long n = percpu ? list_keys(fd, ksz, (void **)&keys) : -ENOMEM;
	int err = 0;

	if (n < 0) {
		free(percpu);
		return (int)n;
	}
	for (long i = 0; i < n && err >= 0; i++) {
		struct ps_agg_key k = {.ustack = -1, .kstack = -1}; /* the fields past ksz */
		struct ps_agg_entry e;
		uint64_t count = 0;

		/* a count per possible CPU (8-byte values need no padding) */
		if (bpf_map_lookup_elem(fd, keys + (size_t)i * ksz, percpu))
			continue; /* cleared meanwhile */
		for (int j = 0; j < ncpu; j++)
			count += percpu[j];
		memcpy(&k, keys + (size_t)i * ksz, ksz);
		memset(&e, 0, sizeof(e));
		e.fields = fields;
		e.pid = k.pid;
		e.tid = k.tid;
		e.cpu = k.cpu;
		memcpy(e.comm, k.comm, sizeof(e.comm));
		e.comm[sizeof(e.comm) - 1] = '\0';
		e.ip = k.ip;
		e.user = k.user;
		e.field = k.field;
		e.nustack = ps_bpf__stack(b, k.ustack, ustack, PS_BPF_STACK_DEPTH);
		e.nkstack = ps_bpf__stack(b, k.kstack, kstack, PS_BPF_STACK_DEPTH);
		e.ustack = ustack;
		e.kstack = kstack;
		e.count = count;
		err = fn(&e, ctx);
	}
	free(keys);
	free(percpu);
	return err < 0 ? err : 0;
}

/* Delete every key of map fd (key size ksz). */
static int empty_map(int fd, size_t ksz)
{
	void *keys = NULL;
	long n = list_keys(fd, ksz, &keys);

	if (n < 0)
		return (int)n;
	for (long i = 0; i < n; i++)
		bpf_map_delete_elem(fd, (char *)keys + i * ksz);
	free(keys);
	return 0;
}

/* Put the empty count map in the program's slot; the full one's fd. */
static int swap_counts(struct ps_bpf_counter *b)
{
	uint32_t zero = 0;
	int old = b->counts_fd[b->active];

	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.ps_counts), &zero,
				&b->counts_fd[!b->active], BPF_ANY))
		return -errno;
	b->active = !b->active;
	return old;
}

int ps_aggregate__read(struct ps_session *s, ps_handle h, ps_agg_fn fn, void *ctx)
{
	uint32_t fields;
	int err;
	struct ps_bpf_counter *b = aggregating(s, h, &fields, &err);

	if (!b)
		return err;
	if (!fn)
		return -EINVAL;
	ps_bpf__offcpu_flush(b);
	return read_counts(b, fields, b->counts_fd[b->active], fn, ctx);
}

/* Take the counts away whole (to fn, unless NULL), and the stacks. */
static int take(struct ps_session *s, ps_handle h, ps_agg_fn fn, void *ctx)
{
	uint32_t fields;
	int err, old;
	struct ps_bpf_counter *b = aggregating(s, h, &fields, &err);

	if (!b)
		return err;
	ps_bpf__offcpu_flush(b);
	old = swap_counts(b);
	if (old < 0)
		return old;
	err = fn ? read_counts(b, fields, old, fn, ctx) : 0;
	/* emptied even when fn failed: the spare must be empty for the next swap */
	empty_map(old, ps_bpf__key_size(fields));
	if (fields & (PS_AGG_USTACK | PS_AGG_KSTACK))
		ps_bpf__empty_stacks(b, ps_bpf__key_size(fields));
	return err;
}

int ps_aggregate__take(struct ps_session *s, ps_handle h, ps_agg_fn fn, void *ctx)
{
	return fn ? take(s, h, fn, ctx) : -EINVAL;
}

int ps_aggregate__clear(struct ps_session *s, ps_handle h)
{
	return take(s, h, NULL, NULL);
}

/* Hits the kernel did not run a program of b's for: another BPF program
 * was running on that CPU (a tracepoint's program is skipped then; a map
 * read by a process preempted meanwhile is enough). */
static uint64_t skipped(const struct ps_bpf_counter *b)
{
	struct bpf_program *p;
	uint64_t n = 0;

	bpf_object__for_each_program(p, b->skel->obj)
	{
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_program__fd(p) >= 0 &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(p), &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

int ps_aggregate__dropped(const struct ps_session *s, ps_handle h, uint64_t *dropped)
{
	uint32_t fields;
	int err;
	struct ps_bpf_counter *b = aggregating(s, h, &fields, &err);

	if (!dropped)
		return -EINVAL;
	*dropped = 0;
	if (!b)
		return err;
	err = ps_bpf__percpu_sum(b, PS_BPF_LOST_KEYS, dropped);
	if (!err)
		*dropped += skipped(b);
	return err;
}

int ps_aggregate__places(const struct ps_session *s, ps_handle h, struct ps_agg_places *places)
{
	static const __u32 slot[] = {PS_BPF_PLACE_USED, PS_BPF_PLACE_CHECKED, PS_BPF_PLACE_WRONG,
				     PS_BPF_PLACE_WALKED};
	uint64_t *field[] = {&places->used, &places->checked, &places->unstable, &places->walked};
	uint32_t fields;
	int err = 0;
	struct ps_bpf_counter *b;

	if (!places)
		return -EINVAL;
	memset(places, 0, sizeof(*places));
	if (!(b = aggregating(s, h, &fields, &err)))
		return err;
	for (size_t i = 0; i < sizeof(slot) / sizeof(*slot) && !err; i++)
		err = ps_bpf__percpu_sum(b, slot[i], field[i]);
	return err;
}
