/*
 * setup.c: the Lua state of a script before its main chunk runs: the
 * standard libraries, the perfmon module and the seed globals, probe(), the
 * helpers, the sample object, the tapset search path, and the arg table.
 * Like lua.c's pmain, all of it runs as C functions under ps_lua__protect,
 * so running out of memory (or a tapset directory's odd name) is an error
 * reported, never a panic.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lualib.h>

#include "lua/probe.h"
#include "lua/setup.h"

static const char SCRIPT_KEY[] = "perfscript.script";

struct ps_script *ps_lua_script__from(lua_State *L)
{
	struct ps_script *sc;

	lua_getfield(L, LUA_REGISTRYINDEX, SCRIPT_KEY);
	sc = lua_touserdata(L, -1);
	lua_pop(L, 1);
	return sc;
}

/* Prepend DIR/?.lua;DIR/?/init.lua to package.path. */
static void add_path(lua_State *L, const char *dir)
{
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "path");
	lua_pushfstring(L, "%s/?.lua;%s/?/init.lua;%s", dir, dir, lua_tostring(L, -1));
	lua_setfield(L, -3, "path");
	lua_pop(L, 2);
}

/* The installed tapsets, those beside the binary, $PERFSCRIPT_PATH. */
static void add_default_paths(lua_State *L)
{
	char exe[4096], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 32);
	const char *env = getenv("PERFSCRIPT_PATH");

	add_path(L, PS_TAPSET_DIR);
	if (n > 0 && (exe[n] = '\0', slash = strrchr(exe, '/'))) {
		/* An install tree wherever it was put (PREFIX/bin/perfscript beside
		 * PREFIX/share/perfscript/tapsets, DESTDIR included), or a build
		 * tree: tapsets/ beside the binary, or one level up for a binary in
		 * a build directory (make asan). */
		static const char *const rel[] = {"/../share/perfscript/tapsets", "/../tapsets",
						  "/tapsets"};

		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			strcpy(slash, rel[i]);
			if (access(exe, R_OK) == 0)
				add_path(L, exe);
		}
	}
	if (env && *env) {
		/* PERFSCRIPT_PATH is colon-separated; the first entry wins. */
		char *copy = strdup(env), *save = NULL, *dirs[64];
		int nd = 0;

		for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && nd < 64;
		     d = strtok_r(NULL, ":", &save))
			dirs[nd++] = d;
		while (nd > 0)
			add_path(L, dirs[--nd]);
		free(copy);
	}
}

static int setup(lua_State *L)
{
	struct ps_script *sc = lua_touserdata(L, 1);

	luaL_openlibs(L);
	lua_pushlightuserdata(L, sc);
	lua_setfield(L, LUA_REGISTRYINDEX, SCRIPT_KEY);
	add_default_paths(L);
	/* -I directories first: each is prepended, so the last goes in first */
	for (size_t i = sc->o.npaths; i-- > 0;)
		add_path(L, sc->o.paths[i]);
	luaL_requiref(L, "perfmon", ps_lua_perfmon__open, 1);
	ps_lua_aggregate__open(L, sc);
	lua_pop(L, 1);
	ps_lua_probe__open(L, sc);
	ps_lua_helpers__open(L, sc);
	ps_lua_stats__open(L);
	ps_lua_pprof__open(L);
	ps_lua_sample_object__open(L, sc);
	ps_lua_sample_args__open(L);
	return 0;
}

int ps_lua_setup__state(struct ps_script *sc)
{
	return ps_lua__protect(sc, setup, sc, PS_CALL_SETUP, "setting up Lua");
}

static int set_args(lua_State *L)
{
	const struct ps_lua_args *a = lua_touserdata(L, 1);

	lua_createtable(L, a->nargs, a->npre + 1);
	for (int i = 0; i < a->npre; i++) {
		lua_pushstring(L, a->pre[i]);
		lua_rawseti(L, -2, i - a->npre);
	}
	lua_pushstring(L, a->script);
	lua_rawseti(L, -2, 0);
	for (int i = 0; i < a->nargs; i++) {
		lua_pushstring(L, a->args[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setglobal(L, "arg");
	return 0;
}

int ps_lua_setup__args(struct ps_script *sc, const struct ps_lua_args *a)
{
	return ps_lua__protect(sc, set_args, (void *)a, PS_CALL_SETUP, "setting up arg");
}
