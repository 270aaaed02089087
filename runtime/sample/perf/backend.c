/*
 * backend.c: the perf ring backend of the sampler. A session maps one ring
 * per CPU, lazily, on a carrier: a software dummy event on the target that
 * counts nothing but reports COMM, MMAP2, FORK and EXIT for the symbolizer
 * and owns the ring, so freeing any sampling counter leaves the ring and the
 * other counters' output intact. Every sampling fd is redirected into its
 * CPU's ring with PERF_EVENT_IOC_SET_OUTPUT and carries
 * PERF_SAMPLE_IDENTIFIER, so each record names the fd it came from; a sorted
 * id -> slot array (with a one-entry cache, since samples come in runs from
 * one fd) turns that into a counter and its sample_type. Draining reads a
 * ring in place and decodes each record into the sampler's one delivery
 * path: no allocation and no syscall per record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/perf.h"
#include "base/array.h"
#include "base/cpus.h"
#include "sample/perf/ids.h"
#include "sample/perf/record.h"
#include "sample/perf/ring.h"
#include "sample/sampler.h"

#define PS_CARRIER_SAMPLE_TYPE                                                                     \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

struct ps_perf {
	struct ps_ring *rings; /* one per CPU that has one, in creation order */
	int *ring_fds;	       /* the carriers' fds, parallel to rings */
	int nrings, cap;       /* cap: online CPUs; the arrays never move */
	int *ring_of_cpu;      /* CPU number -> index in rings, or -1 */
	int ncpu_slots;
	int *ring_of_fd; /* a carrier's fd -> index in rings, or -1 */
	int nfd_slots;
	struct ps_perf_ids ids; /* a record's id -> its counter's slot */
};

static struct ps_perf *perf_of(struct ps_sampler *m)
{
	if (!m->perf)
		m->perf = calloc(1, sizeof(struct ps_perf));
	return m->perf;
}

static void perf_prepare(struct ps_sampler *m, uint32_t slot, struct perf_event_attr *a)
{
	(void)slot;
	/* Kernel behaviour (perf_swevent_event): a software event or tracepoint
	 * with PERF_SAMPLE_PERIOD and a fixed period samples on *every* event and
	 * reports the period as 1, so period=1000 would give 1000 times the
	 * samples. With a fixed period the field is a constant anyway: drop it and
	 * fill ps_sample.period from sample_period (take_sample). */
	if (!a->freq)
		a->sample_type &= ~(uint64_t)PERF_SAMPLE_PERIOD;
	a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	/* Exact lost counts per fd (Linux 6.0+): LOST records are not exact, the
	 * kernel reports a loss only in front of the next record that fits. */
	a->read_format |= PERF_FORMAT_LOST;
	a->sample_id_all = 1;
	a->watermark = 1;
	a->wakeup_watermark = ps_sampler__wakeup_bytes(m);
}

/* A counter's ids join the map once every fd is open; samples still in a
 * ring after it left name no one and are skipped. */
static int perf_attach(struct ps_sampler *m, uint32_t slot, char *msg, size_t msglen)
{
	struct ps_counter *c = ps_session__counter(m->s, slot);
	struct ps_perf *p = perf_of(m);

	for (int k = 0; p && k < ps_counter__nfds(c); k++) {
		if (ps_perf_ids__add(&p->ids, ps_counter__id(c, k), slot) == 0)
			continue;
		for (int j = 0; j < k; j++)
			ps_perf_ids__del(&p->ids, ps_counter__id(c, j));
		p = NULL;
	}
	if (p)
		return 0;
	if (msg && msglen)
		snprintf(msg, msglen, "cannot open '%s': out of memory", ps_counter__name(c));
	return -ENOMEM;
}

static void perf_detach(struct ps_sampler *m, uint32_t slot)
{
	struct ps_counter *c = ps_session__counter(m->s, slot);
	struct ps_perf *p = m->perf;

	for (int k = 0; p && k < ps_counter__nfds(c); k++)
		ps_perf_ids__del(&p->ids, ps_counter__id(c, k));
}

/* ---- rings and their carriers ---- */

