/*
 * cputime.c: the -c command's user and system CPU time. Once it is
 * reaped, wait4's (its own and its waited-for children's, to the
 * microsecond); while it still runs (the session ended first: Ctrl-C, -T,
 * exit()), what /proc/PID/stat says it used so far, the same sums to the
 * clock tick, as perf stat prints them after a Ctrl-C.
 */
#include <errno.h>
#include <unistd.h>

#include "base/procstat.h"
#include "core/internal.h"

/* utime + cutime and stime + cstime of pid, in microseconds: 0 or -errno. */
static int proc_times(pid_t pid, uint64_t *user_us, uint64_t *sys_us)
{
	long tick = sysconf(_SC_CLK_TCK);
	struct ps_procstat st;
	int err = tick > 0 ? ps_procstat__read(pid, &st) : -EIO;

	if (err)
		return err;
	*user_us = (st.utime + st.cutime) * 1000000ull / (unsigned long long)tick;
	*sys_us = (st.stime + st.cstime) * 1000000ull / (unsigned long long)tick;
	return 0;
}

int ps_session__cpu_times(const struct ps_session *s, uint64_t *user_us, uint64_t *sys_us)
{
	if (!s || !user_us || !sys_us)
		return -EINVAL;
	if (!s->has_command)
		return -ECHILD;
	if (!s->reaped)
		return s->held ? -EAGAIN : proc_times(s->pid, user_us, sys_us);
	*user_us = s->user_us;
	*sys_us = s->sys_us;
	return 0;
}
