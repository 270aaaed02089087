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
 * per fd and after (core/sampler.h), so it can give each CPU its ring and
 * attach what delivers the overflows. A breakpoint on a symbol gets its
 * address first (core/breakpoint.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/internal.h"

static int perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group_fd)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

/* The attr for one fd: the slot's attr plus the on/off state wanted now,
 * and a probe's target at this site. */
static void attr_for_open(const struct ps_session *s, const struct ps_counter *c, bool leads,
			  bool drop_group, uint32_t site, struct perf_event_attr *a)
{
	*a = c->attr;
	ps_counter__probe_attr(c, site, a);
	if (drop_group)
		a->read_format &= ~(uint64_t)PERF_FORMAT_GROUP;
	if (leads) {
		a->disabled = 1;
		a->enable_on_exec = s->kind == PS_TARGET_COMMAND && s->held && !c->stopped;
	} else {
		/* members follow their leader; a stopped one stays off */
		a->disabled = c->stopped;
		a->enable_on_exec = 0;
	}
}

/* A probe that fires at several sites (a USDT marker the compiler
 * inlined twice) is one fd per site and position; a group has one fd per
 * member and position, so such a probe must be a group of its own. */
static int check_sites(struct ps_session *s, uint32_t li, uint32_t m, char *msg, size_t msglen)
{
	const struct ps_counter *l = &s->slots[li], *c = &s->slots[l->members[m]];

	if (!c->probe || c->probe->nsites < 2 || l->nmembers == 1)
		return 0;
	if (msg && msglen)
		snprintf(msg, msglen,
			 "cannot open '%s': the marker is at %zu places in the file, one probe "
			 "each, and a group takes one event per member; count it outside the "
			 "group",
			 c->name, c->probe->nsites);
	return -EINVAL;
}

/* Every position once per site, a task's sites adjacent (core/read.c sums
 * a task's fds in a run). Returns the new count or -ENOMEM. */
static int by_site(struct ps_position **pos, int npos, uint32_t nsites)
{
	struct ps_position *v = malloc((size_t)npos * nsites * sizeof(*v));

	if (!v) {
		free(*pos);
		*pos = NULL;
		return -ENOMEM;
	}
	for (int p = 0; p < npos; p++)
		for (uint32_t k = 0; k < nsites; k++) {
			v[(size_t)p * nsites + k] = (*pos)[p];
			v[(size_t)p * nsites + k].site = k;
		}
	free(*pos);
	*pos = v;
	return npos * (int)nsites;
}

/* P: perf's "highest precision the PMU offers" is found by asking: lower
 * precise_ip one step after each refusal until the kernel takes it. */
static int open_precise(struct ps_counter *c, struct perf_event_attr *a, pid_t pid, int cpu,
			int group_fd)
{
	int fd = perf_event_open(a, pid, cpu, group_fd);

	while (fd < 0 && (errno == EINVAL || errno == EOPNOTSUPP) &&
	       (c->flags & PS_EVENT_PRECISE_MAX) && a->precise_ip > 0) {
		c->attr.precise_ip = --a->precise_ip;
		fd = perf_event_open(a, pid, cpu, group_fd);
	}
	return fd;
}

