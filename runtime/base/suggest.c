/*
 * suggest.c: the nearest known name to a word (base/suggest.h), for the
 * event parser's and the probe points' "did you mean".
 */
#include <ctype.h>
#include <limits.h>
#include <string.h>

#include "base/suggest.h"

/* The edit distance of a and b, a slip being a letter changed, added,
 * dropped, or two neighbours swapped ("ned" for "end": one), as the
 * optimal string alignment counts them; but give up with limit once every
 * cell of a row is at least limit: the suggester only cares about names
 * nearer than its best so far, and the full table for each of thousands of
 * names is what a misspelling would otherwise cost. */
static unsigned distance_within(const char *a, size_t alen, const char *b, size_t blen,
				unsigned limit)
{
	unsigned rows[3][64], *two = rows[0], *one = rows[1], *row = rows[2];

	/* Names longer than a buffer row are never near anything we know. */
	if (alen >= 64 || blen >= 64)
		return UINT_MAX;
	for (size_t j = 0; j <= blen; j++)
		one[j] = (unsigned)j;
	for (size_t i = 1; i <= alen; i++) {
		int ai = tolower((unsigned char)a[i - 1]);
		unsigned low = row[0] = (unsigned)i, *t;

		for (size_t j = 1; j <= blen; j++) {
			int bj = tolower((unsigned char)b[j - 1]);
			unsigned best = one[j - 1] + (ai != bj), del = one[j] + 1,
				 ins = row[j - 1] + 1;

			best = del < best ? del : best;
			best = ins < best ? ins : best;
			if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == bj && two[j - 2] + 1 < best)
				best = two[j - 2] + 1; /* a swap */
			row[j] = best;
			low = best < low ? best : low;
		}
		if (low >= limit)
			return limit;
		t = two, two = one, one = row, row = t;
	}
	return one[blen];
}

unsigned ps_suggest__distance(const char *a, size_t alen, const char *b, size_t blen)
{
	return distance_within(a, alen, b, blen, UINT_MAX);
}

void ps_suggest__init(struct ps_suggest *s, const char *word, size_t len)
{
	s->word = word;
	s->word_len = len;
	/* The cut-off grows with the word: one slip in a short name, two in a
	 * medium one, three in a long one. */
	s->best_dist = (len <= 3 ? 1 : len <= 6 ? 2 : 3) + 1;
	s->best[0] = '\0';
}

void ps_suggest__try_n(struct ps_suggest *s, const char *cand, size_t len)
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

void ps_suggest__try(struct ps_suggest *s, const char *cand)
{
	ps_suggest__try_n(s, cand, strlen(cand));
}
