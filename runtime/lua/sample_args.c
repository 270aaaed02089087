/*
 * sample_args.c: what a sample of a tracepoint or a probe says about the
 * event itself. s.args is a view of a tracepoint's fields by name, decoded
 * from the raw record only when read (event/tpformat.c): integers as Lua
 * integers, char[] and __data_loc strings as strings, arrays as tables;
 * pairs(s.args) walks them in the format's order. s.raw is the record's
 * bytes. For probes, s:arg(n) is the n-th integer argument by the calling
 * convention (x86-64: rdi rsi rdx rcx r8 r9; arm64: x0-x7) from the
 * registers the sample carries, s.retval the return register of a return
 * probe, and s:user_string(addr) / s:kernel_string(addr) read a string at
 * an address the way SystemTap's user_string() does: from the sampled
 * process (process_vm_readv, so it must still be alive) or from the kernel
 * (/proc/kcore, root only). Like the sample, the view is reused and reads
 * raise once its handler has returned; s:copy() copies args and raw.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/perf_regs.h>
#endif

#include <lauxlib.h>

#include "base/regs.h"
#include "lua/internal.h"

#define ARGS_MT "perfscript.args"
#define STR_MAX 4096 /* bytes a string read may take, as SystemTap's MAXSTRINGLEN-ish */

struct ps_sample_args {
	int ref; /* the view's userdata, in the registry */
	ps_handle handle;
	const struct ps_tp_format *fmt; /* of handle, NULL when it has none */
	ps_handle told;			/* the last counter whose strings' source was said */
};

struct args_ud {
	struct ps_script *sc;
};

static struct ps_sample_args *state(struct ps_script *sc)
{
	if (!sc->sample_args && (sc->sample_args = calloc(1, sizeof(*sc->sample_args))))
		sc->sample_args->ref = LUA_NOREF;
	return sc->sample_args;
}

/* The format of the counter that took s, looked up once per counter in a row. */
static const struct ps_tp_format *format_of(struct ps_script *sc, const struct ps_sample *s)
{
	struct ps_sample_args *st = state(sc);
	const char *tp;

	if (!st)
		return NULL;
	if (st->handle != s->handle) {
		tp = ps_session__tracepoint(sc->session, s->handle);
		st->fmt = tp ? ps_tp_format__get(tp, NULL) : NULL;
		st->handle = s->handle;
	}
	return st->fmt;
}

static int read_user(pid_t pid, uint64_t addr, char *buf, size_t *len);

/* Once per counter: where its user strings come from. Read late, a string
 * of a process that has exited is nil: that is worth saying unasked. */
static void tell_source(struct ps_script *sc, const struct ps_sample *s, bool kernel)
{
	struct ps_sample_args *st = state(sc);
	const char *tp;

	if (!st || st->told == s->handle || (kernel && !sc->o.verbose))
		return;
	st->told = s->handle;
	tp = ps_session__tracepoint(sc->session, s->handle);
	if (kernel)
		fprintf(stderr,
			"perfscript: %s: user strings read in the kernel at the event "
			"(BPF path)\n",
			tp ? tp : "?");
	else
		fprintf(stderr,
			"perfscript: %s: user strings read when the handler runs (perf path): "
			"nil for a process that has exited by then; the BPF path reads them at "
			"the event\n",
			tp ? tp : "?");
}

/* A syscall's pointer to a user string: the string the kernel read at the
 * event (the BPF path), else read from the process now (the perf path, or
 * a page the kernel found out of memory), else nil. */
static void push_user_string(struct ps_script *sc, lua_State *L, const struct ps_tp_field *f,
			     const struct ps_sample *s)
{
	const char *str;
	size_t len = 0;
	bool cut;
	int64_t addr = 0;
	char *buf;

	int rc = ps_sample__string(s, f->offset, &str, &len, &cut);

	tell_source(sc, s, rc != -ENOENT);
	if (rc == 0) {
		lua_pushlstring(L, str, len);
		return;
	}
	if (ps_tp_field__int(f, s->raw, s->raw_size, 0, &addr) < 0 || !addr ||
	    !(buf = malloc(STR_MAX))) {
		lua_pushnil(L);
		return;
	}
	if (read_user((pid_t)s->pid, (uint64_t)addr, buf, &len) == 0)
		lua_pushlstring(L, buf, len);
	else
		lua_pushnil(L);
	free(buf);
}

