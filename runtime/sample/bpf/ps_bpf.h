/*
 * ps_bpf.h: the layouts the in-kernel programs (ps_sample.bpf.c) and the
 * loader (runtime/sample/bpf/load.c) share: the compact record a forwarded overflow
 * becomes in the BPF ring buffer, the aggregation key, and the bits of the
 * per-object configuration. Plain fixed-width types only, so the same header
 * compiles for the BPF target and for the host.
 */
#ifndef PS_BPF_SHARED_H
#define PS_BPF_SHARED_H

/* cfg_flags */
#define PS_BPF_F_FORWARD   0x1u	   /* survivors go to the ring buffer */
#define PS_BPF_F_AGGREGATE 0x2u	   /* survivors are counted in ps_counts */
#define PS_BPF_F_PIDS	   0x4u	   /* keep only tgids in ps_pids */
#define PS_BPF_F_CPUS	   0x8u	   /* keep only CPUs set in ps_cpus */
#define PS_BPF_F_USER	   0x10u   /* keep only user-mode overflows */
#define PS_BPF_F_KERNEL	   0x20u   /* keep only kernel-mode overflows */
#define PS_BPF_F_CALLCHAIN 0x40u   /* forwarded records carry stack ids */
#define PS_BPF_F_TGT_TREE  0x80u   /* tracepoint: the target's process tree only */
#define PS_BPF_F_TGT_CPUS  0x100u  /* tracepoint: the target's CPUs only */
#define PS_BPF_F_USER_REGS 0x200u  /* tracepoint: report the task's user registers */
#define PS_BPF_F_IP	   0x400u  /* tracepoint: find the hit's ip (forwarded, or a key) */
#define PS_BPF_F_CGROUP	   0x800u  /* tracepoint: the target CPUs' tasks of ps_cgroup only */
#define PS_BPF_F_CPU_TERM  0x1000u /* tracepoint: the event's cpu= term (ps_cpus bit 4) only */

/* cfg_keys: the aggregation key's fields (also PS_AGG_* in perfscript.h) */
/* Slots of ps_lost, per CPU */
#define PS_BPF_LOST_RING     0 /* ring buffer reserves that failed */
#define PS_BPF_LOST_KEYS     1 /* keys dropped: the count map was full */
#define PS_BPF_HITS	     2 /* hits ps_raw counted: a raw-tracepoint counter's value */
#define PS_BPF_PLACE_USED    3 /* off-CPU intervals given a remembered place's stacks */
#define PS_BPF_PLACE_CHECKED 4 /* uses that walked the stacks again to compare */
#define PS_BPF_PLACE_WRONG   5 /* and found another: that stack is walked from then on */
#define PS_BPF_PLACE_WALKED  6 /* intervals whose stacks were walked otherwise */
#define PS_BPF_NLOST	     7

#define PS_BPF_K_PID	0x1u
#define PS_BPF_K_TID	0x2u
#define PS_BPF_K_CPU	0x4u
#define PS_BPF_K_COMM	0x8u
#define PS_BPF_K_IP	0x10u
#define PS_BPF_K_USTACK 0x20u
#define PS_BPF_K_KSTACK 0x40u
#define PS_BPF_K_FIELD	0x80u /* a tracepoint field (cfg_field_*) */

#define PS_BPF_RAW_MAX 2048 /* bytes of a tracepoint record a forwarded one may copy */
/* A tracepoint with __data_loc fields or user strings is forwarded whole:
 * its record up to PS_BPF_DYN_RAW bytes (PATH_MAX and more), then up to
 * PS_BPF_NSTR user strings, each a ps_bpf_str and its bytes (8-aligned). */
#define PS_BPF_DYN_RAW	8192
#define PS_BPF_NSTR	4
#define PS_BPF_STR_MAX	4096 /* PATH_MAX, the NUL included */
#define PS_BPF_LATE_RAW 128  /* a syscall's record, kept for its exit (late strings) */

/* An off-CPU interval forwarded carries its switch's record (sched_switch's
 * is 64 bytes) and, with call-graph=dwarf, up to PS_BPF_OC_STACK bytes of
 * the thread's user stack at its switch-out. */
#define PS_BPF_OC_REC	64
#define PS_BPF_OC_STACK 8192

#define PS_BPF_MAX_CPUS	   1024 /* CPU map entries before load; the loader sizes it */
#define PS_BPF_STACK_DEPTH 127	/* kernel.perf_event_max_stack's default */

struct ps_bpf_rec {
	__u64 handle; /* the counter (the object's cfg_handle) */
	__u64 ip, time, period, addr;
	__u32 pid, tid, cpu;
	__u32 user;	      /* 1 user mode, 0 kernel */
	__s32 ustack, kstack; /* ps_stacks ids, < 0 when absent */
	__u32 raw_size;	      /* bytes of the tracepoint's record that follow */
	__u32 strings_size;   /* bytes of ps_bpf_str entries after the record (8-aligned) */
	__u32 regs_size;      /* then the task's user pt_regs (an off-CPU interval's)... */
	__u32 stack_size;     /* ...and this much of its user stack, in a larger room */
	__u64 cgroup;	      /* the task's cgroup id (bpf_get_current_cgroup_id) */
	__u32 py_room;	      /* a sample's: bytes for CPython frames right after the record, */
	__u32 py_n;	      /* of which this many ps_bpf_pyframe are filled */
	__u32 args_n;	      /* a USDT marker's arguments after raw_size bytes, 8 each */
	__u32 pad;
};

