// SPDX-License-Identifier: GPL-2.0
/*
 * ps_sample.bpf.c: what perfscript runs in the kernel on a counter's
 * overflow. One object is loaded per counter; its read-only cfg_* values are
 * fixed before load, so the verifier prunes the branches a counter does not
 * use. ps_perf serves hardware and software events (attached to every fd of
 * the counter, run from the overflow handler); ps_tp serves tracepoints,
 * whose programs the kernel runs on every hit of the tracepoint, system-wide,
 * so it checks the session's target itself. Both filter (pid set, tid, CPU
 * set, user/kernel, every Nth), then count into ps_counts and/or forward a
 * compact record through the session's one ring buffer. ps_perf returns 0:
 * the kernel then does not write the overflow into the counter's own perf
 * ring as well. ps_tp returns 1, always: a tracepoint program's 0 would make
 * the kernel skip every perf event on the tracepoint for that hit, another
 * tool's and perfscript's own counting ones included.
 *
 * A tracepoint's target test must be cheap, since every process on the
 * machine pays it: one hash lookup of the tgid in ps_targets, which
 * ps_fork and ps_free keep current as the target's processes come and go
 * (inherit's rule: the processes forked after the session started).
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "ps_bpf.h"

char LICENSE[] SEC("license") = "GPL"; /* bpf_get_stackid and probe reads need it */

const volatile __u64 cfg_handle = 0;
const volatile __u32 cfg_flags = 0;
const volatile __u32 cfg_keys = 0;
const volatile __u64 cfg_every = 0;	    /* 0 or 1: every overflow */
const volatile __u32 cfg_tid = 0;	    /* 0: any thread */
const volatile __u64 cfg_period = 0;	    /* tracepoints: the counter's period, kept here */
const volatile __u64 cfg_wake_bytes = 0;    /* wake the reader once this much waits */
const volatile __u32 cfg_raw_size = 0;	    /* tracepoints: record bytes a forward copies */
const volatile __u32 cfg_field_off = 0;	    /* PS_BPF_K_FIELD: where the field is... */
const volatile __u32 cfg_field_size = 0;    /* ...its size (1, 2, 4, 8)... */
const volatile __u32 cfg_field_signed = 0;  /* ...and whether to sign-extend it */
const volatile __u64 cfg_freq_ns = 0;	    /* tracepoints with freq=: ns between samples */
const volatile __u32 cfg_offcpu = 0;	    /* sched_switch: sum the ns switched out (1), in (2) */
const volatile __u32 cfg_next_pid_off = 0;  /* ...where next_pid is in its record */
const volatile __u64 cfg_offcpu_min_ns = 0; /* ...and the shortest interval kept */
const volatile __u32 cfg_offcpu_split = 0;  /* keyed by prev_state: after a wake-up is runnable */
const volatile __u32 cfg_offcpu_raw = 0;    /* 1: ps_switch, on the raw tracepoint, does it */
const volatile __u32 cfg_offcpu_late = 0;   /* 1: stacks taken as the thread runs again */
/* Tracepoints forwarded whole (the record's length read from its
 * __data_loc fields, user strings read here): */
const volatile __u32 cfg_whole = 0;		     /* 1: forward this way */
const volatile __u32 cfg_nloc = 0;		     /* __data_loc/__rel_loc fields... */
const volatile __u32 cfg_loc_off[PS_BPF_NSTR] = {};  /* ...where each is... */
const volatile __u32 cfg_loc_base[PS_BPF_NSTR] = {}; /* ...and what its offset is from */
const volatile __u32 cfg_nstr = 0;		     /* user-string pointer fields... */
const volatile __u32 cfg_str_off[PS_BPF_NSTR] = {};  /* ...and where each is */
const volatile __u32 cfg_late = 0; /* 1: ps_tp_exit retries a string not in memory */
/* A counter counted here, on its raw tracepoint (ps_raw): no perf event of
 * its own, so the kernel skips the tracepoint's perf path for it. */
const volatile __u32 cfg_raw_count = 0;
const volatile __s32 cfg_raw_arg = -1; /* the key field's raw argument, -1: none */

