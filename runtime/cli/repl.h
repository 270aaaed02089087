/*
 * repl.h: the REPL of perfscript -i (repl.c): Lua read from stdin on the
 * session's event loop.
 */
#ifndef PS_CLI_REPL_H
#define PS_CLI_REPL_H

#include "lua/script.h"

/* Read Lua from stdin on the event loop until EOF, exit() or the session
 * ends otherwise; returns the exit status. */
int ps_cli_repl__run(struct ps_script *sc);

/* show.c: load the chunk that returns the function the REPL shows results
 * with (print-like, tables one level deep); luaL_loadbuffer's status. */
int ps_cli_show__load(lua_State *L);

/* complete.c: TAB completion for libedit; free what it loaded. */
void ps_cli_complete__install(struct ps_script *sc);
void ps_cli_complete__free(void);

#endif
