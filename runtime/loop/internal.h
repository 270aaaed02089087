/*
 * internal.h: the session driver's state, shared by loop/driver.c (start,
 * stop, signals, the target), loop/drain.c (polling and draining the
 * session's sources), loop/comm.c (pid -> command name) and loop/bpfconf.c
 * (merging BPF options per counter). Nothing here is part of the public ABI.
 */
#ifndef PS_LOOP_INTERNAL_H
#define PS_LOOP_INTERNAL_H

#include "base/pidmap.h"
#include "perfscript.h"

/* Records per dispatch; between dispatches a pending signal ends draining,
 * so a handler of 1 ms still answers SIGINT within half a second. */
#define PS_DRAIN_BUDGET 512
/* Low-rate samples arrive within 5 ms, and the time order of several
 * sources (sample/order.c) moves on at least that often. */
#define PS_DRAIN_INTERVAL_NS 5000000u

struct ps_bpf_conf; /* loop/bpfconf.c */

struct ps_driver {
	struct ps_session *s;
	struct ps_loop *loop;
	struct ps_driver_opts o;
	struct ps_sample_ops client; /* the client's ops, called through ours */

	bool started;
	enum ps_stop_reason why;
	bool halted;  /* no sample is delivered any more (exit(), an error) */
	int nsignals; /* SIGINT/SIGTERM seen */
	int signo;    /* the one that ended the session */
	char text[64];

	bool target_done; /* the command or process exited */
	int target_wstatus;

	int nwatched; /* poll fds already on the loop */
	bool drain_timer;

	struct ps_pidmap comms; /* pid -> char[16] */
	struct ps_bpf_conf *confs;
	size_t nconfs, capconfs;
};

/* loop/drain.c: drain one source in budgets, yielding to signals and stop. */
void ps_driver__drain(struct ps_driver *d, int fd);
/* loop/comm.c: learn names from COMM and FORK records. */
void ps_driver__record_comm(struct ps_driver *d, const struct ps_record *r);
void ps_driver__free_comms(struct ps_driver *d);
/* loop/bpfconf.c */
void ps_driver__free_confs(struct ps_driver *d);

#endif /* PS_LOOP_INTERNAL_H */