/* Size the per-CPU arrays once, to the online CPUs, so they never move. */
static int init_rings(struct ps_perf *p)
{
	int *cpus = NULL, n = 0, err;

	if (p->rings)
		return 0;
	err = ps_cpus__online(&cpus, &n);
	if (err)
		return err;
	p->ncpu_slots = n ? cpus[n - 1] + 1 : 1;
	p->cap = n ? n : 1;
	free(cpus);
	p->rings = calloc(p->cap, sizeof(*p->rings));
	p->ring_fds = calloc(p->cap, sizeof(*p->ring_fds));
	p->ring_of_cpu = malloc(p->ncpu_slots * sizeof(*p->ring_of_cpu));
	if (!p->rings || !p->ring_fds || !p->ring_of_cpu) {
		free(p->rings);
		free(p->ring_fds);
		free(p->ring_of_cpu);
		p->rings = NULL;
		p->ring_fds = p->ring_of_cpu = NULL;
		return -ENOMEM;
	}
	for (int i = 0; i < p->ncpu_slots; i++)
		p->ring_of_cpu[i] = -1;
	return 0;
}

/* The carrier of one CPU: a dummy event on the target, tracking side-band.
 * It opens for the sampling counter name, which a failure names: the user
 * asked for that one, and the carrier needs what it needs (the target). */
static int open_carrier(struct ps_sampler *m, int cpu, const char *name, char *msg, size_t msglen)
{
	const struct ps_session *s = m->s;
	struct perf_event_attr a = {
	    .size = sizeof(a),
	    .type = PERF_TYPE_SOFTWARE,
	    .config = PERF_COUNT_SW_DUMMY,
	    .sample_type = PS_CARRIER_SAMPLE_TYPE,
	    .read_format = PERF_FORMAT_ID,
	};
	enum ps_target_kind kind = ps_session__target_kind(s);
	pid_t pid = kind == PS_TARGET_COMMAND || kind == PS_TARGET_PID ? ps_session__target_pid(s)
		    : kind == PS_TARGET_CPUS			       ? -1
								       : 0;
	int fd;

	a.comm = a.mmap = a.mmap2 = a.task = a.comm_exec = 1;
	/* least privilege: side-band records come whatever the event excludes,
	 * and a user-space-only event is what kernel.perf_event_paranoid 2
	 * allows an unprivileged user (perf record's dummy:u) */
	a.exclude_kernel = a.exclude_hv = 1;
	a.use_clockid = 1; /* as every counter (core/attr.c) */
	a.clockid = CLOCK_MONOTONIC;
	a.sample_id_all = 1;
	a.inherit = kind == PS_TARGET_COMMAND || kind == PS_TARGET_PID;
	a.inherit_thread = a.inherit && ps_session__no_children(s);
	/* a held command: track it from its exec, like its counters */
	a.disabled = a.enable_on_exec = kind == PS_TARGET_COMMAND && ps_session__held(s);
	a.watermark = 1;
	a.wakeup_watermark = ps_sampler__wakeup_bytes(m);
	fd = ps_perf__open(&a, pid, cpu, -1);
	if (fd < 0) {
		struct ps_open_failure f = {.name = name ? name : "dummy (sample ring carrier)",
					    .attr = &a,
					    .err = -fd,
					    .kind = kind,
					    .pid = pid,
					    .cpu = cpu};
		if (msg && msglen)
			ps_explain_open_error(&f, msg, msglen);
		return fd;
	}
	return fd;
}

/* Room in ring_of_fd for fd; 0 or -ENOMEM. */
static int fd_slots(struct ps_perf *p, int fd)
{
	int n = p->nfd_slots, *v;

	if (fd < n)
		return 0;
	while (n <= fd)
		n = n ? n * 2 : 64;
	if (!(v = realloc(p->ring_of_fd, (size_t)n * sizeof(*v))))
		return -ENOMEM;
	for (int i = p->nfd_slots; i < n; i++)
		v[i] = -1;
	p->ring_of_fd = v;
	p->nfd_slots = n;
	return 0;
}

/* The ring whose carrier is fd, or NULL: a lookup, not a scan, as the
 * read-ahead asks it of every ring every few deliveries. */
static struct ps_ring *ring_at(struct ps_perf *p, int fd)
{
	return p && fd >= 0 && fd < p->nfd_slots && p->ring_of_fd[fd] >= 0
		   ? &p->rings[p->ring_of_fd[fd]]
		   : NULL;
}

