/*
 * symbolizer.c: perfmon.symbols, the symbolizer as scripts see it: what it
 * holds, and its budget (its upkeep is its own: ps_symbols__maintain).
 */
#include <string.h>

#include <lauxlib.h>

#include "lua/internal.h"

/* Field f of the options table at 1, an integer of at least min, or -1. */
static lua_Integer opt_field(lua_State *L, const char *f, lua_Integer min, const char *what)
{
	lua_Integer v = -1;

	if (lua_getfield(L, 1, f) != LUA_TNIL) {
		v = luaL_checkinteger(L, -1);
		if (v < min)
			luaL_error(L, "perfmon.symbols: %s wants %s", f, what);
	}
	lua_pop(L, 1);
	return v;
}

/* perfmon.symbols([budget_bytes | {budget =, lines =}]) -> { files,
 * files_open, bytes, budget, evictions, processes, unwinders, exited, lines
 * }: what the symbolizer holds, and a new budget when given. A field it
 * does not know is refused (the memory is the budget's to keep). */
int ps_lua_symbolizer__symbols(lua_State *L)
{
	struct ps_script *sc = lua_touserdata(L, lua_upvalueindex(1));
	struct ps_symbols *syms = ps_lua_sample_object__symbols(sc);
	struct ps_symbols_stats st = {.sz = sizeof(st)};
	lua_Integer b = -1;

	if (lua_istable(L, 1)) {
		for (lua_pushnil(L); lua_next(L, 1); lua_pop(L, 1))
			if (lua_type(L, -2) != LUA_TSTRING ||
			    (strcmp(lua_tostring(L, -2), "budget") &&
			     strcmp(lua_tostring(L, -2), "lines")))
				return luaL_error(
				    L,
				    "perfmon.symbols: unknown field '%s' (budget, lines: "
				    "the budget bounds all it holds)",
				    luaL_tolstring(L, -2, NULL));
		b = opt_field(L, "budget", 1 << 20, "at least 1 MiB (1048576 bytes)");
		if (lua_getfield(L, 1, "lines") != LUA_TNIL) {
			luaL_argcheck(L, lua_isboolean(L, -1), 1, "lines wants true or false");
			ps_symbols__set_lines(syms, lua_toboolean(L, -1));
		}
		lua_pop(L, 1);
	} else if (!lua_isnoneornil(L, 1)) {
		b = luaL_checkinteger(L, 1);
		luaL_argcheck(L, b >= (1 << 20), 1, "a budget of at least 1 MiB (1048576 bytes)");
	}
	if (b >= 0)
		ps_symbols__set_budget(syms, (size_t)b); /* kept to at its next upkeep */
	if (ps_symbols__stats(syms, &st) < 0)
		return luaL_error(L, "perfmon.symbols: out of memory");
	lua_createtable(L, 0, 8);
#define FIELD(name) (lua_pushinteger(L, (lua_Integer)st.name), lua_setfield(L, -2, #name))
	FIELD(files);
	FIELD(files_open);
	FIELD(bytes);
	FIELD(budget);
	FIELD(evictions);
	FIELD(processes);
	FIELD(unwinders);
	FIELD(exited);
#undef FIELD
	lua_pushboolean(L, ps_symbols__lines(syms));
	lua_setfield(L, -2, "lines");
	return 1;
}
