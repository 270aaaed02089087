/*
 * strerror.c: ps_strerror() names perfscript's own PS_ERR_* codes and falls
 * back to the C library's description of errno values of either sign; every
 * string it returns is constant.
 */
#include <limits.h>
#include <string.h>

#include "perfscript.h"

static const char *const ps_messages[PS_ERR_LAST - PS_ERR_FIRST] = {
    [PS_ERR_SYNTAX - PS_ERR_FIRST] = "malformed event string",
    [PS_ERR_UNKNOWN_EVENT - PS_ERR_FIRST] = "unknown event",
    [PS_ERR_UNKNOWN_TERM - PS_ERR_FIRST] = "unknown event term",
    [PS_ERR_BAD_VALUE - PS_ERR_FIRST] = "bad value for an event term",
    [PS_ERR_HANDLE - PS_ERR_FIRST] = "invalid counter handle (freed, stale or never allocated)",
    [PS_ERR_NOT_SUPPORTED - PS_ERR_FIRST] = "event not supported by this machine",
    [PS_ERR_STATE - PS_ERR_FIRST] = "operation not valid in the counter's current state",
    [PS_ERR_LIMIT - PS_ERR_FIRST] =
	"the session holds as many counters as it may (free some first)",
};

const char *ps_strerror(int err)
{
	const char *msg;

	if (err == INT_MIN)
		return "unknown error";
	if (err < 0)
		err = -err;
	if (err == 0)
		return "success";
	if (err >= PS_ERR_FIRST && err < PS_ERR_LAST)
		return ps_messages[err - PS_ERR_FIRST];
	/* strerror() words an unknown number in a buffer the next call reuses;
	 * these strings are constant, so the caller may keep them */
	msg = strerrordesc_np(err);
	return msg ? msg : "unknown error";
}
