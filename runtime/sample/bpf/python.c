/*
 * python.c: the BPF backend's side of Python frames. A program that walks
 * them (PS_BPF_PYTHON) finds a process's interpreter through ps_py, which
 * this fills: the first sample of each process has it looked at (the
 * symbolizer finds _PyRuntime and the version, symbols/python.c), and a
 * CPython one gets its entry, so that its later samples carry frames. The
 * process is looked at again when it execs (its comm changes: the
 * sampler's records say so), since a shell may become python3. And what
 * the programs' records have no room for is refused before load.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

#include <bpf/bpf.h>

#include "base/procstat.h"
#include "sample/bpf/internal.h"
#include "symbols/python.h"

/* The bytes of a frame that hold the fields the walk reads. */
static int frame_read(const struct ps_py_layout *l)
{
	int end = l->f_at + l->at_size;

	end = l->f_back + 8 > end ? l->f_back + 8 : end;
	end = l->f_code + 8 > end ? l->f_code + 8 : end;
	end = l->f_entry + 1 > end ? l->f_entry + 1 : end;
	end = l->f_owner + 1 > end ? l->f_owner + 1 : end;
	return (end + 7) & ~7;
}

static void python_entry(const struct ps_python *py, struct ps_bpf_py *v)
{
	const struct ps_py_layout *l = py->layout;

	*v = (struct ps_bpf_py){
	    .head = py->runtime + (uint64_t)l->runtime_head,
	    .interp_threads = (__u16)l->interp_threads,
	    .ts_next = (__u16)l->ts_next,
	    .ts_thread_id = (__u16)l->ts_thread_id,
	    .ts_frame = (__u16)l->ts_frame,
	    .cframe_frame = l->cframe_frame,
	    .f_back = (__u16)l->f_back,
	    .f_code = (__u16)l->f_code,
	    .f_at = (__u16)l->f_at,
	    .f_entry = l->f_entry,
	    .f_owner = l->f_owner,
	    .at_size = (__u16)l->at_size,
	    .co_name = (__u16)l->co_name,
	    .frame_read = (__u16)frame_read(l),
	};
}

/* What the backend knows of a process: its probe's answer (1: CPython,
 * entry made; else -errno), when to look again at one that was not
 * (after 1, 2, 4, ... 1024 more samples: it may exec a Python yet), and
 * which program it was: its start and its executable, looked at again
 * every PS_PY_RECHECK samples, so that a pid reused by another process, or
 * an exec, is probed anew instead of walked with the old one's entry. */
struct py_seen {
	int rc;
	uint32_t samples, next;
	uint64_t start, exe_dev, exe_ino;
};
#define PS_PY_RECHECK 256

size_t ps_bpf__python_seen_size(void)
{
	return sizeof(struct py_seen);
}

/* pid's start (base/procstat.h) and executable: 0 when it cannot be read
 * (gone). */
static int identity(uint32_t pid, uint64_t *start, uint64_t *dev, uint64_t *ino)
{
	struct ps_procstat ps;
	char path[64];
	struct stat st;
	int err = ps_procstat__read((pid_t)pid, &ps);

	*start = err ? 0 : ps.start;
	*dev = *ino = 0;
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	if (stat(path, &st) == 0) {
		*dev = st.st_dev;
		*ino = st.st_ino;
	}
	return 0;
}

/* Whether seen is of the program pid runs now; when not, it is made anew
 * (and the walker's entry for pid goes). Looked at every PS_PY_RECHECK
 * samples of a process whose probe is over. */
static bool same_program(struct ps_bpf *bs, struct py_seen *seen, uint32_t pid)
{
	uint64_t start, dev, ino;

	if (identity(pid, &start, &dev, &ino) < 0 ||
	    (start == seen->start && dev == seen->exe_dev && ino == seen->exe_ino))
		return true;
	if (seen->rc == 1)
		bpf_map_delete_elem(bs->py_fd, &pid);
	*seen = (struct py_seen){.start = start, .exe_dev = dev, .exe_ino = ino};
	return false;
}

