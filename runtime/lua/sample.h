/*
 * sample.h: the overflow-sample side of the Lua binding: the
 * perfmon.sample/perfmon.lost probes (lua/sample.c) and the reused sample
 * object handed to their handlers (lua/sample_object.c).
 */
#ifndef PS_LUA_SAMPLE_H
#define PS_LUA_SAMPLE_H

#include "lua/script.h"

struct ps_bpf_conf;

/* Register probe("perfmon.sample(NAME)" | "perfmon.lost(NAME)", fn); fn at 2. */
int ps_sample__probe(lua_State *L, struct ps_script *sc, const char *point);
bool ps_sample__any(const struct ps_script *sc);
/* Resolve every probe's NAME to a sampling counter; on failure -1 with
 * sc->sample_error set (it names the script line of the probe). */
int ps_sample__resolve(struct ps_script *sc);
/* Hand the session our sample and record callbacks. */
int ps_sample__setup(struct ps_script *sc);
/* Put ring fds that appeared since the last call into the loop (after any
 * counter was opened), with the periodic drain timer. */
int ps_sample__sync(struct ps_script *sc);
/* Deliver what is left in the rings (the session is ending, not by error). */
void ps_sample__finish(struct ps_script *sc);
/* Say on stderr how many samples were lost or throttled, when any were. */
void ps_sample__report_lost(struct ps_script *sc);
void ps_sample__free(struct ps_script *sc);

/* The sample object (lua/sample_object.c). */
void ps_sample_object__open(lua_State *L, struct ps_script *sc);
/* Point the object at s and push it. */
void ps_sample_object__push(struct ps_script *sc, const struct ps_sample *s);
/* The sample is gone: reading the object now raises. */
void ps_sample_object__release(struct ps_script *sc);
/* Feed a tracking record (COMM, MMAP2, FORK, EXIT) to names and symbols. */
void ps_sample_object__record(struct ps_script *sc, const struct ps_record *r);
/* The current sample, or NULL outside a sample handler (helpers use it). */
const struct ps_sample *ps_sample_object__current(const struct ps_script *sc);
/* The command name of pid, from COMM records or /proc. */
const char *ps_sample_object__comm(struct ps_script *sc, pid_t pid);
void ps_sample_object__free(struct ps_script *sc);
/* The session's symbolizer (created on first use), or NULL on ENOMEM. */
struct ps_symbols *ps_sample_object__symbols(struct ps_script *sc);

/* In-kernel handling options and perfmon.aggregate (lua/aggregate.c). */
/* Register perfmon.aggregate in the module table on top of the stack. */
void ps_aggregate__open(lua_State *L, struct ps_script *sc);
/* Parse a probe's options table at idx (raises on misuse); free() it. */
struct ps_bpf_conf *ps_aggregate__options(lua_State *L, int idx);
/* Merge parsed probe options into counter h's configuration. */
int ps_aggregate__use_options(struct ps_script *sc, ps_handle h, const struct ps_bpf_conf *opts);
/* A perfmon.sample probe names h: an aggregating counter forwards too. */
void ps_aggregate__want_samples(struct ps_script *sc, ps_handle h);
/* Hand changed configurations to the session; -errno with msg filled. */
int ps_aggregate__apply(struct ps_script *sc, char *msg, size_t msglen);
/* Say on stderr how many overflows found an aggregation map full. */
void ps_aggregate__report(struct ps_script *sc);
void ps_aggregate__free(struct ps_script *sc);

#endif
