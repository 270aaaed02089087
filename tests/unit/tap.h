/*
 * tap.h: a minimal TAP producer for perfscript's C unit tests. Each check
 * prints "ok N - what" or "not ok N - what"; skips print "# SKIP reason" so
 * tests/run counts them. The program exits non-zero when any check failed.
 */
#ifndef PS_TAP_H
#define PS_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3), unused)) static int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

__attribute__((format(printf, 2, 3), unused)) static void tap_skip(const char *why, const char *fmt,
								   ...)
{
	va_list ap;

	printf("ok %d - ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
	fflush(stdout);
}

__attribute__((format(printf, 1, 2), unused)) static void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

#define tap_is_u64(got, want, ...)                                                                 \
	do {                                                                                       \
		unsigned long long g_ = (got), w_ = (want);                                        \
		if (!tap_ok(g_ == w_, __VA_ARGS__))                                                \
			tap_diag("  got %llu (%#llx), want %llu (%#llx)", g_, g_, w_, w_);         \
	} while (0)

#define tap_is_i64(got, want, ...)                                                                 \
	do {                                                                                       \
		long long g_ = (got), w_ = (want);                                                 \
		if (!tap_ok(g_ == w_, __VA_ARGS__))                                                \
			tap_diag("  got %lld, want %lld", g_, w_);                                 \
	} while (0)

#define tap_is_str(got, want, ...)                                                                 \
	do {                                                                                       \
		const char *g_ = (got), *w_ = (want);                                              \
		if (!tap_ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__))                         \
			tap_diag("  got '%s', want '%s'", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
	} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
