/*
 * output.h: the script's output, one stream for print, printf and io.write.
 * It starts as perfscript's standard output; -o FILE, or the script itself
 * (perfmon.output), sends it to a file or to standard error. Only the
 * stream moves: file descriptor 1 stays where it was, so the -c command
 * and whatever the script starts (os.execute, io.popen) write where the
 * user pointed perfscript's standard output. The first write error is
 * kept, and the end of the run says it.
 */
#ifndef PS_LUA_OUTPUT_H
#define PS_LUA_OUTPUT_H

#include <lauxlib.h>
#include <stdbool.h>
#include <stddef.h>

/* Make stdout the watched stream, before the Lua state is made (its io
 * library takes stdout then). script: the file that -o or perfmon.output
 * must not overwrite (NULL: none); out_closed: perfscript was started with
 * standard output closed, said at the first write that would be lost. */
void ps_lua_output__watch(const char *script, bool out_closed);
/* Send the script's output to path (created or truncated), or to
 * standard error when path is NULL. 0, or -1 with the reason in msg. */
int ps_lua_output__redirect(const char *path, char *msg, size_t len);
/* Flush and close the output; a failed write is an error (rc 1 if rc was
 * 0) said on stderr, except a reader that went away (EPIPE). */
int ps_lua_output__finish(int rc);
/* perfmon.output([FILE | io.stderr]) -> the output's name | true | nil, message */
int ps_lua_output__fn(lua_State *L);

#endif