__u64 seen = 0;	     /* overflows that passed the filters, for cfg_every */
__u64 hits = 0;	     /* tracepoint hits in the target, for cfg_period */
__u64 last_wake = 0; /* bpf_ktime_get_ns of the last forced wakeup (racy: a hint) */
__u32 on = 0;	     /* tracepoints: the counter is started (set by the loader) */
__u32 exec_tgid = 0; /* tracepoints: a held command, which joins ps_targets at its exec */
/* The target's one process, while it has not forked: the test of every
 * hit of the machine is then a compare, not a hash lookup. */
__u32 first_tgid = 0;
__u32 forked = 0;

/* Sizes are set by the loader before load; these are placeholders. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} ps_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PS_BPF_NLOST); /* PS_BPF_LOST_RING... */
	__type(key, __u32);
	__type(value, __u64);
} ps_lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} ps_pids SEC(".maps"); /* user pid filter: tgids */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC); /* memory as processes join */
	__type(key, __u32);
	__type(value, __u8);
} ps_targets SEC(".maps"); /* tracepoints: the target's tgids, kept by ps_fork/ps_free */

struct freq_state {
	__u64 last; /* bpf_ktime_get_ns of this CPU's last sample */
	__u64 hits; /* hits on this CPU since */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct freq_state);
} ps_freq SEC(".maps"); /* tracepoints with freq=: the rate, kept per CPU */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PS_BPF_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u8); /* bit 0: user CPU filter, 1: target CPU, 2: the cpu= term's */
} ps_cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ps_cgroup SEC(".maps"); /* a -G target's group (PS_BPF_F_CGROUP) */

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PS_BPF_STACK_DEPTH * sizeof(__u64));
} ps_stacks SEC(".maps");

struct counts_map {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH); /* a count per CPU: no atomics, no sharing */
	__uint(max_entries, 1);
	__uint(key_size, sizeof(struct ps_agg_key)); /* by size: the key's BTF would be a forward */
	__uint(value_size, sizeof(__u64));
};

/* The counts, in the one map slot 0 holds: the reader puts an empty one
 * there to take the full one away whole (sample/bpf/aggregate.c). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct counts_map);
} ps_counts SEC(".maps");

/* The registers a sample reads, per architecture: the perf event's copy
 * of the interrupted ones (the UAPI's bpf_user_pt_regs_t), and the task's
 * saved user registers (the kernel's struct pt_regs; only the fields we
 * read, relocated against the running kernel: CO-RE), by probe reads
 * (TASK_*) or, from bpf_task_pt_regs in a tracing program, directly
 * (REG_*). A user-mode ip is ring 3 on x86-64, EL0 on arm64. */
#if defined(__TARGET_ARCH_x86)
struct pt_regs___ps {
	unsigned long ip;
	unsigned long cs;
	unsigned long sp;
	unsigned long bp;
	unsigned long di;
	unsigned long orig_ax;
	unsigned long ax;
} __attribute__((preserve_access_index));
#define PERF_IP(r)   ((r)->rip)
#define PERF_SP(r)   ((r)->rsp)
#define PERF_USER(r) (((r)->cs & 3) == 3)
#define TASK_IP(r)   BPF_CORE_READ(r, ip)
#define TASK_USER(r) ((BPF_CORE_READ(r, cs) & 3) == 3)
#define TASK_SP(r)   BPF_CORE_READ(r, sp)
#define REG_USER(r)  (((r)->cs & 3) == 3)
#define REG_IP(r)    ((r)->ip)
#define REG_SP(r)    ((r)->sp)
#define REG_FP(r)    ((r)->bp)
#define REG_ARG(r)   ((r)->di)
#define REG_NR(r)    ((__s32)(r)->orig_ax) /* -1: not a system call */
#define REG_INSYS(r) ((r)->ax == -38ul)	   /* -ENOSYS: the call has not returned */
#elif defined(__TARGET_ARCH_arm64)
struct pt_regs___ps {
	unsigned long regs[31];
	unsigned long pc;
	unsigned long pstate;
	unsigned long sp;
	unsigned long orig_x0;
	int syscallno;
} __attribute__((preserve_access_index));
#define PERF_IP(r)   ((r)->pc)
#define PERF_SP(r)   ((r)->sp)
#define PERF_USER(r) (((r)->pstate & 0xf) == 0)
#define TASK_IP(r)   BPF_CORE_READ(r, pc)
#define TASK_USER(r) ((BPF_CORE_READ(r, pstate) & 0xf) == 0)
#define TASK_SP(r)   BPF_CORE_READ(r, sp)
#define REG_USER(r)  (((r)->pstate & 0xf) == 0)
#define REG_IP(r)    ((r)->pc)
#define REG_SP(r)    ((r)->sp)
#define REG_FP(r)    ((r)->regs[29])
#define REG_ARG(r)   ((r)->orig_x0)
#define REG_NR(r)    ((r)->syscallno)
#define REG_INSYS(r) (-1) /* not known */
#else
#error "ps_sample.bpf.c: registers for x86 and arm64 only (-D__TARGET_ARCH_x86 or _arm64)"
#endif

