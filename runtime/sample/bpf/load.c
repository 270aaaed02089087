/*
 * load.c: the in-kernel path of overflow samples. It decides, per sampling
 * counter, whether the perf ring or a BPF program serves it (the event's
 * bpf/nobpf term, the counter's options, the session's backend), loads one
 * ps_sample_bpf skeleton per BPF counter with the counter's filters baked
 * into read-only data, attaches it to every fd of the counter (a tracepoint
 * to one: the kernel runs tracepoint programs per tracepoint, not per
 * event). libbpf's log is kept (and shown with -v) so a load failure names
 * the program and the verifier's last words. The records of the session's
 * one BPF ring buffer become samples in sample/bpf/forward.c; aggregation maps are
 * read in sample/bpf/aggregate.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample/bpf/internal.h"
#include "event/event.h"
#include "ps_sample.skel.h"

#define PS_AGG_ENTRIES_DEFAULT 16384u
#define PS_STACK_ENTRIES       16384u

static bool log_verbose;
static bool log_installed;
static char log_tail[4096]; /* the end of libbpf's output since the last load */
static size_t log_len;

static int log_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[2048];
	int n;

	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0)
		return 0;
	if (log_verbose)
		fputs(line, stderr);
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

static void log_install(void)
{
	if (!log_installed) {
		libbpf_set_print(log_print);
		log_installed = true;
	}
}

