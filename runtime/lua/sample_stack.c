/*
 * sample_stack.c: the stacks and source lines of a sample object, the
 * perfmon.symbolize / perfmon.frames functions profiles name addresses
 * with at the end, and the perfmon.demangle and perfmon.ordered switches.
 * A sample's frames are its kernel callchain (as the kernel walked it)
 * followed by its user frames: the kernel's frame-pointer walk with
 * callchain or call-graph=fp, the DWARF unwinder's frames
 * (ps_symbols__unwind, once per sample) with call-graph=dwarf. Names are
 * what the session's symbolizer says: demangled, "file+0xOFF" where no
 * symbol covers an address. A return address of the kernel's walk points
 * after its call, so its source line and inline frames are looked up one
 * byte before it (the unwinder's frames are already there), and
 * sample:packed() gives every frame so, ready to name. A folded stack
 * ("comm;root;...;leaf", what flamegraph.pl reads) is built here in one
 * buffer rather than in Lua: at thousands of samples a second it is most
 * of what a profile does per sample.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/internal.h"

#define NAME_MAX_LEN 1024

struct opts {
	bool inline_frames;
};

static bool is_user(const struct ps_sample *s)
{
	uint16_t mode = s->misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return mode == PERF_RECORD_MISC_USER || mode == PERF_RECORD_MISC_GUEST_USER;
}

/* The sample's frames, innermost first: kernel, then user; a CPython
 * process's Python frames in place of its eval loop's. In *fp, the
 * script's scratch space, until the next call (none when out of memory). */
static int frames_of(struct ps_script *sc, const struct ps_sample *s, struct ps_lua_frame **fp)
{
	struct ps_lua_scratch *sx = ps_lua_sample_object__scratch(sc);
	bool dwarf = s->sample_type & PERF_SAMPLE_STACK_USER, kernel = !is_user(s);
	int n = 0, nuser = 0, nkernel = 0, max = PS_LUA_MAX_FRAMES;
	struct ps_lua_frame *f;
	const uint64_t *ips;

	*fp = sx ? sx->frames : NULL;
	if (!sx)
		return 0;
	f = sx->frames;

	for (uint64_t i = 0; i < s->nr_ips && n < max; i++) {
		uint64_t ip = s->ips[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		if (!kernel && dwarf)
			continue; /* the unwinder's frames replace the kernel's guess */
		if (!kernel && ip == 0)
			break; /* a frame-pointer walk that left the stack */
		f[n++] = (struct ps_lua_frame){
		    .addr = ip, .kernel = kernel, .ret = (kernel ? nkernel++ : nuser++) > 0};
	}
	n = ps_lua_stack__drop_glue(sc, s, f, n);
	if (dwarf) {
		int nu = ps_lua_sample_object__unwound(sc, s, &ips);

		for (int i = 0; i < nu && n < max; i++)
			f[n++] = (struct ps_lua_frame){.addr = ips[i]};
	} else if (n == 0) {
		f[n++] = (struct ps_lua_frame){.addr = s->ip, .kernel = !is_user(s)};
	}
	return s->py_n ? ps_lua_python__splice(sc, s, f, n, max) : n;
}

/* "func+0x1a" (or "file+0xOFF", hex) into buf; true when a symbol named it. */
static bool name_of(struct ps_script *sc, pid_t pid, const struct ps_lua_frame *fr, char *buf,
		    size_t len, const char **dso)
{
	struct ps_symbols *syms = ps_lua_sample_object__symbols(sc);
	uint32_t epoch = fr->kernel ? PS_EPOCH_KERNEL : fr->past ? fr->epoch : PS_EPOCH_NOW;
	int rc = syms ? ps_symbols__resolve_at(syms, pid, fr->addr, epoch, buf, len, dso) : -ENOMEM;

	if (rc < 0 && rc != -ENOENT) /* -ENOENT already wrote the fallback form */
		snprintf(buf, len, "%#" PRIx64, fr->addr);
	return rc == 0;
}

/* The name to count a frame under: the function part of a resolved name
 * ("func+0x1a" -> "func"), an unnamed "file+0xOFF" whole, and "[unknown]"
 * for an address in no mapping (a bare hex form: garbage a frame-pointer
 * walk read from a stack, code in no known file), so that such frames
 * fold together as perf's do. */
static void strip_offset(char *buf, size_t len, bool resolved)
{
	char *plus = resolved ? strrchr(buf, '+') : NULL;

	if (!resolved && !strncmp(buf, "0x", 2)) {
		snprintf(buf, len, "[unknown]");
		return;
	}

	if (plus && plus != buf)
		*plus = '\0';
}

/* The frames inlined at a user frame, innermost first (none: 0). */
static int inlined_at(struct ps_script *sc, pid_t pid, const struct ps_lua_frame *fr,
		      const struct ps_srcframe **sf)
{
	struct ps_symbols *syms = ps_lua_sample_object__symbols(sc);
	int n;

	if (fr->kernel || !syms)
		return 0;
	n = ps_symbols__srcframes(syms, pid, fr->addr - fr->ret, sf);
	return n > 1 ? n - 1 : 0;
}

static void add_inlined(luaL_Buffer *b, const struct ps_srcframe *f)
{
	luaL_addstring(b, f->func ? f->func : "??");
	luaL_addstring(b, " (inlined)");
}

static void check_opts(lua_State *L, int idx, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	if (lua_isnoneornil(L, idx))
		return;
	luaL_checktype(L, idx, LUA_TTABLE);
	lua_getfield(L, idx, "inline");
	o->inline_frames = lua_toboolean(L, -1);
	lua_pop(L, 1);
}

void ps_lua_sample_stack__callchain(lua_State *L, struct ps_script *sc, const struct ps_sample *s)
{
	struct ps_lua_frame *f;
	int n = frames_of(sc, s, &f);

	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		lua_pushinteger(L, (lua_Integer)f[i].addr);
		lua_rawseti(L, -2, i + 1);
	}
}

