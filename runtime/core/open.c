/*
 * open.c: turning allocated counters into perf_event fds. A group is
 * opened position by position (one thread or CPU of the target at a time),
 * leader then members with group_fd set to the leader's fd at that position,
 * and is all-or-nothing: on any failure every fd this call opened is closed
 * and the caller gets the kernel's negative errno (-ENOENT for an event this
 * machine lacks, deliberately not -PS_ERR_NOT_SUPPORTED, so callers can tell
 * causes apart) plus a sentence from ps_explain_open_error() naming the
 * event. Leaders are opened disabled and enabled at the end, except on a
 * held command, where enable_on_exec arms them so counting starts at the
 * command's exec and not a moment before. A group with a sampling member
 * opens once per task and CPU, and the session's sampler is told before,
 * per fd and after (core/sampler_hooks.h), so it can give each CPU its ring and
 * attach what delivers the overflows. A breakpoint on a symbol gets its
 * address first (core/breakpoint.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/perf.h"
#include "core/internal.h"

/* P: perf's "highest precision the PMU offers" is found by asking: lower
 * precise_ip one step after each refusal until the kernel takes it. A CPU
 * of a -G target counts its cgroup's tasks only. */
static int open_precise(const struct ps_session *s, struct ps_counter *c, struct perf_event_attr *a,
			pid_t pid, int cpu, int group_fd)
{
	int fd = ps_perf__open_in(a, pid, s->cgroup_fd, cpu, group_fd);

	while (fd < 0 && (errno == EINVAL || errno == EOPNOTSUPP) &&
	       (c->flags & PS_EVENT_PRECISE_MAX) && a->precise_ip > 0) {
		c->attr.precise_ip = --a->precise_ip;
		fd = ps_perf__open_in(a, pid, s->cgroup_fd, cpu, group_fd);
	}
	return fd;
}

/* One opening of a group: where it stands, and what failed for the sentence
 * that explains it. */
struct opening {
	struct ps_session *s;
	uint32_t li;
	struct ps_position *pos;
	int npos, kept, at;	  /* positions; fds kept; the position being opened */
	bool drop_group;	  /* the kernel refused a group read: members one by one */
	uint32_t bad;		  /* the slot whose open failed */
	struct perf_event_attr a; /* as passed to the open that failed */
	int err;		  /* positive errno */
};

/* Before any fd: addresses of breakpoints and probes in this target, then
 * where to open and the sampler's preparation. 0, > 0 (an errno) already
 * explained in msg, or < 0 (-errno) to be explained by fail(). */
static int prepare(struct opening *o, char *msg, size_t msglen)
{
	struct ps_session *s = o->s;
	struct ps_counter *l = &s->slots[o->li];
	const char *sampler = NULL; /* its first sampling member's name */
	int err = 0;

	for (uint32_t m = 0; m < l->nmembers && !err; m++) {
		if (!sampler && s->slots[l->members[m]].sampling)
			sampler = s->slots[l->members[m]].name;
		err = -ps_counter__resolve_bp(s, l->members[m], msg, msglen);
		if (!err)
			err = -ps_counter__resolve_probe(s, l->members[m], msg, msglen);
		if (!err)
			err = -ps_counter__check_sites(s, o->li, m, msg, msglen);
	}
	if (err)
		return err;
	o->npos = ps_target__positions(s, l->cpu, sampler, &o->pos);
	for (int p = 0; p < o->npos; p++)
		o->pos[p].site = 0;
	if (o->npos > 0 && l->probe && l->probe->nsites > 1)
		o->npos = ps_positions__by_site(&o->pos, o->npos, (uint32_t)l->probe->nsites);
	if (o->npos < 0)
		return o->npos;
	/* the sampler first: it may want each fd as it opens (a CPU's ring) */
	if (!sampler)
		return 0;
	return s->hooks ? -s->hooks->will_open(s, sampler, o->pos, o->npos, msg, msglen)
			: EOPNOTSUPP;
}

/* Every member's fd, id and task arrays, one entry per position. */
static int alloc_fds(struct opening *o)
{
	struct ps_counter *l = &o->s->slots[o->li];

	for (uint32_t m = 0; m < l->nmembers; m++) {
		struct ps_counter *c = &o->s->slots[l->members[m]];

		c->fds = malloc(o->npos * sizeof(*c->fds));
		c->ids = calloc(o->npos, sizeof(*c->ids));
		c->tasks = malloc(o->npos * sizeof(*c->tasks));
		c->cpus = malloc(o->npos * sizeof(*c->cpus));
		if (!c->fds || !c->ids || !c->tasks || !c->cpus) {
			o->bad = l->members[m];
			return -ENOMEM;
		}
		for (int p = 0; p < o->npos; p++)
			c->fds[p] = -1;
		c->nfds = o->npos;
	}
	return 0;
}

