/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ps_python.bpf.h: a sample's user side taken in the kernel, for ps_perf:
 * the task's user registers and stack (call-graph=dwarf on the BPF path,
 * unwound in user space as a perf ring's are), and the CPython frames the
 * sampled thread was running, read at the overflow from the interpreter's
 * own structures.
 *
 * A process is walked only once the loader has put its entry in ps_py
 * (where _PyRuntime keeps the interpreters, and the offsets of its
 * version). The thread's state is the one whose thread_id is the thread's
 * pthread_self(), which glibc keeps in the FS base on x86-64 (found in the
 * interpreter's list once, then kept by thread while it stays so); its frames
 * are followed from the newest back, at most PS_BPF_PY_FRAMES. A frame
 * records its code object and where it was; the outermost frame of each
 * call of the eval loop is marked PS_BPF_PY_ENTRY, so that user space can
 * put each group where _PyEval_EvalFrameDefault is in the native stack.
 * Included by ps_sample.bpf.c.
 */
#ifndef PS_PYTHON_BPF_H
#define PS_PYTHON_BPF_H

const volatile __u32 cfg_user_stack = 0; /* bytes of user stack a sample copies */
const volatile __u32 cfg_python = 0;	 /* 1: CPython frames, for processes in ps_py */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32); /* tgid */
	__type(value, struct ps_bpf_py);
} ps_py SEC(".maps");

#if defined(__TARGET_ARCH_x86)
struct thread_struct___ps {
	unsigned long fsbase;
} __attribute__((preserve_access_index));
struct task_struct___fs {
	struct thread_struct___ps thread;
} __attribute__((preserve_access_index));

/* pthread_self() of the current thread: glibc's thread pointer. */
static __always_inline __u64 thread_self(void)
{
	struct task_struct___fs *t = (void *)bpf_get_current_task();

	return BPF_CORE_READ(t, thread.fsbase);
}
#else
static __always_inline __u64 thread_self(void)
{
	return 0; /* arm64's thread pointer is not pthread_self(): no match */
}
#endif

static __always_inline __u64 read_ptr(__u64 addr)
{
	__u64 v = 0;

	if (!addr || bpf_probe_read_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

/* 3.11 and later keep their frames one after another in chunks of memory
 * (the newest highest), so the walk reads them a window at a time, not a
 * frame at a time: each read of user memory costs about 0.1 us whatever its
 * size. A window ends at the end of the frame it is read for and starts
 * at most this far below, never below that frame's page (the page below may
 * not be mapped: a read that crosses into it fails whole). */
#define PY_WINDOW 2048

struct py_frames {
	struct ps_bpf_pyframe f[PS_BPF_PY_FRAMES];
	__u32 tgid; /* whose frames they are */
	/* the window, and room for a frame's fields read at its last bytes */
	__u8 win[PY_WINDOW + PS_BPF_PY_FRAME_READ];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_frames);
} ps_py_scratch SEC(".maps"); /* a walk's frames, copied into the record after */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);   /* tid */
	__type(value, __u64); /* its PyThreadState, as last found */
} ps_py_threads SEC(".maps");

/* One walk, as bpf_loop's callbacks see it (the verifier checks a
 * callback once, where an unrolled walk would be checked per path). */
struct py_walk {
	const struct ps_bpf_py *py;
	struct py_frames *out;
	__u64 self, ts, frame;
	__u64 wlo, whi; /* the addresses out->win holds */
	__u32 n;
	int same; /* out holds the last walk of this process on this CPU */
};

/* Over the interpreter's threads: stop at the current thread's state. */
static long py_thread_step(__u64 i, struct py_walk *w)
{
	if (!w->ts)
		return 1;
	if (read_ptr(w->ts + w->py->ts_thread_id) == w->self)
		return 1;
	w->ts = read_ptr(w->ts + w->py->ts_next);
	return 0;
}

