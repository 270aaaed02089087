/*
 * jitwhere.h: where a process's JIT map is and whose it is
 * (symbols/jitwhere.c), for symbols/jit.c.
 */
#ifndef PS_SYMBOLS_JITWHERE_H
#define PS_SYMBOLS_JITWHERE_H

#include <stdint.h>
#include <sys/types.h>

struct ps_jit_where {
	char path[64];	  /* as the process names it: /tmp/perf-NSPID.map */
	pid_t root_pid;	  /* read through /proc/root_pid/root; 0: our own /tmp */
	uid_t uid;	  /* the process's user, or 0 when it was gone */
	uint64_t born_ns; /* its start (CLOCK_REALTIME, never later than it was), 0 when unknown */
};

/* Asked while pid runs (its first unnamed address): what a map needs to be
 * found and trusted later, when pid may be gone or another process. */
void ps_jit__where(pid_t pid, struct ps_jit_where *w);

#endif /* PS_SYMBOLS_JITWHERE_H */
