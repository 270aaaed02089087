/*
 * utf8.c: the one check and repair of UTF-8 for what perfscript sends out
 * (base/utf8.h). Invalid bytes become U+FFFD one by one, as
 * Prometheus' client_golang and perf do, so that a label or a name keeps
 * its valid parts and its length stays near what it was.
 */
#include <string.h>

#include "base/utf8.h"

/* The length of the valid sequence at s (at most n bytes), 0 if none. */
static size_t sequence(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned cp, min;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0; /* a continuation byte, or 0xc0, 0xc1, 0xf5-0xff */
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool ps_utf8__valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		size_t len = p[i] < 0x80 ? 1 : sequence(p + i, n - i);

		if (!len)
			return false;
		i += len;
	}
	return true;
}

size_t ps_utf8__repair(const char *s, size_t n, char *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	for (size_t i = 0; i < n;) {
		size_t len = sequence(p + i, n - i);

		if (len) {
			memcpy(out + o, p + i, len);
			o += len;
			i += len;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	return o;
}
