/*
 * control.c: starting, stopping and resetting counters. A group starts and
 * stops whole through its leader; a member alone through its own fds (and
 * the leader is re-scheduled so it counts at once). On a -c command still
 * held before exec nothing is enabled: counting starts at the exec
 * (enable_on_exec), so a start there arms and a stop disarms (by opening
 * the counter again: disabling does not disarm). A sampling counter's
 * sampler is told of each switch, since a backend that filters in the
 * kernel away from the counter's fds must follow it.
 */
#include <errno.h>
#include <sys/ioctl.h>

#include "core/internal.h"

/* ioctl every fd of c; 0 or the first -errno. */
static int ioctl_all(struct ps_counter *c, unsigned long req, unsigned long arg)
{
	int ret = 0;

	for (int i = 0; i < c->nfds; i++)
		if (ioctl(c->fds[i], req, arg) < 0 && !ret)
			ret = -errno;
	return ret;
}

/*
 * Enable a group. Kernel 6.18 finding: a sibling enabled while its group is
 * already scheduled in (PERF_IOC_FLAG_GROUP enables the leader first) is not
 * scheduled until the group is next switched in, so in a mixed-PMU group such
 * as {task-clock,syscalls:...} it reads time_running 0 for a whole burst of
 * work. Enabling the members first and the leader last avoids that.
 */
/* Tell the sampler a sampling counter went on or off (a backend that
 * filters in the kernel, away from the counter's fds, needs to know). */
static void switched(struct ps_session *s, struct ps_counter *c, bool on)
{
	if (c->sampling && c->open && s->hooks && s->hooks->switched)
		s->hooks->switched(s, (uint32_t)(c - s->slots), on);
}

int ps_counter__enable_group(struct ps_session *s, uint32_t li)
{
	struct ps_counter *l = &s->slots[li];
	int ret = 0, r;

	for (uint32_t m = 1; m < l->nmembers; m++) {
		struct ps_counter *c = &s->slots[l->members[m]];

		r = ioctl_all(c, PERF_EVENT_IOC_ENABLE, 0);
		ret = ret ? ret : r;
		c->running = true;
		c->stopped = false;
		switched(s, c, true);
	}
	r = ioctl_all(l, PERF_EVENT_IOC_ENABLE, 0);
	ret = ret ? ret : r;
	l->running = true;
	l->stopped = false;
	switched(s, l, true);
	return ret;
}

/* Starting on a held command: counting must begin at its exec, so nothing
 * may be enabled now (the child's last steps before exec would count). A
 * leader opened armed (enable_on_exec) already is; a member only needs its
 * own enable, which counts once its leader does; a leader opened stopped is
 * closed and opened again, armed. */
static int start_held(struct ps_session *s, struct ps_counter *c, uint32_t li)
{
	struct ps_counter *l = &s->slots[li];
	int ret;

	if (c != l) {
		ret = ioctl_all(c, PERF_EVENT_IOC_ENABLE, 0);
		c->running = ret == 0;
		switched(s, c, true);
		return ret;
	}
	if (l->running)
		return 0;
	ps_counter__close_group(s, li);
	for (uint32_t m = 0; m < l->nmembers; m++)
		s->slots[l->members[m]].stopped = false;
	return ps_session__open_counter(s, ps_session__handle(s, li), NULL, 0);
}

int ps_session__start(struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h), *l;
	uint32_t i;
	int ret;

	if (!c)
		return -PS_ERR_HANDLE;
	i = (uint32_t)(c - s->slots);
	l = &s->slots[c->leader];
	c->stopped = false;
	if (!c->open) {
		if (l == c)
			for (uint32_t m = 0; m < l->nmembers; m++)
				s->slots[l->members[m]].stopped = false;
		return ps_session__open_counter(s, h, NULL, 0);
	}
	if (s->kind == PS_TARGET_COMMAND && s->held)
		return start_held(s, c, c->leader);
	if (l == c)
		return ps_counter__enable_group(s, i);
	ret = ioctl_all(c, PERF_EVENT_IOC_ENABLE, 0);
	c->running = ret == 0;
	switched(s, c, true);
	if (!ret && l->running) {
		/* see ps_counter__enable_group: re-schedule the group so the member counts now */
		ioctl_all(l, PERF_EVENT_IOC_DISABLE, 0);
		ret = ioctl_all(l, PERF_EVENT_IOC_ENABLE, 0);
	}
	return ret;
}

int ps_session__stop(struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h), *l;
	int ret;

	if (!c)
		return -PS_ERR_HANDLE;
	l = &s->slots[c->leader];
	c->stopped = true;
	if (!c->open)
		return 0;
	if (l != c) {
		ret = ioctl_all(c, PERF_EVENT_IOC_DISABLE, 0);
		c->running = false;
		switched(s, c, false);
		return ret;
	}
	if (s->kind == PS_TARGET_COMMAND && s->held && l->running) {
		/* armed for exec: disabling now would not disarm it; open it again unarmed */
		ps_counter__close_group(s, c->leader);
		return ps_session__open_counter(s, h, NULL, 0);
	}
	ret = ioctl_all(l, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	for (uint32_t m = 0; m < l->nmembers; m++) {
		s->slots[l->members[m]].running = false;
		switched(s, &s->slots[l->members[m]], false);
	}
	return ret;
}

int ps_session__reset(struct ps_session *s, ps_handle h)
{
	struct ps_counter *c = ps_session__slot(s, h);

	if (!c)
		return -PS_ERR_HANDLE;
	if (!c->open)
		return 0;
	if (c->handed)
		return s->hooks->read(s, (uint32_t)(c - s->slots), NULL, true);
	return ioctl_all(c, PERF_EVENT_IOC_RESET,
			 c->leader == (uint32_t)(c - s->slots) ? PERF_IOC_FLAG_GROUP : 0);
}
