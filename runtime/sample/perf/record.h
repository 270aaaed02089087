/*
 * record.h: decoding perf ring records (runtime/sample/perf/record.c) into the public
 * struct ps_sample and struct ps_record. Decoding reads only the record it
 * is given, checks every field against the record's own size, and points
 * into the record instead of copying (callchains, read blocks, raw data,
 * names), so a decoded record is valid as long as the record bytes are.
 */
#ifndef PS_RECORD_H
#define PS_RECORD_H

#include <stdbool.h>
#include <string.h>

#include "perfscript.h"

/* sample_type bits that lay out the sample_id_all trailer of non-sample records. */
#define PS_TRAILER_BITS                                                                            \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |             \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* The PERF_SAMPLE_IDENTIFIER of a record from an event with that bit and
 * sample_id_all: first u64 of a sample, last u64 of anything else. */
static inline bool ps_record__identifier(const struct perf_event_header *h, uint64_t *id)
{
	if (h->size < sizeof(*h) + sizeof(*id))
		return false;
	if (h->type == PERF_RECORD_SAMPLE)
		memcpy(id, h + 1, sizeof(*id));
	else
		memcpy(id, (const char *)h + h->size - sizeof(*id), sizeof(*id));
	return true;
}

/* Newer than some system headers: PERF_SAMPLE_WEIGHT_STRUCT (Linux 5.12)
 * and PERF_SAMPLE_BRANCH_COUNTERS (Linux 6.8). */
#define PS_SAMPLE_WEIGHT_STRUCT (1ull << 24)
#define PS_BRANCH_COUNTERS	(1ull << 19)

/* Decode a PERF_RECORD_SAMPLE of an event opened with attr a (its
 * sample_type, read_format, register masks and branch_sample_type lay the
 * record out). Sets every field but handle. 0 or -EBADMSG (truncated). */
int ps_record__sample(const struct perf_event_header *h, const struct perf_event_attr *a,
		      struct ps_sample *s);

/* Decode LOST, LOST_SAMPLES, THROTTLE, UNTHROTTLE, COMM, MMAP2, FORK or
 * EXIT with the sample_id_all trailer that sample_type lays out. Sets every
 * field but handle. 0, -EBADMSG (truncated or unterminated string), or
 * -ENOENT for a record type not decoded here. */
int ps_record__other(const struct perf_event_header *h, uint64_t sample_type, struct ps_record *r);

#endif /* PS_RECORD_H */