/* Open the carrier of cpu and map its ring; 0 or -errno with msg filled. */
static int add_ring(struct ps_sampler *m, struct ps_perf *p, int cpu, const char *name, char *msg,
		    size_t msglen)
{
	struct ps_ring *r = &p->rings[p->nrings];
	size_t pages = ps_sampler__ring_pages(m);
	uint64_t id = 0;
	int fd, err;

	if (cpu < 0 || cpu >= p->ncpu_slots || p->nrings == p->cap) {
		if (msg && msglen)
			snprintf(msg, msglen, "cannot sample on CPU %d: it is not online", cpu);
		return -EINVAL;
	}
	fd = open_carrier(m, cpu, name, msg, msglen);
	if (fd < 0)
		return fd;
	/* An unprivileged user may lock only perf_event_mlock_kb per CPU: a
	 * smaller ring that maps beats none (the stats then show the loss). */
	while ((err = ps_ring__map(r, fd, cpu, pages)) == -EPERM && pages > 1)
		pages /= 2;
	if (!err && ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0)
		err = -errno;
	if (!err)
		err = fd_slots(p, fd);
	if (!err)
		err = ps_perf_ids__add(&p->ids, id, PS_NO_SLOT);
	if (!err)
		err = ps_sampler__watch(m, fd, &ps_perf_backend);
	if (err) {
		if (msg && msglen)
			snprintf(msg, msglen, "cannot map a %zu-page sample ring on CPU %d: %s%s",
				 pages, cpu, ps_strerror(err),
				 err == -EPERM ? " (raise kernel.perf_event_mlock_kb or ulimit -l)"
					       : "");
		ps_perf_ids__del(&p->ids, id);
		ps_ring__close(r);
		close(fd);
		return err;
	}
	p->ring_fds[p->nrings] = fd;
	p->ring_of_cpu[cpu] = p->nrings;
	p->ring_of_fd[fd] = p->nrings++;
	return 0;
}

static int perf_will_open(struct ps_sampler *m, const char *name, const struct ps_position *pos,
			  int npos, char *msg, size_t msglen)
{
	struct ps_perf *p = perf_of(m);
	int err = p ? init_rings(p) : -ENOMEM;

	for (int i = 0; i < npos && !err; i++) {
		int cpu = pos[i].cpu;

		if (cpu >= 0 && cpu < p->ncpu_slots && p->ring_of_cpu[cpu] >= 0)
			continue;
		err = add_ring(m, p, cpu, name, msg, msglen);
	}
	return err;
}

static int perf_fd_opened(struct ps_sampler *m, uint32_t slot, int fd, int cpu)
{
	const struct ps_perf *p = m->perf;

	(void)slot;
	if (!p || cpu < 0 || cpu >= p->ncpu_slots || p->ring_of_cpu[cpu] < 0)
		return -EINVAL;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, p->ring_fds[p->ring_of_cpu[cpu]]) < 0)
		return -errno;
	return 0;
}

static void perf_free(struct ps_sampler *m)
{
	struct ps_perf *p = m->perf;

	if (!p)
		return;
	for (int i = 0; i < p->nrings; i++) {
		ps_ring__close(&p->rings[i]);
		close(p->ring_fds[i]);
	}
	free(p->rings);
	free(p->ring_fds);
	free(p->ring_of_cpu);
	free(p->ring_of_fd);
	free(p->ids.v);
	free(p);
	m->perf = NULL;
}

/* Samples the kernel could not write for the counter, from PERF_FORMAT_LOST:
 * exact, where LOST records miss a loss the writer never got to report (the
 * ring still full when the target exited) or charge it to the next writer. */
static int perf_lost(struct ps_sampler *m, uint32_t slot, uint64_t *lost)
{
	const struct ps_counter *c = ps_session__counter(m->s, slot);
	uint64_t rf = ps_counter__attr(c)->read_format, small[8], *buf = small;
	struct ps_read_layout lay;
	uint32_t nmembers;
	bool group = ps_counter__reads_group(m->s, c, &nmembers);
	size_t words;

	*lost = 0;
	ps_read_layout__init(&lay, group ? rf : rf & ~(uint64_t)PERF_FORMAT_GROUP);
	if (lay.lost < 0 || !ps_counter__is_open(c))
		return -ENOENT;
	words = ps_read_layout__words(&lay, nmembers);
	if (words > sizeof(small) / sizeof(*small) && !(buf = malloc(words * sizeof(*buf))))
		return -ENOMEM;
	for (int k = 0; k < ps_counter__nfds(c); k++) {
		ssize_t n = read(ps_counter__fd(c, k), buf, words * sizeof(*buf));
		size_t have = n > 0 ? (size_t)n / sizeof(*buf) : 0;

		if (!lay.group) {
			*lost += have >= words ? buf[lay.lost] : 0;
			continue;
		}
		/* a group read: this fd's own member, by its id */
		for (size_t j = 0; have >= lay.head && j < buf[0]; j++) {
			size_t at = ps_read_layout__value(&lay, j);

			if (at + lay.per > have)
				break;
			if (lay.id >= 0 && buf[at + (size_t)lay.id] == ps_counter__id(c, k))
				*lost += buf[at + (size_t)lay.lost];
		}
	}
	if (buf != small)
		free(buf);
	return 0;
}