static int open_group(struct ps_session *s, uint32_t li, char *msg, size_t msglen)
{
	struct ps_counter *l = &s->slots[li];
	struct ps_position *pos = NULL;
	struct perf_event_attr a, la;
	bool drop_group = false;
	int npos, kept = 0, err = 0, at = 0; /* at: the position being opened */
	uint32_t m, bad = li;		     /* the slot whose open failed */
	bool sampling = false;

	for (m = 0; m < l->nmembers; m++) {
		sampling |= s->slots[l->members[m]].sampling;
		/* mem:SYMBOL gets its address, a probe its file offsets, in this
		 * target before anything opens */
		err = -ps_counter__resolve_bp(s, l->members[m], msg, msglen);
		if (!err)
			err = -ps_counter__resolve_probe(s, l->members[m], msg, msglen);
		if (!err)
			err = -check_sites(s, li, m, msg, msglen);
		if (err) {
			ps_counter__close_group(s, li);
			return -err;
		}
	}
	npos = ps_target__positions(s, l->cpu, sampling, &pos);
	for (int p = 0; p < npos; p++)
		pos[p].site = 0;
	if (npos > 0 && l->probe && l->probe->nsites > 1)
		npos = by_site(&pos, npos, (uint32_t)l->probe->nsites);
	if (npos < 0) {
		err = -npos;
		a = l->attr;
		goto fail;
	}
	if (sampling) {
		/* the sampler first: it may want each fd as it opens (a CPU's ring) */
		err = s->hooks ? -s->hooks->will_open(s, pos, npos, msg, msglen) : EOPNOTSUPP;
		if (err) {
			ps_counter__close_group(s, li);
			free(pos);
			return -err;
		}
	}
	for (m = 0; m < l->nmembers; m++) {
		struct ps_counter *c = &s->slots[l->members[m]];

		c->fds = malloc(npos * sizeof(*c->fds));
		c->ids = calloc(npos, sizeof(*c->ids));
		c->tasks = malloc(npos * sizeof(*c->tasks));
		if (!c->fds || !c->ids || !c->tasks) {
			err = ENOMEM;
			a = c->attr;
			bad = l->members[m];
			goto fail;
		}
		for (int p = 0; p < npos; p++)
			c->fds[p] = -1;
		c->nfds = npos;
	}
	for (int p = 0; p < npos; p++) {
		bool skip = false;

		at = p;
		for (m = 0; m < l->nmembers && !skip; m++) {
			struct ps_counter *c = &s->slots[l->members[m]];
			int fd;

			attr_for_open(s, c, m == 0, drop_group, pos[p].site, &a);
			fd = open_precise(c, &a, pos[p].pid, pos[p].cpu, m ? l->fds[kept] : -1);
			if (fd < 0 && errno == EINVAL && m == 0 && kept == 0 && a.inherit &&
			    (a.read_format & PERF_FORMAT_GROUP)) {
				/* Kernels before group reads of inherited events (6.18 accepts
				 * them) say EINVAL: read the members one by one instead. */
				drop_group = true;
				attr_for_open(s, c, true, true, pos[p].site, &a);
				fd = perf_event_open(&a, pos[p].pid, pos[p].cpu, -1);
			}
			if (fd < 0) {
				err = errno;
				/* a thread of a -p target that exited since /proc was listed */
				if (err == ESRCH && s->kind == PS_TARGET_PID) {
					skip = true;
					break;
				}
				bad = l->members[m];
				goto fail;
			}
			c->fds[kept] = fd;
			c->tasks[kept] = pos[p].pid;
			if (ioctl(fd, PERF_EVENT_IOC_ID, &c->ids[kept]) < 0) {
				err = errno;
				bad = l->members[m];
				goto fail;
			}
			if (c->sampling) {
				err = -s->hooks->fd_opened(s, l->members[m], fd, pos[p].cpu);
				if (err) {
					bad = l->members[m];
					goto fail;
				}
			}
		}
		if (!skip) {
			kept++;
			continue;
		}
		for (uint32_t j = 0; j < l->nmembers; j++) {
			struct ps_counter *c = &s->slots[l->members[j]];

			if (c->fds[kept] >= 0)
				close(c->fds[kept]);
			c->fds[kept] = -1;
		}
	}
	if (kept == 0) {
		err = ESRCH; /* every thread was gone */
		a = l->attr;
		goto fail;
	}
	l->rbuf_words = 3 + (size_t)l->nmembers * 3;
	/* the read() buffer, then each member's part of a span (core/read.c) */
	l->rbuf = calloc(l->rbuf_words + l->nmembers, sizeof(*l->rbuf));
	if (!l->rbuf) {
		err = ENOMEM;
		goto fail;
	}
	for (m = 0; m < l->nmembers; m++) {
		struct ps_counter *c = &s->slots[l->members[m]];

		c->nfds = kept;
		/* before anything is enabled, so no overflow takes the wrong path */
		if (c->sampling && (err = -s->hooks->attach(s, l->members[m], msg, msglen))) {
			bad = l->members[m];
			goto attach_fail;
		}
		c->open = true;
		c->group_fmt = !drop_group && (c->attr.read_format & PERF_FORMAT_GROUP);
		if (s->kind == PS_TARGET_SELF && c->nfds == 1 && !c->group_fmt && !c->sampling)
			ps_counter__map_user_page(c);
		/* members run with their leader unless stopped; the leader is enabled later */
		c->running = m > 0 && !c->stopped;
	}
	free(pos);
	return 0;
attach_fail:
	/* the sampler's message says what failed (a program that did not load);
	 * the fds themselves were fine */
	ps_counter__close_group(s, li);
	free(pos);
	return -err;
fail:
	if (msg && msglen) {
		struct ps_open_failure f = {
		    .name = s->slots[bad].name,
		    .attr = &a,
		    .leader = bad == li ? NULL : &la,
		    .err = err,
		    .kind = s->kind,
		    .pid = err != ESRCH && pos && at < npos ? pos[at].pid : s->pid,
		    .cpu = pos && at < npos ? pos[at].cpu : l->cpu,
		};

		attr_for_open(s, l, true, drop_group, 0, &la);
		ps_explain_open_error(&f, msg, msglen);
	}
	ps_counter__close_group(s, li);
	free(pos);
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

/* Open leader li's group; a weak group the kernel refuses opens ungrouped.
 * The leaders opened are appended to opened[*n]. */
static int open_leader(struct ps_session *s, uint32_t li, uint32_t *opened, uint32_t *n, char *msg,
		       size_t msglen)
{
	struct ps_counter *l = &s->slots[li];
	uint32_t nm = l->nmembers, *members = l->members;
	int err = open_group(s, li, msg, msglen);

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
		err = open_leader(s, i, opened, &n, msg, msglen);
		if (err) {
			c->open_failed = true; /* reported now; a later open skips it */
			goto cleanup;
		}
	}
	for (uint32_t k = 0; k < n; k++) {
		err = enable_opened(s, opened[k]);
		if (err)
			goto cleanup;
	}
cleanup:
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