/* Where the first PS_BPF_PY_FRAME_READ bytes of the frame at w->frame are:
 * in the window (read anew when the frame is not in it), or, for 3.10's
 * frames, which are objects of their own, read alone to the window's
 * start; NULL when the memory cannot be read. */
static __always_inline const __u8 *frame_bytes(struct py_walk *w)
{
	const struct ps_bpf_py *py = w->py;
	__u64 a = w->frame, end = a + py->frame_read, lo, size;

	if (py->f_owner < 0) {
		w->whi = 0; /* the window is gone */
		if (bpf_probe_read_user(w->out->win, py->frame_read & (PS_BPF_PY_FRAME_READ - 1),
					(void *)a))
			return NULL;
		return w->out->win;
	}
	if (a < w->wlo || end > w->whi) {
		lo = a & ~4095ull;
		if (end - lo > PY_WINDOW)
			lo = end - PY_WINDOW;
		size = end - lo;
		if (size > PY_WINDOW || bpf_probe_read_user(w->out->win, size, (void *)lo))
			return NULL;
		w->wlo = lo;
		w->whi = end;
	}
	return w->out->win + ((a - w->wlo) & (PY_WINDOW - 1));
}

/* Over the thread's frames, newest first: each frame's fields are taken
 * from one read of its first PS_BPF_PY_FRAME_READ bytes (every field the
 * walk needs is there in each version: frame_read bytes), its code's name
 * from another, unless the last walk on this CPU had that code object at
 * that depth. */
static long py_frame_step(__u64 i, struct py_walk *w)
{
	const struct ps_bpf_py *py = w->py;
	const __u8 *fb;
	__u64 code;
	__u32 n = w->n;
	__u8 entry;

	if (!w->frame || n >= PS_BPF_PY_FRAMES || py->frame_read > PS_BPF_PY_FRAME_READ ||
	    !(fb = frame_bytes(w)))
		return 1;
	/* offsets masked to the buffer and the field's alignment */
	w->frame = *(__u64 *)(fb + (py->f_back & (PS_BPF_PY_FRAME_READ - 8)));
	if (py->f_owner >= 0 && fb[py->f_owner & (PS_BPF_PY_FRAME_READ - 1)] == 3) {
		/* the eval loop's C shim: the frame before it was the first */
		if (n > 0 && n - 1 < PS_BPF_PY_FRAMES)
			w->out->f[n - 1].code |= PS_BPF_PY_ENTRY;
		return 0;
	}
	entry = py->f_entry >= 0 ? fb[py->f_entry & (PS_BPF_PY_FRAME_READ - 1)] : 0;
	code = *(__u64 *)(fb + (py->f_code & (PS_BPF_PY_FRAME_READ - 8))) & ~7ull;
	/* the CPU's last walk left its frames here: a code object at the
	 * same depth as then has the name it had (user space checks it again
	 * when it first names the object) */
	if ((w->out->f[n].code & ~7ull) != code || !w->out->f[n].name || !w->same)
		w->out->f[n].name = read_ptr(code + py->co_name);
	w->out->f[n].code = code;
	w->out->f[n].at = py->at_size == 4
			      ? *(__u32 *)(fb + (py->f_at & (PS_BPF_PY_FRAME_READ - 4)))
			      : *(__u64 *)(fb + (py->f_at & (PS_BPF_PY_FRAME_READ - 8)));
	/* 3.10 runs one eval call a frame; 3.11 marks its first */
	if (py->f_owner < 0 || entry)
		w->out->f[n].code |= PS_BPF_PY_ENTRY;
	w->n = n + 1;
	return 0;
}

/* The current thread's frames, up to PS_BPF_PY_FRAMES, into the record's
 * room at out; how many. */
