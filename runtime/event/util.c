/*
 * util.c: small helpers the event-parser files share: filling a
 * struct ps_event_error, the did-you-mean suggester (case-insensitive
 * Levenshtein distance with a cut-off so that wild guesses are not offered),
 * strict number parsing for terms, and the careful sysfs/tracefs file reads
 * the resolvers make.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "event/event.h"

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

/* Levenshtein distance, but give up with limit once every cell of a row is
 * at least limit: the suggester only cares about names nearer than its
 * best so far, and the full table for each of thousands of names is what
 * a misspelling would otherwise cost. */
static unsigned distance_within(const char *a, size_t alen, const char *b, size_t blen,
				unsigned limit)
{
	unsigned row[64], prev;

	/* Names longer than a buffer row are never near anything we know. */
	if (alen >= 64 || blen >= 64)
		return UINT_MAX;
	for (size_t j = 0; j <= blen; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= alen; i++) {
		unsigned low;

		prev = row[0];
		row[0] = (unsigned)i;
		low = row[0];
		for (size_t j = 1; j <= blen; j++) {
			unsigned sub = prev + (tolower((unsigned char)a[i - 1]) !=
					       tolower((unsigned char)b[j - 1]));
			unsigned del = row[j] + 1, ins = row[j - 1] + 1, best = sub;

			best = del < best ? del : best;
			best = ins < best ? ins : best;
			prev = row[j];
			row[j] = best;
			low = best < low ? best : low;
		}
		if (low >= limit)
			return limit;
	}
	return row[blen];
}

unsigned ps_ev__distance(const char *a, size_t alen, const char *b, size_t blen)
{
	return distance_within(a, alen, b, blen, UINT_MAX);
}

void ps_ev__suggest_init(struct ps_ev_suggest *s, const char *word, size_t len)
{
	s->word = word;
	s->word_len = len;
	/* The cut-off grows with the word: one slip in a short name, two in a
	 * medium one (a transposition counts two), three in a long one. */
	s->best_dist = (len <= 3 ? 1 : len <= 6 ? 2 : 3) + 1;
	s->best[0] = '\0';
}

void ps_ev__suggest_n(struct ps_ev_suggest *s, const char *cand, size_t len)
{
	unsigned d;

	if (len >= sizeof(s->best))
		return;
	/* The distance is at least the difference in length. */
	if ((len > s->word_len ? len - s->word_len : s->word_len - len) >= s->best_dist)
		return;
	d = distance_within(s->word, s->word_len, cand, len, s->best_dist);
	if (d < s->best_dist) {
		s->best_dist = d;
		memcpy(s->best, cand, len);
		s->best[len] = '\0';
	}
}

void ps_ev__suggest(struct ps_ev_suggest *s, const char *cand)
{
	ps_ev__suggest_n(s, cand, strlen(cand));
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
