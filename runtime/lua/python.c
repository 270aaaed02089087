/*
 * python.c: CPython's frames in a sample's stack (the BPF program read them
 * at the sample, the symbolizer names them and puts them where the
 * interpreter's eval loop ran them: ps_symbols__python_stack).
 */
#include <string.h>

#include <lauxlib.h>

#include "lua/internal.h"

/* A CPython sample's Python frames in place of the eval loop's frames that
 * ran them; the other frames keep what they were (kernel, a return
 * address, named by a past epoch). Left as it is when no frame of the
 * loop is found. */
int ps_lua_python__splice(struct ps_script *sc, const struct ps_sample *s, struct ps_lua_frame *f,
			  int n, int max)
{
	struct ps_lua_scratch *sx = ps_lua_sample_object__scratch(sc);
	struct ps_symbols *syms = ps_lua_sample_object__symbols(sc);
	int m;

	if (!sx || !syms)
		return n;
	for (int i = 0; i < n; i++)
		sx->pcs[i] = f[i].addr - f[i].ret;
	m = ps_symbols__python_stack(syms, s, sx->pcs, n, sx->out, sx->from, max);
	if (m == 0)
		return n;
	for (int i = 0; i < m; i++)
		sx->spliced[i] =
		    sx->from[i] < 0 ? (struct ps_lua_frame){.addr = sx->out[i]} : f[sx->from[i]];
	memcpy(f, sx->spliced, (size_t)m * sizeof(*f));
	return m;
}

/* s.pyip: the innermost Python frame's address, or nil. */
void ps_lua_python__push_ip(lua_State *L, struct ps_script *sc, const struct ps_sample *s)
{
	struct ps_symbols *syms = s->py_n ? ps_lua_sample_object__symbols(sc) : NULL;
	uint64_t addr;

	if (syms && ps_symbols__python_frames(syms, s, &addr, 1) == 1)
		lua_pushinteger(L, (lua_Integer)addr);
	else
		lua_pushnil(L);
}
