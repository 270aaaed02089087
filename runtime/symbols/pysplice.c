/*
 * pysplice.c: a CPython sample's stack as its program ran it. The BPF
 * program read the thread's Python frames at the sample (ps_sample.py);
 * here they take the place of the interpreter's eval loop in the native
 * stack: each call of _PyEval_EvalFrameDefault gives way to the Python
 * frames it ran. Native frames are told apart by the symbol that holds
 * them, found by address: in each CPython file (python3.N, libpython3.N),
 * the link-time addresses of the few functions that matter are looked up
 * by name once; a frame's symbol is then compared with them. What a
 * return address is does not change while its process keeps its
 * mappings, so the answers are kept, keyed by pid, the generation of its
 * mappings and the address (a pid reused or an exec'd process asks again:
 * an exec or an exit drops a process's answers: ps_python__forget).
 */
#include <stdlib.h>

#include "symbols/internal.h"
#include "symbols/python.h"

#define PS_SPLICE_CACHE	 1024 /* answers kept (direct-mapped): a profile's few return addresses */
#define PS_SPLICE_FRAMES 256  /* Python frames of a sample spliced at most */
#define PS_USER_END	 (1ull << 56) /* x86-64 and arm64 user addresses are below */

enum role { ROLE_OTHER, ROLE_EVAL, ROLE_GLUE, ROLE_CALL };

/* The functions that matter, in the order of ps_dso.py_syms: the eval loop
 * (and its cold part where the symbol table has one), the glue of the perf
 * trampolines (-X perf, 3.12 and later) that calls a trampoline, and the
 * call into that glue (each Python frame stands once, as without -X perf). */
static const struct {
	const char *name;
	enum role role;
} known[PS_DSO_PY_SYMS] = {
    {"_PyEval_EvalFrameDefault", ROLE_EVAL},
    {"_PyEval_EvalFrameDefault.cold", ROLE_EVAL},
    {"py_trampoline_evaluator", ROLE_GLUE},
    {"PyObject_Vectorcall", ROLE_CALL},
};

struct ps_pysplice {
	struct {
		uint64_t pc;
		pid_t pid;
		uint32_t gen;
		uint8_t role;
	} answers[PS_SPLICE_CACHE];
	uint64_t py[PS_SPLICE_FRAMES]; /* the sample's Python frames, innermost first */
	bool entry[PS_SPLICE_FRAMES];  /* which is the outermost of one call of the eval loop */
};

static struct ps_pysplice *state(struct ps_symbols *syms)
{
	if (!syms->splice)
		syms->splice = calloc(1, sizeof(*syms->splice));
	return syms->splice;
}

void ps_pysplice__free(struct ps_symbols *syms)
{
	free(syms->splice);
	syms->splice = NULL;
}

size_t ps_pysplice__bytes(const struct ps_symbols *syms)
{
	return syms->splice ? sizeof(*syms->splice) : 0;
}

void ps_pysplice__forget(struct ps_symbols *syms, pid_t pid)
{
	for (size_t i = 0; syms->splice && i < PS_SPLICE_CACHE; i++)
		if (syms->splice->answers[i].pid == pid)
			syms->splice->answers[i].pc = 0;
}

/* The link-time addresses of known[] in a CPython file (UINT64_MAX where
 * it has no such symbol), looked up once; NULL for any other file. */
static const uint64_t *known_in(struct ps_dso *dso)
{
	if (dso->py_state == 0) {
		dso->py_state = ps_python__minor(dso->base_name) < 0 ? -1 : 1;
		for (int i = 0; dso->py_state > 0 && i < PS_DSO_PY_SYMS; i++)
			if (ps_dso__address_of(dso, known[i].name, &dso->py_syms[i]) < 0)
				dso->py_syms[i] = UINT64_MAX;
	}
	return dso->py_state > 0 ? dso->py_syms : NULL;
}

static enum role role_of(struct ps_symbols *syms, struct ps_proc *p, uint64_t pc)
{
	struct ps_map *m = ps_procs__lookup_now(syms, p, pc);
	const uint64_t *syms_at;
	uint64_t start;

	if (!m)
		return ROLE_OTHER;
	if (!m->dso) /* anonymous code: a trampoline, or JIT code of another kind */
		return ps_proc__python_trampoline(p, pc) ? ROLE_GLUE : ROLE_OTHER;
	if (!(syms_at = known_in(m->dso)) || !ps_map__adjust(m) ||
	    ps_dso__symbol_start(m->dso, pc + (uint64_t)m->adj, &start) < 0)
		return ROLE_OTHER;
	for (int i = 0; i < PS_DSO_PY_SYMS; i++)
		if (start == syms_at[i])
			return known[i].role;
	return ROLE_OTHER;
}

static enum role cached_role(struct ps_symbols *syms, struct ps_pysplice *sp, struct ps_proc *p,
			     uint64_t pc)
{
	size_t i =
	    (size_t)(((pc ^ (uint64_t)p->pid) * 0x9e3779b97f4a7c15ull) >> 54) % PS_SPLICE_CACHE;

	if (pc >= PS_USER_END)
		return ROLE_OTHER; /* a kernel frame, or a Python frame spliced already */
	if (sp->answers[i].pc != pc || sp->answers[i].pid != p->pid ||
	    sp->answers[i].gen != p->gen) {
		enum role r = role_of(syms, p, pc);

		/* role_of may have read the mappings again: keyed by their generation after it */
		sp->answers[i].pc = pc;
		sp->answers[i].pid = p->pid;
		sp->answers[i].gen = p->gen;
		sp->answers[i].role = (uint8_t)r;
	}
	return (enum role)sp->answers[i].role;
}

int ps_symbols__python_stack(struct ps_symbols *syms, const struct ps_sample *s,
			     const uint64_t *pcs, int n, uint64_t *out, int *from, int max)
{
	struct ps_pysplice *sp = syms && s->py_n ? state(syms) : NULL;
	struct ps_proc *p = sp ? ps_procs__known(syms, (pid_t)s->pid) : NULL;
	size_t np = p ? ps_python__frames(syms, (pid_t)s->pid, s->py,
					  s->py_n < PS_SPLICE_FRAMES ? s->py_n : PS_SPLICE_FRAMES,
					  sp->py, sp->entry)
		      : 0,
	       k = 0;
	bool glue = false; /* the frame inside this one was trampoline glue */
	int m = 0;

	for (int i = 0; np && i < n && m < max; i++) {
		enum role role = cached_role(syms, sp, p, pcs[i]);

		if (role == ROLE_GLUE || (role == ROLE_CALL && glue)) {
			glue = role == ROLE_GLUE;
			continue;
		}
		glue = false;
		if (k < np && role == ROLE_EVAL) {
			do {
				out[m] = sp->py[k];
				from[m++] = -1;
			} while (!sp->entry[k++] && k < np && m < max);
			continue;
		}
		out[m] = pcs[i];
		from[m++] = i;
	}
	return k ? m : 0;
}

int ps_symbols__python_frames(struct ps_symbols *syms, const struct ps_sample *s, uint64_t *out,
			      int max)
{
	struct ps_pysplice *sp = syms && s->py_n && max > 0 ? state(syms) : NULL;
	size_t want = s->py_n < (uint32_t)max ? s->py_n : (size_t)max;

	if (want > PS_SPLICE_FRAMES)
		want = PS_SPLICE_FRAMES;
	return sp ? (int)ps_python__frames(syms, (pid_t)s->pid, s->py, want, out, sp->entry) : 0;
}
