/*
 * unwind.c: user stacks unwound from DWARF call frame information, for
 * samples taken with call-graph=dwarf (the user registers and a copy of the
 * top of the user stack at each sample). Each process gets one Dwfl, made
 * on its first sample and kept: its mapped files are reported at their
 * runtime addresses (their images are shared, symbols/dso.c, so a Dwfl
 * costs no descriptor and no reading), libdwfl is attached to it with our
 * thread callbacks (dwfl_attach_state), and a sample is unwound with
 * dwfl_getthread_frames, whose callbacks hand libdwfl the sample's
 * registers and answer its memory reads from the sample's stack copy. The
 * Dwfl is made again only when the process's mappings changed (its
 * generation moved: dlopen, exec), and at most PS_MAX_UNWINDERS of them
 * live at once, the least recently used going first, so a system-wide
 * session's memory stays bounded. libdw keeps each file's parsed CFI in
 * the Dwfl, so after the first samples of a process an unwind is a few
 * lookups per frame. Unwinding stops at a return address outside every
 * known executable mapping (the copy ended, or a frame without CFI sent
 * libdwfl's frame-pointer fallback into the weeds).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/regs.h"
#include "symbols/internal.h"

#define PS_MAX_UNWINDERS 64
#define PS_MAX_REPORTED	 4096 /* files one process maps that get reported */

struct ps_unwinder {
	Dwfl *dwfl;
	bool attached;
	uint32_t gen; /* of the process when its modules were reported */
	struct ps_proc *proc;
	struct ps_unwinder *prev, *next; /* most recently used first */
	struct unwind *cur;		 /* the unwind in progress */
};

struct ps_unwinders {
	struct ps_unwinder *head, *tail;
	size_t n;
};

/* One call of ps_symbols__unwind. */
struct unwind {
	const struct ps_sample *s;
	struct ps_proc *proc;
	uint64_t sp;
	uint64_t *ips;
	size_t n, max;
#if PS_REGS_UNWIND_MASK
	/* a walk that stopped at a frame libdwfl cannot step over, but we can
	 * (a CPython perf trampoline): the registers to walk on from */
	bool resume, resumed;
	Dwarf_Word regs[PS_REGS_NDWARF];
	uint64_t pc;
#endif
};

#if PS_REGS_UNWIND_MASK
static const int dwarf_to_perf[PS_REGS_NDWARF] = PS_REGS_DWARF;
#endif

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	(void)dwfl;
	(void)arg;
	(void)thread_arg;
	return 0; /* threads are asked for by tid (get_thread), never listed */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	(void)dwfl;
	(void)tid;
	*thread_arg = ((struct ps_unwinder *)arg)->cur;
	return true;
}

/* Stack words come from the sample's copy; nothing else is readable. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct unwind *u = ((struct ps_unwinder *)arg)->cur;
	uint64_t size = u->s->stack_size;

	(void)dwfl;
	if (addr < u->sp || addr - u->sp > size || size - (addr - u->sp) < sizeof(*result))
		return false;
	memcpy(result, (const char *)u->s->stack + (addr - u->sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
#if PS_REGS_UNWIND_MASK
	const struct unwind *u = thread_arg;
	Dwarf_Word regs[PS_REGS_NDWARF];
	uint64_t ip = 0;

	if (u->resumed) { /* on from a frame stepped over by hand */
		if (!dwfl_thread_state_registers(thread, 0, PS_REGS_NDWARF, u->regs))
			return false;
		dwfl_thread_state_register_pc(thread, u->pc);
		return true;
	}
	for (int i = 0; i < PS_REGS_NDWARF; i++) {
		uint64_t v = 0;

		ps_sample__reg(u->s, false, (unsigned)dwarf_to_perf[i], &v);
		regs[i] = v;
	}
	ps_sample__reg(u->s, false, PS_REG_IP, &ip);
	if (!dwfl_thread_state_registers(thread, 0, PS_REGS_NDWARF, regs))
		return false;
	dwfl_thread_state_register_pc(thread, ip);
	return true;
#else
	(void)thread;
	(void)thread_arg;
	return false;
#endif
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

static void lru_unlink(struct ps_unwinders *l, struct ps_unwinder *uw)
{
	if (uw->prev)
		uw->prev->next = uw->next;
	else
		l->head = uw->next;
	if (uw->next)
		uw->next->prev = uw->prev;
	else
		l->tail = uw->prev;
	uw->prev = uw->next = NULL;
}

static void lru_front(struct ps_unwinders *l, struct ps_unwinder *uw)
{
	uw->next = l->head;
	if (l->head)
		l->head->prev = uw;
	l->head = uw;
	if (!l->tail)
		l->tail = uw;
}

void ps_unwinder__free(struct ps_symbols *syms, struct ps_unwinder *uw)
{
	if (!uw)
		return;
	lru_unlink(syms->unwinders, uw);
	syms->unwinders->n--;
	if (uw->proc)
		uw->proc->uw = NULL;
	if (uw->dwfl)
		dwfl_end(uw->dwfl);
	free(uw);
}

size_t ps_unwinders__count(const struct ps_unwinders *l)
{
	return l->n;
}

void ps_unwinders__free(struct ps_symbols *syms)
{
	while (syms->unwinders && syms->unwinders->head)
		ps_unwinder__free(syms, syms->unwinders->head);
	free(syms->unwinders);
	syms->unwinders = NULL;
}

/* Report every file p maps at its runtime place and attach the thread
 * callbacks. A Dwfl that fails to attach unwinds nothing past the ip. */
