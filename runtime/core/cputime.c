/*
 * cputime.c: the -c command's user and system CPU time. Once it is
 * reaped, wait4's (its own and its waited-for children's, to the
 * microsecond); while it still runs (the session ended first: Ctrl-C, -T,
 * exit()), what /proc/PID/stat says it used so far, the same sums to the
 * clock tick, as perf stat prints them after a Ctrl-C.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"

/* utime + cutime and stime + cstime of pid, in microseconds: 0 or -errno. */
static int proc_times(pid_t pid, uint64_t *user_us, uint64_t *sys_us)
{
	char path[64], buf[1024];
	unsigned long long ut, st, cut, cst;
	long tick = sysconf(_SC_CLK_TCK);
	const char *after;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the name may hold spaces and parentheses: the fields follow the last ')' */
	if (!(after = strrchr(buf, ')')) || tick <= 0 ||
	    sscanf(after + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
		   &ut, &st, &cut, &cst) != 4)
		return -EIO;
	*user_us = (ut + cut) * 1000000ull / (unsigned long long)tick;
	*sys_us = (st + cst) * 1000000ull / (unsigned long long)tick;
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