void ps_lua_sample_stack__packed(lua_State *L, struct ps_script *sc, const struct ps_sample *s)
{
	struct ps_lua_scratch *sx = ps_lua_sample_object__scratch(sc);
	uint64_t *out = sx ? sx->packed : NULL;
	struct ps_lua_frame *f;
	int n = frames_of(sc, s, &f), k = 0;

	if (!out)
		luaL_error(L, "out of memory");
	for (int i = 0; i < n; i++)
		if (f[i].addr) /* a walk's zero ends say nothing */
			out[k++] = f[i].addr - f[i].ret;
	if (k == 0)
		out[k++] = s->ip;
	if (ps_lua_stack__cut(sc, s) && k < PS_LUA_MAX_FRAMES)
		out[k++] = 0; /* the root: "[truncated]" */
	lua_pushlstring(L, (const char *)out, (size_t)k * sizeof(out[0]));
}

void ps_lua_sample_stack__chain(lua_State *L, struct ps_script *sc, const struct ps_sample *s,
				bool kernel, int opts_idx)
{
	struct ps_lua_frame *f;
	int n = frames_of(sc, s, &f);
	lua_Integer k = 0;
	struct opts o;
	char buf[NAME_MAX_LEN];

	check_opts(L, opts_idx, &o);
	lua_createtable(L, n, 0);
	for (int i = 0; i < n; i++) {
		const struct ps_srcframe *sf;
		int ni;

		if (f[i].kernel != kernel)
			continue;
		ni = o.inline_frames ? inlined_at(sc, (pid_t)s->pid, &f[i], &sf) : 0;
		for (int j = 0; j < ni; j++) {
			luaL_Buffer b;

			luaL_buffinit(L, &b);
			add_inlined(&b, &sf[j]);
			luaL_pushresult(&b);
			lua_rawseti(L, -2, ++k);
		}
		name_of(sc, (pid_t)s->pid, &f[i], buf, sizeof(buf), NULL);
		lua_pushstring(L, buf);
		lua_rawseti(L, -2, ++k);
	}
	if (!kernel && ps_lua_stack__cut(sc, s)) { /* the outermost: the root is not known */
		lua_pushliteral(L, "[truncated]");
		lua_rawseti(L, -2, ++k);
	}
}

/* One frame of a folded stack, root first: the function, then what was
 * inlined into it, outermost first. */
static void fold_frame(luaL_Buffer *b, struct ps_script *sc, pid_t pid,
		       const struct ps_lua_frame *fr, const struct opts *o)
{
	const struct ps_srcframe *sf;
	int ni = o->inline_frames ? inlined_at(sc, pid, fr, &sf) : 0;
	char buf[NAME_MAX_LEN];

	strip_offset(buf, sizeof(buf), name_of(sc, pid, fr, buf, sizeof(buf), NULL));
	luaL_addchar(b, ';');
	luaL_addstring(b, buf);
	for (int j = ni - 1; j >= 0; j--) {
		luaL_addchar(b, ';');
		add_inlined(b, &sf[j]);
	}
}

void ps_lua_sample_stack__folded(lua_State *L, struct ps_script *sc, const struct ps_sample *s,
				 int opts_idx)
{
	struct ps_lua_frame *f;
	int n = frames_of(sc, s, &f);
	struct opts o;
	luaL_Buffer b;

	check_opts(L, opts_idx, &o);
	luaL_buffinit(L, &b);
	luaL_addstring(&b, ps_driver__comm(sc->driver, (pid_t)s->pid, (pid_t)s->tid));
	if (ps_lua_stack__cut(sc, s))
		luaL_addstring(&b, ";[truncated]");
	for (int user = 1; user >= 0; user--) /* user frames, then kernel ones */
		for (int i = n - 1; i >= 0; i--)
			if (f[i].kernel != user)
				fold_frame(&b, sc, (pid_t)s->pid, &f[i], &o);
	luaL_pushresult(&b);
}

