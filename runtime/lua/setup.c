/*
 * setup.c: the Lua state of a script before its main chunk runs: the
 * standard libraries, the perfmon module and the seed globals, probe(), the
 * helpers, the sample object, the tapset search path, and the arg table.
 * Like lua.c's pmain, all of it runs as C functions under ps_lua__protect,
 * so running out of memory (or a tapset directory's odd name) is an error
 * reported, never a panic.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lualib.h>

#include "base/path.h"
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

/* Whether dir may be searched for code without the user naming it: it and
 * every directory above it belong to root or to us and are not writable by
 * others, but for a sticky ancestor such as /tmp, whose entries others
 * cannot replace (the component below it passed the same owner test). */
static bool trusted_dir(const char *dir)
{
	char real[PATH_MAX], *slash;
	struct stat st;
	bool below = false; /* real is an ancestor of dir, not dir itself */

	if (!realpath(dir, real))
		return false;
	for (;;) {
		if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
			return false;
		if (st.st_uid != 0 && st.st_uid != getuid())
			return false;
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(below && (st.st_mode & S_ISVTX)))
			return false;
		slash = strrchr(real, '/');
		if (!slash || real[1] == '\0')
			return true;
		slash[slash == real] = '\0'; /* "/usr" -> "/", "/usr/lib" -> "/usr" */
		below = true;
	}
}

/* Drop the current directory ("./?.lua", "./?.so") from one of Lua's
 * default paths; a path the user set (LUA_PATH...) is theirs. */
static void drop_cwd(lua_State *L, const char *field, const char *env)
{
	char var[32];
	luaL_Buffer b;
	const char *p;

	snprintf(var, sizeof(var), "%s_5_4", env);
	if (getenv(var) || getenv(env))
		return;
	lua_getglobal(L, "package");
	lua_getfield(L, -1, field);
	p = lua_tostring(L, -1);
	luaL_buffinit(L, &b);
	while (p && *p) {
		size_t n = strcspn(p, ";");

		if (n && strncmp(p, "./", 2) != 0) {
			if (luaL_bufflen(&b))
				luaL_addchar(&b, ';');
			luaL_addlstring(&b, p, n);
		}
		p += n + (p[n] == ';');
	}
	luaL_pushresult(&b);
	lua_setfield(L, -3, field);
	lua_pop(L, 2);
}

/* The last of package.searchers: finds nothing, and says in require's
 * "module not found" message why the script's own directory was not
 * searched and how to add one. */
static int searcher_hint(lua_State *L)
{
	lua_pushstring(L, "(perfscript does not search the current directory nor the "
			  "script's own: add a directory with -I DIR or PERFSCRIPT_PATH)");
	return 1;
}

static void add_searcher_hint(lua_State *L)
{
	lua_getglobal(L, "package");
	if (lua_getfield(L, -1, "searchers") == LUA_TTABLE) {
		lua_pushcfunction(L, searcher_hint);
		lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	}
	lua_pop(L, 2);
}

/*
 * Where require looks, first to last: -I (added by setup), PERFSCRIPT_PATH,
 * tapsets/ beside the binary (a build tree), ../share/perfscript/tapsets from
 * the binary (an install tree wherever it was put), the configured PREFIX's
 * tapsets, then Lua's own path without the current directory. A directory
 * derived from where the binary is must be trusted_dir(): a copy in /tmp/x
 * must not load /tmp/share/... that anyone could have created.
 */
static void add_default_paths(lua_State *L)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	const char *env = getenv("PERFSCRIPT_PATH");

	drop_cwd(L, "path", "LUA_PATH");
	drop_cwd(L, "cpath", "LUA_CPATH");
	add_searcher_hint(L);
	add_path(L, PS_TAPSET_DIR);
	if (ps_path__self_dir(dir, sizeof(dir)) == 0) {
		static const char *const rel[] = {"/../share/perfscript/tapsets", "/tapsets"};

		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			snprintf(path, sizeof(path), "%s%s", dir, rel[i]);
			if (trusted_dir(path))
				add_path(L, path);
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
	ps_lua_interrupt__open(L);
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
	ps_lua_remote_write__open(L);
	ps_lua_otlp__open(L);
	ps_lua_http__open(L);
	ps_lua_tty__open(L);
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
