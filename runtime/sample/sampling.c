/*
 * sampling.c: the session side of overflow sampling. A session maps one ring
 * per CPU, lazily, on a carrier: a software dummy event on the target that
 * counts nothing but reports COMM, MMAP2, FORK and EXIT for the symbolizer
 * and owns the ring, so freeing any sampling counter leaves the ring and the
 * other counters' output intact. Every sampling fd is redirected into its
 * CPU's ring with PERF_EVENT_IOC_SET_OUTPUT and carries
 * PERF_SAMPLE_IDENTIFIER, so each record names the fd it came from; a sorted
 * id -> slot array (with a one-entry cache, since samples come in runs from
 * one fd) turns that into a counter and its sample_type. Draining reads a
 * ring in place, decodes, counts per counter and calls the session's ops:
 * no allocation and no syscall per record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/internal.h"
#include "sample/perf/record.h"

#define PS_RING_PAGES_DEFAULT 256u	 /* 1 MiB of 4 KiB pages, see docs/events.md */
#define PS_RING_PAGES_MAX     (1u << 20) /* 4 GiB: beyond that is a typo, not a ring */
#define PS_CARRIER_SAMPLE_TYPE                                                                     \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

static size_t ring_pages(const struct ps_session *s)
{
	return s->smp.ring_pages ? s->smp.ring_pages : PS_RING_PAGES_DEFAULT;
}

/* Wake the poller when a quarter of the ring is full, not on every record:
 * at 100k samples/s per-record wakeups would cost more than the samples. A
 * quarter leaves three quarters of headroom for the time the loop takes to
 * get there; the loop's periodic drain bounds the latency of slow streams. */
static uint32_t wakeup_bytes(const struct ps_session *s)
{
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t bytes = ring_pages(s) * (uint64_t)(psz > 0 ? psz : 4096) / 4;

	return bytes > UINT32_MAX ? UINT32_MAX : bytes ? (uint32_t)bytes : 1;
}

void ps_sampling__prepare_attr(const struct ps_session *s, struct perf_event_attr *a)
{
	/* Kernel behaviour (perf_swevent_event): a software event or tracepoint
	 * with PERF_SAMPLE_PERIOD and a fixed period samples on *every* event and
	 * reports the period as 1, so period=1000 would give 1000 times the
	 * samples. With a fixed period the field is a constant anyway: drop it and
	 * fill ps_sample.period from sample_period (deliver_sample). */
	if (!a->freq)
		a->sample_type &= ~(uint64_t)PERF_SAMPLE_PERIOD;
	a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	/* Exact lost counts per fd (Linux 6.0+): LOST records are not exact, the
	 * kernel reports a loss only in front of the next record that fits. */
	a->read_format |= PERF_FORMAT_LOST;
	a->sample_id_all = 1;
	a->watermark = 1;
	a->wakeup_watermark = wakeup_bytes(s);
}

static int perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int id_find(const struct ps_sampling *m, uint64_t id, size_t *at)
{
	size_t lo = 0, hi = m->nids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < m->nids && m->ids[lo].id == id;
}