/* Member m at position p: fd o->kept. 0, 1 when the thread is gone (a -p
 * target's thread that exited since /proc was listed), or -errno. */
static int open_member(struct opening *o, uint32_t m, int p)
{
	struct ps_session *s = o->s;
	struct ps_counter *l = &s->slots[o->li], *c = &s->slots[l->members[m]];
	const struct ps_position *at = &o->pos[p];
	int fd;

	ps_counter__open_attr(s, c, m == 0, o->drop_group, at->site, &o->a);
	fd = open_precise(s, c, &o->a, at->pid, at->cpu, m ? l->fds[o->kept] : -1);
	if (fd == -EINVAL && m == 0 && o->kept == 0 && o->a.inherit &&
	    (o->a.read_format & PERF_FORMAT_GROUP)) {
		/* Kernels before group reads of inherited events (6.18 accepts
		 * them) say EINVAL: read the members one by one instead. */
		o->drop_group = true;
		ps_counter__open_attr(s, c, true, true, at->site, &o->a);
		fd = ps_perf__open(&o->a, at->pid, at->cpu, -1);
	}
	if (fd == -ESRCH && s->kind == PS_TARGET_PID)
		return 1;
	if (fd >= 0) {
		c->fds[o->kept] = fd;
		c->tasks[o->kept] = at->pid;
		c->cpus[o->kept] = at->cpu;
		fd = ioctl(fd, PERF_EVENT_IOC_ID, &c->ids[o->kept]) < 0 ? -errno : 0;
	}
	if (!fd && c->sampling)
		fd = s->hooks->fd_opened(s, l->members[m], c->fds[o->kept], at->cpu);
	if (fd < 0)
		o->bad = l->members[m];
	return fd < 0 ? fd : 0;
}

/* Every position, leader then members; a position whose thread is gone is
 * dropped. 0 or -errno. */
static int open_positions(struct opening *o)
{
	struct ps_counter *l = &o->s->slots[o->li];

	for (int p = 0; p < o->npos; p++) {
		int rc = 0;

		o->at = p;
		for (uint32_t m = 0; m < l->nmembers && !rc; m++)
			rc = open_member(o, m, p);
		if (rc < 0)
			return rc;
		if (!rc) {
			o->kept++;
			continue;
		}
		for (uint32_t j = 0; j < l->nmembers; j++) {
			struct ps_counter *c = &o->s->slots[l->members[j]];

			if (c->fds[o->kept] >= 0)
				close(c->fds[o->kept]);
			c->fds[o->kept] = -1;
		}
	}
	return o->kept ? 0 : -ESRCH; /* every thread was gone */
}

/* Every fd is open: the read buffer, the sampler's attach, the state. 0,
 * or -errno with msg filled by the sampler. */
static int finish(struct opening *o, char *msg, size_t msglen)
{
	struct ps_session *s = o->s;
	struct ps_counter *l = &s->slots[o->li];
	struct ps_read_layout lay;
	int err;

	ps_read_layout__init(&lay, l->attr.read_format | PERF_FORMAT_GROUP);
	l->rbuf_words = ps_read_layout__words(&lay, l->nmembers);
	/* the read() buffer, then each member's part of a span (core/read.c) */
	l->rbuf = calloc(l->rbuf_words + l->nmembers, sizeof(*l->rbuf));
	if (!l->rbuf)
		return -ENOMEM;
	for (uint32_t m = 0; m < l->nmembers; m++) {
		struct ps_counter *c = &s->slots[l->members[m]];

		c->nfds = o->kept;
		/* before anything is enabled, so no overflow takes the wrong path */
		if (c->sampling && (err = s->hooks->attach(s, l->members[m], msg, msglen)))
			return err;
		c->open = true;
		c->group_fmt = !o->drop_group && (c->attr.read_format & PERF_FORMAT_GROUP);
		/* only a hardware counter ever has an index to rdpmc: a page for a
		 * software event would only cost an mmap, which the kernel makes
		 * each counter of the process hear of (quadratic in their number) */
		if (s->kind == PS_TARGET_SELF && c->nfds == 1 && !c->group_fmt && !c->sampling &&
		    c->attr.type != PERF_TYPE_SOFTWARE && c->attr.type != PERF_TYPE_TRACEPOINT &&
		    c->attr.type != PERF_TYPE_BREAKPOINT)
			ps_counter__map_user_page(c);
		/* members run with their leader unless stopped; the leader is enabled later */
		c->running = m > 0 && !c->stopped;
	}
	return 0;
}

