/*
 * internal.h: what the files of the Lua binding share. struct ps_script is
 * written by lua/script.c and read here and there; each probe provider
 * keeps its own state behind one pointer of it. Probe kinds are providers
 * (lua/probe.h), the sample object and aggregates are their own files. All
 * names of this layer start with ps_lua_.
 */
#ifndef PS_LUA_INTERNAL_H
#define PS_LUA_INTERNAL_H

#include <lauxlib.h>
#include <signal.h>

#include "lua/script.h"

struct ps_timers;	/* lua/probe_timer.c */
struct ps_samplers;	/* lua/probe_sample.c */
struct ps_lost_probes;	/* lua/probe_lost.c */
struct ps_sample_state; /* lua/sample_object.c */
struct ps_sample_args;	/* lua/sample_args.c */
struct ps_aggregates;	/* lua/aggregate.c */

struct ps_script {
	lua_State *L;
	struct ps_session *session;
	struct ps_loop *loop;
	struct ps_driver *driver; /* the session's policy (loop/) */
	struct ps_script_opts o;

	bool ending;		      /* end probes are running or ran */
	bool unstarted;		      /* the session could not start: no end probes */
	int errors;		      /* handler errors so far */
	int exit_status;	      /* exit(N), the status when no error occurred */
	bool exit_given;	      /* exit(N) named a status: it wins over the command's */
	bool bpf_told;		      /* the BPF fallback notice was printed */
	bool user_told;		      /* the user-space-only notice was printed */
	char setup_error[512];	      /* why a probe could not be resolved at start */
	char alloc_error[512];	      /* the last failed allocation, for a later 0 handle */
	bool (*interrupt)(void *ctx); /* the REPL's SIGINT */
	/* signals (lua/call.c); written by the signal handler */
	volatile sig_atomic_t signal_pending; /* caught, not acted on yet */
	volatile sig_atomic_t hooked;	      /* the interrupting hook is set */
	volatile sig_atomic_t hook_fired;     /* and raised in the running call */
	volatile sig_atomic_t depth;	      /* calls into Lua under way */
	lua_State *volatile running;	      /* the coroutine running, NULL: L (lua/interrupt.c) */
	void *interrupt_ctx;
	int listeners;	 /* open HTTP listeners and posts under way: the session goes on */
	bool until_idle; /* the main run: ends when nothing can happen any more */
	ps_handle *told; /* counters whose losses were reported */
	size_t ntold, captold;

	struct ps_timers *timers;
	struct ps_samplers *samplers;
	struct ps_lost_probes *lost;
	struct ps_sample_state *sample_state;
	struct ps_sample_args *sample_args;
	struct ps_aggregates *aggregates;
};

/* lua/call.c: the driver's on_signal (runs in the signal handler). */
void ps_lua__on_signal(int signo, void *ctx);
/* lua/call.c: make Lua thread T raise "interrupted" at its next
 * instruction, while an interruption is under way. */
void ps_lua__stop_thread(lua_State *T);
/* lua/interrupt.c: coroutine.resume/wrap/close and setmetatable that let
 * a signal stop coroutines and finalizers too. */
void ps_lua_interrupt__open(lua_State *L);

/* lua/perfmon.c: what to add to a message about handle 0, the handle of a
 * failed perfmon_allocate_counter: "" or "; the last ... failed: why". */
const char *ps_lua__zero_handle_cause(const struct ps_script *sc, lua_Integer h);
/* lua/perfmon.c: the string at idx, made valid UTF-8 in place (invalid
 * bytes become U+FFFD) before it leaves perfscript in a label or a name. */
void ps_lua__valid_utf8(lua_State *L, int idx);

/* lua/script.c */
struct ps_script *ps_lua_script__from(lua_State *L);
/* End the session from inside (exit(), an error): first reason kept. */
void ps_lua_script__stop(struct ps_script *sc, enum ps_stop_reason why);
/* A listener closed or a post ended: a script on itself with nothing left
 * that can make anything happen (no timer, listener or post) ends, as it
 * would not have started. */
void ps_lua_script__source_ended(struct ps_script *sc);
/* exit(status): the session ends once the current probe returns and no
 * sample handler runs after it. */