static void push_field(struct ps_script *sc, lua_State *L, const struct ps_tp_field *f,
		       const struct ps_sample *s)
{
	const void *p;
	size_t len, n;
	int64_t v;

	if (f->user_string) {
		push_user_string(sc, L, f, s);
		return;
	}
	if (f->kind == PS_TP_INT) {
		if (ps_tp_field__int(f, s->raw, s->raw_size, 0, &v) == 0)
			lua_pushinteger(L, (lua_Integer)v);
		else
			lua_pushnil(L);
		return;
	}
	if (f->is_string || f->kind == PS_TP_OTHER) {
		if (ps_tp_field__bytes(f, s->raw, s->raw_size, &p, &len) == 0)
			lua_pushlstring(L, p, len);
		else
			lua_pushnil(L);
		return;
	}
	n = ps_tp_field__count(f, s->raw, s->raw_size);
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n && ps_tp_field__int(f, s->raw, s->raw_size, i, &v) == 0; i++) {
		lua_pushinteger(L, (lua_Integer)v);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

static const struct ps_sample *check_view(lua_State *L, struct ps_script **scp,
					  const struct ps_tp_format **fmt)
{
	struct args_ud *u = luaL_checkudata(L, 1, ARGS_MT);
	const struct ps_sample *s = ps_lua_sample_object__current(u->sc);

	if (!s)
		luaL_error(L, "these args are gone: their sample's handler returned (copy what "
			      "you keep inside the handler, e.g. local t = s:copy())");
	*scp = u->sc;
	*fmt = format_of(u->sc, s);
	return s;
}

static int args_index(lua_State *L)
{
	struct ps_script *sc;
	const struct ps_tp_format *fmt;
	const struct ps_sample *s = check_view(L, &sc, &fmt);
	const char *k = luaL_checkstring(L, 2);
	const struct ps_tp_field *f = ps_tp_format__find(fmt, k);

	if (!f) {
		luaL_Buffer b;

		luaL_buffinit(L, &b);
		for (size_t i = 0; i < ps_tp_format__count(fmt); i++) {
			luaL_addchar(&b, ' ');
			luaL_addstring(&b, ps_tp_format__field(fmt, i)->name);
		}
		luaL_pushresult(&b);
		return luaL_error(L, "tracepoint '%s' has no field '%s' (fields:%s)",
				  ps_session__tracepoint(sc->session, s->handle), k,
				  lua_tostring(L, -1));
	}
	push_field(sc, L, f, s);
	return 1;
}

/* pairs(s.args): name, value in the format's order. */
static int args_next(lua_State *L)
{
	struct ps_script *sc;
	const struct ps_tp_format *fmt;
	const struct ps_sample *s = check_view(L, &sc, &fmt);
	size_t i = 0, n = ps_tp_format__count(fmt);

	if (!lua_isnil(L, 2)) {
		const char *k = luaL_checkstring(L, 2);

		while (i < n && strcmp(ps_tp_format__field(fmt, i)->name, k))
			i++;
		i++;
	}
	if (i >= n)
		return 0;
	lua_pushstring(L, ps_tp_format__field(fmt, i)->name);
	push_field(sc, L, ps_tp_format__field(fmt, i), s);
	return 2;
}

static int args_pairs(lua_State *L)
{
	lua_pushcfunction(L, args_next);
	lua_pushvalue(L, 1);
	lua_pushnil(L);
	return 3;
}

static int args_tostring(lua_State *L)
{
	struct args_ud *u = luaL_checkudata(L, 1, ARGS_MT);
	const struct ps_sample *s = ps_lua_sample_object__current(u->sc);

	lua_pushfstring(L, ARGS_MT " of '%s'",
			s ? ps_session__tracepoint(u->sc->session, s->handle) : "(gone)");
	return 1;
}

static void push_view(lua_State *L, struct ps_script *sc)
{
	struct ps_sample_args *st = state(sc);

	if (!st) {
		luaL_error(L, "out of memory");
		return;
	}
	if (st->ref == LUA_NOREF) {
		struct args_ud *u = lua_newuserdatauv(L, sizeof(*u), 0);

		u->sc = sc;
		luaL_setmetatable(L, ARGS_MT);
		st->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	}
	lua_rawgeti(L, LUA_REGISTRYINDEX, st->ref);
}

/* ---- registers ---- */

static const unsigned arg_regs[] = PS_ARG_REGS;
#define RET_REG PS_RET_REG
#define NARGS	PS_NARG_REGS

/* A register of a probe's sample: the user registers for a uprobe, those
 * at the interrupt for a kprobe. */
static int reg(const struct ps_sample *s, unsigned r, uint64_t *v)
{
	if (ps_sample__reg(s, false, r, v) == 0)
		return 0;
	return ps_sample__reg(s, true, r, v);
}

static const struct ps_sample *sample_arg1(lua_State *L, struct ps_script **scp)
{
	return ps_lua_sample_object__check(L, scp);
}

/* The file offset of a user sample's ip (the USDT site it hit), 0 when
 * no mapping is known. */
static uint64_t ip_offset(struct ps_script *sc, const struct ps_sample *s)
{
	struct ps_symbols *syms = ps_lua_sample_object__symbols(sc);
	struct ps_mapping_info m = {.sz = sizeof(m)};

	if (!syms || ps_symbols__mapping(syms, (pid_t)s->pid, s->ip, &m) < 0)
		return 0;
	return s->ip - m.start + m.offset;
}

static int m_arg(lua_State *L)
{
	struct ps_script *sc;
	const struct ps_sample *s = sample_arg1(L, &sc);
	lua_Integer n = luaL_checkinteger(L, 2);
	uint64_t v;
	int64_t usdt;
	char why[256];
	int err = ps_session__usdt_arg(sc->session, s, PS_USDT_OFF_UNKNOWN, (int)n, &usdt, why,
				       sizeof(why));

	if (err == -EAGAIN) /* a marker at several sites: the one at this ip */
		err = ps_session__usdt_arg(sc->session, s, ip_offset(sc, s), (int)n, &usdt, why,
					   sizeof(why));

	if (err == 0) {
		lua_pushinteger(L, (lua_Integer)usdt);
		return 1;
	}
	if (err != -ENOENT)
		return luaL_error(L, "s:arg(%d): %s", (int)n, why);
	luaL_argcheck(
	    L, n >= 1 && (size_t)n <= NARGS, 2,
	    "argument number out of range (1 to the registers of the calling convention)");
	if (reg(s, arg_regs[n - 1], &v) < 0)
		return luaL_error(L,
				  "s:arg(%d): the sample carries no registers (a probe's samples "
				  "do: uprobe:, kprobe:, usdt:)",
				  (int)n);
	lua_pushinteger(L, (lua_Integer)v);
	return 1;
}

/* Up to STR_MAX bytes at addr of pid, to the first NUL: 0 or -errno. */
static int read_user(pid_t pid, uint64_t addr, char *buf, size_t *len)
{
	size_t got = 0;

	while (got < STR_MAX) {
		/* a page at a time: the string may end before an unmapped page */
		size_t chunk = 4096 - ((addr + got) & 4095);
		struct iovec local = {buf + got, chunk > STR_MAX - got ? STR_MAX - got : chunk};
		struct iovec remote = {(void *)(uintptr_t)(addr + got), local.iov_len};
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		char *nul;

		if (n <= 0)
			return got ? 0 : -errno;
		if ((nul = memchr(buf + got, '\0', (size_t)n))) {
			*len = (size_t)(nul - buf);
			return 0;
		}
		got += (size_t)n;
	}
	*len = got;
	return 0;
}

static int m_user_string(lua_State *L)
{
	struct ps_script *sc;
	const struct ps_sample *s = sample_arg1(L, &sc);
	uint64_t addr;
	char *buf;

	if (lua_type(L, 2) == LUA_TSTRING) { /* s.args.filename: read already */
		lua_settop(L, 2);
		return 1;
	}
	addr = (uint64_t)luaL_checkinteger(L, 2);
	buf = malloc(STR_MAX);
	size_t len = 0;
	int err;

	if (!buf)
		return luaL_error(L, "out of memory");
	err = addr ? read_user((pid_t)s->pid, addr, buf, &len) : -EFAULT;
	if (err == 0)
		lua_pushlstring(L, buf, len);
	free(buf);
	if (err == 0)
		return 1;
	lua_pushnil(L);
	lua_pushfstring(L, "cannot read a string at %p in process %d: %s", (void *)(uintptr_t)addr,
			(int)s->pid, strerror(-err));
	return 2;
}

static int read_kernel(uint64_t addr, char *buf, size_t *len)
{
	int n = ps_symbols__kernel_read(addr, buf, STR_MAX);

	if (n < 0)
		return n;
	*len = strnlen(buf, (size_t)n);
	return 0;
}

static int m_kernel_string(lua_State *L)
{
	struct ps_script *sc;
	uint64_t addr;
	char *buf;
	size_t len = 0;
	int err;

	sample_arg1(L, &sc);
	addr = (uint64_t)luaL_checkinteger(L, 2);
	if (!(buf = malloc(STR_MAX)))
		return luaL_error(L, "out of memory");
	err = read_kernel(addr, buf, &len);
	if (err == 0)
		lua_pushlstring(L, buf, len);
	free(buf);
	if (err == 0)
		return 1;
	lua_pushnil(L);
	lua_pushfstring(L, "cannot read kernel memory at %p: %s%s", (void *)(uintptr_t)addr,
			strerror(-err),
			err == -EACCES || err == -EPERM ? " (/proc/kcore needs root)"
			: err == -ENOENT		? " (this kernel has no /proc/kcore: "
							  "CONFIG_PROC_KCORE is off)"
							: "");
	return 2;
}

int ps_lua_sample_args__index(lua_State *L, struct ps_script *sc, const struct ps_sample *s,
			      const char *k)
{
	uint64_t v;

	if (!strcmp(k, "args")) {
		if (!format_of(sc, s))
			lua_pushnil(L); /* not a tracepoint */
		else
			push_view(L, sc);
	} else if (!strcmp(k, "raw")) {
		if (s->raw)
			lua_pushlstring(L, s->raw, s->raw_size);
		else
			lua_pushnil(L);
	} else if (!strcmp(k, "retval")) {
		if (reg(s, RET_REG, &v) == 0)
			lua_pushinteger(L, (lua_Integer)v);
		else
			lua_pushnil(L);
	} else if (!strcmp(k, "arg")) {
		lua_pushcfunction(L, m_arg);
	} else if (!strcmp(k, "user_string")) {
		lua_pushcfunction(L, m_user_string);
	} else if (!strcmp(k, "kernel_string")) {
		lua_pushcfunction(L, m_kernel_string);
	} else {
		return 0;
	}
	return 1;
}

void ps_lua_sample_args__copy(lua_State *L, struct ps_script *sc, const struct ps_sample *s)
{
	const struct ps_tp_format *fmt = format_of(sc, s);

	if (s->raw) {
		lua_pushlstring(L, s->raw, s->raw_size);
		lua_setfield(L, -2, "raw");
	}
	if (!fmt)
		return;
	lua_createtable(L, 0, (int)ps_tp_format__count(fmt));
	for (size_t i = 0; i < ps_tp_format__count(fmt); i++) {
		push_field(sc, L, ps_tp_format__field(fmt, i), s);
		lua_setfield(L, -2, ps_tp_format__field(fmt, i)->name);
	}
	lua_setfield(L, -2, "args");
}

void ps_lua_sample_args__open(lua_State *L)
{
	luaL_newmetatable(L, ARGS_MT);
	lua_pushcfunction(L, args_index);
	lua_setfield(L, -2, "__index");
	lua_pushcfunction(L, args_pairs);
	lua_setfield(L, -2, "__pairs");
	lua_pushcfunction(L, args_tostring);
	lua_setfield(L, -2, "__tostring");
	lua_pop(L, 1);
}

void ps_lua_sample_args__free(struct ps_script *sc)
{
	free(sc->sample_args);
	sc->sample_args = NULL;
}
