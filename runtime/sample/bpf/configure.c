/*
 * configure.c: what one counter's BPF object is set to before it loads:
 * its read-only cfg_* values (the counter's handle, filters, period or
 * frequency, key fields, the record bytes a tracepoint forward copies,
 * when to wake the reader), its map sizes (the one ring buffer shared by
 * the session, the pid, CPU and target sets, the stack map), the two count
 * maps an aggregating counter swaps between; and after load, the pid, CPU
 * and target sets filled in (a held command joins at its exec instead).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf_perf_event.h>

#include "base/cpus.h"
#include "sample/bpf/internal.h"
#include "ps_sample.skel.h"

#define PS_AGG_ENTRIES_DEFAULT 16384u
#define PS_STACK_ENTRIES       16384u
#define PS_TARGET_ENTRIES      65536u /* processes of a target a tracepoint follows */
#define PS_OFFCPU_ENTRIES      65536u /* threads of the target alive at once */
#define PS_OC_STACK_ENTRIES    2048u  /* their user stacks kept (LRU): 17 MiB */
#define PS_PLACE_ENTRIES       8192u  /* places they waited at, with their stacks (LRU) */
#define PS_LATE_ENTRIES	       1024u  /* threads in a syscall whose string comes at its exit */
#define PS_PY_ENTRIES	       4096u  /* CPython processes a sampling counter walks */
#define PS_PY_THREADS	       16384u /* their threads' states kept (LRU) */

/* A -G target's group (the session's open directory) into ps_cgroup, for
 * bpf_current_task_under_cgroup. */
static int cgroup_entry(const struct ps_session *s, struct ps_sample_bpf *skel)
{
	__u32 zero = 0;
	int fd = ps_session__cgroup_fd(s);

	return bpf_map__update_elem(skel->maps.ps_cgroup, &zero, sizeof(zero), &fd, sizeof(fd),
				    BPF_ANY);
}

/* The ring buffer's bytes: the perf path's ring pages on every CPU, as a power of two. */
static size_t ring_bytes(const struct ps_sampler *m)
{
	long psz = sysconf(_SC_PAGESIZE), ncpu = libbpf_num_possible_cpus();
	size_t want = ps_sampler__ring_pages(m) * (size_t)(psz > 0 ? psz : 4096) *
		      (size_t)(ncpu > 0 ? ncpu : 1),
	       size = 4096;

	while (size < want && size < (1ul << 30))
		size <<= 1;
	return size;
}

enum ps_bpf_kind ps_bpf__kind(const struct ps_counter *c)
{
	if (ps_counter__attr(c)->type == PERF_TYPE_TRACEPOINT)
		return PS_BPF_KIND_TRACEPOINT;
	return ps_counter__probe_sites(c) ? PS_BPF_KIND_PROBE : PS_BPF_KIND_PERF;
}

int ps_bpf__fill_maps(const struct ps_session *s, const struct ps_counter *c,
		      struct ps_sample_bpf *skel)
{
	const struct ps_sample_conf *b = &ps_counter__sampled(c)->conf;
	__u8 one = 1;
	int err = 0;

