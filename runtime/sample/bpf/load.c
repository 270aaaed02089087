/*
 * load.c: the BPF backend of the sampler. For each counter the sampler
 * gives it (session/session.c chooses) it loads one ps_sample_bpf skeleton
 * configured by sample/bpf/configure.c and attaches it to
 * every fd of the counter (a tracepoint to one: the kernel runs tracepoint
 * programs per tracepoint, not per event). libbpf's log is kept (and shown
 * when verbose) so a load failure names the program and the verifier's last
 * words. The records of the session's one BPF ring buffer become samples in
 * sample/bpf/forward.c; aggregation maps are read in sample/bpf/aggregate.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/perf.h"
#include "base/cpus.h"
#include "sample/bpf/internal.h"
#include "ps_sample.skel.h"

/* libbpf's messages: shown under -v, and the end of each load's kept (per
 * thread: libbpf prints from the thread that loads) for the error message.
 * The print function a host program had set gets every message too. */
static _Atomic bool log_verbose;
static _Atomic bool log_chain = true;
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static libbpf_print_fn_t log_prev;
static _Thread_local char log_tail[4096]; /* the end of libbpf's output since the last load */
static _Thread_local size_t log_len;

static int log_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[2048];
	int n;

	if (log_prev && log_chain) {
		va_list copy;

		va_copy(copy, ap);
		log_prev(level, fmt, copy);
		va_end(copy);
	}
	if (log_verbose) { /* whole: a verifier log is one message of any length */
		va_list copy;

		va_copy(copy, ap);
		vfprintf(stderr, fmt, copy);
		va_end(copy);
	}
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0)
		return 0;
	if (level == LIBBPF_DEBUG)
		return n;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (log_len + (size_t)n >= sizeof(log_tail)) { /* keep the newest text */
		size_t drop = log_len + (size_t)n - sizeof(log_tail) + 1;

		drop = drop > log_len ? log_len : drop;
		memmove(log_tail, log_tail + drop, log_len - drop);
		log_len -= drop;
	}
	memcpy(log_tail + log_len, line, (size_t)n);
	log_len += (size_t)n;
	log_tail[log_len] = '\0';
	return n;
}

static void log_set(void)
{
	log_prev = libbpf_set_print(log_print);
}

static void log_install(void)
{
	pthread_once(&log_once, log_set);
}

void ps_bpf__set_verbose(bool on)
{
	log_verbose = on;
	log_install();
}

void ps_bpf__chain_print(bool on)
{
	log_chain = on;
	log_install();
}

/* The last lines of the verifier's log, "" when libbpf printed none. */
static void verifier_tail(char *out, size_t len)
{
	char *end = strstr(log_tail, "-- END PROG LOAD LOG --");
	char *p;
	int lines = 0;

	out[0] = '\0';
	if (!end)
		return;
	p = end;
	while (p > log_tail && lines < 4) {
		p--;
		if (*p == '\n' && p + 1 < end)
			lines++;
	}
	if (*p == '\n')
		p++;
	snprintf(out, len, "%.*s", (int)(end - p), p);
	for (char *q = out; *q; q++)
		if (*q == '\n')
			*q = q[1] ? ' ' : '\0';
}

static struct ps_bpf *bpf_of(struct ps_sampler *m)
{
	struct ps_bpf *b = m->bpf;

	if (!b && (b = calloc(1, sizeof(*b)))) {
		b->m = m;
		b->rb_fd = -1;
		b->py_fd = -1;
		ps_pidmap__init(&b->py_seen, ps_bpf__python_seen_size());
		m->bpf = b;
	}
	return b;
}

static const char *hint(int err, bool verifier)
{
	if (verifier)
		return " (the verifier rejected it)";
	if (err == -EPERM || err == -EACCES)
		return " (loading BPF needs root or CAP_BPF and CAP_PERFMON)";
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		return " (this kernel has no BTF: /sys/kernel/btf/vmlinux is missing)";
	if (err == -EINVAL || err == -EOPNOTSUPP || err == -524 /* ENOTSUPP */)
		return " (this kernel lacks the perf_event/tracepoint program type or a helper)";
	return "";
}

