/*
 * record.c: decoding the records of a perf ring. A sample's fields follow
 * the order of the kernel's perf_output_sample() for the bits its event set
 * (IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD, READ,
 * CALLCHAIN, RAW, BRANCH_STACK, REGS_USER, STACK_USER, WEIGHT, DATA_SRC,
 * TRANSACTION, REGS_INTR); decoding stops after REGS_INTR, because nothing
 * we hand out lies beyond it, so the bits that come later (physical
 * addresses, cgroups, page sizes, AUX) are skipped safely without knowing
 * their sizes. The sizes of the variable parts come from the counter's attr
 * (its register masks and branch sample type). Other records are decoded
 * from their fixed layout (perf_event_open(2)) plus the sample_id_all
 * trailer at their end. Every length is checked against the record's size
 * first: a truncated record is -EBADMSG, never an overread.
 */
#include <errno.h>
#include <string.h>

#include "base/bits.h"
#include "base/perf.h"
#include "sample/perf/record.h"

/* Bounds-checked reader over a record's body, in u64 words. */
struct cur {
	const unsigned char *p, *end;
};

static inline size_t left(const struct cur *c)
{
	return (size_t)(c->end - c->p) / 8;
}

static inline uint64_t take(struct cur *c)
{
	uint64_t v;

	memcpy(&v, c->p, sizeof(v));
	c->p += 8;
	return v;
}

/* Two u32 packed in one u64 word, first in memory order. */
static inline void take_pair(struct cur *c, uint32_t *a, uint32_t *b)
{
	memcpy(a, c->p, 4);
	memcpy(b, c->p + 4, 4);
	c->p += 8;
}

/* Words a PERF_SAMPLE_READ block takes, or 0 when it cannot fit in `room`. */
static size_t read_words(uint64_t rf, const struct cur *c)
{
	struct ps_read_layout lay;
	size_t room = left(c);
	uint64_t nr;

	ps_read_layout__init(&lay, rf);
	if (!lay.group)
		return lay.per <= room ? lay.per : 0;
	if (room < 1)
		return 0;
	memcpy(&nr, c->p, sizeof(nr));
	/* nr is checked before it is multiplied, so a huge nr cannot wrap */
	if (nr > room || ps_read_layout__words(&lay, (size_t)nr) > room)
		return 0;
	return ps_read_layout__words(&lay, (size_t)nr);
}

/* PERF_SAMPLE_REGS_USER or _REGS_INTR: the abi word, then one word per
 * register of mask unless the abi is NONE. */
static int take_regs(struct cur *c, uint64_t mask, struct ps_regs *r)
{
	size_t n = (size_t)ps_bits__count(mask);

	if (left(c) < 1)
		return -EBADMSG;
	r->abi = take(c);
	r->mask = mask;
	if (r->abi == PERF_SAMPLE_REGS_ABI_NONE)
		return 0;
	if (left(c) < n)
		return -EBADMSG;
	r->regs = (const uint64_t *)(const void *)c->p;
	c->p += n * 8;
	return 0;
}

/* PERF_SAMPLE_BRANCH_STACK, skipped: nr, the hardware index when asked
 * for, three words per branch, then one counters word per branch when
 * asked for (PERF_SAMPLE_BRANCH_COUNTERS, Linux 6.8). */
static int skip_branches(struct cur *c, uint64_t branch_type)
{
	uint64_t nr, per = 3 + !!(branch_type & PS_BRANCH_COUNTERS);

	if (left(c) < 1)
		return -EBADMSG;
	nr = take(c);
	if ((branch_type & PERF_SAMPLE_BRANCH_HW_INDEX) && left(c) >= 1)
		c->p += 8;
	else if (branch_type & PERF_SAMPLE_BRANCH_HW_INDEX)
		return -EBADMSG;
	if (nr > left(c) / per)
		return -EBADMSG;
	c->p += nr * per * 8;
	return 0;
}

/* PERF_SAMPLE_STACK_USER: size, then when size is not 0 the size bytes
 * copied and dyn_size, how many of them the kernel could read. */
static int take_stack(struct cur *c, struct ps_sample *s)
{
	uint64_t size, dyn;

	if (left(c) < 1)
		return -EBADMSG;
	size = take(c);
	if (size == 0)
		return 0;
	if ((size & 7) || size / 8 >= left(c))
		return -EBADMSG;
	memcpy(&dyn, c->p + size, sizeof(dyn));
	s->stack = c->p;
	s->stack_size = dyn < size ? dyn : size;
	c->p += size + 8;
	return 0;
}

/* What follows RAW: branches, user registers and stack, three one-word
 * fields, interrupt registers, the physical address, the cgroup id. */
