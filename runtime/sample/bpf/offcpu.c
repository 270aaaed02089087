/*
 * offcpu.c: the reader's side of off-CPU and wall time (ps_offcpu.bpf.h).
 * The programs see a thread at its switches; two are never attached but
 * run from here through BPF_PROG_TEST_RUN: ps_seed tells them of the
 * threads a -p or -a target had when its counter started (a thread
 * blocked all session long never switches), from /proc; ps_flush books the
 * waits and slices still going on before an aggregate is read.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/cgroup.h"
#include "base/cpus.h"
#include "sample/bpf/internal.h"
#include "ps_sample.skel.h"

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