/* "file.c:42" of a source frame, the file without its directory. */
static void push_line(lua_State *L, const struct ps_srcframe *f)
{
	const char *slash = f->file ? strrchr(f->file, '/') : NULL;

	if (!f->file)
		lua_pushnil(L);
	else
		lua_pushfstring(L, "%s:%d", slash ? slash + 1 : f->file, (int)f->line);
}

void ps_lua_sample_stack__srcline(lua_State *L, struct ps_script *sc, const struct ps_sample *s)
{
	struct ps_symbols *syms = ps_lua_sample_object__symbols(sc);
	const struct ps_srcframe *sf;

	if (!is_user(s) || !syms || ps_symbols__srcframes(syms, (pid_t)s->pid, s->ip, &sf) <= 0)
		lua_pushnil(L);
	else
		push_line(L, &sf[0]);
}

/* The frame at addr (argument 2), kernel (3), of epoch (argument at; none:
 * the live mappings). */
static struct ps_lua_frame frame_arg(lua_State *L, int at)
{
	struct ps_lua_frame fr = {.addr = (uint64_t)luaL_checkinteger(L, 2),
				  .kernel = lua_toboolean(L, 3),
				  .past = !lua_isnoneornil(L, at)};

	if (fr.past)
		fr.epoch = (uint32_t)luaL_checkinteger(L, at);
	return fr;
}

/* perfmon.symbolize(pid, addr [, kernel [, epoch]]) -> "func+0x1a", dso,
 * func: what s.sym and s.dso say for an address kept from a sample, and
 * the name to count it under (the function, or the whole "file+0xOFF" or
 * hex form when no symbol names it). Profiles count raw addresses while
 * the target runs and name them once, at the end, by the mappings of the
 * sample's s.epoch. */
static int l_symbolize(lua_State *L)
{
	struct ps_script *sc = lua_touserdata(L, lua_upvalueindex(1));
	struct ps_lua_frame fr = frame_arg(L, 4);
	const char *dso = "";

	ps_lua_sample_object__maintain(sc); /* the last call's answers are Lua strings now */
	char buf[NAME_MAX_LEN];
	bool resolved = name_of(sc, (pid_t)luaL_checkinteger(L, 1), &fr, buf, sizeof(buf), &dso);

	lua_pushstring(L, buf);
	lua_pushstring(L, dso ? dso : "");
	strip_offset(buf, sizeof(buf), resolved);
	lua_pushstring(L, buf);
	return 3;
}

static void set_frame(lua_State *L, const char *func, const struct ps_srcframe *f, bool inlined)
{
	lua_createtable(L, 0, 4);
	lua_pushstring(L, func);
	lua_setfield(L, -2, "func");
	if (f && f->file) {
		lua_pushstring(L, f->file);
		lua_setfield(L, -2, "file");
		lua_pushinteger(L, f->line);
		lua_setfield(L, -2, "line");
		push_line(L, f);
		lua_setfield(L, -2, "srcline");
	}
	lua_pushboolean(L, inlined);
	lua_setfield(L, -2, "inlined");
}

/* perfmon.frames(pid, addr [, kernel [, epoch]]) -> { {func=, file=, line=,
 * srcline=, inlined=}, ... }, dso: the functions inlined at addr innermost
 * first, then the function holding them, named as symbolize's third
 * result. */
static int l_frames(lua_State *L)
{
	struct ps_script *sc = lua_touserdata(L, lua_upvalueindex(1));
	pid_t pid = (pid_t)luaL_checkinteger(L, 1);
	struct ps_lua_frame fr = frame_arg(L, 4);
	struct ps_symbols *syms =
	    (ps_lua_sample_object__maintain(sc), ps_lua_sample_object__symbols(sc));
	const struct ps_srcframe *sf = NULL;
	int n = !fr.kernel && syms ? ps_symbols__srcframes_at(
					 syms, pid, fr.addr, fr.past ? fr.epoch : PS_EPOCH_NOW, &sf)
				   : 0;
	const char *dso = "";
	char buf[NAME_MAX_LEN];

	strip_offset(buf, sizeof(buf), name_of(sc, pid, &fr, buf, sizeof(buf), &dso));
	lua_createtable(L, n > 0 ? n : 1, 0);
	for (int i = 0; i + 1 < n; i++) {
		set_frame(L, sf[i].func ? sf[i].func : "??", &sf[i], true);
		lua_rawseti(L, -2, i + 1);
	}
	set_frame(L, buf, n > 0 ? &sf[n - 1] : NULL, false);
	lua_rawseti(L, -2, n > 0 ? n : 1);
	lua_pushstring(L, dso ? dso : "");
	return 2;
}