static int sample_tail(struct cur *c, const struct perf_event_attr *a, struct ps_sample *s)
{
	const uint64_t one_word = PERF_SAMPLE_WEIGHT | PS_SAMPLE_WEIGHT_STRUCT;
	uint64_t st = a->sample_type;
	size_t words;

	if ((st & PERF_SAMPLE_BRANCH_STACK) && skip_branches(c, a->branch_sample_type))
		return -EBADMSG;
	if ((st & PERF_SAMPLE_REGS_USER) && take_regs(c, a->sample_regs_user, &s->regs_user))
		return -EBADMSG;
	if ((st & PERF_SAMPLE_STACK_USER) && take_stack(c, s))
		return -EBADMSG;
	if (!(st & (PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_CGROUP)))
		return 0;
	/* WEIGHT and WEIGHT_STRUCT share one word */
	words =
	    !!(st & one_word) + !!(st & PERF_SAMPLE_DATA_SRC) + !!(st & PERF_SAMPLE_TRANSACTION);
	if (left(c) < words)
		return -EBADMSG;
	c->p += words * 8;
	if ((st & PERF_SAMPLE_REGS_INTR) && take_regs(c, a->sample_regs_intr, &s->regs_intr))
		return -EBADMSG;
	if (!(st & PERF_SAMPLE_CGROUP))
		return 0;
	words = !!(st & PERF_SAMPLE_PHYS_ADDR);
	if (left(c) < words + 1)
		return -EBADMSG;
	c->p += words * 8;
	s->cgroup = take(c);
	return 0;
}

int ps_record__sample(const struct perf_event_header *h, const struct perf_event_attr *a,
		      struct ps_sample *s)
{
	const uint64_t st = a->sample_type, rf = a->read_format;
	/* what comes after RAW, when asked for */
	const uint64_t tail = PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |
			      PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_CGROUP;
	struct cur c = {(const unsigned char *)(h + 1), (const unsigned char *)h + h->size};
	/* the fixed-size u64 fields from IDENTIFIER to PERIOD, checked at once */
	const uint64_t fixed = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
	uint32_t res;

	memset(s, 0, sizeof(*s));
	s->sample_type = st;
	s->read_format = rf;
	s->misc = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	if (h->size < sizeof(*h) || left(&c) < (size_t)ps_bits__count(st & fixed))
		return -EBADMSG;
	if (st & PERF_SAMPLE_IDENTIFIER)
		s->id = take(&c);
	if (st & PERF_SAMPLE_IP)
		s->ip = take(&c);
	if (st & PERF_SAMPLE_TID)
		take_pair(&c, &s->pid, &s->tid);
	if (st & PERF_SAMPLE_TIME)
		s->time = take(&c);
	if (st & PERF_SAMPLE_ADDR)
		s->addr = take(&c);
	if (st & PERF_SAMPLE_ID)
		s->id = take(&c); /* same value as IDENTIFIER when both are set */
	if (st & PERF_SAMPLE_STREAM_ID)
		(void)take(&c);
	if (st & PERF_SAMPLE_CPU)
		take_pair(&c, &s->cpu, &res);
	if (st & PERF_SAMPLE_PERIOD)
		s->period = take(&c);
	if (st & PERF_SAMPLE_READ) {
		size_t w = read_words(rf, &c);

		if (!w)
			return -EBADMSG;
		s->read = (const uint64_t *)(const void *)c.p;
		s->read_words = w;
		c.p += w * 8;
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr;

		if (left(&c) < 1)
			return -EBADMSG;
		nr = take(&c);
		if (nr > left(&c))
			return -EBADMSG;
		s->nr_ips = nr;
		s->ips = (const uint64_t *)(const void *)c.p;
		c.p += nr * 8;
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t size;

		if (left(&c) < 1)
			return -EBADMSG;
		memcpy(&size, c.p, sizeof(size));
		/* u32 size + data, padded by the kernel to a whole number of u64 */
		if ((uint64_t)size + 4 > (uint64_t)(c.end - c.p))
			return -EBADMSG;
		s->raw_size = size;
		s->raw = c.p + 4;
		if (!(st & tail))
			return 0;
		/* the kernel pads size so that the block ends on a word */
		if ((((uint64_t)size + 4 + 7) & ~(uint64_t)7) > (uint64_t)(c.end - c.p))
			return -EBADMSG;
		c.p += ((uint64_t)size + 4 + 7) & ~(uint64_t)7;
	}
	return st & tail ? sample_tail(&c, a, s) : 0;
}