/* The sentence for an open that failed: which event, why, what to do. */
static void explain(const struct opening *o, char *msg, size_t msglen)
{
	const struct ps_session *s = o->s;
	const struct ps_counter *l = &s->slots[o->li];
	bool here = o->pos && o->at < o->npos;
	struct perf_event_attr la;
	struct ps_open_failure f = {
	    .name = s->slots[o->bad].name,
	    .attr = &o->a,
	    .leader = o->bad == o->li ? NULL : &la,
	    .err = o->err,
	    .kind = s->kind,
	    .pid = o->err != ESRCH && here ? o->pos[o->at].pid : s->pid,
	    .cpu = here ? o->pos[o->at].cpu : l->cpu,
	};

	ps_counter__open_attr(s, l, true, o->drop_group, 0, &la);
	ps_explain_open_error(&f, msg, msglen);
}

static int open_group(struct ps_session *s, uint32_t li, char *msg, size_t msglen)
{
	struct opening o = {.s = s, .li = li, .bad = li};
	int err = prepare(&o, msg, msglen);

	if (err > 0) /* explained already */
		goto cleanup;
	o.a = s->slots[li].attr;
	if (!err)
		err = alloc_fds(&o);
	if (!err)
		err = open_positions(&o);
	if (err < 0) {
		o.err = -err;
		if (msg && msglen)
			explain(&o, msg, msglen);
		err = o.err;
		goto cleanup;
	}
	/* a failed attach is the sampler's to say (a program that did not
	 * load); the fds themselves were fine */
	err = -finish(&o, msg, msglen);
cleanup:
	if (err)
		ps_counter__close_group(s, li);
	free(o.pos);
	return -err;
}

/* W: perf stat's weak group. When the kernel will not take the events as
 * one group (too many for the PMU, a read too large, a member that cannot
 * join), each is counted on its own instead, as its own leader. */
static bool weak_refusal(const struct ps_counter *l, int err)
{
	return (l->flags & PS_EVENT_WEAK_GROUP) && l->nmembers > 1 &&
	       (err == EINVAL || err == E2BIG || err == ENOSPC || err == EOPNOTSUPP);
}

static int ungroup(struct ps_session *s, uint32_t li)
{
	struct ps_counter *l = &s->slots[li];

	for (uint32_t m = 1; m < l->nmembers; m++) {
		uint32_t ms = l->members[m];
		struct ps_counter *c = &s->slots[ms];

		if (!(c->members = malloc(sizeof(*c->members))))
			return -ENOMEM;
		c->members[0] = ms;
		c->nmembers = 1;
		c->leader = ms;
		c->attr.read_format &= ~(uint64_t)PERF_FORMAT_GROUP;
		c->attr.disabled = 1;
	}
	l->nmembers = 1;
	l->attr.read_format &= ~(uint64_t)PERF_FORMAT_GROUP;
	l->flags &= ~(unsigned)PS_EVENT_WEAK_GROUP;
	return 0;
}

/* perf's rule for a user the kernel will not let count the kernel
 * (kernel.perf_event_paranoid 2 and no CAP_PERFMON): count user space only,
 * as perf stat and perf record do, and let the session say so
 * (ps_session__user_only). Not for what lives in the kernel
 * (tracepoints, probes, breakpoints), for events already without the kernel
 * or without user space, nor system-wide, which :u would not make allowed. */
static bool fall_back_to_user(struct ps_session *s, uint32_t li, int err)
{
	struct ps_counter *l = &s->slots[li];
	long paranoid = 2;
	FILE *f;

	if ((err != EACCES && err != EPERM) || s->kind == PS_TARGET_CPUS)
		return false;
	for (uint32_t m = 0; m < l->nmembers; m++) {
		const struct perf_event_attr *a = &s->slots[l->members[m]].attr;

		if (a->exclude_kernel || a->exclude_user || a->type == PERF_TYPE_TRACEPOINT ||
		    a->type == PERF_TYPE_BREAKPOINT || s->slots[l->members[m]].probe)
			return false;
	}
	if ((f = fopen("/proc/sys/kernel/perf_event_paranoid", "re"))) {
		if (fscanf(f, "%ld", &paranoid) != 1)
			paranoid = 2;
		fclose(f);
	}
	if (paranoid < 2)
		return false; /* the kernel was allowed: something else refused */
	/* names stay as allocated: scripts and tapsets index values by them */
	for (uint32_t m = 0; m < l->nmembers; m++) {
		struct ps_counter *c = &s->slots[l->members[m]];

		c->attr.exclude_kernel = c->attr.exclude_hv = 1;
	}
	s->user_only = true;
	return true;
}