struct task_struct___ps {
	int pid, tgid;
	char comm[16];
} __attribute__((preserve_access_index));

/* Since 6.2 a task's perf events hang on one context pointer, NULL once
 * perf_event_exit_task has taken them off (an exiting task's last steps,
 * its final switch among them, which its counters do not count). */
struct task_struct___ctx {
	void *perf_event_ctxp;
} __attribute__((preserve_access_index));

static __always_inline void bump(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&ps_lost, &which);

	if (v)
		*v += 1; /* per-CPU: no atomic needed */
}

static __always_inline int cpu_has(__u32 cpu, __u8 bit)
{
	__u8 *v = bpf_map_lookup_elem(&ps_cpus, &cpu);

	return v && (*v & bit);
}

/* The tracepoint fired in the session's target: one of its processes, or
 * one of its CPUs. no_ctx: the counter has no perf events of its own (ps_raw
 * counts it: syscalls, which a task makes only until its exit), so there
 * is no context to test. */
static __always_inline int in_target_of(__u32 tgid, __u32 cpu, int no_ctx)
{
	/* the counter's events are on its cpu= CPU only */
	if ((cfg_flags & PS_BPF_F_CPU_TERM) && !cpu_has(cpu, 4))
		return 0;
	if (cfg_flags & PS_BPF_F_TGT_CPUS)
		return cpu_has(cpu, 2) && (!(cfg_flags & PS_BPF_F_CGROUP) ||
					   bpf_current_task_under_cgroup(&ps_cgroup, 0) == 1);
	if (!(cfg_flags & PS_BPF_F_TGT_TREE))
		return 1;
	/* (first_tgid is 0 while a held command waits for its exec: no task
	 * is in the target yet, the idle tasks' tgid 0 neither) */
	if (!forked ? !first_tgid || tgid != first_tgid : !bpf_map_lookup_elem(&ps_targets, &tgid))
		return 0;
	/* a task whose counters are gone counts no more (on kernels before
	 * 6.2, whose contexts are an array, the test is left out) */
	if (!no_ctx && bpf_core_field_exists(((struct task_struct___ctx *)0)->perf_event_ctxp)) {
		struct task_struct___ctx *t = (void *)bpf_get_current_task();

		return BPF_CORE_READ(t, perf_event_ctxp) != NULL;
	}
	return 1;
}

static __always_inline int in_target(__u32 tgid, __u32 cpu)
{
	return in_target_of(tgid, cpu, 0);
}

/* A process forked by one of the target's joins it (a thread shares its
 * tgid, which is there already). A full map misses the newcomer: counted
 * in ps_lost[1]. */
SEC("raw_tp/sched_process_fork")
int ps_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct___ps *parent = (void *)ctx->args[0], *child = (void *)ctx->args[1];
	__u32 up = BPF_CORE_READ(parent, tgid), tgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (tgid == up || !bpf_map_lookup_elem(&ps_targets, &up))
		return 0;
	forked = 1; /* before the child is in: no hit of its is missed meanwhile */
	if (bpf_map_update_elem(&ps_targets, &tgid, &one, BPF_ANY))
		bump(PS_BPF_LOST_KEYS);
	return 0;
}

