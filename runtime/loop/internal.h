/*
 * internal.h: the session driver's state, shared by loop/driver.c (start,
 * stop, the target), loop/signals.c, loop/drain.c (polling and draining the
 * session's sources) and loop/comm.c (pid -> command name). Nothing here is
 * part of the public ABI.
 */
#ifndef PS_LOOP_INTERNAL_H
#define PS_LOOP_INTERNAL_H

#include <signal.h>

#include "base/pidmap.h"
#include "loop/loop.h"

/* Records per dispatch; between dispatches a pending signal ends draining,
 * so a handler of 1 ms still answers SIGINT within half a second. */
#define PS_DRAIN_BUDGET 512
/* Low-rate samples arrive within 5 ms, and the time order of several
 * sources (sample/order.c) moves on at least that often. */
#define PS_DRAIN_INTERVAL_NS 5000000u
#define PS_DRAIN_IDLE_NS     80000000u /* the longest, after drains that found nothing */

struct ps_driver {
	struct ps_session *s;
	struct ps_loop *loop;
	struct ps_driver_opts o;
	struct ps_sample_ops client; /* the client's ops, called through ours */

	bool started;
	enum ps_stop_reason why;
	bool halted;		      /* no sample is delivered any more (exit(), an error) */
	int nsignals;		      /* signals acted on */
	int signo;		      /* the one that ended the session */
	int sigfd;		      /* eventfd the signal handler wakes the loop with, or -1 */
	volatile sig_atomic_t nasync; /* SIGINT/SIGTERM/SIGHUP caught (loop/signals.c) */
	volatile sig_atomic_t async_signo; /* caught and not acted on yet, or 0 */
	char text[64];

	bool target_done; /* the command or process exited */
	int target_wstatus;

	int nwatched;	       /* poll fds already on the loop */
	int drain_timer;       /* its id on the loop, or -1 before the first poll fd */
	uint64_t drain_ns;     /* its interval: longer while nothing comes */
	uint64_t drain_min_ns; /* the shortest (ps_driver__set_drain_interval) */
	bool draining;	       /* in a drain: a handler's drain_now does nothing */

	struct ps_pidmap comms; /* pid -> char[16] */
	pid_t *exited;		/* the last processes to exit, a ring (loop/comm.c) */
	size_t exited_head, nexited;
};

/* loop/drain.c: drain one source in budgets, yielding to signals and stop. */
size_t ps_driver__drain(struct ps_driver *d, int fd);
/* Timer id fires every interval_ns from now on. */
int ps_loop__set_timer(struct ps_loop *loop, int id, uint64_t interval_ns);
/* loop/signals.c: catch SIGINT, SIGTERM, SIGHUP, SIGPIPE for d (0 or
 * -errno), and give them back. */
int ps_driver__catch_signals(struct ps_driver *d);
void ps_driver__release_signals(struct ps_driver *d);
/* loop/comm.c: learn names from COMM and FORK records, forget them some
 * time after EXIT. */
void ps_driver__record_comm(struct ps_driver *d, const struct ps_record *r);
void ps_driver__free_comms(struct ps_driver *d);

#endif /* PS_LOOP_INTERNAL_H */