/* perfmon.demangle([on]) -> on: whether names are shown demangled (the
 * default; --no-demangle turns it off), setting it when on is given. */
static int l_demangle(lua_State *L)
{
	struct ps_script *sc = lua_touserdata(L, lua_upvalueindex(1));

	if (!lua_isnoneornil(L, 1)) {
		luaL_checktype(L, 1, LUA_TBOOLEAN);
		ps_lua_sample_object__set_raw_names(sc, !lua_toboolean(L, 1));
	}
	lua_pushboolean(L, !ps_lua_sample_object__raw_names(sc));
	return 1;
}

/* perfmon.ordered([on]) -> on: whether samples and records of several
 * sources reach handlers in time order (the default), setting it when on is
 * given. */
static int l_ordered(lua_State *L)
{
	struct ps_script *sc = lua_touserdata(L, lua_upvalueindex(1));

	if (!lua_isnoneornil(L, 1)) {
		luaL_checktype(L, 1, LUA_TBOOLEAN);
		ps_sampler__set_ordered(sc->session, lua_toboolean(L, 1));
	}
	lua_pushboolean(L, ps_sampler__ordered(sc->session));
	return 1;
}

/* perfmon.mapping(pid, addr [, epoch]) -> { start, limit, offset, file,
 * build_id, has_functions, has_lines, symbol, dwarf_name } | nil: the
 * mapping of a user address, for profiles another tool symbolizes again
 * (pprof's Mapping). */
static int l_mapping(lua_State *L)
{
	struct ps_script *sc = lua_touserdata(L, lua_upvalueindex(1));
	pid_t pid = (pid_t)luaL_checkinteger(L, 1);
	uint64_t addr = (uint64_t)luaL_checkinteger(L, 2);
	uint32_t epoch = lua_isnoneornil(L, 3) ? PS_EPOCH_NOW : (uint32_t)luaL_checkinteger(L, 3);
	struct ps_symbols *syms =
	    (ps_lua_sample_object__maintain(sc), ps_lua_sample_object__symbols(sc));
	struct ps_mapping_info m = {.sz = sizeof(m)};

	if (!syms || ps_symbols__mapping_at(syms, pid, addr, epoch, &m) < 0) {
		lua_pushnil(L);
		return 1;
	}
	lua_createtable(L, 0, 8);
	lua_pushinteger(L, (lua_Integer)m.start);
	lua_setfield(L, -2, "start");
	lua_pushinteger(L, (lua_Integer)m.limit);
	lua_setfield(L, -2, "limit");
	lua_pushinteger(L, (lua_Integer)m.offset);
	lua_setfield(L, -2, "offset");
	lua_pushstring(L, m.path ? m.path : "");
	lua_setfield(L, -2, "file");
	lua_pushstring(L, m.build_id);
	lua_setfield(L, -2, "build_id");
	lua_pushboolean(L, m.has_functions);
	lua_setfield(L, -2, "has_functions");
	lua_pushboolean(L, m.has_lines);
	lua_setfield(L, -2, "has_lines");
	lua_pushstring(L, m.symbol);
	lua_setfield(L, -2, "symbol");
	lua_pushstring(L, m.dwarf_name);
	lua_setfield(L, -2, "dwarf_name");
	return 1;
}

void ps_lua_sample_stack__open(lua_State *L, struct ps_script *sc)
{
	if (lua_getglobal(L, "perfmon") == LUA_TTABLE) {
		lua_pushlightuserdata(L, sc);
		lua_pushcclosure(L, l_ordered, 1);
		lua_setfield(L, -2, "ordered");
		lua_pushlightuserdata(L, sc);
		lua_pushcclosure(L, l_demangle, 1);
		lua_setfield(L, -2, "demangle");
		lua_pushlightuserdata(L, sc);
		lua_pushcclosure(L, l_symbolize, 1);
		lua_setfield(L, -2, "symbolize");
		lua_pushlightuserdata(L, sc);
		lua_pushcclosure(L, l_frames, 1);
		lua_setfield(L, -2, "frames");
		lua_pushlightuserdata(L, sc);
		lua_pushcclosure(L, ps_lua_symbolizer__symbols, 1);
		lua_setfield(L, -2, "symbols");
		lua_pushlightuserdata(L, sc);
		lua_pushcclosure(L, l_mapping, 1);
		lua_setfield(L, -2, "mapping");
	}
	lua_pop(L, 1);
}