int ps_sample__value(const struct ps_sample *s, size_t i, uint64_t *value, uint64_t *enabled,
		     uint64_t *running)
{
	struct ps_read_layout lay;
	uint64_t nr = 1;
	size_t at;

	if (!s || !(s->sample_type & PERF_SAMPLE_READ) || !s->read || s->read_words == 0)
		return -ERANGE;
	ps_read_layout__init(&lay, s->read_format);
	if (lay.group)
		nr = s->read[0];
	if (i >= nr || (lay.group && s->read_words < lay.head))
		return -ERANGE;
	at = ps_read_layout__value(&lay, i);
	if (at >= s->read_words || (lay.group && at + lay.per > s->read_words))
		return -ERANGE;
	if (value)
		*value = s->read[at];
	if (enabled)
		*enabled = lay.enabled >= 0 && (size_t)lay.enabled < s->read_words
			       ? s->read[lay.enabled]
			       : 0;
	if (running)
		*running = lay.running >= 0 && (size_t)lay.running < s->read_words
			       ? s->read[lay.running]
			       : 0;
	return nr > (uint64_t)__INT_MAX__ ? -ERANGE : (int)nr;
}

/* Decode the sample_id_all trailer at the end of c, then shrink c to the body. */
static int trailer(struct cur *c, uint64_t st, struct ps_record *r)
{
	size_t n = (size_t)ps_bits__count(st & PS_TRAILER_BITS);
	struct cur t;
	uint32_t res;

	if (left(c) < n)
		return -EBADMSG;
	t.p = c->end - n * 8;
	t.end = c->end;
	c->end = t.p;
	if (st & PERF_SAMPLE_TID)
		take_pair(&t, &r->pid, &r->tid);
	if (st & PERF_SAMPLE_TIME)
		r->time = take(&t);
	if (st & PERF_SAMPLE_ID)
		r->id = take(&t);
	if (st & PERF_SAMPLE_STREAM_ID)
		(void)take(&t);
	if (st & PERF_SAMPLE_CPU)
		take_pair(&t, &r->cpu, &res);
	if (st & PERF_SAMPLE_IDENTIFIER)
		r->id = take(&t);
	return 0;
}

/* A NUL-terminated string starting at c->p, wholly inside c. */
static const char *string(const struct cur *c)
{
	const char *s = (const char *)c->p;

	return c->p < c->end && memchr(s, '\0', (size_t)(c->end - c->p)) ? s : NULL;
}

/* PERF_RECORD_MMAP2's body: pid/tid, addr, len, pgoff, 3 words of the
 * file's device and inode or of its build id, prot/flags, the filename. */
static int mmap2(struct cur *c, uint16_t misc, struct ps_record *r)
{
	uint32_t u;

	if (left(c) < 8)
		return -EBADMSG;
	take_pair(c, &r->pid, &r->tid);
	r->addr = take(c);
	r->len = take(c);
	r->pgoff = take(c);
	if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		r->build_id_size = c->p[0];
		if (r->build_id_size > 20)
			return -EBADMSG;
		r->build_id = c->p + 4; /* after the size byte and 3 reserved bytes */
	} else {
		memcpy(&r->maj, c->p, 4);
		memcpy(&r->min, c->p + 4, 4);
		memcpy(&r->ino, c->p + 8, 8);
	}
	c->p += 24;
	take_pair(c, &r->prot, &u);
	r->flags = u;
	r->filename = string(c);
	return r->filename ? 0 : -EBADMSG;
}

int ps_record__other(const struct perf_event_header *h, uint64_t st, struct ps_record *r)
{
	struct cur c = {(const unsigned char *)(h + 1), (const unsigned char *)h + h->size};

	memset(r, 0, sizeof(*r));
	r->type = h->type;
	r->misc = h->misc;
	if (h->size < sizeof(*h) || (h->size & 7))
		return -EBADMSG;
	switch (h->type) {
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_COMM:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		break;
	default:
		return -ENOENT;
	}
	if (trailer(&c, st, r))
		return -EBADMSG;
	switch (h->type) {
	case PERF_RECORD_LOST:
		if (left(&c) < 2)
			return -EBADMSG;
		/* The kernel writes a LOST record in front of the next record that fits,
		 * with that writer's own id (not the primary id of a clone, and not
		 * necessarily the fd that lost): the body's id wins over the trailer's. */
		r->id = take(&c);
		r->lost = take(&c);
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		if (left(&c) < 1)
			return -EBADMSG;
		r->lost = take(&c);
		return 0;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		if (left(&c) < 3)
			return -EBADMSG;
		r->time = take(&c);
		r->id = take(&c);
		return 0;
	case PERF_RECORD_COMM:
		if (left(&c) < 1)
			return -EBADMSG;
		take_pair(&c, &r->pid, &r->tid);
		r->comm = string(&c);
		return r->comm ? 0 : -EBADMSG;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (left(&c) < 3)
			return -EBADMSG;
		take_pair(&c, &r->pid, &r->ppid);
		take_pair(&c, &r->tid, &r->ptid);
		r->time = take(&c);
		return 0;
	default:
		return mmap2(&c, h->misc, r);
	}
}
