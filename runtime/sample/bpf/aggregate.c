/*
 * aggregate.c: reading what a counter's program counted in the kernel.
 * Keys are listed first and looked up after, so counts that arrive during
 * a read land in this read or the next, never in neither; stacks are read
 * from the counter's stack map by id. Clearing deletes the keys listed,
 * then the stacks, so the stack map does not fill up across intervals.
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
	const struct ps_counter *c = ps_session__slot(s, h);
	struct ps_bpf_counter *b = c ? ps_bpf__counter(s->sampler, (uint32_t)(c - s->slots)) : NULL;

	*err = 0;
	if (!c) {
		*err = -PS_ERR_HANDLE;
		return NULL;
	}
	if (!b || !b->skel || !(c->sampled->conf.mode & PS_BPF_AGGREGATE)) {
		*err = -EOPNOTSUPP; /* not aggregating in the kernel (perf path or not asked) */
		return NULL;
	}
	*keys = c->sampled->conf.keys;
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

int ps_session__aggregate_read(struct ps_session *s, ps_handle h, ps_agg_fn fn, void *ctx)
{
	static uint64_t ustack[PS_BPF_STACK_DEPTH], kstack[PS_BPF_STACK_DEPTH];
	uint32_t fields;
	int err, fd;
	struct ps_bpf_counter *b = aggregating(s, h, &fields, &err);
	struct ps_agg_key *keys = NULL;
	long n;

	if (!b)
		return err;
	if (!fn)
		return -EINVAL;
	fd = bpf_map__fd(b->skel->maps.ps_counts);
	n = list_keys(fd, sizeof(*keys), (void **)&keys);
	if (n < 0)
		return (int)n;
	for (long i = 0; i < n && err >= 0; i++) {
		struct ps_agg_entry e;
		uint64_t count;

		if (bpf_map_lookup_elem(fd, &keys[i], &count))
			continue; /* cleared meanwhile */
		memset(&e, 0, sizeof(e));
		e.fields = fields;
		e.pid = keys[i].pid;
		e.tid = keys[i].tid;
		e.cpu = keys[i].cpu;
		memcpy(e.comm, keys[i].comm, sizeof(e.comm));
		e.comm[sizeof(e.comm) - 1] = '\0';
		e.ip = keys[i].ip;
		e.user = keys[i].user;
		e.field = keys[i].field;
		e.nustack = ps_bpf__stack(b, keys[i].ustack, ustack, PS_BPF_STACK_DEPTH);
		e.nkstack = ps_bpf__stack(b, keys[i].kstack, kstack, PS_BPF_STACK_DEPTH);
		e.ustack = ustack;
		e.kstack = kstack;
		e.count = count;
		err = fn(&e, ctx);
	}
	free(keys);
	return err < 0 ? err : 0;
}

int ps_session__aggregate_clear(struct ps_session *s, ps_handle h)
{
	uint32_t fields;
	int err, fd;
	struct ps_bpf_counter *b = aggregating(s, h, &fields, &err);
	void *keys = NULL;
	long n;

	if (!b)
		return err;
	fd = bpf_map__fd(b->skel->maps.ps_counts);
	n = list_keys(fd, sizeof(struct ps_agg_key), &keys);
	if (n < 0)
		return (int)n;
	for (long i = 0; i < n; i++)
		bpf_map_delete_elem(fd, (char *)keys + i * sizeof(struct ps_agg_key));
	free(keys);
	if (fields & (PS_AGG_USTACK | PS_AGG_KSTACK)) {
		fd = bpf_map__fd(b->skel->maps.ps_stacks);
		n = list_keys(fd, sizeof(__u32), &keys);
		if (n < 0)
			return (int)n;
		for (long i = 0; i < n; i++)
			bpf_map_delete_elem(fd, (__u32 *)keys + i);
		free(keys);
	}
	return 0;
}

int ps_session__aggregate_dropped(const struct ps_session *s, ps_handle h, uint64_t *dropped)
{
	uint32_t fields;
	int err, ncpu = libbpf_num_possible_cpus();
	struct ps_bpf_counter *b = aggregating(s, h, &fields, &err);
	__u32 key = 1;
	uint64_t *v;

	if (!dropped)
		return -EINVAL;
	*dropped = 0;
	if (!b)
		return err;
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = bpf_map__lookup_elem(b->skel->maps.ps_lost, &key, sizeof(key), v,
				   (size_t)ncpu * sizeof(*v), 0);
	for (int i = 0; !err && i < ncpu; i++)
		*dropped += v[i];
	free(v);
	return err;
}
