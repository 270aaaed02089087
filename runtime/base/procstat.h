/*
 * procstat.h: the fields of /proc/PID/stat that perfscript reads
 * (runtime/base/procstat.c), parsed in one place: the command's name may
 * hold spaces and parentheses, so the fields are those after its last ')'.
 */
#ifndef PS_BASE_PROCSTAT_H
#define PS_BASE_PROCSTAT_H

#include <stdint.h>
#include <sys/types.h>

struct ps_procstat {
	char state;		 /* R, S, D, Z, ... */
	pid_t pgrp;		 /* its process group */
	uint64_t utime, stime;	 /* its CPU time, in clock ticks */
	uint64_t cutime, cstime; /* its reaped children's */
	uint64_t start;		 /* its start, in clock ticks since boot */
};

/* pid's stat into *st: 0, -errno when it cannot be opened (gone: ENOENT),
 * -EIO when it does not parse. */
int ps_procstat__read(pid_t pid, struct ps_procstat *st);

#endif
