/*
 * offcpu.c: the reader's side of off-CPU and wall time (ps_offcpu.bpf.h):
 * which programs an off-CPU aggregate loads, on what this kernel has, and
 * what they are told. The programs see a thread at its switches; two are
 * never attached but run from here through BPF_PROG_TEST_RUN: ps_seed
 * tells them of the threads a -p or -a target had when its counter
 * started (a thread blocked all session long never switches), from /proc;
 * ps_flush books the waits and slices still going on before an aggregate
 * is read. A take of the aggregate keeps the stacks the entries hold.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "base/array.h"
#include "base/cgroup.h"
#include "base/cpus.h"
#include "sample/bpf/internal.h"
#include "ps_sample.skel.h"

/* Where sched_switch's field name is, or -1 (not sched_switch, no format). */
static int offcpu_field(const struct ps_counter *c, const char *name)
{
	const char *tp = ps_counter__tracepoint_name(c);
	const struct ps_tp_field *f = tp && !strcmp(tp, "sched:sched_switch")
					  ? ps_tp_format__find(ps_tp_format__get(tp, NULL), name)
					  : NULL;

	return f ? (int)f->offset : -1;
}

static bool has_member(const struct btf *btf, const char *type, const char *name)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; m && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), name))
			return true;
	return false;
}

/* What this kernel's scheduler tracepoints give, from its BTF, read once:
 * sched_switch's raw tracepoint has prev_state, its fourth argument (5.18
 * on), and a task's run queue is in reach (a cfs_rq's rq: group
 * scheduling); sched_exit_tp (6.16 on) is the end of __schedule, in the
 * task that runs next. */
static struct {
	bool looked, state, resumes;
} sched_tp;

static void look_at_sched_tp(void)
{
	struct btf *btf;
	const struct btf_type *t = NULL;
	int id;

	if (sched_tp.looked)
		return;
	sched_tp.looked = true;
	btf = btf__load_vmlinux_btf();
	if (libbpf_get_error(btf))
		return;
	id = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	t = id > 0 ? btf__type_by_id(btf, btf__type_by_id(btf, id)->type) : NULL;
	t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
	sched_tp.state = t && btf_is_func_proto(t) && btf_vlen(t) == 5 && /* void *, and four */
			 has_member(btf, "cfs_rq", "rq");		  /* the way to its clock */
	sched_tp.resumes =
	    btf__find_by_name_kind(btf, "btf_trace_sched_exit_tp", BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
}

/* An off-CPU aggregate that forwards its intervals: where sched_switch's
 * fields are (ps_switch writes its record), and with call-graph=dwarf how
 * much user stack each interval carries (PS_BPF_OC_STACK at most, whole
 * words). */
static void configure_forward(const struct ps_counter *c, struct ps_sample_bpf *skel)
{
	static const char *const field[] = {"prev_comm", "prev_pid", "prev_prio", "prev_state",
					    "next_comm", "next_pid", "next_prio"};
	const struct perf_event_attr *a = ps_counter__attr(c);
	uint32_t stack = a->sample_type & PERF_SAMPLE_STACK_USER ? a->sample_stack_user : 0;

	for (size_t i = 0; i < sizeof(field) / sizeof(*field); i++)
		skel->rodata->cfg_sw_off[i] = offcpu_field(c, field[i]);
	skel->rodata->cfg_offcpu_fwd = 1;
	skel->rodata->cfg_offcpu_stack = (stack < PS_BPF_OC_STACK ? stack : PS_BPF_OC_STACK) & ~7u;
}

/* An off-CPU (or on-CPU) aggregate on sched_switch: where next_pid is, the
 * shortest interval, and, keyed by prev_state, the wake-ups that split a
 * sleep; with a process tree to follow, a new thread's first wait. Keyed
 * by no field but prev_state, on a kernel that gives it, the raw
 * tracepoint's program does the work (the kernel never skips it). */
void ps_bpf__configure_offcpu(const struct ps_counter *c, const struct ps_sample_conf *b,
			      uint32_t keys, struct ps_sample_bpf *skel)
{
	bool split, raw;

	if (offcpu_field(c, "next_pid") < 0)
		return;
	split = (keys & PS_AGG_FIELD) && (int)b->field_offset == offcpu_field(c, "prev_state");
	look_at_sched_tp();
	raw = (!(keys & PS_AGG_FIELD) || split) && sched_tp.state;
	skel->rodata->cfg_offcpu =
	    (b->mode & PS_BPF_OFFCPU ? 1 : 0) | (b->mode & PS_BPF_ONCPU ? 2 : 0);
	skel->rodata->cfg_next_pid_off = (__u32)offcpu_field(c, "next_pid");
	skel->rodata->cfg_offcpu_min_ns = b->offcpu_min_ns;
	skel->rodata->cfg_offcpu_split = split;
	skel->rodata->cfg_offcpu_raw = raw;
	if (skel->rodata->cfg_flags & PS_BPF_F_FORWARD)
		configure_forward(c, skel);
	/* stacks, once per interval that reaches the threshold, as its
	 * thread runs again, where the kernel says when */
	skel->rodata->cfg_offcpu_late =
	    raw && sched_tp.resumes &&
	    ((keys & (PS_AGG_USTACK | PS_AGG_KSTACK)) ||
	     (skel->rodata->cfg_offcpu_fwd &&
	      ((skel->rodata->cfg_flags & PS_BPF_F_CALLCHAIN) || skel->rodata->cfg_offcpu_stack)));
	bpf_program__set_autoload(skel->progs.ps_resumed, skel->rodata->cfg_offcpu_late);
	bpf_program__set_autoload(skel->progs.ps_switch, raw);
	bpf_program__set_autoload(skel->progs.ps_flush, true); /* run, never attached */
	bpf_program__set_autoload(skel->progs.ps_seed, true);
	bpf_program__set_autoload(skel->progs.ps_wakeup, split && !raw); /* ps_switch knows */
	bpf_program__set_autoload(skel->progs.ps_wakeup_new,
				  (split || (b->mode & PS_BPF_ONCPU)) &&
				      (skel->rodata->cfg_flags & PS_BPF_F_TGT_TREE));
}

/* Run program p once, args as its raw tracepoint's arguments. */
static int run(const struct bpf_program *p, __u64 *args, size_t n)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args,
		    .ctx_size_in = (__u32)(n * sizeof(*args)));

	return bpf_program__fd(p) < 0 ? -EBADF : bpf_prog_test_run_opts(bpf_program__fd(p), &opts);
}