/* A command held before its exec joins the target at the exec, where
 * enable_on_exec starts the counter's own fds: the last steps of
 * perfscript's child before it (the read it waits in, execve's entry) are
 * not the command's. The exec renames the task right after it enables
 * those fds (perf_event_exec, then __set_task_comm in begin_new_exec):
 * that rename is the hook, as it comes before sched_process_exec, which
 * perf counts. (task:task_rename itself, counted on this path, may miss
 * the exec's own rename: its program and this one run in the order they
 * were attached.) */
static __always_inline void offcpu_exec(struct bpf_raw_tracepoint_args *ctx);

SEC("raw_tp/task_rename")
int ps_exec(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct___ps *task = (void *)ctx->args[0];
	__u32 tgid = BPF_CORE_READ(task, tgid);
	__u8 one = 1;

	if (!exec_tgid || tgid != exec_tgid)
		return 0;
	if (bpf_map_update_elem(&ps_targets, &tgid, &one, BPF_ANY))
		bump(PS_BPF_LOST_KEYS);
	first_tgid = tgid;
	exec_tgid = 0;
	if (cfg_offcpu)
		offcpu_exec(ctx);
	return 0;
}

/* A process leaves the target when its leader's task is freed: every
 * thread has exited and been reaped by then, so no later hit of its own
 * (sched_process_exit's included) is missed. */
SEC("raw_tp/sched_process_free")
int ps_free(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct___ps *p = (void *)ctx->args[0];
	__u32 pid = BPF_CORE_READ(p, pid), tgid = BPF_CORE_READ(p, tgid);

	if (pid == tgid)
		bpf_map_delete_elem(&ps_targets, &tgid);
	return 0;
}

/* freq= on a tracepoint: the kernel would sample every hit for a program,
 * so the rate is kept here, per CPU: a sample once cfg_freq_ns passed,
 * its period the hits since the last. 0: not this hit. */
static __always_inline __u64 freq_period(void)
{
	__u32 zero = 0;
	struct freq_state *st = bpf_map_lookup_elem(&ps_freq, &zero);
	__u64 now = bpf_ktime_get_ns(), n;

	if (!st)
		return 0;
	st->hits++;
	if (now - st->last < cfg_freq_ns)
		return 0;
	n = st->hits;
	st->hits = 0;
	st->last = now;
	return n;
}

#include "ps_usdt.bpf.h"

/* A tracepoint field of the record at ctx (or a USDT marker's argument),
 * as the key's 64-bit value. */
static __always_inline __s64 field(void *ctx, __u64 ip)
{
	__u64 v = 0;
	__u32 sz = cfg_field_size;

	if (cfg_field_usdt)
		return usdt_field(ctx, ip, cfg_field_usdt);

	if (sz == 0 || sz > 8)
		return 0;
	bpf_probe_read_kernel(&v, sz & 15, (char *)ctx + cfg_field_off);
	if (sz < 8 && cfg_field_signed && (v >> (sz * 8 - 1)) & 1)
		v |= ~0ull << (sz * 8);
	return (__s64)v;
}

#include "ps_aggregate.bpf.h"

/* The reader is woken when a quarter of the ring waits, or when the stream
 * was quiet for a millisecond: the default, whenever it had caught up, is at
 * a high rate every record, an irq_work for the target and an epoll round
 * for one record. A slow stream's records are then seen at once; the
 * reader's 50 ms drain timer bounds the rest. */
