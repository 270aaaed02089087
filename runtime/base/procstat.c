/*
 * procstat.c: /proc/PID/stat, read and parsed (base/procstat.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/procstat.h"

int ps_procstat__read(pid_t pid, struct ps_procstat *st)
{
	char path[64], buf[1024];
	unsigned long long ut, sy, cut, cst, start;
	const char *after;
	ssize_t n;
	int fd, pg;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	/* fields 3 (state) on; 14-17 the times, 22 the start */
	if (!(after = strrchr(buf, ')')) ||
	    sscanf(after + 1,
		   " %c %*d %d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu %*d %*d %*d %*d "
		   "%llu",
		   &st->state, &pg, &ut, &sy, &cut, &cst, &start) != 7)
		return -EIO;
	st->pgrp = pg;
	st->utime = ut, st->stime = sy, st->cutime = cut, st->cstime = cst;
	st->start = start;
	return 0;
}
