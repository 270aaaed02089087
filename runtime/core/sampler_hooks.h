/*
 * sampler_hooks.h: how the counter core hands overflow delivery to its sampler.
 * The core knows no ring and no BPF: it keeps one pointer to the session's
 * sampler (runtime/sample/, a layer up) and calls it through these hooks at
 * the points of a sampling counter's life; the sampler installs them when
 * it makes the session (session/session.c). Callbacks flow up, data flows
 * down. Every hook gets the session and the counter's slot; the sampler
 * keeps what it needs per counter behind ps_counter.sampled.
 */
#ifndef PS_CORE_SAMPLER_HOOKS_H
#define PS_CORE_SAMPLER_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

struct ps_session;
struct ps_events;
struct ps_position;
struct ps_value;
struct ps_sampler; /* the sampler's own state, opaque here */

struct ps_sampler_hooks {
	/* ps_session__allocate: counter slot, event i of evs, samples; its
	 * attr already has the target's part. 0 or -errno. */
	int (*prepare)(struct ps_session *s, uint32_t slot, const struct ps_events *evs, size_t i);
	/* A group with a sampling member, name, is about to open on
	 * pos[0..npos); a failure's message names it. */
	int (*will_open)(struct ps_session *s, const char *name, const struct ps_position *pos,
			 int npos, char *msg, size_t msglen);
	/* One fd of a sampling counter opened on cpu (not enabled yet). */
	int (*fd_opened)(struct ps_session *s, uint32_t slot, int fd, int cpu);
	/* Every fd of the sampling counter is open, none enabled: attach. */
	int (*attach)(struct ps_session *s, uint32_t slot, char *msg, size_t msglen);
	/* The counter was started (on) or stopped: its fds enabled or
	 * disabled, or armed for a held command's exec. */
	void (*switched)(struct ps_session *s, uint32_t slot, bool on);
	/* A counter handed over (ps_counter__hand_over): its value and
	 * times, as its fds would have read them; reset makes it count from 0
	 * (v NULL). 0 or -errno. */
	int (*read)(struct ps_session *s, uint32_t slot, struct ps_value *v, bool reset);
	/* Its fds are about to close. */
	void (*detach)(struct ps_session *s, uint32_t slot);
	/* The counter is freed; its slot will be reused. */
	void (*release)(struct ps_session *s, uint32_t slot);
	/* The session goes, after every counter. */
	void (*free)(struct ps_session *s);
};

#endif /* PS_CORE_SAMPLER_HOOKS_H */