	for (size_t i = 0; i < b->npids && !err; i++) {
		__u32 pid = (__u32)b->pids[i];

		err = bpf_map__update_elem(skel->maps.ps_pids, &pid, sizeof(pid), &one, 1, BPF_ANY);
	}
	/* ps_cpus has room for every CPU named (cpu_slots): none is skipped */
	for (size_t i = 0; i < b->ncpus && !err; i++) {
		__u32 cpu = (__u32)b->cpus[i];

		err = bpf_map__update_elem(skel->maps.ps_cpus, &cpu, sizeof(cpu), &one, 1, BPF_ANY);
	}
	if (!err)
		err = ps_bpf__usdt_fill(c, skel);
	if (err || ps_bpf__kind(c) == PS_BPF_KIND_PERF)
		return err;
	if (ps_counter__cpu_term(c) >= 0) {
		__u32 cpu = (__u32)ps_counter__cpu_term(c);
		__u8 v = 0;

		bpf_map__lookup_elem(skel->maps.ps_cpus, &cpu, sizeof(cpu), &v, 1, 0);
		v |= 4;
		err = bpf_map__update_elem(skel->maps.ps_cpus, &cpu, sizeof(cpu), &v, 1, BPF_ANY);
	}
	if (ps_session__target_kind(s) == PS_TARGET_CPUS) {
		const int *cpus;
		int n = ps_session__target_cpus(s, &cpus);

		if (ps_session__target_cgroup(s))
			err = cgroup_entry(s, skel);
		for (int i = 0; i < n && !err; i++) {
			__u32 cpu = (__u32)cpus[i];
			__u8 v = 0;

			bpf_map__lookup_elem(skel->maps.ps_cpus, &cpu, sizeof(cpu), &v, 1, 0);
			v |= 2;
			err = bpf_map__update_elem(skel->maps.ps_cpus, &cpu, sizeof(cpu), &v, 1,
						   BPF_ANY);
		}
	} else if (ps_session__target_kind(s) == PS_TARGET_COMMAND && ps_session__held(s)) {
		/* joins at its exec (ps_exec) */
		skel->bss->exec_tgid = (__u32)ps_session__target_pid(s);
	} else {
		pid_t tp = ps_session__target_pid(s);
		__u32 pid = (__u32)(tp > 0 ? tp : ps_session__self_pid(s));

		err = bpf_map__update_elem(skel->maps.ps_targets, &pid, sizeof(pid), &one, 1,
					   BPF_ANY);
		skel->bss->first_tgid = pid;
	}
	return err;
}

uint32_t ps_bpf__cfg_flags(const struct ps_session *s, const struct ps_counter *c)
{
	const struct ps_sample_conf *b = &ps_counter__sampled(c)->conf;
	unsigned mode = b->mode ? b->mode : PS_BPF_FORWARD;
	uint32_t f = 0;

	f |= mode & PS_BPF_FORWARD ? PS_BPF_F_FORWARD : 0;
	f |= mode & PS_BPF_AGGREGATE ? PS_BPF_F_AGGREGATE : 0;
	f |= b->npids ? PS_BPF_F_PIDS : 0;
	f |= b->ncpus ? PS_BPF_F_CPUS : 0;
	f |= b->priv == PS_PRIV_USER	 ? PS_BPF_F_USER
	     : b->priv == PS_PRIV_KERNEL ? PS_BPF_F_KERNEL
					 : 0;
	f |= ps_counter__attr(c)->sample_type & PERF_SAMPLE_CALLCHAIN ? PS_BPF_F_CALLCHAIN : 0;
	if (ps_bpf__kind(c) != PS_BPF_KIND_PERF)
		f |= ps_session__target_kind(s) == PS_TARGET_CPUS ? PS_BPF_F_TGT_CPUS
								  : PS_BPF_F_TGT_TREE;
	f |= ps_bpf__kind(c) != PS_BPF_KIND_PERF && ps_counter__cpu_term(c) >= 0 ? PS_BPF_F_CPU_TERM
										 : 0;
	/* a -G target's fds count its tasks only; a tracepoint's program sees all */
	if ((f & PS_BPF_F_TGT_CPUS) && ps_session__target_cgroup(s))
		f |= PS_BPF_F_CGROUP;
	/* perf samples syscalls:* at the user registers the syscall saved */
	if (ps_counter__attr(c)->type == PERF_TYPE_TRACEPOINT &&
	    !strncmp(ps_counter__spec_text(c), "syscalls:", 9))
		f |= PS_BPF_F_USER_REGS;
	/* a kernel tracepoint's ip costs a stack walk: only when it is used */
	if ((f & PS_BPF_F_FORWARD) || (f & (PS_BPF_F_USER | PS_BPF_F_KERNEL)) ||
	    ((mode & PS_BPF_AGGREGATE) && (b->keys & PS_AGG_IP)))
		f |= PS_BPF_F_IP;
	return f;
}

/* Entries of the CPU map: every possible CPU, and any CPU a filter or the
 * target names beyond them (a filter on a CPU that is not there keeps
 * nothing, as on the perf path, rather than being dropped). */
static uint32_t cpu_slots(const struct ps_session *s, const struct ps_sample_conf *b)
{
	int possible = libbpf_num_possible_cpus();
	uint32_t n = possible > 0 ? (uint32_t)possible : 1;

	for (size_t i = 0; i < b->ncpus; i++)
		if (b->cpus[i] >= 0 && (uint32_t)b->cpus[i] >= n)
			n = (uint32_t)b->cpus[i] + 1;
	const int *cpus;
	int ncpus = ps_session__target_cpus(s, &cpus);

	for (int i = 0; i < ncpus; i++)
		if ((uint32_t)cpus[i] >= n)
			n = (uint32_t)cpus[i] + 1;
	return n;
}