/* Kernel behaviour (6.x): an inherited event copies its parent's program,
 * and when the inherited copy is freed (a child of the target exits) it
 * removes that program from the tracepoint (or probe) for everyone. So such
 * a program hangs on an event of its own, never enabled (it samples
 * nothing) and never inherited: a tracepoint's system-wide; a probe's on
 * the target's process (or system-wide for -a, -C), since a system-wide
 * uprobe would make every process that runs the function take a trap. */
static int open_anchor(const struct ps_counter *c, const struct ps_session *s, uint64_t config,
		       int site)
{
	struct perf_event_attr a = *ps_counter__attr(c);
	int *cpus = NULL, n = 0, fd, err;
	pid_t pid = -1;

	if (site >= 0) {
		ps_counter__probe_attr(c, (uint32_t)site, &a);
		if (ps_session__target_kind(s) != PS_TARGET_CPUS)
			pid = ps_session__target_pid(s) > 0 ? ps_session__target_pid(s)
							    : ps_session__self_pid(s);
	}
	if (config)
		a.config = config;
	err = ps_cpus__online(&cpus, &n);
	if (err)
		return err;
	a.disabled = 1;
	a.inherit = 0;
	a.enable_on_exec = 0;
	a.read_format = 0;
	a.sample_type = PERF_SAMPLE_IP;
	a.sample_regs_intr = a.sample_regs_user = 0;
	a.watermark = 0;
	a.wakeup_events = 0;
	fd = ps_perf__open(&a, pid, pid > 0 ? -1 : n ? cpus[0] : 0, -1);
	err = fd;
	free(cpus);
	return err;
}

/* An anchor into b->anchors and prog linked to it; 0 or -errno. */
static int anchor(struct ps_bpf_counter *b, int prog, int fd, __u64 cookie)
{
	LIBBPF_OPTS(bpf_link_create_opts, o, .perf_event.bpf_cookie = cookie);

	if (fd < 0)
		return fd;
	b->anchors[b->nanchors++] = fd;
	/* the cookie: a probe's site, whose USDT arguments ps_usdt holds */
	b->links[b->nlinks] = bpf_link_create(prog, fd, BPF_PERF_EVENT, &o);
	if (b->links[b->nlinks] < 0)
		return b->links[b->nlinks];
	b->nlinks++;
	return 0;
}

static void close_counts(struct ps_bpf_counter *b)
{
	for (int i = 0; i < 2; i++)
		if (b->counts_fd[i] >= 0)
			close(b->counts_fd[i]);
}

/* An off-CPU aggregate's raw tracepoints, whatever the target: the
 * switches themselves when ps_switch takes them, the ends of __schedule
 * when stacks are taken as a thread runs again, and the wake-ups that
 * split a sleep. */
static int offcpu_links(struct ps_sample_bpf *skel, struct ps_bpf_counter *b)
{
	int err = 0;

	if (skel->rodata->cfg_offcpu_raw)
		err = ps_bpf__raw_link(b, NULL, skel->progs.ps_switch); /* tp_btf */
	if (!err && skel->rodata->cfg_offcpu_late)
		err = ps_bpf__raw_link(b, "sched_exit_tp", skel->progs.ps_resumed);
	if (!err && !skel->rodata->cfg_offcpu_raw && skel->rodata->cfg_offcpu_split)
		err = ps_bpf__raw_link(b, "sched_wakeup", skel->progs.ps_wakeup);
	return err;
}

/* Attach the loaded program to every fd of the counter (a tracepoint's or
 * probe's to its anchors, with the programs that follow the target's
 * forks); the links and anchors are the caller's to undo on failure. Links
 * are made here rather than by libbpf's attach, which enables the event (a
 * -c command's counters would count its held child before exec, the anchor
 * would count) and takes the event's fd over, disabling and closing it
 * when the link goes. */
