/*
 * setup.h: preparing a script's Lua state (lua/setup.c), all of it under
 * the one protected call path.
 */
#ifndef PS_LUA_SETUP_H
#define PS_LUA_SETUP_H

#include "lua/internal.h"

/* The arg table, as lua(1) builds it: arg[0] the script, arg[1..] its
 * arguments, arg[-npre..-1] the interpreter's own. */
struct ps_lua_args {
	const char *script;
	char **args;
	int nargs;
	char **pre;
	int npre;
};

/* Libraries, modules, globals and the tapset path: 0, or -1 (reported). */
int ps_lua_setup__state(struct ps_script *sc);
/* Set the global arg: 0, or -1 (reported). */
int ps_lua_setup__args(struct ps_script *sc, const struct ps_lua_args *a);

#endif /* PS_LUA_SETUP_H */