static __always_inline __u32 py_walk(__u8 *out, __u32 tgid, __u32 tid)
{
	__u32 zero = 0;
	struct py_walk w = {.py = bpf_map_lookup_elem(&ps_py, &tgid),
			    .out = bpf_map_lookup_elem(&ps_py_scratch, &zero)};
	__u64 *known, interp;

	if (!w.py || !w.out || !(w.self = thread_self()))
		return 0;
	w.same = w.out->tgid == tgid;
	w.out->tgid = tgid;
	/* the thread's state as last found, if it is still the thread's */
	known = bpf_map_lookup_elem(&ps_py_threads, &tid);
	if (known && *known && read_ptr(*known + w.py->ts_thread_id) == w.self) {
		w.ts = *known;
	} else {
		if (!(interp = read_ptr(w.py->head)))
			return 0;
		w.ts = read_ptr(interp + w.py->interp_threads);
		bpf_loop(256, py_thread_step, &w, 0);
		if (!w.ts)
			return 0;
		bpf_map_update_elem(&ps_py_threads, &tid, &w.ts, BPF_ANY);
	}
	w.frame = read_ptr(w.ts + w.py->ts_frame);
	if (w.py->cframe_frame >= 0)
		w.frame = read_ptr(w.frame + (__u16)w.py->cframe_frame);
	bpf_loop(PS_BPF_PY_FRAMES * 2, py_frame_step, &w, 0);
	/* the frames filled, not the whole room */
	for (__u32 i = 0; i < PS_BPF_PY_FRAMES && i < w.n; i++)
		((struct ps_bpf_pyframe *)out)[i] = w.out->f[i];
	return w.n;
}

/* A sample with its user registers and stack, and its CPython frames,
 * reserved at its largest (sizes the verifier knows), sent with what was
 * filled. */
static __always_inline void forward_user(struct bpf_perf_event_data *ctx, __u64 ip, __u32 user,
					 __u64 period, __u64 addr, __u32 tgid, __u32 tid, __u32 cpu)
{
	const __u32 py_room = cfg_python ? PS_BPF_PY_FRAMES * sizeof(struct ps_bpf_pyframe) : 0;
	const __u32 regs_room = cfg_user_stack ? sizeof(bpf_user_pt_regs_t) : 0;
	struct ps_bpf_rec *r =
	    bpf_ringbuf_reserve(&ps_events, sizeof(*r) + py_room + regs_room + cfg_user_stack, 0);
	__u8 *p;

	if (!r) {
		bump(PS_BPF_LOST_RING);
		return;
	}
	fill(r, ctx, ip, user, period, addr, tgid, tid, cpu);
	r->regs_size = r->stack_size = 0;
	r->py_room = py_room;
	r->py_n = 0;
	p = (__u8 *)(r + 1);
	if (cfg_python)
		r->py_n = py_walk(p, tgid, tid);
	p += py_room;
	if (cfg_user_stack && cfg_user_stack <= PS_BPF_USER_STACK) {
		struct pt_regs___ps *tr;
		__u64 sp;

		/* the interrupted registers are the user ones when the
		 * overflow was in user mode; else the task's saved ones */
		if (user) {
			const __u64 *from = (const __u64 *)&ctx->regs;

			/* the context is read a word at a time */
#pragma unroll
			for (int i = 0; i < sizeof(bpf_user_pt_regs_t) / 8; i++)
				((__u64 *)p)[i] = from[i];
			sp = PERF_SP(&ctx->regs);
		} else {
			tr = (struct pt_regs___ps *)bpf_task_pt_regs(bpf_get_current_task_btf());
			if (!tr || !TASK_USER(tr) ||
			    bpf_probe_read_kernel(p, sizeof(bpf_user_pt_regs_t), tr))
				goto send;
			sp = TASK_SP(tr);
		}
		r->regs_size = sizeof(bpf_user_pt_regs_t);
		/* a read that crosses the top of the stack fails: then less */
		for (int i = 0; i < 6; i++) {
			__u32 size = cfg_user_stack >> i;

			if (size < 256 || size > PS_BPF_USER_STACK)
				break;
			if (!bpf_probe_read_user(p + regs_room, size, (void *)sp)) {
				r->stack_size = size;
				break;
			}
		}
	}
send:
	bpf_ringbuf_submit(r, wake_flags(r->time));
}

#endif
