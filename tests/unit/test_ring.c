/*
 * test_ring.c: the ring reader (runtime/sample/perf/ring.c) and record decoder
 * (runtime/sample/perf/record.c) over synthetic memory images, no kernel. A test ring
 * is a control page plus a separately allocated data area of exactly its
 * size, so ASan or valgrind flag any read past it; records are written the
 * way the kernel lays them out (perf_event_open(2)), including one that
 * wraps the end of the data area. Checks: several records in a row, the
 * wrapped copy, every sample_type and read_format we use, truncated records
 * and corrupt sizes (never read out of bounds), data_tail, and the LOST,
 * THROTTLE, COMM, MMAP2 (with and without build id), FORK and EXIT records
 * with their sample_id_all trailer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perfscript.h"
#include "sample/perf/record.h"
#include "sample/perf/ring.h"
#include "tap.h"

#define BASE                                                                                       \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
#define TRAILER (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)
#define EN	PERF_FORMAT_TOTAL_TIME_ENABLED
#define RUN	PERF_FORMAT_TOTAL_TIME_RUNNING

/* The register masks and stack size the layouts below use: AX, SP, IP
 * (three words) for user registers, BX and IP for interrupt ones. */
#define REGS_USER_MASK ((1ull << 0) | (1ull << 7) | (1ull << 8))
#define REGS_INTR_MASK ((1ull << 1) | (1ull << 8))
#define STACK_BYTES    32

/* ps_record__sample for a counter with sample_type st and read_format rf. */
static int decode(const struct perf_event_header *h, uint64_t st, uint64_t rf, struct ps_sample *s)
{
	struct perf_event_attr a = {
	    .sample_type = st,
	    .read_format = rf,
	    .sample_regs_user = REGS_USER_MASK,
	    .sample_regs_intr = REGS_INTR_MASK,
	    .sample_stack_user = STACK_BYTES,
	    .branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX,
	};

	return ps_record__sample(h, &a, s);
}

struct img {
	struct perf_event_mmap_page meta;
	unsigned char *data;
	size_t size;
	struct ps_ring r;
};

static void img_init(struct img *m, size_t size, uint64_t start)
{
	memset(&m->meta, 0, sizeof(m->meta));
	m->data = calloc(1, size);
	m->size = size;
	m->meta.data_head = m->meta.data_tail = start;
	if (ps_ring__init_mem(&m->r, &m->meta, m->data, size))
		abort();
}

static void img_free(struct img *m)
{
	ps_ring__close(&m->r);
	free(m->data);
}

/* Append len bytes at data_head as the kernel would, wrapping. */
static void img_put(struct img *m, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		m->data[(m->meta.data_head + i) & (m->size - 1)] = b[i];
	m->meta.data_head += len;
}

/* A record under construction: header then u64 words. */
struct rec {
	uint64_t w[256];
	size_t n; /* words, header included */
};

static void rec_start(struct rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {.type = type, .misc = misc};

	memset(r, 0, sizeof(*r));
	memcpy(&r->w[0], &h, sizeof(h));
	r->n = 1;
}

static void rec_u64(struct rec *r, uint64_t v)
{
	r->w[r->n++] = v;
}

static void rec_u32x2(struct rec *r, uint32_t a, uint32_t b)
{
	memcpy((char *)&r->w[r->n], &a, 4);
	memcpy((char *)&r->w[r->n] + 4, &b, 4);
	r->n++;
}

static void rec_bytes(struct rec *r, const void *p, size_t len)
{
	memcpy(&r->w[r->n], p, len); /* the rest of the word stays 0: padding */
	r->n += (len + 7) / 8;
}

static struct perf_event_header *rec_end(struct rec *r)
{
	struct perf_event_header *h = (void *)r->w;

	h->size = (uint16_t)(r->n * 8);
	return h;
}

/* A malloc'd copy of exactly size bytes, so an overread is an ASan error. */
static struct perf_event_header *exact(const struct perf_event_header *h, size_t size)
{
	struct perf_event_header *c = malloc(size);

	memcpy(c, h, size);
	c->size = (uint16_t)size;
	return c;
}

