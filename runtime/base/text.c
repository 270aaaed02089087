/*
 * text.c: the check every binding makes of a string before C sees it. A
 * Lua string may hold a NUL byte, and C would silently read the string as
 * ending there: "cycles\0:k" would count cycles in the kernel too. The
 * check and its message live here once, for the Lua 5.4 and LuaJIT
 * bindings alike.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "perfscript.h"

int ps_text__check(const char *s, size_t len, const char *what, char *msg, size_t msglen)
{
	const char *nul = s ? memchr(s, '\0', len) : NULL;

	if (!s)
		return -EINVAL;
	if (!nul)
		return 0;
	if (msg && msglen)
		snprintf(msg, msglen,
			 "NUL byte at column %zu of the %s (it would end the string there)",
			 (size_t)(nul - s) + 1, what ? what : "string");
	return -PS_ERR_SYNTAX;
}