/* ---- draining ---- */

static int take_sample(struct ps_sampler *m, const struct perf_event_header *h, uint32_t slot)
{
	const struct ps_counter *c = ps_session__counter(m->s, slot);
	const struct ps_sampled *sd;
	const struct perf_event_attr *a;
	struct ps_sample smp;

	if (!c)
		return 0; /* a freed counter's leftovers, or the carrier (it never samples) */
	sd = ps_counter__sampled(c);
	a = ps_counter__attr(c);
	/* a counter BPF serves takes its samples from there alone */
	if (sd && sd->serving != &ps_perf_backend)
		return 0;
	if (ps_record__sample(h, a, &smp)) {
		ps_sampler__malformed(m, slot);
		return 0;
	}
	smp.handle = ps_session__handle_of(m->s, slot);
	if (!a->freq) { /* see perf_prepare */
		smp.period = a->sample_period;
		smp.sample_type |= PERF_SAMPLE_PERIOD;
	}
	return ps_sampler__deliver(
	    m, &(struct ps_delivery){.from = &ps_perf_backend, .slot = slot, .sample = &smp});
}

static int take_other(struct ps_sampler *m, struct ps_perf *p, const struct perf_event_header *h,
		      uint32_t slot)
{
	const struct ps_counter *c = ps_session__counter(m->s, slot);
	struct ps_record r;
	int err;

	/* every fd of ours lays out the trailer alike; the carrier's type says how */
	err =
	    ps_record__other(h, c ? ps_counter__attr(c)->sample_type : PS_CARRIER_SAMPLE_TYPE, &r);
	if (err == -ENOENT)
		return 0; /* a record type we do not surface (e.g. KSYMBOL) */
	if (err) {
		ps_sampler__malformed(m, c ? slot : PS_NO_SLOT);
		return 0;
	}
	if (h->type == PERF_RECORD_LOST && !c) {
		/* The trailer names the primary event (an inherited clone reports its
		 * parent's id there); the body's id is the writer's own, which is the
		 * one we know when the writer is not a clone. */
		slot = ps_perf_ids__slot(&p->ids, r.id);
	}
	if (slot >= ps_session__nslots(m->s))
		slot = PS_NO_SLOT;
	return ps_sampler__deliver(
	    m, &(struct ps_delivery){.from = &ps_perf_backend, .slot = slot, .record = &r});
}

static int drain_ring(struct ps_sampler *m, struct ps_perf *p, struct ps_ring *r, size_t budget)
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
				ps_sampler__malformed(m, PS_NO_SLOT);
				ret = rc;
			}
			break;
		}
		n++;
		if (!ps_record__identifier(h, &id)) {
			ps_sampler__malformed(m, PS_NO_SLOT);
			continue;
		}
		slot = ps_perf_ids__slot(&p->ids, id);
		rc = h->type == PERF_RECORD_SAMPLE ? take_sample(m, h, slot)
						   : take_other(m, p, h, slot);
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

static int perf_drain(struct ps_sampler *m, int fd, size_t budget)
{
	struct ps_ring *r = ring_at(m->perf, fd);

	return r ? drain_ring(m, m->perf, r, budget) : -EBADF;
}

static unsigned perf_fill(struct ps_sampler *m, int fd)
{
	struct ps_ring *r = ring_at(m->perf, fd);

	return r && r->meta ? ps_ring__fill(r) : 0;
}

const struct ps_backend_ops ps_perf_backend = {
    .name = "perf",
    .filters_in_user = true,
    .prepare = perf_prepare,
    .will_open = perf_will_open,
    .fd_opened = perf_fd_opened,
    .attach = perf_attach,
    .detach = perf_detach,
    .drain = perf_drain,
    .fill = perf_fill,
    .lost = perf_lost,
    .free = perf_free,
};
