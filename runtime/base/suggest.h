/*
 * suggest.h: "did you mean" (runtime/base/suggest.c). A suggester is given
 * the word that was not understood and then every name that would have
 * been, and keeps the nearest by case-insensitive edit distance, within a
 * cut-off that grows with the word's length, so a wild guess gets no
 * suggestion rather than a silly one.
 */
#ifndef PS_BASE_SUGGEST_H
#define PS_BASE_SUGGEST_H

#include <stddef.h>

struct ps_suggest {
	const char *word;
	size_t word_len;
	unsigned best_dist; /* distance of best, or the cut-off while best is "" */
	char best[64];	    /* the nearest name so far, "" for none */
};

void ps_suggest__init(struct ps_suggest *s, const char *word, size_t len);
/* Consider a candidate name. */
void ps_suggest__try(struct ps_suggest *s, const char *cand);
void ps_suggest__try_n(struct ps_suggest *s, const char *cand, size_t len);
/* Case-insensitive Levenshtein distance (UINT_MAX for names of 64 bytes or more). */
unsigned ps_suggest__distance(const char *a, size_t alen, const char *b, size_t blen);

#endif /* PS_BASE_SUGGEST_H */