static int attach_links(const struct ps_counter *c, const struct ps_session *s,
			struct ps_sample_bpf *skel, struct ps_bpf_counter *b)
{
	enum ps_bpf_kind kind = ps_bpf__kind(c);
	bool tp = kind != PS_BPF_KIND_PERF;
	int *links = b->links, *nlinks = &b->nlinks, err = 0;

	if (kind == PS_BPF_KIND_TRACEPOINT && skel->rodata->cfg_raw_count &&
	    skel->rodata->cfg_offcpu_raw)
		b->raw = true; /* ps_switch counts, linked below */
	else if (kind == PS_BPF_KIND_TRACEPOINT && skel->rodata->cfg_raw_count) {
		/* "subsys:name": the raw tracepoint is name's, where it has one */
		err = ps_bpf__raw_link(b, strchr(ps_counter__tracepoint_name(c), ':') + 1,
				       skel->progs.ps_raw);
		b->raw = err == 0;
		err = err == -ENOENT ? 0 : err; /* none of that name: the perf path */
	}
	if (!err && kind == PS_BPF_KIND_TRACEPOINT && !b->raw && !skel->rodata->cfg_offcpu_raw)
		err = anchor(b, bpf_program__fd(skel->progs.ps_tp), open_anchor(c, s, 0, -1), 0);
	for (size_t k = 0; kind == PS_BPF_KIND_PROBE && !err && k < ps_counter__probe_sites(c); k++)
		err =
		    anchor(b, bpf_program__fd(skel->progs.ps_kp), open_anchor(c, s, 0, (int)k), k);
	if (!err && tp && skel->rodata->cfg_late) /* the syscall's exit sends late strings */
		err =
		    anchor(b, bpf_program__fd(skel->progs.ps_tp_exit),
			   open_anchor(c, s, ps_tp_format__id(ps_bpf__exit_tracepoint(c)), -1), 0);
	for (int k = 0; !err && !tp && k < ps_counter__nfds(c); k++) {
		links[*nlinks] = bpf_link_create(bpf_program__fd(skel->progs.ps_perf),
						 ps_counter__fd(c, k), BPF_PERF_EVENT, NULL);
		if (links[*nlinks] < 0)
			return links[*nlinks];
		(*nlinks)++;
	}
	if (!err)
		err = offcpu_links(skel, b);
	if (err)
		return err;
	if (!tp || !(skel->rodata->cfg_flags & PS_BPF_F_TGT_TREE))
		return 0;
	err = ps_bpf__raw_link(b, "sched_process_fork", skel->progs.ps_fork);
	if (!err)
		err = ps_bpf__raw_link(b, "sched_process_free", skel->progs.ps_free);
	/* and a new thread's first wait */
	if (!err && (skel->rodata->cfg_offcpu_split || (skel->rodata->cfg_offcpu & 2)))
		err = ps_bpf__raw_link(b, "sched_wakeup_new", skel->progs.ps_wakeup_new);
	if (!err && skel->bss->exec_tgid)
		err = ps_bpf__raw_link(b, "task_rename", skel->progs.ps_exec);
	return err;
}

/* A tracepoint's program keeps the counter's period itself, and lets the
 * hits through to the counter's own fds so that they count: those must not
 * sample as well. PERF_EVENT_IOC_PERIOD cannot make a sampling event a
 * counting one, so on = true sets a period never reached (or 1 Hz, for
 * freq=); on = false puts the counter's own back. */
static void quiet_fds(const struct ps_counter *c, bool on)
{
	uint64_t v = !on			 ? ps_counter__attr(c)->sample_period
		     : ps_counter__attr(c)->freq ? 1
						 : 1ull << 62;

	if (ps_bpf__kind(c) == PS_BPF_KIND_PERF)
		return;
	for (int k = 0; k < ps_counter__nfds(c); k++)
		if (ps_counter__fd(c, k) >= 0)
			ioctl(ps_counter__fd(c, k), PERF_EVENT_IOC_PERIOD, &v);
}