/* How much of a tracepoint's record a forwarded sample copies: every fixed
 * field, and room for the strings and arrays __data_loc fields place after
 * them (a longer one is cut, and its field decodes to nothing). */
static uint32_t raw_size(const struct ps_counter *c, bool whole)
{
	const struct ps_tp_format *f = ps_counter__tracepoint_name(c)
					   ? ps_tp_format__get(ps_counter__tracepoint_name(c), NULL)
					   : NULL;
	uint32_t end = 0;
	bool dynamic = false;

	for (size_t i = 0; i < ps_tp_format__count(f); i++) {
		const struct ps_tp_field *fl = ps_tp_format__field(f, i);

		end = fl->offset + fl->size > end ? fl->offset + fl->size : end;
		dynamic |= fl->kind == PS_TP_DATA_LOC || fl->kind == PS_TP_REL_LOC;
	}
	if (whole) /* the fixed fields; the program reads where the rest ends */
		return end;
	end = (end + 7) & ~7u;
	if (dynamic)
		end += 256;
	return end > PS_BPF_RAW_MAX ? PS_BPF_RAW_MAX : end;
}

/* A tracepoint whose record has __data_loc fields or user strings is
 * forwarded whole (the program's forward_whole): where those fields are.
 * false when the compact record serves. */
static bool whole(const struct ps_counter *c, struct ps_sample_bpf *skel)
{
	const struct ps_tp_format *f = ps_counter__tracepoint_name(c)
					   ? ps_tp_format__get(ps_counter__tracepoint_name(c), NULL)
					   : NULL;
	uint32_t nloc = 0, nstr = 0;

	if (!(ps_counter__attr(c)->sample_type & PERF_SAMPLE_RAW))
		return false;
	for (size_t i = 0; i < ps_tp_format__count(f); i++) {
		const struct ps_tp_field *fl = ps_tp_format__field(f, i);

		if ((fl->kind == PS_TP_DATA_LOC || fl->kind == PS_TP_REL_LOC) &&
		    nloc < PS_BPF_NSTR) {
			skel->rodata->cfg_loc_off[nloc] = fl->offset;
			skel->rodata->cfg_loc_base[nloc++] =
			    fl->kind == PS_TP_REL_LOC ? fl->offset + 4 : 0;
		}
		if (fl->user_string && nstr < PS_BPF_NSTR)
			skel->rodata->cfg_str_off[nstr++] = fl->offset;
	}
	skel->rodata->cfg_nloc = nloc;
	skel->rodata->cfg_nstr = nstr;
	skel->rodata->cfg_late = nstr && !nloc && ps_bpf__exit_tracepoint(c) != NULL;
	return nloc || nstr;
}

const struct ps_tp_format *ps_bpf__exit_tracepoint(const struct ps_counter *c)
{
	char name[256];

	if (!ps_counter__tracepoint_name(c) ||
	    strncmp(ps_counter__tracepoint_name(c), "syscalls:sys_enter_", 19))
		return NULL;
	snprintf(name, sizeof(name), "syscalls:sys_exit_%s", ps_counter__tracepoint_name(c) + 19);
	return ps_tp_format__get(name, NULL);
}

static uint32_t agg_entries(const struct ps_counter *c, uint32_t flags)
{
	const struct ps_sample_conf *b = &ps_counter__sampled(c)->conf;

	if (!(flags & PS_BPF_F_AGGREGATE))
		return 1;
	return b->entries ? b->entries : PS_AGG_ENTRIES_DEFAULT;
}

/* A sample's user side, taken at the overflow: with call-graph=dwarf its
 * registers and stack (PS_BPF_USER_STACK at most, whole words), and its
 * CPython frames when asked. */
static void configure_user(const struct ps_counter *c, const struct ps_sample_conf *b,
			   struct ps_sample_bpf *skel)
{
	const struct perf_event_attr *a = ps_counter__attr(c);
	uint32_t stack = a->sample_type & PERF_SAMPLE_STACK_USER ? a->sample_stack_user : 0;

	skel->rodata->cfg_user_stack =
	    (stack < PS_BPF_USER_STACK ? stack : PS_BPF_USER_STACK) & ~7u;
	skel->rodata->cfg_python = (b->mode & PS_BPF_PYTHON) != 0;
}