void ps_lua_script__exit(struct ps_script *sc, int status);
/* Open the counters allocated and not yet open: 0, or -errno with msg. */
int ps_lua_script__create_context(struct ps_script *sc, char *msg, size_t msglen);
/* After any counter opened: new poll fds join the loop; say a BPF fallback once. */
void ps_lua_script__opened(struct ps_script *sc);

/* lua/perfmon.c: the perfmon module and the seed globals. */
int ps_lua_perfmon__open(lua_State *L);
/* lua/stats.c: package.preload["perfscript.stats_core"]. */
void ps_lua_stats__open(lua_State *L);
/* lua/pprof.c: package.preload["perfscript.pprof"], pprof profiles to and
 * from tables (lua/pprof_decode.c). */
void ps_lua_pprof__open(lua_State *L);
/* lua/http.c: package.preload["perfscript.http"], the loop's HTTP listener. */
void ps_lua_http__open(lua_State *L);
/* lua/otlp.c: package.preload["perfscript.otlp"], OTLP profiles requests
 * to and from tables shaped like lua/otlp.proto's messages. */
void ps_lua_otlp__open(lua_State *L);
/* lua/tty.c: package.preload["perfscript.tty"], the terminal of a
 * full-screen script: keys as typed, the screen's size. */
void ps_lua_tty__open(lua_State *L);

/* lua/remote_write.c: package.preload["perfscript.remote_write"]. */
void ps_lua_remote_write__open(lua_State *L);
/* lua/http_post.c: http.post(url, body, [opts,] callback). */
int ps_lua_http__post(lua_State *L);
int ps_lua_http__flush(lua_State *L);
/* lua/helpers.c: printf, exit, pid, tid, cpu, execname, ... */
void ps_lua_helpers__open(lua_State *L, struct ps_script *sc);

/* lua/sample_object.c: the one reused "perfscript.sample" object. */
void ps_lua_sample_object__open(lua_State *L, struct ps_script *sc);
/* Point the object at s and push it. */
void ps_lua_sample_object__push(struct ps_script *sc, const struct ps_sample *s);
/* The sample is gone: reading the object now raises. */
void ps_lua_sample_object__release(struct ps_script *sc);
/* Feed a tracking record (MMAP2, FORK, COMM) to the symbolizer. */
void ps_lua_sample_object__record(struct ps_script *sc, const struct ps_record *r);
/* The current sample, or NULL outside a sample handler (helpers use it). */
const struct ps_sample *ps_lua_sample_object__current(const struct ps_script *sc);
/* Argument 1 as the live sample (raises when it is not, or is gone). */
const struct ps_sample *ps_lua_sample_object__check(lua_State *L, struct ps_script **scp);

/* lua/sample_args.c: a tracepoint's fields and a probe's registers. */
void ps_lua_sample_args__open(lua_State *L);
/* s.args, s.raw, s.retval, s:arg, s:user_string, s:kernel_string: pushes
 * the value and returns 1 when k is one of them, else 0. */
int ps_lua_sample_args__index(lua_State *L, struct ps_script *sc, const struct ps_sample *s,
			      const char *k);
/* s:copy(): args (a table) and raw into the table on top of the stack. */
void ps_lua_sample_args__copy(lua_State *L, struct ps_script *sc, const struct ps_sample *s);
void ps_lua_sample_args__free(struct ps_script *sc);

/* The session's symbolizer (created on first use), or NULL on ENOMEM. */
struct ps_symbols *ps_lua_sample_object__symbols(struct ps_script *sc);
/* The script's cgroup names, made on first use; NULL without memory. */
struct ps_cgroups *ps_lua_sample_object__cgroups(struct ps_script *sc);
/* lua/stack_glue.c: whether kernel address ip is in the tracing machinery
 * between a tracepoint and perf or a BPF program (a stack drops it). */
bool ps_lua_stack__glue(struct ps_script *sc, uint64_t ip);
/* A tracepoint sample's frames f (n, innermost first) without the glue at
 * their leaf; how many are left. */
struct ps_lua_frame;
int ps_lua_stack__drop_glue(struct ps_script *sc, const struct ps_sample *s, struct ps_lua_frame *f,
			    int n);