/* A /proc state letter as sched_switch's args.prev_state (TASK_REPORT
 * bits), or -1 for a thread that is exiting. R (running or runnable) is
 * taken as runnable: if it runs, its switch-out tells from its task clock
 * how long. */
static long state_of(char c)
{
	switch (c) {
	case 'S':
		return 1;
	case 'D':
		return 2;
	case 'T':
		return 4;
	case 't':
		return 8;
	case 'P':
		return 0x40;
	case 'I':
		return 0x80;
	case 'R':
		return 0;
	default:
		return -1;
	}
}

/* Tell the programs of thread tid of process pid, from its stat (name and
 * state) and schedstat (on-CPU and run-delay ns). */
static void seed_thread(struct ps_sample_bpf *skel, const char *pid, const char *tid)
{
	char path[96], line[512], name[16] = "";
	unsigned long long on = 0, delay = 0;
	const char *open, *close;
	__u64 args[7];
	long state;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/task/%s/stat", pid, tid);
	if (!(f = fopen(path, "re")))
		return;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	open = strchr(line, '(');
	close = strrchr(line, ')');
	if (!open || !close || close < open || !close[1] || (state = state_of(close[2])) < 0)
		return;
	memcpy(name, open + 1, (size_t)(close - open - 1) < 15 ? (size_t)(close - open - 1) : 15);
	snprintf(path, sizeof(path), "/proc/%s/task/%s/schedstat", pid, tid);
	if ((f = fopen(path, "re"))) {
		if (fscanf(f, "%llu %llu", &on, &delay) != 2)
			on = delay = 0;
		fclose(f);
	}
	args[0] = strtoull(tid, NULL, 10);
	args[1] = strtoull(pid, NULL, 10);
	args[2] = (__u64)state;
	memcpy(&args[3], name, sizeof(name));
	args[5] = on;
	args[6] = delay;
	run(skel->progs.ps_seed, args, 7);
}

static void seed_process(struct ps_sample_bpf *skel, const char *pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%s/task", pid);
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d)))
		if (isdigit((unsigned char)e->d_name[0]))
			seed_thread(skel, pid, e->d_name);
	closedir(d);
}