static int build(struct ps_unwinder *uw, struct ps_proc *p)
{
	struct ps_dso **done = malloc(PS_MAX_REPORTED * sizeof(*done));
	size_t ndone = 0;

	if (uw->dwfl)
		dwfl_end(uw->dwfl);
	uw->attached = false;
	uw->gen = p->gen;
	uw->dwfl = ps_dwfl__begin_unwind();
	if (!uw->dwfl || !done) {
		free(done);
		return -ENOMEM;
	}
	dwfl_report_begin(uw->dwfl);
	for (size_t i = 0; i < p->n && ndone < PS_MAX_REPORTED; i++) {
		struct ps_map *m = &p->maps[i];
		bool seen = false;

		if (!m->dso || !ps_map__adjust(m))
			continue;
		for (size_t j = 0; j < ndone && !seen; j++)
			seen = done[j] == m->dso;
		/* one bias per file: ld.so maps its segments together */
		if (!seen && ps_dso__report(m->dso, uw->dwfl, -m->adj))
			done[ndone++] = m->dso;
	}
	dwfl_report_end(uw->dwfl, NULL, NULL);
	free(done);
	uw->attached = ndone && dwfl_attach_state(uw->dwfl, NULL, p->pid, &thread_callbacks, uw);
	return 0;
}

/* p's unwinder, made or remade as needed, at the front of the LRU list. */
static struct ps_unwinder *unwinder_of(struct ps_symbols *syms, struct ps_proc *p)
{
	struct ps_unwinders *l = syms->unwinders;
	struct ps_unwinder *uw = p->uw;

	if (!l && !(l = syms->unwinders = calloc(1, sizeof(*l))))
		return NULL;
	if (uw && uw->gen == p->gen) {
		lru_unlink(l, uw);
		lru_front(l, uw);
		return uw;
	}
	if (!uw) {
		if (l->n >= PS_MAX_UNWINDERS)
			ps_unwinder__free(syms, l->tail);
		uw = calloc(1, sizeof(*uw));
		if (!uw)
			return NULL;
		uw->proc = p;
		p->uw = uw;
		lru_front(l, uw);
		l->n++;
	}
	if (build(uw, p) < 0)
		return NULL;
	return uw;
}

#if defined(__x86_64__)
/* A CPython perf trampoline (symbols/pytrampoline.c) has no frame pointer
 * and no CFI, where libdwfl stops. At its call's return, its own return
 * address is 8 bytes above its sp, and its caller's sp 16. The walk goes
 * on from there with the frame's callee-saved registers, which the
 * trampoline does not touch. */
static bool over_trampoline(Dwfl_Frame *state, struct unwind *u, const struct ps_map *m,
			    uint64_t pc)
{
	uint64_t ret;
	Dwarf_Word sp;

	if (m->dso || !ps_proc__python_trampoline(u->proc, pc) ||
	    dwfl_frame_reg(state, 7, &sp) < 0 || sp < u->sp || sp + 16 - u->sp > u->s->stack_size)
		return false;
	memcpy(&ret, (const char *)u->s->stack + (sp + 8 - u->sp), sizeof(ret));
	for (unsigned i = 0; i < PS_REGS_NDWARF; i++)
		if (dwfl_frame_reg(state, i, &u->regs[i]) < 0)
			u->regs[i] = 0;
	u->regs[7] = sp + 16;
	u->regs[16] = u->pc = ret;
	return u->resume = true;
}
#endif

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct unwind *u = arg;
	struct ps_map *m;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* a return address points after its call: step back into it, so that
	 * a call at the very end of a function is not taken for the next one */
	if (!activation)
		pc--;
	m = ps_proc__lookup(u->proc, pc);
	if (u->n > 0 && !m)
		return DWARF_CB_ABORT;
	if (m && m->dso) /* its CFI is read for the next frame (page drops) */
		(m->dso->same ? m->dso->same : m->dso)->read_since_drop = true;
	u->ips[u->n++] = pc;
#if defined(__x86_64__)
	if (m && u->n < u->max && !activation && over_trampoline(state, u, m, pc))
		return DWARF_CB_ABORT; /* and on from its caller */
#endif
	return u->n < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int ps_symbols__unwind(struct ps_symbols *syms, const struct ps_sample *s, uint64_t *ips,
		       size_t max)
{
	struct unwind u = {.s = s, .ips = ips, .max = max};
	struct ps_unwinder *uw;
	uint64_t ip;

	if (!syms || !s || !ips || !max)
		return -EINVAL;
	if (!PS_REGS_UNWIND_MASK || s->regs_user.abi != PERF_SAMPLE_REGS_ABI_64 ||
	    ps_sample__reg(s, false, PS_REG_IP, &ip) || ps_sample__reg(s, false, PS_REG_SP, &u.sp))
		return -ENODATA;
	u.proc = ps_procs__known(syms, (pid_t)s->pid);
	if (!u.proc)
		return -ENOMEM;
	uw = s->stack_size ? unwinder_of(syms, u.proc) : NULL;
	if (uw && uw->attached) {
		uw->cur = &u;
		dwfl_getthread_frames(uw->dwfl, (pid_t)s->tid, on_frame, &u);
#if PS_REGS_UNWIND_MASK
		/* past each trampoline a walk of its own, bounded by max */
		while (u.resume && u.n < u.max) {
			u.resume = false;
			u.resumed = true;
			dwfl_getthread_frames(uw->dwfl, (pid_t)s->tid, on_frame, &u);
		}
#endif
		uw->cur = NULL;
	}
	if (u.n == 0)
		ips[u.n++] = ip;
	return (int)u.n;
}