/* lua/stack_glue.c: whether the sample's stack stopped at its depth limit
 * (its root is then "[truncated]"). */
bool ps_lua_stack__cut(struct ps_script *sc, const struct ps_sample *s);
/* lua/sample_where.c: s.epoch; s.cgroup (path) or s.container. */
void ps_lua_sample_where__epoch(lua_State *L, struct ps_script *sc, const struct ps_sample *s);
void ps_lua_sample_where__cgroup(lua_State *L, struct ps_script *sc, const struct ps_sample *s,
				 bool path);
/* perfmon.trim's part in the symbolizer, if it was made: all it can give
 * back now (ps_symbols__give_back). */
void ps_lua_sample_object__give_back(struct ps_script *sc);
/* Names as symbol tables spell them (raw) or demangled (the default):
 * --no-demangle (ps_script_opts.raw_names), perfmon.demangle(). */
void ps_lua_sample_object__set_raw_names(struct ps_script *sc, bool raw);
bool ps_lua_sample_object__raw_names(struct ps_script *sc);
/* The user frames the DWARF unwinder finds in s (the current sample),
 * unwound once per sample: their count, *ips innermost first. */
#define PS_LUA_MAX_USTACK 1024 /* user frames unwound at most (max-stack caps it lower) */
int ps_lua_sample_object__unwound(struct ps_script *sc, const struct ps_sample *s,
				  const uint64_t **ips);
void ps_lua_sample_object__free(struct ps_script *sc);

/* lua/sample_stack.c: a sample's stacks and source lines. */
/* s.callchain: addresses, kernel frames then user frames, innermost first. */
/* lua/sample_object.c: the symbolizer's upkeep (ps_symbols__maintain),
 * where no answer it gave is in use. */
void ps_lua_sample_object__maintain(struct ps_script *sc);
/* lua/sample_object.c: before the end probes, the debug files still coming
 * from debuginfod, within the session's wait. */
void ps_lua_sample_object__settle(struct ps_script *sc);
/* What the symbolizer has to tell (a JIT map it refused), on stderr. */
void ps_lua_sample_object__tell(struct ps_script *sc);
void ps_lua_sample_stack__callchain(lua_State *L, struct ps_script *sc, const struct ps_sample *s);
/* s:packed(): the callchain's addresses as one string, 8 bytes each in the
 * host's order, leaf first, zeros left out: a cheap table key. */
void ps_lua_sample_stack__packed(lua_State *L, struct ps_script *sc, const struct ps_sample *s);
/* s:ustack(opts) or s:kstack(opts): names, innermost first; opts (a table at
 * opts_idx, or none) may ask for inline frames. */
void ps_lua_sample_stack__chain(lua_State *L, struct ps_script *sc, const struct ps_sample *s,
				bool kernel, int opts_idx);
/* s:folded(opts): "comm;root;...;leaf". */
void ps_lua_sample_stack__folded(lua_State *L, struct ps_script *sc, const struct ps_sample *s,
				 int opts_idx);
/* s.srcline: "file.c:42" of a user sample's ip, or nil. */
void ps_lua_sample_stack__srcline(lua_State *L, struct ps_script *sc, const struct ps_sample *s);
/* perfmon.symbolize, perfmon.frames and perfmon.demangle, in the module table. */
void ps_lua_sample_stack__open(lua_State *L, struct ps_script *sc);

/* One frame of a sample's stack (lua/sample_stack.c). */
struct ps_lua_frame {
	uint64_t addr;
	bool kernel;
	bool ret;  /* a caller's return address from the kernel's walk: look up addr - 1 */
	bool past; /* named by the mappings of epoch (ps_symbols__epoch), not now's */
	uint32_t epoch;
};
#define PS_LUA_MAX_FRAMES (PS_LUA_MAX_USTACK + 1024) /* a sample's frames, kernel and user */
/* A script's room for one sample's frames at a time (lua/sample_stack.c,
 * lua/python.c), its own rather than static: two sessions in two threads
 * share nothing. Made with the script's sample state. */
