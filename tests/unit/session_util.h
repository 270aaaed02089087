/*
 * session_util.h: small helpers the session-level unit tests share
 * (test_counter.c, test_breakpoint.c, test_sampling.c): allocate one
 * counter, read its value, count this process's open fds. Each says what
 * went wrong as a TAP diagnostic, so the check that follows can fail plainly.
 */
#ifndef PS_TEST_SESSION_UTIL_H
#define PS_TEST_SESSION_UTIL_H

#include <dirent.h>
#include <errno.h>

#include "perfscript.h"
#include "tap.h"

/* The one handle spec gives, or 0 (said why). */
__attribute__((unused)) static ps_handle alloc1(struct ps_session *s, const char *spec)
{
	ps_handle h = 0;
	struct ps_event_error e;
	int n = s ? ps_session__allocate(s, spec, &h, 1, &e) : -EINVAL;

	if (n != 1)
		tap_diag("allocate '%s': %d %s", spec, n, n < 0 ? e.message : "");
	return n == 1 ? h : 0;
}

/* The counter's scaled value (0 when the read failed, said why). */
__attribute__((unused)) static uint64_t value(struct ps_session *s, ps_handle h)
{
	struct ps_value v = { 0 };
	int err = ps_session__read(s, h, &v);

	if (err)
		tap_diag("read: %s", ps_strerror(err));
	return v.value;
}

/* Open fds of this process, for leak checks; -1 when /proc cannot say. */
__attribute__((unused)) static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the DIR's own fd */
}

#endif /* PS_TEST_SESSION_UTIL_H */
