/*
 * advice.c: the front end's advice for library messages (base/advice.h).
 * Process-wide, like the messages it completes; set once before any session.
 */
#include <stddef.h>

#include "base/advice.h"

static const char *advice[PS_ADVICE_N];

void ps_advice__set(enum ps_advice what, const char *text)
{
	if ((unsigned)what < PS_ADVICE_N)
		advice[what] = text;
}

const char *ps_advice(enum ps_advice what, const char *def)
{
	return (unsigned)what < PS_ADVICE_N && advice[what] ? advice[what] : def;
}