struct ps_lua_scratch {
	struct ps_lua_frame frames[PS_LUA_MAX_FRAMES];		 /* a sample's, as made */
	struct ps_lua_frame spliced[PS_LUA_MAX_FRAMES];		 /* with its Python frames */
	uint64_t packed[PS_LUA_MAX_FRAMES];			 /* s:packed()'s addresses */
	uint64_t pcs[PS_LUA_MAX_FRAMES], out[PS_LUA_MAX_FRAMES]; /* the splice's in and out */
	int from[PS_LUA_MAX_FRAMES];
};
/* lua/symbolizer.c: perfmon.symbols (the script is its upvalue). */
int ps_lua_symbolizer__symbols(lua_State *L);
/* lua/sample_object.c: the script's scratch space, NULL when out of memory. */
struct ps_lua_scratch *ps_lua_sample_object__scratch(struct ps_script *sc);
/* lua/python.c: a CPython sample's Python frames spliced into its n
 * frames f (room for max) in place of the eval loop's; the new count. */
int ps_lua_python__splice(struct ps_script *sc, const struct ps_sample *s, struct ps_lua_frame *f,
			  int n, int max);
/* lua/python.c: s.pyip, the innermost Python frame's address (or nil). */
void ps_lua_python__push_ip(lua_State *L, struct ps_script *sc, const struct ps_sample *s);
/* lua/probe_timer.c: perfmon.after. */
void ps_lua_timer__open(lua_State *L, struct ps_script *sc);

/* lua/bpf_opts.c: the in-kernel options of sample probes. */
#define PS_LUA_MAX_LIST 256 /* pids or CPUs one option may list */
/* A probe's or perfmon.aggregate's options, parsed. */
struct ps_lua_opts {
	struct ps_bpf_opts o;
	pid_t pids[PS_LUA_MAX_LIST];
	int cpus[PS_LUA_MAX_LIST];
};
/* Parse a probe's options table at idx (raises on misuse); free() it. */
struct ps_lua_opts *ps_lua_bpf_opts__parse(lua_State *L, int idx);
/* The filters (pid, tid, cpu, backend, mode, every) of the table at idx into c. */
void ps_lua_bpf_opts__filters(lua_State *L, int idx, struct ps_lua_opts *c);
/* perfmon.aggregate's offcpu = true and min_us of the options at index 2,
 * into c (sched:sched_switch only; raises on misuse). */
void ps_lua_bpf_opts__offcpu(lua_State *L, struct ps_script *sc, ps_handle h,
			     struct ps_lua_opts *c);
/* Merge a sample probe's options (its samples are wanted: FORWARD) into
 * counter h's (ps_session__merge_bpf); o NULL: FORWARD alone, on a counter
 * an aggregate configured. 0, or < 0 with sc->setup_error saying why. */
int ps_lua_bpf_opts__use(struct ps_script *sc, ps_handle h, const struct ps_lua_opts *o);

/* lua/aggregate.c: perfmon.aggregate, whose object is a ps_lua_agg: its
 * counter and its keys, as `by` listed them. */
#define PS_LUA_AGG_KEYS 10
struct ps_lua_agg {
	struct ps_script *sc;
	ps_handle h;
	int nkeys;
	uint32_t bit[PS_LUA_AGG_KEYS];	/* PS_AGG_* */
	char name[PS_LUA_AGG_KEYS][64]; /* as `by` wrote it: a row's field */
};
/* lua/aggregate_read.c: the map (taken: read and cleared) on the stack as
 * { [key] = count }, or as rows { [name] = value..., count = n }; 0, or
 * -errno with nothing pushed. */
int ps_lua_aggregate__entries(lua_State *L, const struct ps_lua_agg *u, bool take, bool rows);
void ps_lua_aggregate__open(lua_State *L, struct ps_script *sc);
/* Whether the script aggregates counter h. */
bool ps_lua_aggregate__has(const struct ps_script *sc, ps_handle h);
/* Say on stderr how many overflows found an aggregation map full. */
void ps_lua_aggregate__report(struct ps_script *sc);
void ps_lua_aggregate__free(struct ps_script *sc);

#endif /* PS_LUA_INTERNAL_H */
