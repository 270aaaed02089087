/*
 * python.c: CPython's frames in a sample's stack (the BPF program read them
 * at the sample, symbols/python.c names them), put where the interpreter's
 * eval loop ran them.
 */
#include <string.h>

#include <lauxlib.h>

#include "lua/internal.h"
#include "symbols/python.h"

#define NAME_MAX_LEN 1024

enum frame_kind { OTHER, EVAL, GLUE, CALL };

/* What a user frame is to the splice: CPython's eval loop, the glue of its
 * perf trampolines (-X perf, 3.12 and later: a trampoline, "py::NAME" in
 * the perf map, and py_trampoline_evaluator, which calls it), the call
 * into that glue (PyObject_Vectorcall), or other code. Looked up once per
 * address and program (a direct-mapped cache of the script's, keyed by
 * address, pid and the epoch of the process's mappings, so that a pid
 * reused or an exec asks again: the same few return addresses come back
 * in every sample). */
static enum frame_kind kind_of(struct ps_lua_scratch *sx, struct ps_symbols *syms, pid_t pid,
			       uint32_t epoch, const struct ps_lua_frame *fr)
{
	static const char eval[] = "_PyEval_EvalFrameDefault";
	uint64_t addr = fr->addr - fr->ret;
	size_t i =
	    (size_t)(((addr ^ (uint64_t)pid) * 0x9e3779b97f4a7c15ull) >> 54) % PS_LUA_EVAL_CACHE;
	char buf[NAME_MAX_LEN];
	enum frame_kind kind = OTHER;

	if (fr->kernel || ps_python__is_frame(fr->addr))
		return OTHER;
	if (sx->kinds[i].addr == addr && sx->kinds[i].pid == pid && sx->kinds[i].epoch == epoch)
		return (enum frame_kind)sx->kinds[i].kind;
	if (ps_symbols__python_trampoline(syms, pid, addr)) {
		kind = GLUE;
	} else if (ps_symbols__resolve(syms, pid, addr, false, buf, sizeof(buf), NULL) == 0) {
		if (!strncmp(buf, eval, sizeof(eval) - 1) &&
		    strchr("+.", buf[sizeof(eval) - 1] ? buf[sizeof(eval) - 1] : '+'))
			kind = EVAL;
		else if (!strncmp(buf, "py_trampoline_evaluator+", 24))
			kind = GLUE;
		else if (!strncmp(buf, "PyObject_Vectorcall+", 20))
			kind = CALL;
	}
	sx->kinds[i].addr = addr;
	sx->kinds[i].pid = pid;
	sx->kinds[i].epoch = epoch;
	sx->kinds[i].kind = (uint8_t)kind;
	return kind;
}

/* A CPython sample's Python frames in place of the eval loop's frames that
 * run them: each call of _PyEval_EvalFrameDefault (innermost first) gives
 * way to its group of frames, innermost first, the last of each marked
 * entry. The perf trampolines' glue goes (each Python frame stands once,
 * as without -X perf). Left as it is when no frame of the loop is found. */
int ps_lua_python__splice(struct ps_script *sc, const struct ps_sample *s, struct ps_lua_frame *f,
			  int n, int max)
{
	struct ps_lua_scratch *sx = ps_lua_sample_object__scratch(sc);
	struct ps_symbols *syms = ps_lua_sample_object__symbols(sc);
	struct ps_lua_frame *out = sx ? sx->spliced : NULL;
	uint64_t *py = sx ? sx->py : NULL;
	bool *entry = sx ? sx->entry : NULL;
	size_t np = syms && sx ? ps_symbols__python_frames(
				     syms, (pid_t)s->pid, s->py,
				     s->py_n < PS_LUA_MAX_PYFRAMES ? s->py_n : PS_LUA_MAX_PYFRAMES,
				     py, entry)
			       : 0,
	       k = 0;
	uint32_t epoch = np ? ps_symbols__epoch(syms, (pid_t)s->pid) : 0;
	int m = 0;

	bool glue = false; /* the frame inside this one was trampoline glue */

	for (int i = 0; i < n && m < max; i++) {
		enum frame_kind kind = np ? kind_of(sx, syms, (pid_t)s->pid, epoch, &f[i]) : OTHER;

		if (kind == GLUE || (kind == CALL && glue)) {
			glue = kind == GLUE;
			continue;
		}
		glue = false;
		if (k < np && kind == EVAL) {
			do
				out[m++] = (struct ps_lua_frame){.addr = py[k]};
			while (!entry[k++] && k < np && m < max);
			continue;
		}
		out[m++] = f[i];
	}
	if (k == 0)
		return n;
	memcpy(f, out, (size_t)m * sizeof(*f));
	return m;
}

/* s.pyip: the innermost Python frame's address, or nil. */
void ps_lua_python__push_ip(lua_State *L, struct ps_script *sc, const struct ps_sample *s)
{
	struct ps_symbols *syms = s->py_n ? ps_lua_sample_object__symbols(sc) : NULL;
	uint64_t addr;
	bool entry;

	if (syms && ps_symbols__python_frames(syms, (pid_t)s->pid, s->py, 1, &addr, &entry) == 1)
		lua_pushinteger(L, (lua_Integer)addr);
	else
		lua_pushnil(L);
}
