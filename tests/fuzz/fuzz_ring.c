/*
 * fuzz_ring.c: libFuzzer target for the sample path's parsers: the input is
 * a perf ring's data area (head set to its length, possibly wrapped), read
 * with ps_ring__next and every record decoded by ps_record__sample and
 * ps_record__other under a sample_type, read_format, register masks and
 * branch sample type taken from the input's first bytes (the registers and
 * user stack of call-graph=dwarf, the interrupt registers of probes). Whatever the kernel (or memory corruption) leaves in
 * a ring, the reader must never read outside it, loop, or crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfscript.h"
#include "sample/perf/record.h"
#include "sample/perf/ring.h"

/* The sample_type bits the session can ask for, and the read_format ones. */
static const uint64_t types[] = {
	PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,	 PERF_SAMPLE_TID,	PERF_SAMPLE_TIME,
	PERF_SAMPLE_ADDR,	PERF_SAMPLE_ID,	 PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU,
	PERF_SAMPLE_PERIOD,	PERF_SAMPLE_READ, PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_RAW,
	PERF_SAMPLE_BRANCH_STACK, PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER,
	PERF_SAMPLE_REGS_INTR,
};

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	static struct perf_event_mmap_page meta;
	static unsigned char data[4096] __attribute__((aligned(8)));
	struct perf_event_attr a = {0};
	uint64_t size;
	struct ps_ring r;
	const struct perf_event_header *h;
	unsigned start;

	if (n < 6)
		return 0;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if ((d[0] | d[1] << 8) & (1u << i))
			a.sample_type |= types[i];
	a.read_format = d[2] & 0x1f; /* TOTAL_TIME_ENABLED .. LOST */
	size = 8u << (d[3] & 7);     /* a data area of 8 .. 1024 bytes */
	start = d[3] >> 3;           /* where the kernel's writing started */
	/* register masks of 0 to 7 bits spread over the word, hw index or not */
	a.sample_regs_user = (d[4] & 0x7full) * 0x0101010101ull;
	a.sample_regs_intr = (d[5] & 0x7full) << 16;
	a.branch_sample_type = d[4] & 0x80 ? PERF_SAMPLE_BRANCH_HW_INDEX : 0;
	a.sample_stack_user = 64;
	d += 6;
	n -= 6;
	if (n > size)
		n = size;
	memset(&meta, 0, sizeof(meta));
	memset(data, 0, size);
	for (size_t i = 0; i < n; i++)
		data[(start * 8 + i) & (size - 1)] = d[i];
	if (ps_ring__init_mem(&r, &meta, data, size) < 0)
		return 0;
	meta.data_tail = start * 8;
	meta.data_head = start * 8 + n;
	ps_ring__begin(&r);
	for (int k = 0; k < 10000 && ps_ring__next(&r, &h) > 0; k++) {
		struct ps_sample s;
		struct ps_record rec;
		uint64_t id;

		if (h->type == PERF_RECORD_SAMPLE) {
			if (ps_record__sample(h, &a, &s) == 0) {
				uint64_t v, e, t, sum = 0;

				for (size_t i = 0; i < 4; i++)
					ps_sample__value(&s, i, &v, &e, &t);
				for (unsigned reg = 0; reg < 64; reg++) {
					if (ps_sample__reg(&s, false, reg, &v) == 0)
						sum += v;
					if (ps_sample__reg(&s, true, reg, &v) == 0)
						sum += v;
				}
				/* every byte of the user stack is readable */
				for (uint64_t i = 0; i < s.stack_size; i++)
					sum += ((const unsigned char *)s.stack)[i];
				sink += sum; /* keeps the reads */
			}
		} else {
			ps_record__other(h, a.sample_type, &rec);
		}
		ps_record__identifier(h, &id);
	}
	ps_ring__end(&r);
	ps_ring__close(&r);
	return 0;
}