/* The symbolizer that finds a process's CPython (its version, _PyRuntime):
 * its own, small, and holding no process for longer than a probe, so a
 * host that starts Python processes all day does not grow it. */
#define PS_BPF_PROBER_BUDGET (16u << 20)

static struct ps_symbols *new_prober(void)
{
	struct ps_symbols *syms = ps_symbols__new();

	if (syms)
		ps_symbols__set_budget(syms, PS_BPF_PROBER_BUDGET);
	return syms;
}

/* pid's mappings go (each probe reads them anew), and the prober keeps to
 * its budget. */
static void forget(struct ps_symbols *syms, uint32_t pid)
{
	ps_python__drop(syms, (pid_t)pid);
	ps_symbols__maintain(syms, 0);
}

void ps_bpf__python_seen(struct ps_bpf *bs, const struct ps_bpf_counter *b, uint32_t pid)
{
	struct py_seen *seen = ps_pidmap__get(&bs->py_seen, (pid_t)pid);
	struct ps_python py;
	struct ps_bpf_py v;
	char version[16];

	(void)b;
	if (bs->py_fd < 0)
		return;
	if (seen && (seen->rc == 1 || seen->rc == -ENOTSUP || seen->next > 1024)) {
		/* its probe is over: now and then, whether it is still that program */
		if (++seen->samples % PS_PY_RECHECK || same_program(bs, seen, pid))
			return;
	} else if (seen && ++seen->samples < seen->next) {
		return;
	}
	if (!seen) {
		if (!(seen = ps_pidmap__put(&bs->py_seen, (pid_t)pid)))
			return;
		identity(pid, &seen->start, &seen->exe_dev, &seen->exe_ino);
	}
	if (!bs->syms && !(bs->syms = new_prober()))
		return;
	/* its mappings as they are now (the prober keeps none past a probe) */
	ps_symbols__add_proc(bs->syms, (pid_t)pid);
	seen->next = seen->next ? 2 * seen->next : 1;
	seen->samples = 0;
	seen->rc = ps_python__probe(bs->syms, (pid_t)pid, &py, version, sizeof(version));
	forget(bs->syms, pid);
	if (seen->rc == -ENOTSUP && !bs->py_said) {
		bs->py_said = true;
		fprintf(stderr,
			"perfscript: process %u runs Python %s: its Python frames are not "
			"available (CPython 3.10 to 3.13 are); its native frames are\n",
			pid, version);
	}
	if (seen->rc)
		return;
	seen->rc = 1;
	python_entry(&py, &v);
	bpf_map_update_elem(bs->py_fd, &pid, &v, BPF_ANY);
}

int ps_bpf__refuse(const struct ps_counter *c, char *msg, size_t msglen)
{
	bool hits = ps_bpf__kind(c) != PS_BPF_KIND_PERF;
	const char *why = NULL;

	/* a record has room for a user stack as a sample's (taken at the
	 * overflow) or an off-CPU interval's (at the switch-out); a
	 * tracepoint's or a probe's program has its record only */
	if (hits && (ps_counter__attr(c)->sample_type & PERF_SAMPLE_STACK_USER) &&
	    !(ps_counter__sampled(c)->conf.mode & PS_BPF_OFFCPU))
		why = "cannot take '%s' on the BPF path: call-graph=dwarf on a tracepoint or "
		      "probe needs the perf ring (use call-graph=fp, or nobpf)";
	else if (hits && (ps_counter__sampled(c)->conf.mode & PS_BPF_PYTHON))
		why = "cannot walk Python frames on '%s': they are read at a sample's overflow, "
		      "and a tracepoint or probe has none (sample cpu-clock or another "
		      "counting event)";
	if (!why)
		return 0;
	if (msg && msglen)
		snprintf(msg, msglen, why, ps_counter__name(c));
	return -EOPNOTSUPP;
}