/* A sample as the kernel lays it out for st/rf, with recognisable values. */
static struct perf_event_header *make_sample(struct rec *r, uint64_t st, uint64_t rf, uint64_t nr)
{
	rec_start(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	if (st & PERF_SAMPLE_IDENTIFIER)
		rec_u64(r, 77);
	if (st & PERF_SAMPLE_IP)
		rec_u64(r, 0x401000);
	if (st & PERF_SAMPLE_TID)
		rec_u32x2(r, 100, 101);
	if (st & PERF_SAMPLE_TIME)
		rec_u64(r, 123456789);
	if (st & PERF_SAMPLE_ADDR)
		rec_u64(r, 0xdead000);
	if (st & PERF_SAMPLE_CPU)
		rec_u32x2(r, 3, 0);
	if (st & PERF_SAMPLE_PERIOD)
		rec_u64(r, 1000);
	if (st & PERF_SAMPLE_READ) {
		if (rf & PERF_FORMAT_GROUP) {
			rec_u64(r, nr);
			if (rf & EN)
				rec_u64(r, 5000);
			if (rf & RUN)
				rec_u64(r, 4000);
			for (uint64_t i = 0; i < nr; i++) {
				rec_u64(r, 10 + i);
				if (rf & PERF_FORMAT_ID)
					rec_u64(r, 90 + i);
				if (rf & PERF_FORMAT_LOST)
					rec_u64(r, 0);
			}
		} else {
			rec_u64(r, 10);
			if (rf & EN)
				rec_u64(r, 5000);
			if (rf & RUN)
				rec_u64(r, 4000);
			if (rf & PERF_FORMAT_ID)
				rec_u64(r, 90);
			if (rf & PERF_FORMAT_LOST)
				rec_u64(r, 0);
		}
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		rec_u64(r, 3);
		rec_u64(r, PERF_CONTEXT_USER);
		rec_u64(r, 0x401000);
		rec_u64(r, 0x401100);
	}
	if (st & PERF_SAMPLE_RAW) {
		unsigned char raw[16] = {12,  0,   0,	0,   'a', 'b', 'c', 'd',
					 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l'};

		rec_bytes(r, raw, sizeof(raw));
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) { /* two branches and the hw index */
		rec_u64(r, 2);
		rec_u64(r, 7);
		for (int i = 0; i < 6; i++)
			rec_u64(r, 0xb0 + i);
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		rec_u64(r, PERF_SAMPLE_REGS_ABI_64);
		rec_u64(r, 0xa0);	/* AX */
		rec_u64(r, 0x7ffc0000); /* SP */
		rec_u64(r, 0x401000);	/* IP */
	}
	if (st & PERF_SAMPLE_STACK_USER) { /* 32 bytes copied, 24 of them valid */
		rec_u64(r, STACK_BYTES);
		for (int i = 0; i < STACK_BYTES / 8; i++)
			rec_u64(r, 0x5000 + i);
		rec_u64(r, 24);
	}
	if (st & PERF_SAMPLE_WEIGHT)
		rec_u64(r, 0xee);
	if (st & PERF_SAMPLE_DATA_SRC)
		rec_u64(r, 0xdd);
	if (st & PERF_SAMPLE_REGS_INTR) {
		rec_u64(r, PERF_SAMPLE_REGS_ABI_64);
		rec_u64(r, 0xb0b);		   /* BX */
		rec_u64(r, 0xffffffff81000000ull); /* IP */
	}
	return rec_end(r);
}

/* The registers and stack make_sample wrote, or their absence. */
static const char *check_regs(const struct ps_sample *s, uint64_t st)
{
	uint64_t v;

	if (st & PERF_SAMPLE_REGS_USER) {
		if (s->regs_user.abi != PERF_SAMPLE_REGS_ABI_64 ||
		    s->regs_user.mask != REGS_USER_MASK)
			return "user regs abi/mask";
		if (ps_sample__reg(s, false, 0, &v) || v != 0xa0 ||
		    ps_sample__reg(s, false, 7, &v) || v != 0x7ffc0000 ||
		    ps_sample__reg(s, false, 8, &v) || v != 0x401000)
			return "user regs";
		if (ps_sample__reg(s, false, 1, &v) != -ENOENT)
			return "a user register not sampled";
	} else if (s->regs_user.regs || ps_sample__reg(s, false, 8, &v) != -ENOENT) {
		return "user regs without REGS_USER";
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		uint64_t w[3];

		if (s->stack_size != 24 || !s->stack)
			return "stack size";
		memcpy(w, s->stack, sizeof(w));
		if (w[0] != 0x5000 || w[2] != 0x5002)
			return "stack bytes";
	} else if (s->stack || s->stack_size) {
		return "stack without STACK_USER";
	}
	if (st & PERF_SAMPLE_REGS_INTR) {
		if (ps_sample__reg(s, true, 1, &v) || v != 0xb0b ||
		    ps_sample__reg(s, true, 8, &v) || v != 0xffffffff81000000ull ||
		    ps_sample__reg(s, true, 0, &v) != -ENOENT)
			return "intr regs";
	} else if (s->regs_intr.regs) {
		return "intr regs without REGS_INTR";
	}
	return NULL;
}

/* Check what make_sample wrote; returns a description of the first mismatch. */
static const char *check_sample(const struct ps_sample *s, uint64_t st, uint64_t rf, uint64_t nr)
{
	uint64_t v, e, run;

	if ((st & PERF_SAMPLE_IDENTIFIER) && s->id != 77)
		return "id";
	if ((st & PERF_SAMPLE_IP) && s->ip != 0x401000)
		return "ip";
	if ((st & PERF_SAMPLE_TID) && (s->pid != 100 || s->tid != 101))
		return "pid/tid";
	if ((st & PERF_SAMPLE_TIME) && s->time != 123456789)
		return "time";
	if (!!(st & PERF_SAMPLE_ADDR) != (s->addr == 0xdead000))
		return "addr";
	if ((st & PERF_SAMPLE_CPU) && s->cpu != 3)
		return "cpu";
	if ((st & PERF_SAMPLE_PERIOD) && s->period != 1000)
		return "period";
	if (s->misc != PERF_RECORD_MISC_USER)
		return "misc";
	if (st & PERF_SAMPLE_READ) {
		uint64_t members = rf & PERF_FORMAT_GROUP ? nr : 1;

		for (uint64_t i = 0; i < members; i++) {
			if (ps_sample__value(s, i, &v, &e, &run) != (int)members)
				return "value count";
			if (v != 10 + i || e != (rf & EN ? 5000u : 0) ||
			    run != (rf & RUN ? 4000u : 0))
				return "value";
		}
		if (ps_sample__value(s, members, &v, NULL, NULL) != -ERANGE)
			return "value past the end";
	} else if (ps_sample__value(s, 0, &v, NULL, NULL) != -ERANGE) {
		return "value without READ";
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (s->nr_ips != 3 || s->ips[0] != PERF_CONTEXT_USER || s->ips[2] != 0x401100)
			return "callchain";
	} else if (s->nr_ips || s->ips) {
		return "callchain without CALLCHAIN";
	}
	if (st & PERF_SAMPLE_RAW) {
		if (s->raw_size != 12 || memcmp(s->raw, "abcdefghijkl", 12) != 0)
			return "raw";
	} else if (s->raw) {
		return "raw without RAW";
	}
	return check_regs(s, st);
}

static void test_sample_types(void)
{
	static const uint64_t extra[] = {
	    0,
	    PERF_SAMPLE_CALLCHAIN,
	    PERF_SAMPLE_ADDR,
	    PERF_SAMPLE_RAW,
	    PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_ADDR | PERF_SAMPLE_RAW,
	    /* call-graph=dwarf */
	    PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
	    PERF_SAMPLE_REGS_INTR,
	    PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |
		PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |
		PERF_SAMPLE_REGS_INTR,
	};
	unsigned bad = 0, n = 0;

	for (size_t x = 0; x < sizeof(extra) / sizeof(extra[0]); x++) {
		for (int read = 0; read < 3; read++) {
			/* each read_format bit, alone and together */
			for (uint64_t rf = 0; rf < 16 && (read || rf == 0); rf++) {
				uint64_t f = (rf & 1 ? EN : 0) | (rf & 2 ? RUN : 0) |
					     (rf & 4 ? PERF_FORMAT_ID : 0) |
					     (rf & 8 ? PERF_FORMAT_LOST : 0) |
					     (read == 2 ? PERF_FORMAT_GROUP : 0);
				uint64_t st = BASE | extra[x] | (read ? PERF_SAMPLE_READ : 0);
				struct rec r;
				struct perf_event_header *h = make_sample(&r, st, f, 3);
				struct perf_event_header *c = exact(h, h->size);
				struct ps_sample s;
				const char *why;

				n++;
				why = decode(c, st, f, &s) ? "decode failed"
							   : check_sample(&s, st, f, 3);
				if (why && bad++ < 5)
					tap_diag("sample_type %#llx read_format %#llx: %s",
						 (unsigned long long)st, (unsigned long long)f,
						 why);
				/* every shorter size is a truncated record */
				for (size_t sz = c->size - 8; sz >= 8 && !why; sz -= 8) {
					struct perf_event_header *t = exact(h, sz);

					if (decode(t, st, f, &s) != -EBADMSG)
						why = "truncated record accepted";
					free(t);
				}
				if (why && bad++ < 5)
					tap_diag("sample_type %#llx read_format %#llx: %s",
						 (unsigned long long)st, (unsigned long long)f,
						 why);
				free(c);
			}
		}
	}
	tap_ok(bad == 0,
	       "%u sample_type/read_format layouts decode, and every truncation of "
	       "them is refused",
	       n);
}

/* Counts that would point far past the record are refused before use. */
static void test_hostile_counts(void)
{
	struct rec r;
	struct perf_event_header *h, *c;
	struct ps_sample s;
	uint64_t st = BASE | PERF_SAMPLE_READ;
	uint64_t rf = PERF_FORMAT_GROUP | EN | RUN | PERF_FORMAT_ID;
	int rc;

	h = make_sample(&r, st, rf, 2);
	/* words: header, IDENTIFIER, IP, TID, TIME, CPU, PERIOD, then the group's nr */
	r.w[7] = UINT64_MAX / 3;
	c = exact(h, h->size);
	tap_ok(decode(c, st, rf, &s) == -EBADMSG, "a huge group nr is refused");
	free(c);
	h = make_sample(&r, BASE | PERF_SAMPLE_CALLCHAIN, 0, 0);
	r.w[7] = 1u << 20;
	c = exact(h, h->size);
	tap_ok(decode(c, BASE | PERF_SAMPLE_CALLCHAIN, 0, &s) == -EBADMSG,
	       "a callchain nr past the record is refused");
	free(c);
	h = make_sample(&r, BASE | PERF_SAMPLE_RAW, 0, 0);
	r.w[7] = 0xffffffff;
	c = exact(h, h->size);
	tap_ok(decode(c, BASE | PERF_SAMPLE_RAW, 0, &s) == -EBADMSG,
	       "a raw size past the record is refused");
	free(c);
	/* after REGS_INTR: the physical address is skipped, the cgroup id read;
	 * a record too short for them is refused */
	h = make_sample(&r, BASE, 0, 0);
	rec_u64(&r, 0x12345000); /* PHYS_ADDR */
	rec_u64(&r, 4242);	 /* CGROUP */
	h = rec_end(&r);
	c = exact(h, h->size);
	rc = decode(c, BASE | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP, 0, &s);
	tap_ok(rc == 0 && s.ip == 0x401000 && s.cgroup == 4242,
	       "the cgroup id after the physical address is read (%llu)",
	       (unsigned long long)s.cgroup);
	free(c);
	h = make_sample(&r, BASE, 0, 0);
	c = exact(h, h->size);
	tap_ok(decode(c, BASE | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP, 0, &s) == -EBADMSG,
	       "a record without the cgroup id it claims is refused");
	free(c);
	/* words: header, the 6 BASE words, then the user stack's size */
	h = make_sample(&r, BASE | PERF_SAMPLE_STACK_USER, 0, 0);
	r.w[7] = UINT64_MAX - 7;
	c = exact(h, h->size);
	tap_ok(decode(c, BASE | PERF_SAMPLE_STACK_USER, 0, &s) == -EBADMSG,
	       "a user stack size past the record is refused");
	free(c);
	h = make_sample(&r, BASE | PERF_SAMPLE_STACK_USER, 0, 0);
	r.w[7 + 1 + STACK_BYTES / 8] = 1u << 20; /* dyn_size larger than the copy */
	c = exact(h, h->size);
	tap_ok(decode(c, BASE | PERF_SAMPLE_STACK_USER, 0, &s) == 0 && s.stack_size == STACK_BYTES,
	       "a dyn_size above the copied size is cut to it");
	free(c);
	h = make_sample(&r, BASE | PERF_SAMPLE_BRANCH_STACK, 0, 0);
	r.w[7] = UINT64_MAX / 2;
	c = exact(h, h->size);
	tap_ok(decode(c, BASE | PERF_SAMPLE_BRANCH_STACK, 0, &s) == -EBADMSG,
	       "a branch count past the record is refused");
	free(c);
	/* a kernel thread has no user registers: the abi word alone */
	rec_start(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	for (int i = 0; i < 6; i++)
		rec_u64(&r, i + 1);
	rec_u64(&r, PERF_SAMPLE_REGS_ABI_NONE);
	rec_u64(&r, 0); /* STACK_USER size 0: nothing follows */
	h = rec_end(&r);
	c = exact(h, h->size);
	tap_ok(decode(c, BASE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, 0, &s) == 0 &&
		   s.regs_user.abi == PERF_SAMPLE_REGS_ABI_NONE && !s.regs_user.regs && !s.stack &&
		   ps_sample__reg(&s, false, 8, NULL) == -ENOENT,
	       "ABI_NONE user registers and an empty stack decode to none");
	free(c);
}

static void test_ring_batch(void)
{
	struct img m;
	struct rec r;
	const struct perf_event_header *h;
	struct ps_sample s;
	int got = 0, ok = 0;

	img_init(&m, 4096, 0);
	tap_is_u64(ps_ring__begin(&m.r), 0, "an empty ring has nothing");
	tap_ok(ps_ring__next(&m.r, &h) == 0, "next on an empty ring is 0");
	for (int i = 0; i < 5; i++) {
		struct perf_event_header *p = make_sample(&r, BASE, 0, 0);

		r.w[1] = 70 + i; /* IDENTIFIER */
		img_put(&m, p, p->size);
	}
	tap_is_u64(ps_ring__begin(&m.r), 5 * 56, "begin sees the 5 records' bytes");
	while (ps_ring__next(&m.r, &h) == 1) {
		ok += decode(h, BASE, 0, &s) == 0 && s.id == (uint64_t)(70 + got);
		got++;
		if (got == 3)
			break;
	}
	ps_ring__end(&m.r);
	tap_is_u64(m.meta.data_tail, 3 * 56, "data_tail covers exactly what was consumed");
	ps_ring__begin(&m.r);
	while (ps_ring__next(&m.r, &h) == 1) {
		ok += decode(h, BASE, 0, &s) == 0 && s.id == (uint64_t)(70 + got);
		got++;
	}
	ps_ring__end(&m.r);
	tap_ok(got == 5 && ok == 5, "5 records in order across two batches (%d, %d ok)", got, ok);
	tap_is_u64(m.meta.data_tail, m.meta.data_head, "data_tail reaches data_head");
	img_free(&m);
}

static void test_wrap(void)
{
	struct img m;
	struct rec r;
	const struct perf_event_header *h;
	struct ps_sample s;
	uint64_t st = BASE | PERF_SAMPLE_CALLCHAIN;
	struct perf_event_header *p = make_sample(&r, st, 0, 0);
	int rc;

	/* 256-byte ring, start 40 bytes before its end: the record (88 bytes) wraps */
	img_init(&m, 256, 1024 + 216);
	img_put(&m, p, p->size);
	ps_ring__begin(&m.r);
	rc = ps_ring__next(&m.r, &h);
	tap_ok(rc == 1 && (const unsigned char *)h == m.r.scratch,
	       "a record that wraps is handed out from the scratch buffer");
	tap_ok(rc == 1 && decode(h, st, 0, &s) == 0 && !check_sample(&s, st, 0, 0),
	       "the wrapped record decodes whole");
	tap_ok(ps_ring__next(&m.r, &h) == 0, "then the ring is empty");
	ps_ring__end(&m.r);
	tap_is_u64(m.meta.data_tail, 1024 + 216 + p->size, "tail moved past the wrapped record");
	/* a header split across the end (only an unaligned start can do that) */
	img_free(&m);
	img_init(&m, 256, 252);
	p = make_sample(&r, BASE, 0, 0);
	img_put(&m, p, p->size);
	ps_ring__begin(&m.r);
	tap_ok(ps_ring__next(&m.r, &h) == 1 && decode(h, BASE, 0, &s) == 0 && s.ip == 0x401000,
	       "a header split by the end of the ring is reassembled");
	img_free(&m);
}

/* A corrupt size: counted, the batch jumps to head, nothing out of bounds. */
static void corrupt_case(const char *what, uint16_t size, uint64_t extra_head)
{
	struct img m;
	struct rec r;
	const struct perf_event_header *h;
	struct perf_event_header *p = make_sample(&r, BASE, 0, 0);
	int rc;

	img_init(&m, 256, 0);
	p->size = size;
	img_put(&m, p, 56);
	m.meta.data_head += extra_head;
	ps_ring__begin(&m.r);
	rc = ps_ring__next(&m.r, &h);
	ps_ring__end(&m.r);
	tap_ok(rc == -EBADMSG && m.r.malformed == 1 && m.meta.data_tail == m.meta.data_head,
	       "size %s: -EBADMSG, counted, tail set to head", what);
	img_free(&m);
}

static void test_corrupt(void)
{
	struct img m;
	const struct perf_event_header *h;

	corrupt_case("0", 0, 0);
	corrupt_case("4", 4, 0);
	corrupt_case("12 (not a multiple of 8)", 12, 0);
	corrupt_case("> ring", 512, 0);
	corrupt_case("past head", 64, 0);
	/* head - tail larger than the ring: garbage, not a full ring */
	img_init(&m, 256, 0);
	m.meta.data_head = 4096;
	ps_ring__begin(&m.r);
	tap_ok(ps_ring__next(&m.r, &h) == -EBADMSG && m.r.tail == 4096,
	       "head more than a ring ahead is corruption");
	img_free(&m);
	/* fewer than 8 bytes available */
	img_init(&m, 256, 0);
	m.meta.data_head = 4;
	ps_ring__begin(&m.r);
	tap_ok(ps_ring__next(&m.r, &h) == -EBADMSG, "a head 4 bytes ahead is corruption");
	img_free(&m);
	tap_ok(ps_ring__init_mem(&m.r, &m.meta, &m, 100) == -EINVAL,
	       "a data area that is not a power of two is refused");
}

/* Non-sample records, each with the TID|TIME|CPU|IDENTIFIER trailer. */
static struct perf_event_header *with_trailer(struct rec *r)
{
	rec_u32x2(r, 200, 201);
	rec_u64(r, 999);
	rec_u32x2(r, 1, 0);
	rec_u64(r, 55);
	return rec_end(r);
}

static void test_other_records(void)
{
	struct rec r;
	struct ps_record o;
	struct perf_event_header *h, *c;
	const char fname[] = "/usr/bin/workload";
	const uint8_t bid[20] = {0xab, 0xcd, 1,	 2,  3,	 4,  5,	 6,  7,	 8,
				 9,    10,   11, 12, 13, 14, 15, 16, 17, 18};
	uint64_t id;
	int rc;

	rec_start(&r, PERF_RECORD_LOST, 0);
	rec_u64(&r, 42);
	rec_u64(&r, 17);
	h = with_trailer(&r);
	rc = ps_record__other(h, TRAILER, &o);
	tap_ok(rc == 0 && o.id == 42 && o.lost == 17 && o.pid == 200 && o.time == 999 && o.cpu == 1,
	       "LOST: id, lost and trailer");
	tap_ok(ps_record__identifier(h, &id) && id == 55,
	       "the IDENTIFIER is the trailer's last u64");

	rec_start(&r, PERF_RECORD_LOST_SAMPLES, 0);
	rec_u64(&r, 9);
	h = with_trailer(&r);
	tap_ok(ps_record__other(h, TRAILER, &o) == 0 && o.lost == 9 && o.id == 55,
	       "LOST_SAMPLES: lost, id from the trailer");

	for (int t = 0; t < 2; t++) {
		rec_start(&r, t ? PERF_RECORD_UNTHROTTLE : PERF_RECORD_THROTTLE, 0);
		rec_u64(&r, 777);
		rec_u64(&r, 66);
		rec_u64(&r, 66);
		h = with_trailer(&r);
		rc = ps_record__other(h, TRAILER, &o);
		tap_ok(rc == 0 && o.time == 777 && o.id == 66 && o.cpu == 1, "%s: time, id",
		       t ? "UNTHROTTLE" : "THROTTLE");
	}

	rec_start(&r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	rec_u32x2(&r, 300, 301);
	rec_bytes(&r, "workload", 9);
	h = with_trailer(&r);
	rc = ps_record__other(h, TRAILER, &o);
	tap_ok(rc == 0 && o.pid == 300 && o.tid == 301 && !strcmp(o.comm, "workload") &&
		   o.time == 999 && (o.misc & PERF_RECORD_MISC_COMM_EXEC),
	       "COMM: pid, tid, name, exec flag, trailer");
	memset((char *)h + 16, 'x', 16); /* no NUL before the trailer */
	c = exact(h, h->size);
	tap_ok(ps_record__other(c, TRAILER, &o) == -EBADMSG, "COMM without a NUL is refused");
	free(c);

	for (int b = 0; b < 2; b++) {
		rec_start(&r, PERF_RECORD_MMAP2, b ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0);
		rec_u32x2(&r, 400, 401);
		rec_u64(&r, 0x400000);
		rec_u64(&r, 0x2000);
		rec_u64(&r, 0x1000);
		if (b) {
			uint8_t u[24] = {20};

			memcpy(u + 4, bid, 20);
			rec_bytes(&r, u, 24);
		} else {
			rec_u32x2(&r, 8, 1);
			rec_u64(&r, 12345);
			rec_u64(&r, 1);
		}
		rec_u32x2(&r, 5, 2);
		rec_bytes(&r, fname, sizeof(fname));
		h = with_trailer(&r);
		rc = ps_record__other(h, TRAILER, &o);
		tap_ok(rc == 0 && o.pid == 400 && o.addr == 0x400000 && o.len == 0x2000 &&
			   o.pgoff == 0x1000 && o.prot == 5 && o.flags == 2 &&
			   !strcmp(o.filename, fname) && o.id == 55 &&
			   (b ? o.build_id_size == 20 && !memcmp(o.build_id, bid, 20) && !o.ino
			      : o.build_id == NULL && o.maj == 8 && o.min == 1 && o.ino == 12345),
		       "MMAP2 %s build id: fields (%s), filename, trailer", b ? "with" : "without",
		       b ? "the build id" : "device and inode");
		for (size_t sz = h->size - 8; sz >= 8; sz -= 8) {
			c = exact(h, sz);
			rc = ps_record__other(c, TRAILER, &o);
			free(c);
			if (rc != -EBADMSG)
				break;
		}
		tap_ok(rc == -EBADMSG, "every truncation of MMAP2 is refused");
	}

	for (int e = 0; e < 2; e++) {
		rec_start(&r, e ? PERF_RECORD_EXIT : PERF_RECORD_FORK, 0);
		rec_u32x2(&r, 500, 499);
		rec_u32x2(&r, 501, 498);
		rec_u64(&r, 31337);
		h = with_trailer(&r);
		rc = ps_record__other(h, TRAILER, &o);
		tap_ok(rc == 0 && o.pid == 500 && o.ppid == 499 && o.tid == 501 && o.ptid == 498 &&
			   o.time == 31337 && o.cpu == 1 && o.id == 55,
		       "%s: pid, ppid, tid, ptid, time", e ? "EXIT" : "FORK");
		c = exact(h, 32);
		tap_ok(ps_record__other(c, TRAILER, &o) == -EBADMSG, "a truncated %s is refused",
		       e ? "EXIT" : "FORK");
		free(c);
	}

	rec_start(&r, PERF_RECORD_KSYMBOL, 0);
	h = with_trailer(&r);
	tap_ok(ps_record__other(h, TRAILER, &o) == -ENOENT, "other record types are -ENOENT");
	rec_start(&r, PERF_RECORD_SAMPLE, 0);
	h = rec_end(&r);
	tap_ok(!ps_record__identifier(h, &id), "a header-only record has no identifier");
}

int main(void)
{
	test_ring_batch();
	test_wrap();
	test_corrupt();
	test_sample_types();
	test_hostile_counts();
	test_other_records();
	return tap_done();
}