/* The object's map sizes (and the maps it shares with the others). */
static int size_maps(const struct ps_sampler *m, const struct ps_bpf *bs,
		     const struct ps_sample_conf *b, uint32_t flags, uint32_t keys,
		     struct ps_sample_bpf *skel)
{
	int err;

	if (bs->rb_fd >= 0)
		err = bpf_map__reuse_fd(skel->maps.ps_events, bs->rb_fd);
	else
		err = bpf_map__set_max_entries(skel->maps.ps_events,
					       flags & PS_BPF_F_FORWARD ? ring_bytes(m) : 4096);
	if (!err && !skel->rodata->cfg_whole) /* only forward_whole uses it */
		err = bpf_map__set_value_size(skel->maps.ps_scratch, 8);
	if (!err && skel->rodata->cfg_late)
		err = bpf_map__set_max_entries(skel->maps.ps_late, PS_LATE_ENTRIES);
	if (!err && skel->rodata->cfg_offcpu)
		err = bpf_map__set_max_entries(skel->maps.ps_offcpu, PS_OFFCPU_ENTRIES);
	if (!err && skel->rodata->cfg_offcpu && (keys & (PS_AGG_USTACK | PS_AGG_KSTACK)))
		err = bpf_map__set_max_entries(skel->maps.ps_places, PS_PLACE_ENTRIES);
	if (!err && skel->rodata->cfg_python)
		err = bs->py_fd >= 0 ? bpf_map__reuse_fd(skel->maps.ps_py, bs->py_fd)
				     : bpf_map__set_max_entries(skel->maps.ps_py, PS_PY_ENTRIES);
	if (!err && skel->rodata->cfg_python)
		err = bpf_map__set_max_entries(skel->maps.ps_py_threads, PS_PY_THREADS);
	if (!err && skel->rodata->cfg_offcpu_stack)
		err = bpf_map__set_max_entries(skel->maps.ps_oc_stacks, PS_OC_STACK_ENTRIES);
	if (!err)
		err = bpf_program__set_autoload(skel->progs.ps_tp_exit, skel->rodata->cfg_late);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.ps_pids, b->npids ? b->npids : 1);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.ps_cpus, cpu_slots(m->s, b));
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.ps_targets,
					       flags & PS_BPF_F_TGT_TREE ? PS_TARGET_ENTRIES : 1);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.ps_stacks,
					       (flags & PS_BPF_F_CALLCHAIN) ||
						       (keys & (PS_AGG_USTACK | PS_AGG_KSTACK))
						   ? PS_STACK_ENTRIES
						   : 1);
	return err;
}

/* Settle the object's read-only configuration and map sizes before load. */
int ps_bpf__configure(const struct ps_sampler *m, const struct ps_bpf *bs, uint32_t slot,
		      struct ps_sample_bpf *skel, int counts_fd)
{
	const struct ps_counter *c = ps_session__counter(m->s, slot);
	const struct ps_sample_conf *b = &ps_counter__sampled(c)->conf;
	enum ps_bpf_kind kind = ps_bpf__kind(c);
	bool tp = kind == PS_BPF_KIND_TRACEPOINT, hits = kind != PS_BPF_KIND_PERF;
	uint32_t flags = ps_bpf__cfg_flags(m->s, c),
		 keys = b->mode & PS_BPF_AGGREGATE ? b->keys : 0;
	int err;