static int id_add(struct ps_sampling *m, uint64_t id, uint32_t slot)
{
	size_t at;

	if (id_find(m, id, &at)) {
		m->ids[at].slot = slot;
		return 0;
	}
	if (m->nids == m->idcap) {
		size_t cap = m->idcap ? m->idcap * 2 : 64;
		struct ps_id_slot *v = realloc(m->ids, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->ids = v;
		m->idcap = cap;
	}
	memmove(&m->ids[at + 1], &m->ids[at], (m->nids - at) * sizeof(*m->ids));
	m->ids[at].id = id;
	m->ids[at].slot = slot;
	m->nids++;
	return 0;
}

static void id_del(struct ps_sampling *m, uint64_t id)
{
	size_t at;

	if (!id_find(m, id, &at))
		return;
	memmove(&m->ids[at], &m->ids[at + 1], (m->nids - at - 1) * sizeof(*m->ids));
	m->nids--;
	if (m->last.id == id)
		m->last.id = 0; /* the kernel's ids start at 1: 0 never matches */
}

/* Slot of id; PS_NO_SLOT for a carrier, PS_NO_SLOT - 1 for no one we know. */
static inline uint32_t id_slot(struct ps_sampling *m, uint64_t id)
{
	size_t at;

	if (id == m->last.id)
		return m->last.slot;
	if (!id_find(m, id, &at))
		return PS_NO_SLOT - 1;
	m->last = m->ids[at];
	return m->last.slot;
}

int ps_sampling__map_ids(struct ps_session *s, uint32_t slot)
{
	struct ps_counter *c = &s->slots[slot];

	for (int k = 0; k < c->nfds; k++) {
		int err = id_add(&s->smp, c->ids[k], slot);

		if (err) {
			for (int j = 0; j < k; j++)
				id_del(&s->smp, c->ids[j]);
			return err;
		}
	}
	c->ids_mapped = true;
	return 0;
}

void ps_sampling__unmap_ids(struct ps_session *s, uint32_t slot)
{
	struct ps_counter *c = &s->slots[slot];

	for (int k = 0; k < c->nfds; k++)
		id_del(&s->smp, c->ids[k]);
	c->ids_mapped = false;
}

/* Size the per-CPU arrays once, to the online CPUs, so they never move. */
static int init_rings(struct ps_session *s)
{
	struct ps_sampling *m = &s->smp;
	int *cpus = NULL, n = 0, err;

	if (m->rings)
		return 0;
	err = ps_cpus__parse(NULL, &cpus, &n);
	if (err)
		return err;
	m->ncpu_slots = n ? cpus[n - 1] + 1 : 1;
	m->cap = n ? n : 1;
	free(cpus);
	m->rings = calloc(m->cap, sizeof(*m->rings));
	m->ring_fds = calloc(m->cap, sizeof(*m->ring_fds));
	m->ring_of_cpu = malloc(m->ncpu_slots * sizeof(*m->ring_of_cpu));
	if (!m->rings || !m->ring_fds || !m->ring_of_cpu) {
		free(m->rings);
		free(m->ring_fds);
		free(m->ring_of_cpu);
		m->rings = NULL;
		m->ring_fds = m->ring_of_cpu = NULL;
		return -ENOMEM;
	}
	for (int i = 0; i < m->ncpu_slots; i++)
		m->ring_of_cpu[i] = -1;
	return 0;
}

/* Open the carrier of cpu and map its ring; 0 or -errno with msg filled. */
static int add_ring(struct ps_session *s, int cpu, char *msg, size_t msglen)
{
	struct ps_sampling *m = &s->smp;
	struct perf_event_attr a = {
	    .size = sizeof(a),
	    .type = PERF_TYPE_SOFTWARE,
	    .config = PERF_COUNT_SW_DUMMY,
	    .sample_type = PS_CARRIER_SAMPLE_TYPE,
	    .read_format = PERF_FORMAT_ID,
	};
	struct ps_ring *r = &m->rings[m->nrings];
	pid_t pid = s->kind == PS_TARGET_COMMAND ? s->pid
		    : s->kind == PS_TARGET_PID	 ? s->pid
		    : s->kind == PS_TARGET_CPUS	 ? -1
						 : 0;
	size_t pages = ring_pages(s);
	uint64_t id = 0;
	int fd, err;

	if (cpu < 0 || cpu >= m->ncpu_slots || m->nrings == m->cap) {
		if (msg && msglen)
			snprintf(msg, msglen, "cannot sample on CPU %d: it is not online", cpu);
		return -EINVAL;
	}
	a.comm = a.mmap = a.mmap2 = a.task = a.comm_exec = 1;
	a.sample_id_all = 1;
	a.inherit = s->kind == PS_TARGET_COMMAND || s->kind == PS_TARGET_PID;
	/* a held command: track it from its exec, like its counters */
	a.disabled = a.enable_on_exec = s->kind == PS_TARGET_COMMAND && s->held;
	a.watermark = 1;
	a.wakeup_watermark = wakeup_bytes(s);
	fd = perf_event_open(&a, pid, cpu);
	if (fd < 0) {
		struct ps_open_failure f = {.name = "dummy (sample ring carrier)",
					    .attr = &a,
					    .err = errno,
					    .kind = s->kind,
					    .pid = pid,
					    .cpu = cpu};

		err = -errno;
		if (msg && msglen)
			ps_explain_open_error(&f, msg, msglen);
		return err;
	}
	/* An unprivileged user may lock only perf_event_mlock_kb per CPU: a
	 * smaller ring that maps beats none (the stats then show the loss). */
	while ((err = ps_ring__map(r, fd, cpu, pages)) == -EPERM && pages > 1)
		pages /= 2;
	if (!err && ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		err = -errno;
	if (!err)
		err = id_add(m, id, PS_NO_SLOT);
	if (err) {
		if (msg && msglen)
			snprintf(msg, msglen, "cannot map a %zu-page sample ring on CPU %d: %s%s",
				 pages, cpu, ps_strerror(err),
				 err == -EPERM ? " (raise kernel.perf_event_mlock_kb or ulimit -l)"
					       : "");
		ps_ring__close(r);
		close(fd);
		return err;
	}
	m->ring_fds[m->nrings] = fd;
	m->ring_of_cpu[cpu] = m->nrings++;
	return 0;
}

int ps_sampling__ensure_rings(struct ps_session *s, const struct ps_position *pos, int npos,
			      char *msg, size_t msglen)
{
	int err = init_rings(s);

	for (int p = 0; p < npos && !err; p++) {
		int cpu = pos[p].cpu;

		if (cpu >= 0 && cpu < s->smp.ncpu_slots && s->smp.ring_of_cpu[cpu] >= 0)
			continue;
		err = add_ring(s, cpu, msg, msglen);
	}
	return err;
}

int ps_sampling__set_output(struct ps_session *s, int fd, int cpu)
{
	const struct ps_sampling *m = &s->smp;

	if (cpu < 0 || cpu >= m->ncpu_slots || m->ring_of_cpu[cpu] < 0)
		return -EINVAL;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, m->ring_fds[m->ring_of_cpu[cpu]]) < 0)
		return -errno;
	return 0;
}