void ps_bpf__set_verbose(bool on)
{
	log_verbose = on;
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

int ps_bpf__term(const struct ps_events *evs, size_t i)
{
	return evs && i < evs->n ? evs->ev[i].bpf : 0;
}

struct ps_bpf_session *ps_bpf__session(struct ps_session *s)
{
	if (!s->bpf) {
		s->bpf = calloc(1, sizeof(*s->bpf));
		if (s->bpf)
			s->bpf->rb_fd = -1;
	}
	return s->bpf;
}

int ps_session__set_backend(struct ps_session *s, enum ps_backend b)
{
	if (!s || b < PS_BACKEND_AUTO || b > PS_BACKEND_BPF)
		return -EINVAL;
	s->backend = b;
	return 0;
}

static bool wants_kernel_work(const struct ps_bpf_counter *b)
{
	return b && b->configured &&
	       ((b->mode & PS_BPF_AGGREGATE) || b->npids || b->tid || b->ncpus ||
		b->priv != PS_PRIV_ANY || b->every > 1);
}

/* The path c should take and whether someone asked for it by name. */
static enum ps_backend wanted(const struct ps_session *s, const struct ps_counter *c, bool *named)
{
	*named = true;
	if (c->bpf_term)
		return c->bpf_term > 0 ? PS_BACKEND_BPF : PS_BACKEND_PERF;
	if (c->bpf && c->bpf->configured && c->bpf->backend != PS_BACKEND_AUTO)
		return c->bpf->backend;
	if (s->backend != PS_BACKEND_AUTO)
		return s->backend;
	*named = false;
	return wants_kernel_work(c->bpf) ? PS_BACKEND_BPF : PS_BACKEND_PERF;
}

static size_t ring_bytes(const struct ps_session *s)
{
	long psz = sysconf(_SC_PAGESIZE), ncpu = libbpf_num_possible_cpus();
	size_t want = (s->smp.ring_pages ? s->smp.ring_pages : 256) *
		      (size_t)(psz > 0 ? psz : 4096) * (size_t)(ncpu > 0 ? ncpu : 1),
	       size = 4096;

	while (size < want && size < (1ul << 30))
		size <<= 1;
	return size;
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

static int fill_maps(struct ps_session *s, struct ps_counter *c, struct ps_sample_bpf *skel)
{
	struct ps_bpf_counter *b = c->bpf;
	__u8 one = 1;
	int err = 0;

	for (size_t i = 0; i < b->npids && !err; i++) {
		__u32 pid = (__u32)b->pids[i];

		err = bpf_map__update_elem(skel->maps.ps_pids, &pid, sizeof(pid), &one, 1, BPF_ANY);
	}
	for (size_t i = 0; i < b->ncpus && !err; i++) {
		__u32 cpu = (__u32)b->cpus[i];

		if (cpu < PS_BPF_MAX_CPUS)
			err = bpf_map__update_elem(skel->maps.ps_cpus, &cpu, sizeof(cpu), &one, 1,
						   BPF_ANY);
	}
	if (err || c->attr.type != PERF_TYPE_TRACEPOINT)
		return err;
	if (s->kind == PS_TARGET_CPUS) {
		int *cpus = s->cpus, n = s->ncpus;
		bool mine = false;

		if (!cpus && (err = ps_cpus__parse(NULL, &cpus, &n)))
			return err;
		mine = cpus != s->cpus;
		for (int i = 0; i < n && !err; i++) {
			__u32 cpu = (__u32)cpus[i];
			__u8 v = 0;

			if (cpu >= PS_BPF_MAX_CPUS)
				continue;
			bpf_map__lookup_elem(skel->maps.ps_cpus, &cpu, sizeof(cpu), &v, 1, 0);
			v |= 2;
			err = bpf_map__update_elem(skel->maps.ps_cpus, &cpu, sizeof(cpu), &v, 1,
						   BPF_ANY);
		}
		if (mine)
			free(cpus);
	} else {
		__u32 pid = (__u32)(s->pid > 0 ? s->pid : getpid());

		err = bpf_map__update_elem(skel->maps.ps_targets, &pid, sizeof(pid), &one, 1,
					   BPF_ANY);
	}
	return err;
}

static uint32_t cfg_flags(const struct ps_session *s, const struct ps_counter *c)
{
	const struct ps_bpf_counter *b = c->bpf;
	unsigned mode = b->mode ? b->mode : PS_BPF_FORWARD;
	uint32_t f = 0;

	f |= mode & PS_BPF_FORWARD ? PS_BPF_F_FORWARD : 0;
	f |= mode & PS_BPF_AGGREGATE ? PS_BPF_F_AGGREGATE : 0;
	f |= b->npids ? PS_BPF_F_PIDS : 0;
	f |= b->ncpus ? PS_BPF_F_CPUS : 0;
	f |= b->priv == PS_PRIV_USER	 ? PS_BPF_F_USER
	     : b->priv == PS_PRIV_KERNEL ? PS_BPF_F_KERNEL
					 : 0;
	f |= c->attr.sample_type & PERF_SAMPLE_CALLCHAIN ? PS_BPF_F_CALLCHAIN : 0;
	if (c->attr.type == PERF_TYPE_TRACEPOINT)
		f |= s->kind == PS_TARGET_CPUS ? PS_BPF_F_TGT_CPUS : PS_BPF_F_TGT_TREE;
	/* perf samples syscalls:* at the user registers the syscall saved */
	if (c->attr.type == PERF_TYPE_TRACEPOINT && !strncmp(c->spec, "syscalls:", 9))
		f |= PS_BPF_F_USER_REGS;
	return f;
}

/* Kernel behaviour (6.x): an inherited event copies its parent's program,
 * and when the inherited copy is freed (a child of the target exits) it
 * removes that program from the tracepoint for everyone. So a tracepoint's
 * program hangs on an event of its own: system-wide, never enabled (it
 * samples nothing) and never inherited. */
static int open_anchor(const struct ps_counter *c)
{
	struct perf_event_attr a = c->attr;
	int *cpus = NULL, n = 0, fd, err;

	err = ps_cpus__parse(NULL, &cpus, &n);
	if (err)
		return err;
	a.disabled = 1;
	a.inherit = 0;
	a.enable_on_exec = 0;
	a.read_format = 0;
	a.sample_type = PERF_SAMPLE_IP;
	a.watermark = 0;
	a.wakeup_events = 0;
	fd = (int)syscall(SYS_perf_event_open, &a, -1, n ? cpus[0] : 0, -1, PERF_FLAG_FD_CLOEXEC);
	err = fd < 0 ? -errno : fd;
	free(cpus);
	return err;
}

/* Load and attach c's object; the old one (if any) goes only on success. */
static int load(struct ps_session *s, uint32_t slot, char *msg, size_t msglen)
{
	struct ps_counter *c = &s->slots[slot];
	struct ps_bpf_counter *b = c->bpf;
	struct ps_bpf_session *bs = ps_bpf__session(s);
	bool tp = c->attr.type == PERF_TYPE_TRACEPOINT;
	struct ps_sample_bpf *skel = NULL;
	struct bpf_program *prog;
	struct bpf_link **links = NULL;
	uint32_t flags;
	int nlinks = 0, err = 0, anchor = -1;
	char tail[512];

	if (!bs)
		return -ENOMEM;
	log_install();
	log_len = 0;
	log_tail[0] = '\0';
	flags = cfg_flags(s, c);
	skel = ps_sample_bpf__open();
	if (!skel) {
		err = -errno;
		goto fail;
	}
	prog = tp ? skel->progs.ps_tp : skel->progs.ps_perf;
	bpf_program__set_autoload(tp ? skel->progs.ps_perf : skel->progs.ps_tp, false);
	skel->rodata->cfg_handle = ps_session__handle(s, slot);
	skel->rodata->cfg_flags = flags;
	skel->rodata->cfg_keys = b->mode & PS_BPF_AGGREGATE ? b->keys : 0;
	skel->rodata->cfg_every = b->every;
	skel->rodata->cfg_tid = (__u32)b->tid;
	skel->rodata->cfg_period = tp && !c->attr.freq ? c->attr.sample_period : 1;
	skel->rodata->cfg_wake_bytes = ring_bytes(s) / 4;
	if (bs->rb_fd >= 0)
		err = bpf_map__reuse_fd(skel->maps.ps_events, bs->rb_fd);
	else
		err = bpf_map__set_max_entries(skel->maps.ps_events,
					       flags & PS_BPF_F_FORWARD ? ring_bytes(s) : 4096);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.ps_pids, b->npids ? b->npids : 1);
	if (!err)
		err = bpf_map__set_max_entries(
		    skel->maps.ps_stacks,
		    (flags & PS_BPF_F_CALLCHAIN) ||
			    (skel->rodata->cfg_keys & (PS_AGG_USTACK | PS_AGG_KSTACK))
			? PS_STACK_ENTRIES
			: 1);
	if (!err)
		err = bpf_map__set_max_entries(
		    skel->maps.ps_counts, flags & PS_BPF_F_AGGREGATE
					      ? (b->entries ? b->entries : PS_AGG_ENTRIES_DEFAULT)
					      : 1);
	if (err)
		goto fail;
	err = ps_sample_bpf__load(skel);
	if (err)
		goto fail;
	err = fill_maps(s, c, skel);
	if (err)
		goto fail;
	links = calloc(c->nfds ? c->nfds : 1, sizeof(*links));
	if (!links) {
		err = -ENOMEM;
		goto fail;
	}
	if (tp && (anchor = open_anchor(c)) < 0) {
		err = anchor;
		goto fail;
	}
	for (int k = 0; k < (tp ? 1 : c->nfds); k++) {
		links[nlinks] = bpf_program__attach_perf_event(prog, tp ? anchor : c->fds[k]);
		if (!links[nlinks]) {
			err = -errno;
			goto fail;
		}
		nlinks++;
	}
	if (bs->rb_fd < 0 && (flags & PS_BPF_F_FORWARD)) {
		bs->rb_fd = dup(bpf_map__fd(skel->maps.ps_events));
		if (bs->rb_fd < 0) {
			err = -errno;
			goto fail;
		}
		bs->rb = ring_buffer__new(bs->rb_fd, ps_bpf__on_record, s, NULL);
		if (!bs->rb) {
			err = -errno;
			close(bs->rb_fd);
			bs->rb_fd = -1;
			goto fail;
		}
	}
	ps_bpf__detach_counter(s, slot); /* the previous object, if any */
	b->skel = skel;
	b->links = links;
	b->nlinks = nlinks;
	b->anchor_fd = anchor;
	b->lost_told = 0;
	return 0;
fail:
	while (nlinks > 0)
		bpf_link__destroy(links[--nlinks]);
	free(links);
	if (anchor >= 0)
		close(anchor);
	ps_sample_bpf__destroy(skel);
	verifier_tail(tail, sizeof(tail));
	if (msg && msglen)
		snprintf(msg, msglen, "cannot load BPF program '%s' for '%s': %s%s%s%s",
			 tp ? "ps_tp" : "ps_perf", c->name, ps_strerror(err), hint(err, tail[0]),
			 tail[0] ? "; verifier: " : "", tail);
	return err;
}

int ps_bpf__attach_counter(struct ps_session *s, uint32_t slot, char *msg, size_t msglen)
{
	struct ps_counter *c = &s->slots[slot];
	bool named;
	char why[320];
	int err;

	if (!c->sampling || wanted(s, c, &named) != PS_BACKEND_BPF)
		return 0;
	if (!c->bpf && !(c->bpf = calloc(1, sizeof(*c->bpf))))
		return -ENOMEM;
	if (c->attr.sample_type & PERF_SAMPLE_STACK_USER) {
		/* a BPF record has no room for 8 KiB of stack per sample */
		err = -EOPNOTSUPP;
		snprintf(
		    named ? msg : why, named ? msglen : sizeof(why),
		    "cannot take '%s' on the BPF path: call-graph=dwarf needs the perf ring "
		    "(the BPF path has frame-pointer stacks only: use call-graph=fp, or nobpf)",
		    c->name);
	} else {
		err = load(s, slot, named ? msg : why, named ? msglen : sizeof(why));
	}
	if (!err || named)
		return err;
	if (ps_bpf__session(s) && !s->bpf->fallback[0])
		snprintf(s->bpf->fallback, sizeof(s->bpf->fallback), "%s", why);
	return 0; /* auto: the perf ring serves it, filters in user space */
}

void ps_bpf__detach_counter(struct ps_session *s, uint32_t slot)
{
	struct ps_bpf_counter *b = s->slots[slot].bpf;

	if (!b)
		return;
	while (b->nlinks > 0)
		bpf_link__destroy(b->links[--b->nlinks]);
	free(b->links);
	b->links = NULL;
	if (b->skel && b->anchor_fd >= 0)
		close(b->anchor_fd);
	b->anchor_fd = -1;
	ps_sample_bpf__destroy(b->skel);
	b->skel = NULL;
}

void ps_bpf__free_counter(struct ps_session *s, uint32_t slot)
{
	struct ps_bpf_counter *b = s->slots[slot].bpf;

	if (!b)
		return;
	ps_bpf__detach_counter(s, slot);
	free(b->pids);
	free(b->cpus);
	free(b);
	s->slots[slot].bpf = NULL;
}

void ps_bpf__free(struct ps_session *s)
{
	struct ps_bpf_session *bs = s->bpf;

	if (!bs)
		return;
	ring_buffer__free(bs->rb);
	if (bs->rb_fd >= 0)
		close(bs->rb_fd);
	free(bs->ips);
	free(bs);
	s->bpf = NULL;
}

int ps_session__set_bpf(struct ps_session *s, ps_handle h, const struct ps_bpf_opts *o, char *msg,
			size_t msglen)
{
	struct ps_counter *c = ps_session__slot(s, h);
	struct ps_bpf_counter *b;
	pid_t *pids = NULL;
	int *cpus = NULL;

	if (msg && msglen)
		msg[0] = '\0';
	if (!c)
		return -PS_ERR_HANDLE;
	if (!o || o->sz < offsetof(struct ps_bpf_opts, entries) + sizeof(o->entries))
		return -EINVAL;
	if (!c->sampling) {
		if (msg && msglen)
			snprintf(msg, msglen,
				 "counter '%s' does not sample: in-kernel handling "
				 "needs a period= or freq= term",
				 c->name);
		return -EINVAL;
	}
	if ((o->npids && !(pids = malloc(o->npids * sizeof(*pids)))) ||
	    (o->ncpus && !(cpus = malloc(o->ncpus * sizeof(*cpus))))) {
		free(pids);
		return -ENOMEM;
	}
	if (!c->bpf && !(c->bpf = calloc(1, sizeof(*c->bpf)))) {
		free(pids);
		free(cpus);
		return -ENOMEM;
	}
	b = c->bpf;
	free(b->pids);
	free(b->cpus);
	if (o->npids)
		memcpy(pids, o->pids, o->npids * sizeof(*pids));
	if (o->ncpus)
		memcpy(cpus, o->cpus, o->ncpus * sizeof(*cpus));
	b->configured = true;
	b->backend = o->backend;
	b->mode = o->mode ? o->mode : PS_BPF_FORWARD;
	b->pids = pids;
	b->npids = o->npids;
	b->tid = o->tid;
	b->cpus = cpus;
	b->ncpus = o->ncpus;
	b->priv = o->priv;
	b->every = o->every;
	b->keys = o->keys;
	b->entries = o->entries;
	b->passed = 0;
	if (!c->open)
		return 0;
	{
		bool named;

		if (wanted(s, c, &named) != PS_BACKEND_BPF) {
			ps_bpf__detach_counter(s, (uint32_t)(c - s->slots));
			return 0;
		}
	}
	return ps_bpf__attach_counter(s, (uint32_t)(c - s->slots), msg, msglen);
}

enum ps_backend ps_session__backend(const struct ps_session *s, ps_handle h)
{
	const struct ps_counter *c = ps_session__slot(s, h);

	return c && c->bpf && c->bpf->skel ? PS_BACKEND_BPF : PS_BACKEND_PERF;
}

const char *ps_session__bpf_fallback(const struct ps_session *s)
{
	return s && s->bpf ? s->bpf->fallback : "";
}