	bpf_program__set_autoload(skel->progs.ps_perf, kind == PS_BPF_KIND_PERF);
	bpf_program__set_autoload(skel->progs.ps_tp, tp);
	bpf_program__set_autoload(skel->progs.ps_kp, kind == PS_BPF_KIND_PROBE);
	bpf_program__set_autoload(skel->progs.ps_fork, flags & PS_BPF_F_TGT_TREE);
	bpf_program__set_autoload(skel->progs.ps_free, flags & PS_BPF_F_TGT_TREE);
	bpf_program__set_autoload(skel->progs.ps_exec, flags & PS_BPF_F_TGT_TREE);
	bpf_program__set_autoload(skel->progs.ps_tp_exit, false); /* below, when cfg_late */
	bpf_program__set_autoload(skel->progs.ps_switch, false);  /* configure_offcpu's */
	bpf_program__set_autoload(skel->progs.ps_resumed, false);
	bpf_program__set_autoload(skel->progs.ps_flush, false);
	bpf_program__set_autoload(skel->progs.ps_seed, false);
	bpf_program__set_autoload(skel->progs.ps_wakeup, false);
	bpf_program__set_autoload(skel->progs.ps_wakeup_new, false);
	/* ps_tp as well, for a tracepoint with no raw one of its name */
	skel->rodata->cfg_raw_count = tp && ps_bpf__raw_count(m->s, c);
	bpf_program__set_autoload(skel->progs.ps_raw, skel->rodata->cfg_raw_count);
	skel->rodata->cfg_raw_arg = skel->rodata->cfg_raw_count && (keys & PS_AGG_FIELD) ? 1 : -1;
	skel->rodata->cfg_handle = ps_session__handle_of(m->s, slot);
	skel->rodata->cfg_flags = flags;
	skel->rodata->cfg_keys = keys;
	skel->rodata->cfg_every = b->every;
	skel->rodata->cfg_tid = (__u32)b->tid;
	skel->rodata->cfg_period =
	    hits && !ps_counter__attr(c)->freq ? ps_counter__attr(c)->sample_period : 1;
	skel->rodata->cfg_freq_ns =
	    hits && ps_counter__attr(c)->freq && ps_counter__attr(c)->sample_freq
		? 1000000000ull / ps_counter__attr(c)->sample_freq
		: 0;
	skel->rodata->cfg_wake_bytes = ring_bytes(m) / 4;
	skel->rodata->cfg_whole = tp && (flags & PS_BPF_F_FORWARD) && whole(c, skel);
	if (tp && (b->mode & (PS_BPF_OFFCPU | PS_BPF_ONCPU)))
		ps_bpf__configure_offcpu(c, b, keys, skel);
	/* ps_switch counts the switches then: no perf path on sched_switch */
	if (skel->rodata->cfg_offcpu_raw && ps_bpf__raw_offcpu(m->s, c))
		skel->rodata->cfg_raw_count = 1;
	skel->rodata->cfg_raw_size = tp && (ps_counter__attr(c)->sample_type & PERF_SAMPLE_RAW)
					 ? raw_size(c, skel->rodata->cfg_whole)
				     : kind == PS_BPF_KIND_PROBE
					 ? sizeof(bpf_user_pt_regs_t) /* the registers */
					 : 0;
	if (kind == PS_BPF_KIND_PERF && (flags & PS_BPF_F_FORWARD))
		configure_user(c, b, skel);
	if (keys & PS_AGG_FIELD) {
		skel->rodata->cfg_field_off = b->field_offset;
		skel->rodata->cfg_field_size = b->field_size;
		skel->rodata->cfg_field_signed = b->field_signed;
		skel->rodata->cfg_field_usdt = b->usdt_arg;
	}
	err = size_maps(m, bs, b, flags, keys, skel);
	if (!err)
		err = ps_bpf__usdt_configure(c, skel);
	/* libbpf cannot size an inner map's template (1.1 dereferences its
	 * object, which it has none of): the first count map is the template */
	if (!err && (flags & PS_BPF_F_AGGREGATE))
		err = bpf_map__set_inner_map_fd(skel->maps.ps_counts, counts_fd);
	return err;
}

/* The two count maps of an aggregating counter, made before load: one to
 * go in the program's slot, the other empty, to swap in when the counts
 * are taken. */
int ps_bpf__make_counts(const struct ps_counter *c, uint32_t flags, struct ps_bpf_counter *b)
{
	if (!(flags & PS_BPF_F_AGGREGATE))
		return 0;
	for (int i = 0; i < 2; i++) {
		b->counts_fd[i] =
		    bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "ps_counts_in",
				   ps_bpf__key_size(ps_counter__sampled(c)->conf.keys),
				   sizeof(__u64), agg_entries(c, flags), NULL);
		if (b->counts_fd[i] < 0)
			return b->counts_fd[i];
	}
	b->active = 0;
	return 0;
}

int ps_bpf__put_counts(struct ps_sample_bpf *skel, struct ps_bpf_counter *b)
{
	uint32_t zero = 0;

	if (b->counts_fd[0] < 0)
		return 0;
	return bpf_map_update_elem(bpf_map__fd(skel->maps.ps_counts), &zero, &b->counts_fd[0],
				   BPF_ANY);
}