void ps_sampling__free(struct ps_session *s)
{
	struct ps_sampling *m = &s->smp;

	for (int i = 0; i < m->nrings; i++) {
		ps_ring__close(&m->rings[i]);
		close(m->ring_fds[i]);
	}
	free(m->rings);
	free(m->ring_fds);
	free(m->ring_of_cpu);
	free(m->ids);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------------
 * The public side: ops, ring size, draining and stats.
 */

int ps_session__set_sample_ops(struct ps_session *s, const struct ps_sample_ops *ops)
{
	if (!s)
		return -EINVAL;
	memset(&s->smp.ops, 0, sizeof(s->smp.ops));
	if (!ops)
		return 0;
	if (ops->sz < offsetof(struct ps_sample_ops, ctx) + sizeof(ops->ctx))
		return -EINVAL;
	memcpy(&s->smp.ops, ops, ops->sz < sizeof(*ops) ? ops->sz : sizeof(*ops));
	s->smp.ops.sz = sizeof(*ops);
	return 0;
}

int ps_session__set_ring_pages(struct ps_session *s, size_t pages)
{
	if (!s || pages == 0 || (pages & (pages - 1)) || pages > PS_RING_PAGES_MAX)
		return -EINVAL;
	s->smp.ring_pages = pages;
	return 0;
}

bool ps_session__is_sampling(const struct ps_session *s, ps_handle h)
{
	const struct ps_counter *c = ps_session__slot(s, h);

	return c && c->sampling;
}

int ps_session__ring_fds(const struct ps_session *s, const int **fds)
{
	if (!s)
		return -EINVAL;
	if (fds)
		*fds = s->smp.ring_fds;
	return s->smp.nrings;
}

/* Samples the kernel could not write for c, from PERF_FORMAT_LOST: exact,
 * where LOST records miss a loss the writer never got to report (the ring
 * still full when the target exited) or charge it to the next writer. */
static uint64_t kernel_lost(const struct ps_counter *c)
{
	uint64_t rf = c->attr.read_format, total = 0, small[5], *buf = small;
	size_t words = 5;

	if (!(rf & PERF_FORMAT_LOST) || !c->open)
		return 0;
	if (c->group_fmt) {
		words = 3 + (size_t)c->nmembers * 3;
		buf = malloc(words * sizeof(*buf));
		if (!buf)
			return 0;
	}
	for (int k = 0; k < c->nfds; k++) {
		ssize_t n = read(c->fds[k], buf, words * sizeof(*buf));

		if (n < 0)
			continue;
		if (!c->group_fmt) { /* value, enabled, running, id, lost */
			if (n >= 5 * (ssize_t)sizeof(*buf))
				total += buf[4];
			continue;
		}
		/* nr, enabled, running, then { value, id, lost } per member */
		for (uint64_t j = 0; j < buf[0] && (3 + (j + 1) * 3) * sizeof(*buf) <= (size_t)n;
		     j++)
			if (buf[3 + j * 3 + 1] == c->ids[k])
				total += buf[3 + j * 3 + 2];
	}
	if (buf != small)
		free(buf);
	return total;
}

int ps_session__sample_stats(const struct ps_session *s, ps_handle h, struct ps_sample_stats *st)
{
	const struct ps_counter *c;
	uint64_t klost, blost;

	if (!s || !st)
		return -EINVAL;
	if (h == 0) {
		uint64_t sum = 0;

		*st = s->smp.total;
		/* the records' total may miss losses never reported; the counters'
		 * own PERF_FORMAT_LOST counts do not */
		for (uint32_t i = 0; i < s->nslots; i++)
			if (s->slots[i].live && (s->slots[i].attr.read_format & PERF_FORMAT_LOST))
				sum += kernel_lost(&s->slots[i]);
		if (sum > st->lost)
			st->lost = sum;
		return 0;
	}
	c = ps_session__slot(s, h);
	if (!c)
		return -PS_ERR_HANDLE;
	*st = c->st;
	if (c->bpf && ps_bpf__lost(s, c, &blost) == 0) {
		st->lost = blost; /* reserve failures of the BPF ring buffer, exact */
	} else if ((c->attr.read_format & PERF_FORMAT_LOST) && c->open) {
		klost = kernel_lost(c);
		st->lost = klost; /* exact; the records' count is what was reported live */
	}
	return 0;
}

static int deliver_sample(struct ps_session *s, const struct perf_event_header *h, uint32_t slot)
{
	struct ps_sampling *m = &s->smp;
	struct ps_counter *c;
	struct ps_sample smp;

	if (slot >= s->nslots)
		return 0; /* a freed counter's leftovers, or the carrier (it never samples) */
	c = &s->slots[slot];
	if (ps_record__sample(h, &c->attr, &smp)) {
		c->st.malformed++;
		m->total.malformed++;
		return 0;
	}
	smp.handle = ps_session__handle(s, slot);
	if (!c->attr.freq) { /* see ps_sampling__prepare_attr */
		smp.period = c->attr.sample_period;
		smp.sample_type |= PERF_SAMPLE_PERIOD;
	}
	/* in-kernel filters asked for, but BPF could not serve: same rules here */
	if (c->bpf && !ps_bpf__keep(s, c, &smp))
		return 0;
	c->st.samples++;
	m->total.samples++;
	return m->ops.sample ? m->ops.sample(&smp, m->ops.ctx) : 0;
}

static int deliver_other(struct ps_session *s, const struct perf_event_header *h, uint32_t slot)
{
	struct ps_sampling *m = &s->smp;
	struct ps_counter *c = slot < s->nslots ? &s->slots[slot] : NULL;
	struct ps_sample_stats *st = c ? &c->st : NULL;
	struct ps_record r;
	int err;

	/* every fd of ours lays out the trailer alike; the carrier's type says how */
	err = ps_record__other(h, c ? c->attr.sample_type : PS_CARRIER_SAMPLE_TYPE, &r);
	if (err == -ENOENT)
		return 0; /* a record type we do not surface (e.g. KSYMBOL) */
	if (err) {
		m->total.malformed++;
		if (st)
			st->malformed++;
		return 0;
	}
	if (h->type == PERF_RECORD_LOST && !c) {
		/* The trailer names the primary event (an inherited clone reports its
		 * parent's id there); the body's id is the writer's own, which is the
		 * one we know when the writer is not a clone. */
		uint32_t ls = id_slot(m, r.id);

		c = ls < s->nslots ? &s->slots[ls] : NULL;
		st = c ? &c->st : NULL;
	}
	r.handle = c ? ps_session__handle(s, (uint32_t)(c - s->slots)) : 0;
	switch (h->type) {
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		m->total.lost += r.lost;
		if (st)
			st->lost += r.lost;
		break;
	case PERF_RECORD_THROTTLE:
		m->total.throttled++;
		if (st)
			st->throttled++;
		break;
	case PERF_RECORD_UNTHROTTLE:
		m->total.unthrottled++;
		if (st)
			st->unthrottled++;
		break;
	}
	return m->ops.record ? m->ops.record(&r, m->ops.ctx) : 0;
}

static int drain_ring(struct ps_session *s, struct ps_ring *r, size_t budget)
{
	const struct perf_event_header *h;
	size_t n = 0;
	int ret = 0;

	ps_ring__begin(r);
	while (budget == 0 || n < budget) {
		uint64_t id;
		uint32_t slot;
		int rc = ps_ring__next(r, &h);

		if (rc <= 0) {
			if (rc < 0) {
				s->smp.total.malformed++;
				ret = rc;
			}
			break;
		}
		n++;
		if (!ps_record__identifier(h, &id)) {
			s->smp.total.malformed++;
			continue;
		}
		slot = id_slot(&s->smp, id);
		rc = h->type == PERF_RECORD_SAMPLE ? deliver_sample(s, h, slot)
						   : deliver_other(s, h, slot);
		if (rc < 0) {
			ret = rc; /* the callback's stop: this record counts as consumed */
			break;
		}
	}
	ps_ring__end(r);
	if (ret < 0)
		return ret;
	return n > (size_t)__INT_MAX__ ? __INT_MAX__ : (int)n;
}

int ps_session__drain(struct ps_session *s, int ring_fd, size_t budget)
{
	if (!s)
		return -EINVAL;
	for (int i = 0; i < s->smp.nrings; i++)
		if (s->smp.ring_fds[i] == ring_fd)
			return drain_ring(s, &s->smp.rings[i], budget);
	return -EBADF;
}

int ps_session__drain_all(struct ps_session *s)
{
	int total = 0;

	if (!s)
		return -EINVAL;
	for (int i = 0; i < s->smp.nrings; i++) {
		int n = drain_ring(s, &s->smp.rings[i], 0);

		if (n < 0 && n != -EBADMSG)
			return n;
		if (n > 0 && total <= __INT_MAX__ - n)
			total += n;
	}
	return total;
}