/* Open leader li's group; a weak group the kernel refuses opens ungrouped.
 * The leaders opened are appended to opened[*n]. */
static int open_leader(struct ps_session *s, uint32_t li, uint32_t *opened, uint32_t *n, char *msg,
		       size_t msglen)
{
	struct ps_counter *l = &s->slots[li];
	uint32_t nm = l->nmembers, *members = l->members;
	int err = open_group(s, li, msg, msglen);

	if (err && fall_back_to_user(s, li, -err)) {
		if (msg && msglen)
			msg[0] = '\0';
		err = open_group(s, li, msg, msglen);
	}

	if (err == 0 || !weak_refusal(l, -err)) {
		if (err == 0)
			opened[(*n)++] = li;
		return err;
	}
	if ((err = ungroup(s, li)) < 0)
		return err;
	for (uint32_t m = 0; m < nm; m++) {
		if (msg && msglen)
			msg[0] = '\0';
		if ((err = open_group(s, members[m], msg, msglen)) < 0)
			return err;
		opened[(*n)++] = members[m];
	}
	return 0;
}

/* Enable what open_group() left disabled, unless stopped or armed for exec. */
static int enable_opened(struct ps_session *s, uint32_t li)
{
	struct ps_counter *l = &s->slots[li];

	if (l->stopped)
		return 0;
	if (s->kind == PS_TARGET_COMMAND && s->held) {
		l->running = true; /* armed: enable_on_exec starts it */
		return 0;
	}
	return ps_counter__enable_group(s, li);
}

int ps_session__open(struct ps_session *s, char *msg, size_t msglen)
{
	uint32_t *opened = NULL, n = 0;
	int err = 0;

	if (!s)
		return -EINVAL;
	if (msg && msglen)
		msg[0] = '\0';
	opened = malloc((s->nslots ? s->nslots : 1) * sizeof(*opened));
	if (!opened)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->nslots; i++) {
		struct ps_counter *c = &s->slots[i];

		/* A group whose own open already failed was reported to its
		 * caller then (e.g. counter:start()); it must not fail the
		 * whole context again. */
		if (!c->live || c->leader != i || c->open || c->open_failed)
			continue;
		if (s->cancel && *s->cancel) {
			err = -EINTR;
			goto cleanup;
		}
		err = open_leader(s, i, opened, &n, msg, msglen);
		if (err) {
			c->open_failed = true; /* reported now; a later open skips it */
			goto cleanup;
		}
	}
	for (uint32_t k = 0; k < n; k++) {
		err = s->cancel && *s->cancel ? -EINTR : enable_opened(s, opened[k]);
		if (err)
			goto cleanup;
	}
cleanup:
	if (err == -EINTR && msg && msglen)
		snprintf(msg, msglen, "interrupted while opening counters");
	if (err) {
		if (msg && msglen && !msg[0])
			snprintf(msg, msglen, "cannot enable counters: %s", ps_strerror(err));
		for (uint32_t k = 0; k < n; k++)
			ps_counter__close_group(s, opened[k]);
	}
	free(opened);
	return err;
}

int ps_session__open_counter(struct ps_session *s, ps_handle h, char *msg, size_t msglen)
{
	struct ps_counter *c = ps_session__slot(s, h);
	uint32_t li;
	int err;

	if (!c)
		return -PS_ERR_HANDLE;
	if (msg && msglen)
		msg[0] = '\0';
	if (c->open)
		return 0;
	li = c->leader;
	{
		uint32_t opened[2], n = 0, nm = s->slots[li].nmembers;
		uint32_t *all = nm > 1 ? malloc(nm * sizeof(*all)) : opened;

		if (!all)
			return -ENOMEM;
		err = open_leader(s, li, all, &n, msg, msglen);
		for (uint32_t k = 0; k < n && !err; k++)
			err = enable_opened(s, all[k]);
		if (err)
			for (uint32_t k = 0; k < n; k++)
				ps_counter__close_group(s, all[k]);
		if (all != opened)
			free(all);
	}
	s->slots[li].open_failed = err != 0;
	return err;
}

bool ps_session__user_only(const struct ps_session *s)
{
	return s && s->user_only;
}
