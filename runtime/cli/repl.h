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

#endif