/* A USDT site's arguments (sample/bpf/usdt.c writes them, ps_forward.bpf.h
 * reads them at the event): kinds as symbols/resolve.h's ps_usdt_kind. */
#define PS_BPF_USDT_ARGS   12
#define PS_BPF_USDT_CONST  0
#define PS_BPF_USDT_REG	   1
#define PS_BPF_USDT_MEM	   2
#define PS_BPF_USDT_GLOBAL 3
struct ps_bpf_usdt_arg {
	__s64 val;    /* the constant, the displacement, or a global's link-time address */
	__u16 pt_off; /* the register's offset in the probe's pt_regs */
	__u8 kind, size;
	__u8 is_signed;
	__u8 pad[3];
};
struct ps_bpf_usdt {
	__u64 pc; /* the site's link-time address */
	__u32 nargs, pad;
	struct ps_bpf_usdt_arg args[PS_BPF_USDT_ARGS];
};

/* A sampled thread's CPython frames, innermost first (ps_python.bpf.h):
 * the code object's address, with PS_BPF_PY_ENTRY set on the outermost
 * frame one call of the eval loop runs, and where the frame is in it
 * (3.11 and later: the instruction's address; 3.10: its index), and its
 * name object's address. */
#define PS_BPF_PY_FRAMES     64
#define PS_BPF_PY_FRAME_READ 128 /* bytes of a frame read at once: a power of two */
#define PS_BPF_PY_ENTRY	     0x1ull
struct ps_bpf_pyframe {
	__u64 code, at;
	__u64 name; /* the code's co_name: tells a code object from a later one at its address */
};

/* Where a CPython process keeps its threads and frames: the map value the
 * loader writes for each process (symbols/python.c's table gives the
 * offsets). f_entry is 3.11's is_entry; f_owner 3.12's and later (a frame
 * of owner 3 is the eval loop's C shim); -1 where a version has none. */
struct ps_bpf_py {
	__u64 head; /* address of _PyRuntime.interpreters.head */
	__u16 interp_threads, ts_next, ts_thread_id, ts_frame;
	__s16 cframe_frame; /* >= 0: ts_frame points at a _PyCFrame, the frame here */
	__u16 f_back, f_code, f_at;
	__s16 f_entry, f_owner;
	__u16 at_size;	  /* 4: f_at is 3.10's int f_lasti; 8: a pointer */
	__u16 co_name;	  /* the code object's name */
	__u16 frame_read; /* bytes of a frame that hold every field above */
};

/* A sample's user registers and stack (call-graph=dwarf on the BPF path)
 * follow its CPython frames' room: at most this much stack. */
#define PS_BPF_USER_STACK 16384

struct ps_bpf_str {
	/* the pointer field's offset in the record; the bytes that follow,
	 * with the NUL (bpf_probe_read_user_str's count), or -errno; then
	 * those bytes, up to the next multiple of 8 */
	__u32 offset;
	__s32 len;
};

/* The per-CPU scratch a whole record is put together in. */
#define PS_BPF_SCRATCH                                                                             \
	(sizeof(struct ps_bpf_rec) + PS_BPF_DYN_RAW +                                              \
	 PS_BPF_NSTR * (sizeof(struct ps_bpf_str) + PS_BPF_STR_MAX))

/* An aggregation key. A count map hashes only the part of it up to the
 * last field its counter keys by (ps_bpf__key_size), so the fields go
 * from the most often alone to the least. */
struct ps_agg_key {
	__s64 field; /* a tracepoint field's value, sign-extended as its format says */
	__u32 pid, tid, cpu, user; /* user: of ip */
	__s32 ustack, kstack;
	__u64 ip;
	char comm[16];
};

/* The states whose parts without stacks an off-CPU entry sums itself
 * (acc), and adds to the map only when its key changes or the map is
 * read: a short interval then costs no map update (acc_slot). */
#define PS_ACC_N 7

/* A thread's entry in an off-CPU object's ps_offcpu (ps_offcpu.bpf.h),
 * kept from its first switch to its last. The reader keeps the stacks its
 * ids name when it empties the stack map (sample/bpf/offcpu.c): the
 * interval going on is added under them later. */
struct ps_oc_entry {
	__u64 since;	       /* the clock at the switch-out (or in, or the last flush) */
	__u64 began;	       /* at the switch-out that began the interval */
	__u64 woken;	       /* at its first wake-up since, 0 until then */
	__u64 oncpu;	       /* 1: since the switch-in */
	__u64 ran;	       /* the thread's sum_exec_runtime at the switch-out */
	__u64 delay;	       /* and its sched_info.run_delay */
	__u64 pend[2];	       /* cfg_offcpu_late: an interval's parts waiting for... */
	__s64 pend_state[2];   /* ...its stacks, their states, */
	__u32 npend;	       /* and whether there are any */
	__u32 due;	       /* 1: this interval's stacks are to be taken */
	__u32 kept_last;       /* 1: its last interval reached the threshold */
	__u32 left;	       /* args.prev_state at the switch-out */
	__u64 born;	       /* its task's start_time; 0: not known (seeded from /proc) */
	__u64 acc[PS_ACC_N];   /* stackless parts not added yet, by acc_slot */
	struct ps_agg_key key; /* taken at the switch-out */
	__u32 tgid, tid;       /* for a forwarded interval (ps_offcpu_fwd.bpf.h): */
	__s32 us, ks;	       /* its stacks, */
	__u32 has_rec, pad;    /* and whether rec is its switch's record */
	__u8 rec[PS_BPF_OC_REC];
};

#endif
