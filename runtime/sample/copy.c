/*
 * copy.c: a sample or side-band record copied whole, with every array it
 * points to, into memory of the caller's (the time-ordering queue keeps
 * what it holds back so: the ring space it was read from goes back to the
 * kernel before the record is delivered).
 */
#include <string.h>

#include "base/bits.h"
#include "sample/sampler.h"

static size_t words(uint64_t mask)
{
	return (size_t)ps_bits__count(mask) * 8;
}

size_t ps_delivery__payload_size(const struct ps_delivery *d)
{
	const struct ps_sample *s = d->sample;
	const struct ps_record *r = d->record;

	/* each array is put at an 8-aligned place: up to 7 bytes more for each
	 * of the five that need not end on a word */
	if (s)
		return s->nr_ips * 8 + s->read_words * 8 + s->raw_size +
		       (s->regs_user.regs ? words(s->regs_user.mask) : 0) +
		       (s->regs_intr.regs ? words(s->regs_intr.mask) : 0) + s->stack_size +
		       s->strings_size + s->py_n * sizeof(*s->py) + 40;
	return (r->comm ? strlen(r->comm) + 1 : 0) + (r->filename ? strlen(r->filename) + 1 : 0) +
	       r->build_id_size + 24;
}

/* Copy len bytes of src to *at and return where they went (8-aligned). */
static const void *put(unsigned char **at, const void *src, size_t len)
{
	unsigned char *p = *at;

	if (!src)
		return NULL;
	memcpy(p, src, len);
	*at = p + ((len + 7) & ~(size_t)7);
	return p;
}

void ps_delivery__copy(const struct ps_delivery *d, struct ps_sample *s, struct ps_record *r,
		       unsigned char *payload)
{
	unsigned char *at = payload;

	if (d->sample) {
		*s = *d->sample;
		s->ips = put(&at, s->ips, s->nr_ips * 8);
		s->read = put(&at, s->read, s->read_words * 8);
		s->raw = put(&at, s->raw, s->raw_size);
		if (s->regs_user.regs)
			s->regs_user.regs = put(&at, s->regs_user.regs, words(s->regs_user.mask));
		if (s->regs_intr.regs)
			s->regs_intr.regs = put(&at, s->regs_intr.regs, words(s->regs_intr.mask));
		s->stack = put(&at, s->stack, s->stack_size);
		s->strings = put(&at, s->strings, s->strings_size);
		s->py = put(&at, s->py, s->py_n * sizeof(*s->py));
	} else {
		*r = *d->record;
		r->comm = put(&at, r->comm, r->comm ? strlen(r->comm) + 1 : 0);
		r->filename = put(&at, r->filename, r->filename ? strlen(r->filename) + 1 : 0);
		r->build_id = put(&at, r->build_id, r->build_id_size);
	}
}
