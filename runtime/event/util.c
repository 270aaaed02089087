/*
 * util.c: small helpers the event-parser files share: filling a
 * struct ps_event_error (did-you-mean is base/suggest.c), strict number parsing for terms, and the
 * careful sysfs/tracefs file reads the resolvers make.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/perf_regs.h>
#endif

#include "event/event.h"

uint64_t ps_ev__probe_regs_mask(void)
{
#if defined(__x86_64__)
	return 1ull << PERF_REG_X86_AX | 1ull << PERF_REG_X86_CX | 1ull << PERF_REG_X86_DX |
	       1ull << PERF_REG_X86_SI | 1ull << PERF_REG_X86_DI | 1ull << PERF_REG_X86_SP |
	       1ull << PERF_REG_X86_IP | 1ull << PERF_REG_X86_R8 | 1ull << PERF_REG_X86_R9;
#elif defined(__aarch64__)
	return 0xffull | 1ull << PERF_REG_ARM64_SP | 1ull << PERF_REG_ARM64_PC; /* x0-x7 */
#else
	return 0;
#endif
}

int ps_ev__fail(struct ps_event_error *err, int code, int column, const char *tok, size_t toklen,
		const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -code;
	memset(err, 0, sizeof(*err));
	err->code = code;
	err->column = column;
	if (toklen >= sizeof(err->token))
		toklen = sizeof(err->token) - 1;
	if (tok)
		memcpy(err->token, tok, toklen);
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -code;
}

int ps_ev__nomem(struct ps_event_error *err)
{
	if (err) {
		memset(err, 0, sizeof(*err));
		err->code = ENOMEM;
		snprintf(err->message, sizeof(err->message), "out of memory parsing event string");
	}
	return -ENOMEM;
}

bool ps_ev__parse_u64(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	unsigned base = 10;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == len)
		return false;
	for (; i < len; i++) {
		unsigned d;

		if (s[i] >= '0' && s[i] <= '9')
			d = (unsigned)(s[i] - '0');
		else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned)(s[i] - 'a' + 10);
		else if (base == 16 && s[i] >= 'A' && s[i] <= 'F')
			d = (unsigned)(s[i] - 'A' + 10);
		else
			return false;
		if (x > (UINT64_MAX - d) / base)
			return false; /* overflow */
		x = x * base + d;
	}
	*v = x;
	return true;
}

int ps_ev__read_u64_file(const char *path, uint64_t *v)
{
	char buf[64];
	ssize_t n;
	size_t len;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	len = (size_t)n;
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		len--;
	return ps_ev__parse_u64(buf, len, v) ? 0 : -EINVAL;
}

bool ps_ev__safe_component(const char *s, size_t len)
{
	if (len == 0 || len > NAME_MAX || s[0] == '.')
		return false;
	return !memchr(s, '/', len) && !memchr(s, '\0', len);
}

/* s as a JSON string: quotes and backslashes escaped, control bytes as \uXXXX. */
void ps_ev__json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}