/* The session's one ring buffer, from the first forwarding object. */
static int open_ring_buffer(struct ps_sampler *m, struct ps_bpf *bs, struct ps_sample_bpf *skel)
{
	int err;

	bs->rb_fd = dup(bpf_map__fd(skel->maps.ps_events));
	if (bs->rb_fd < 0)
		return -errno;
	bs->rb = ring_buffer__new(bs->rb_fd, ps_bpf__on_record, bs, NULL);
	err =
	    bs->rb ? ps_sampler__watch(m, ring_buffer__epoll_fd(bs->rb), &ps_bpf_backend) : -errno;
	if (err) {
		ring_buffer__free(bs->rb);
		bs->rb = NULL;
		close(bs->rb_fd);
		bs->rb_fd = -1;
	}
	return err;
}

static void bpf_detach(struct ps_sampler *m, uint32_t slot)
{
	struct ps_sampled *c = ps_sampler__counter(m, slot);
	struct ps_bpf_counter *b = c ? c->priv : NULL;

	if (!b)
		return;
	while (b->nlinks > 0)
		close(b->links[--b->nlinks]);
	free(b->links);
	while (b->nanchors > 0)
		close(b->anchors[--b->nanchors]);
	free(b->anchors);
	close_counts(b);
	ps_sample_bpf__destroy(b->skel);
	free(b);
	c->priv = NULL;
	quiet_fds(ps_session__counter(m->s, slot), false);
}

/* Load and attach the counter's object; the old one (if any) goes only on
 * success. 0, or -errno with msg naming the program and why. */
static const char *const progname[] = {"ps_perf", "ps_tp", "ps_kp"}; /* by ps_bpf_kind */

/* Whether a program attached now counts: once its counter does. A counter
 * is attached before it is enabled (under -p, with a second counter to
 * load, an aggregate counted some 165 ms its counter did not: 20-29% more
 * than its value); one armed for a held command's exec is on, as the
 * program waits for the exec itself. */
static bool counting(const struct ps_counter *c, const struct ps_session *s)
{
	return !ps_counter__stopped(c) && (ps_counter__running(c) || ps_session__held(s));
}

/* An off-CPU aggregate that starts counting is told of the target's
 * threads (sample/bpf/offcpu.c), once. */
static void seed_once(struct ps_sampler *m, struct ps_bpf_counter *b)
{
	if (b->skel->bss->on && b->skel->rodata->cfg_offcpu && !b->seeded) {
		ps_bpf__offcpu_seed(m->s, b->skel);
		b->seeded = true;
	}
}

