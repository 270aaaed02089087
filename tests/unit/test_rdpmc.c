/*
 * test_rdpmc.c: self-monitoring reads through the mmap'd user page. A
 * hardware counter scheduled in is read with rdpmc, without a syscall; any
 * other counter (software, tracepoint) would have index 0 on the page, so
 * none is mapped for it (an mmap costs a walk of every counter of the
 * process in the kernel) and it is read with read(). Both must give the
 * same values as the kernel's read().
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/internal.h"
#include "tap.h"

static struct ps_session *self(void)
{
	struct ps_target_opts t = {.sz = sizeof(t), .kind = PS_TARGET_SELF};

	return ps_session__new(&t);
}

/* The kernel's own value of the counter's fd. */
static uint64_t kernel_read(struct ps_session *s, ps_handle h)
{
	const int *fds;
	uint64_t buf[5] = {0};

	if (ps_session__fds(s, h, &fds) == 1 && read(fds[0], buf, sizeof(buf)) < 0)
		return 0;
	return buf[0];
}

static void check(const char *spec, bool needs_pmu)
{
	struct ps_session *s = self();
	struct ps_event_error err;
	struct ps_value v1, v2;
	char msg[512] = "";
	ps_handle h;
	uint64_t k;
	struct ps_counter *c;

	if (!s || ps_session__allocate(s, spec, &h, 1, &err) != 1) {
		tap_ok(0, "%s: allocate", spec);
		ps_session__free(s);
		return;
	}
	if (ps_session__open(s, msg, sizeof(msg)) < 0) {
		if (needs_pmu)
			tap_skip("no hardware PMU here: rdpmc needs a hardware counter",
				 "%s reads with rdpmc", spec);
		else
			tap_ok(0, "%s opens: %s", spec, msg);
		ps_session__free(s);
		return;
	}
	c = ps_session__slot(s, h);
	if (needs_pmu)
		tap_ok(c && c->user_page, "%s: the user page is mapped for a self counter", spec);
	else
		tap_ok(
		    c && !c->user_page,
		    "%s: a software event gets no user page (no hardware index: read() serves it)",
		    spec);
	for (volatile int i = 0; i < 2000000; i++)
		;
	/* running: a user-page read, the kernel's, another user-page read */
	ps_session__read(s, h, &v1);
	k = kernel_read(s, h);
	ps_session__read(s, h, &v2);
	tap_ok(v1.raw > 0 && v1.raw <= k && k <= v2.raw,
	       "%s: running reads bracket the kernel's "
	       "(%llu <= %llu <= %llu)",
	       spec, (unsigned long long)v1.raw, (unsigned long long)k, (unsigned long long)v2.raw);
	tap_ok(v1.running <= v1.enabled, "%s: running <= enabled", spec);
	ps_session__stop(s, h); /* frozen: every read must agree */
	ps_session__read(s, h, &v1);
	k = kernel_read(s, h);
	tap_ok(v1.raw == k, "%s: a stopped counter reads the kernel's value (%llu)", spec,
	       (unsigned long long)k);
	ps_session__free(s);
}

int main(void)
{
	check("task-clock", false);
	check("cycles:u", true);
	check("instructions:u", true);
	return tap_done();
}