void ps_bpf__offcpu_seed(const struct ps_session *s, struct ps_sample_bpf *skel)
{
	const int *cpus;
	int *online = NULL, nonline = 0;
	struct dirent *e;
	char pid[24];
	DIR *d;

	if (ps_session__target_kind(s) == PS_TARGET_PID) {
		snprintf(pid, sizeof(pid), "%d", (int)ps_session__target_pid(s));
		seed_process(skel, pid);
		return;
	}
	/* every thread of the machine with -a; with -C a thread is the
	 * target's only where it runs, which is not known yet */
	if (ps_session__target_kind(s) != PS_TARGET_CPUS || ps_cpus__online(&online, &nonline) ||
	    ps_session__target_cpus(s, &cpus) != nonline || !(d = opendir("/proc"))) {
		free(online);
		return;
	}
	free(online);
	while ((e = readdir(d)))
		if (isdigit((unsigned char)e->d_name[0]) &&
		    (!ps_session__target_cgroup(s) ||
		     ps_cgroup__has(atoi(e->d_name), ps_session__target_cgroup(s))))
			seed_process(skel, e->d_name);
	closedir(d);
}

void ps_bpf__offcpu_flush(const struct ps_bpf_counter *b)
{
	__u64 none = 0;

	if (b->skel->rodata->cfg_offcpu)
		run(b->skel->progs.ps_flush, &none, 1);
}

/* Before the last drain: the waits going on of an off-CPU aggregate that
 * forwards are booked up to now, and so come in that drain. */
void ps_bpf__offcpu_settle(struct ps_sampler *m)
{
	for (uint32_t slot = 0; slot < ps_session__nslots(m->s); slot++) {
		struct ps_bpf_counter *b = ps_bpf__counter(m, slot);

		if (b && b->skel && b->skel->rodata->cfg_offcpu_fwd)
			ps_bpf__offcpu_flush(b);
	}
}

static int by_id(const void *a, const void *b)
{
	__s32 x = *(const __s32 *)a, y = *(const __s32 *)b;

	return (x > y) - (x < y);
}

/* The stack ids b's off-CPU entries hold, and the keys of its count map
 * in use (booked since the take began, key_size bytes each), sorted, into
 * *ids (NULL when none). An id that names no stack any more could name
 * another's later. */
static size_t held(const struct ps_bpf_counter *b, size_t key_size, __s32 **ids)
{
	int fd = bpf_map__fd(b->skel->maps.ps_offcpu);
	size_t n = 0, cap = 0;
	__u32 key, *prev = NULL;
	struct ps_oc_entry e;
	struct ps_agg_key k = {0}, *kprev = NULL;

	*ids = NULL;
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &e) ||
		    ps_array__reserve(ids, &cap, n + 4, sizeof(**ids)))
			continue;
		(*ids)[n++] = e.key.ustack;
		(*ids)[n++] = e.key.kstack;
		if (b->skel->rodata->cfg_offcpu_fwd) { /* a forwarded interval's own */
			(*ids)[n++] = e.us;
			(*ids)[n++] = e.ks;
		}
	}
	fd = b->counts_fd[b->active];
	while (key_size >= offsetof(struct ps_agg_key, ip) &&
	       !bpf_map_get_next_key(fd, kprev, &k)) {
		kprev = &k;
		if (ps_array__reserve(ids, &cap, n + 2, sizeof(**ids)))
			break;
		(*ids)[n++] = k.ustack;
		(*ids)[n++] = k.kstack;
	}
	if (n)
		qsort(*ids, n, sizeof(**ids), by_id);
	return n;
}

/* Wait until every program of the machine's CPUs that was running has
 * ended (BPF programs run inside an RCU read-side section; the kernel's
 * global membarrier is a synchronize_rcu). */
static bool quiesce(void)
{
	return syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0;
}

void ps_bpf__empty_stacks(const struct ps_bpf_counter *b, size_t key_size)
{
	int fd = bpf_map__fd(b->skel->maps.ps_stacks);
	__s32 *ids = NULL;
	size_t n;
	__u32 key, next;
	bool more, places = b->skel->rodata->cfg_offcpu && !(b->skel->bss->places_epoch & 1);

	/* the places' stacks are not used while they go (ps_offcpu_places.bpf.h),
	 * nor by a program that read them before: where that cannot be waited
	 * for, places stay unused and every stack is walked */
	if (places) {
		b->skel->bss->places_epoch |= 1;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		places = quiesce();
	}
	n = b->skel->rodata->cfg_offcpu ? held(b, key_size, &ids) : 0;
	more = !bpf_map_get_next_key(fd, NULL, &next);

	/* the next key is found before this one goes */
	while (more) {
		key = next;
		more = !bpf_map_get_next_key(fd, &key, &next);
		if (!n || !bsearch(&key, ids, n, sizeof(*ids), by_id))
			bpf_map_delete_elem(fd, &key);
	}
	free(ids);
	if (places)
		b->skel->bss->places_epoch++; /* even: places remembered anew */
}