static int bpf_attach(struct ps_sampler *m, uint32_t slot, char *msg, size_t msglen)
{
	struct ps_counter *c = ps_session__counter(m->s, slot);
	struct ps_bpf *bs = bpf_of(m);
	struct ps_bpf_counter *b = calloc(1, sizeof(*b));
	struct ps_sample_bpf *skel = NULL;
	size_t nsites;
	int err = 0;
	char tail[512];

	err = ps_bpf__refuse(c, msg, msglen);
	if (err) {
		free(b);
		return err;
	}
	/* links: the fds', or the anchors' (a probe's sites and a syscall's
	 * exit), the three that follow the target's processes, and off-CPU
	 * time's switches and two wake-ups */
	nsites = ps_counter__probe_sites(c) ? ps_counter__probe_sites(c) : 1;
	if (!bs || !b ||
	    !(b->links = calloc((size_t)ps_counter__nfds(c) + nsites + 7, sizeof(*b->links))) ||
	    !(b->anchors = calloc(nsites + 1, sizeof(*b->anchors)))) {
		err = -ENOMEM;
		goto fail;
	}
	b->counts_fd[0] = b->counts_fd[1] = -1;
	log_install();
	log_len = 0;
	log_tail[0] = '\0';
	skel = ps_sample_bpf__open();
	err = skel ? ps_bpf__make_counts(c, ps_bpf__cfg_flags(m->s, c), b) : -errno;
	if (!err)
		err = ps_bpf__configure(m, bs, slot, skel, b->counts_fd[0]);
	if (!err)
		err = ps_sample_bpf__load(skel);
	if (!err)
		err = ps_bpf__fill_maps(m->s, c, skel);
	if (!err)
		skel->bss->on = counting(c, m->s);
	if (!err)
		err = ps_bpf__put_counts(skel, b);
	if (!err)
		err = attach_links(c, m->s, skel, b);
	if (!err && bs->rb_fd < 0 && (skel->rodata->cfg_flags & PS_BPF_F_FORWARD))
		err = open_ring_buffer(m, bs, skel);
	if (!err && bs->py_fd < 0 && skel->rodata->cfg_python &&
	    (bs->py_fd = dup(bpf_map__fd(skel->maps.ps_py))) < 0)
		err = -errno;
	if (err)
		goto fail;
	b->skel = skel;
	seed_once(m, b);
	if (b->raw)
		ps_bpf__raw_start(m, slot, b);
	bpf_detach(m, slot); /* the previous object, if any */
	ps_counter__sampled(c)->priv = b;
	quiet_fds(c, true);
	/* the sampler hands the counter's fds over (ps_bpf__counts_hits) */
	if (b->raw && !ps_counter__handed(c) && log_verbose)
		fprintf(stderr,
			"perfscript: '%s' is counted and aggregated on its raw "
			"tracepoint, with no perf event of its own\n",
			ps_counter__name(c));
	return 0;
fail:
	while (b && b->nlinks > 0)
		close(b->links[--b->nlinks]);
	while (b && b->nanchors > 0)
		close(b->anchors[--b->nanchors]);
	if (b)
		close_counts(b);
	free(b ? b->anchors : NULL);
	free(b ? b->links : NULL);
	free(b);
	ps_sample_bpf__destroy(skel);
	verifier_tail(tail, sizeof(tail));
	if (msg && msglen)
		snprintf(msg, msglen, "cannot load BPF program '%s' for '%s': %s%s%s%s",
			 progname[ps_bpf__kind(c)], ps_counter__name(c), ps_strerror(err),
			 hint(err, tail[0]), tail[0] ? "; verifier: " : "", tail);
	return err;
}

static void bpf_free(struct ps_sampler *m)
{
	struct ps_bpf *bs = m->bpf;

	if (!bs)
		return;
	ring_buffer__free(bs->rb);
	if (bs->rb_fd >= 0)
		close(bs->rb_fd);
	free(bs->ips);
	ps_symbols__free(bs->syms);
	if (bs->py_fd >= 0)
		close(bs->py_fd);
	ps_pidmap__free(&bs->py_seen);
	free(bs);
	m->bpf = NULL;
}

/* Started or stopped: a tracepoint's program filters away from the
 * counter's fds, so it is told (a perf event's program runs only on
 * overflows of fds that are enabled). */
static void bpf_switched(struct ps_sampler *m, uint32_t slot, bool on)
{
	struct ps_bpf_counter *b = ps_bpf__counter(m, slot);

	if (b && b->skel->bss)
		b->skel->bss->on = on;
	if (b && b->raw)
		ps_bpf__raw_switched(b, on);
	if (b)
		seed_once(m, b);
}

const struct ps_backend_ops ps_bpf_backend = {
    .name = "bpf",
    .attach = bpf_attach,
    .switched = bpf_switched,
    .counts_hits = ps_bpf__counts_hits,
    .count = ps_bpf__count,
    .detach = bpf_detach,
    .drain = ps_bpf__drain,
    .settle = ps_bpf__offcpu_settle,
    .lost = ps_bpf__lost,
    .free = bpf_free,
};