static __always_inline __u64 wake_flags(__u64 now)
{
	if (now - last_wake > 1000000 ||
	    bpf_ringbuf_query(&ps_events, BPF_RB_AVAIL_DATA) >= cfg_wake_bytes) {
		last_wake = now;
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

#include "ps_forward.bpf.h"
#include "ps_whole.bpf.h"
#include "ps_offcpu.bpf.h"
#include "ps_python.bpf.h"
#include "ps_rawtp.bpf.h"

static __always_inline int handle(void *ctx, __u64 ip, __u32 user, __u64 period, __u64 addr,
				  int tracepoint)
{
	__u64 pt = bpf_get_current_pid_tgid();
	__u32 tgid = pt >> 32, tid = (__u32)pt, cpu = bpf_get_smp_processor_id();

	/* a tracepoint program runs on every hit: the period is ours to keep */
	if (tracepoint && cfg_freq_ns && !(period = freq_period()))
		return 0;
	if (tracepoint && cfg_period > 1 &&
	    __sync_fetch_and_add(&hits, 1) % cfg_period != cfg_period - 1)
		return 0;
	if ((cfg_flags & PS_BPF_F_PIDS) && !bpf_map_lookup_elem(&ps_pids, &tgid))
		return 0;
	if (cfg_tid && tid != cfg_tid)
		return 0;
	if ((cfg_flags & PS_BPF_F_CPUS) && !cpu_has(cpu, 1))
		return 0;
	if ((cfg_flags & PS_BPF_F_USER) && !user)
		return 0;
	if ((cfg_flags & PS_BPF_F_KERNEL) && user)
		return 0;
	if (cfg_every > 1 && __sync_fetch_and_add(&seen, 1) % cfg_every != cfg_every - 1)
		return 0;
	if (cfg_flags & PS_BPF_F_AGGREGATE)
		aggregate(ctx, tgid, tid, cpu, ip, user, tracepoint);
	if (!(cfg_flags & PS_BPF_F_FORWARD))
		return 0;
	if (tracepoint && cfg_whole)
		forward_whole(ctx, ip, user, period, tgid, tid, cpu);
	else if (!tracepoint && (cfg_user_stack || cfg_python))
		forward_user(ctx, ip, user, period, addr, tgid, tid, cpu);
	else
		forward(ctx, ip, user, period, addr, tgid, tid, cpu, tracepoint);
	return 0;
}

/* A kprobe, uprobe or USDT counter's program: like ps_tp, it runs on every
 * hit of the probe the kernel lets through (the probe's own filter: the
 * target's processes, or every process for -a), keeps the period itself,
 * and returns 1 so that the hit goes on to the counter's fds, which count
 * it. Its record's raw bytes are the registers (s:arg(n), s.retval). */
SEC("kprobe")
int ps_kp(void *ctx)
{
	bpf_user_pt_regs_t *regs = ctx;

	if (!on || !in_target(bpf_get_current_pid_tgid() >> 32, bpf_get_smp_processor_id()))
		return 1;
	handle(ctx, PERF_IP(regs), PERF_USER(regs), 0, 0, 1);
	return 1;
}

SEC("perf_event")
int ps_perf(struct bpf_perf_event_data *ctx)
{
	return handle(ctx, PERF_IP(&ctx->regs), PERF_USER(&ctx->regs), ctx->sample_period,
		      ctx->addr, 0);
}

SEC("tracepoint")
int ps_tp(void *ctx)
{
	__u64 ip = 0;

	if (cfg_offcpu) { /* sched_switch: the intervals, not the hits */
		__u32 next = 0;

		if (cfg_offcpu_raw) /* ps_switch's, then */
			return 1;
		bpf_probe_read_kernel(&next, sizeof(next), (char *)ctx + cfg_next_pid_off);
		offcpu(ctx, NULL, next, NULL, 0, 0);
		return 1;
	}
	/* first, before any other work: most hits are other processes' */
	if (!on || !in_target(bpf_get_current_pid_tgid() >> 32, bpf_get_smp_processor_id()))
		return 1;

	/* A tracepoint program cannot read the hit's registers. perf reports
	 * a syscall tracepoint at the task's user registers and any other at
	 * its kernel caller: the task's saved user registers give the first,
	 * a one-frame kernel stack the second. */
	if (cfg_flags & PS_BPF_F_USER_REGS) {
		struct pt_regs___ps *regs;

		regs = (struct pt_regs___ps *)bpf_task_pt_regs(bpf_get_current_task_btf());
		ip = TASK_IP(regs);
		handle(ctx, ip, TASK_USER(regs), 0, 0, 1);
		return 1;
	}
	if (cfg_flags & PS_BPF_F_IP)
		bpf_get_stack(ctx, &ip, sizeof(ip), 0);
	handle(ctx, ip, 0, 0, 0, 1);
	return 1; /* the kernel goes on to every perf event on the tracepoint */
}
