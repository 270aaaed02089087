/*
 * perfscript.h: the public C interface of libperfscript, the Lua-free core of
 * perfscript. It parses event strings into perf_event_attr lists, owns
 * sessions of counters on a target (self, a command, a pid, CPUs), reads and
 * scales their values, delivers their samples to callbacks (the client polls
 * ps_sampler__poll_fds and calls ps_sampler__dispatch in its own loop), names
 * addresses and unwinds stacks, and counts code regions. The perfscript
 * binary, its Lua binding and the LuaJIT FFI module are all clients of this
 * header; the binary also uses runtime/loop/loop.h (the event loop, the
 * session driver, HTTP), which the library does not export. Each function
 * is exported in the node of the release that added it
 * (bindings/libperfscript.map).
 *
 * Conventions: functions return 0 (or a count) on success and a negative
 * errno or negative PS_ERR_* code on failure; constructors return NULL and set
 * errno. Every __free() accepts NULL.
 *
 * Threads: an object (a session, a symbolizer, an event list, an overflow
 * counter) is used by one thread at a time: its caller
 * serializes. Different objects may be used by different threads at once:
 * what they share in the process (what the kernel was found to support,
 * sysfs, tracefs and libpfm4 tables, libbpf's log, kept per loading thread)
 * is locked. Code regions are made for any thread (each counts its own),
 * overflow counters for the thread that made them; strings returned are
 * valid as each call says. Signal handlers: ps_overflow__* as listed there.
 */
#ifndef PERFSCRIPT_H
#define PERFSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PS_VERSION "0.1.0"

/* Failures that have no errno of their own. Returned negated, like -errno. */
enum ps_error {
	PS_ERR_FIRST = 4096,
	PS_ERR_SYNTAX = PS_ERR_FIRST, /* malformed event string */
	PS_ERR_UNKNOWN_EVENT,	      /* no event by that name */
	PS_ERR_UNKNOWN_TERM,	      /* no such term in name/term=v/ */
	PS_ERR_BAD_VALUE,	      /* term value out of range or not a number */
	PS_ERR_HANDLE,		      /* freed, stale or made-up counter handle */
	PS_ERR_NOT_SUPPORTED,	      /* the event exists but this machine cannot count it */
	PS_ERR_STATE,		      /* not valid now (e.g. reading a counter never opened) */
	PS_ERR_LIMIT,		      /* the session holds PS_SESSION_MAX_COUNTERS already */
	PS_ERR_LAST,
};

/* A message for a negative or positive PS_ERR_* code or errno value: a
 * constant string the caller may keep ("unknown error" for other numbers).
 * Strings returned by any ps_ call are owned by the library: a name or spec
 * lives as long as its counter or session, unless the call says otherwise. */
const char *ps_strerror(int err);

/* ------------------------------------------------------------------------
 * Event strings (runtime/event/). Pure: no fd is opened; only sysfs and
 * tracefs are read. PERFSCRIPT_TRACEFS, when set, names the tracefs root
 * used instead of /sys/kernel/tracing (tests point it at a fixture tree).
 */

struct ps_event_error {
	int code;	     /* PS_ERR_* (positive), or EACCES: tracefs is not readable */
	int column;	     /* 1-based column of the offending token, 0 if none */
	char token[64];	     /* the offending token as written */
	char suggestion[64]; /* nearest known name, "" if none */
	char message[320];   /* whole sentence, e.g. "unknown event 'cycels' at
			      * column 1 (did you mean 'cycles'?)" */
	unsigned needed;     /* -ENOSPC from ps_session__allocate: the handles it needs */
};

/* tracefs where none is mounted, for a process that may mount it (root):
 * in a mount namespace of this process's own, so it goes with the process
 * however it dies and no other process sees it. 1 when mounted, 0 when
 * tracefs is there already (or $PERFSCRIPT_TRACEFS names one), -errno with
 * msg saying which step failed. The process must not have threads yet. */
int ps_tracefs__mount_private(char *msg, size_t msglen);

/* Check a string a binding is about to pass as const char *: 0, or
 * -PS_ERR_SYNTAX with msg naming the column of a NUL byte inside its len
 * bytes, which C would take for its end ("NUL byte at column 7 of the event
 * string ..."). what names the string: "event string", "region name". */
int ps_text__check(const char *s, size_t len, const char *what, char *msg, size_t msglen);

struct ps_events; /* the events one string produces, in order */

/* Parse spec. On failure returns NULL, sets errno = EINVAL (ENOMEM on OOM)
 * and fills *err when err is not NULL. */
struct ps_events *ps_events__parse(const char *spec, struct ps_event_error *err);
void ps_events__free(struct ps_events *evs);

size_t ps_events__count(const struct ps_events *evs);
/* The attr as it will be opened (disabled=1, read_format set) before the
 * session applies its target (inherit, enable_on_exec). */
const struct perf_event_attr *ps_events__attr(const struct ps_events *evs, size_t i);
const char *ps_events__name(const struct ps_events *evs, size_t i); /* display name */
size_t ps_events__leader(const struct ps_events *evs, size_t i);    /* == i for a leader */
int ps_events__cpu(const struct ps_events *evs, size_t i);	    /* cpu= term, or -1 */
/* The max-stack=N term as written (0: none): how deep a sample's user
 * stack is unwound, up to 1024; its kernel callchain stops at the kernel's
 * kernel.perf_event_max_stack (the attr's sample_max_stack is capped so). */
unsigned ps_events__max_stack(const struct ps_events *evs, size_t i);
const char *ps_events__spec(const struct ps_events *evs); /* the input string */

/* Print the attr fields each event sets: one "field=value" per line with a
 * blank line between events, or (json) one JSON array of objects. */
int ps_events__describe(const struct ps_events *evs, FILE *out, bool json);

/* ------------------------------------------------------------------------
 * Event metadata from sysfs, and the list of nameable events
 * (runtime/event/event.c, runtime/event/list.c). PERFSCRIPT_SYSFS, when set,
 * names the directory used instead of /sys for PMUs
 * ($PERFSCRIPT_SYSFS/bus/event_source/devices/...).
 */

/* The scale and unit sysfs gives a PMU event alias (events/NAME.scale and
 * .unit, e.g. power/energy-pkg/: 2.3283064365386962890625e-10 "Joules"): a
 * counter's value times *scale is in *unit. Events without them get 1.0 and
 * "". Either pointer may be NULL. 0, or -EINVAL for a bad index. */
int ps_events__scale(const struct ps_events *evs, size_t i, double *scale, const char **unit);
/* The CPUs the event's PMU asks to be opened on (its sysfs cpumask: one CPU
 * per socket or die for uncore PMUs). Returns how many, 0 when the PMU has
 * no cpumask (open it wherever the target says), or -EINVAL. *cpus stays
 * valid for the life of the process. */
int ps_events__cpus(const struct ps_events *evs, size_t i, const int **cpus);
/* The symbol of a breakpoint written mem:SYMBOL[+OFF] (its attr's bp_addr
 * stays 0: a session looks the symbol up in its target when the counter
 * opens, see ps_symbols__lookup), with OFF in *offset when offset is not
 * NULL. NULL for any other event or a bad index. */
const char *ps_events__bp_symbol(const struct ps_events *evs, size_t i, uint64_t *offset);

/* What an event asks for beyond its attr (ps_events__flags). */
enum ps_event_flag {
	PS_EVENT_NO_INHERIT = 1u << 0,	 /* no-inherit: never follow the target's children */
	PS_EVENT_PRECISE_MAX = 1u << 1,	 /* P: precise_ip lowered until the PMU accepts it */
	PS_EVENT_WEAK_GROUP = 1u << 2,	 /* W (leader): open ungrouped if the group cannot be */
	PS_EVENT_PERCORE = 1u << 3,	 /* percore: perf stat's per-core sum (informational) */
	PS_EVENT_SAMPLE_EVERY = 1u << 4, /* a tracepoint or probe: sampling it without period=
					  * or freq= samples every hit (sample_period 1) */
	PS_EVENT_BPF = 1u << 5,		 /* the bpf term: overflows through a BPF program */
	PS_EVENT_NOBPF = 1u << 6,	 /* the nobpf term: through the perf ring */
};
unsigned ps_events__flags(const struct ps_events *evs, size_t i);
/* The name of the group event i leads when written NAME{...}, else NULL. */
const char *ps_events__group_name(const struct ps_events *evs, size_t i);
/* "subsys:event" of a tracepoint event (whatever its display name), else NULL. */
const char *ps_events__tracepoint(const struct ps_events *evs, size_t i);

/* Dynamic probes: kprobe:SYM[+OFF], kretprobe:SYM, uprobe:PATH:SYM[+OFF] or
 * uprobe:PATH:0xADDR, uretprobe:PATH:SYM, usdt:PATH:PROVIDER:NAME. The
 * parser gives the kprobe or uprobe PMU's type and the retprobe bit; a
 * session fills config1 (a pointer to the function or path) and config2
 * (the offset) when it opens the counter, resolving SYM or the USDT note in
 * PATH's ELF file (ps_probe__resolve). */
enum ps_probe_kind {
	PS_PROBE_KPROBE = 1,
	PS_PROBE_KRETPROBE,
	PS_PROBE_UPROBE,
	PS_PROBE_URETPROBE,
	PS_PROBE_USDT,
};
struct ps_probe_info {
	enum ps_probe_kind kind;
	const char *path;     /* uprobes and USDT: the ELF file as written */
	const char *symbol;   /* kprobes and uprobes: the function; NULL for an address */
	uint64_t offset;      /* +OFF after the symbol, or the address itself */
	const char *provider; /* USDT */
	const char *name;     /* USDT */
};
/* 1 with *info filled (strings owned by evs), 0 when event i is no probe. */
int ps_events__probe(const struct ps_events *evs, size_t i, struct ps_probe_info *info);

/* A tracepoint's fields, from its tracefs format file, and their values in
 * a sample's raw record (ps_sample.raw; runtime/event/tpformat.c). */
enum ps_tp_kind {
	PS_TP_INT,	/* an integer of size 1, 2, 4 or 8 (a pointer too) */
	PS_TP_STRING,	/* char NAME[N]: a string of at most N bytes */
	PS_TP_ARRAY,	/* TYPE NAME[N]: N integers of elem_size bytes */
	PS_TP_DATA_LOC, /* __data_loc TYPE[] NAME: a string, or integers, in the record */
	PS_TP_REL_LOC,	/* __rel_loc: the same, placed relative to the field */
	PS_TP_OTHER,	/* anything else: bytes only */
};
struct ps_tp_field {
	const char *name, *type; /* "prev_comm", "char" */
	uint32_t offset, size;	 /* in the record, as the format says */
	uint32_t elem_size;	 /* bytes per element (the size for an integer) */
	uint32_t count;		 /* elements of a fixed array, 1 for an integer */
	enum ps_tp_kind kind;
	bool is_signed;
	bool is_string;	  /* char elements: read it with ps_tp_field__bytes */
	bool user_string; /* a syscall's pointer to a string in the process
			   * (openat's filename): see ps_sample__string */
};
struct ps_tp_format;
/* The format of "subsys:event", read once and kept for the process (the
 * pointer stays valid). NULL with errno (*err when not NULL) on failure. */
const struct ps_tp_format *ps_tp_format__get(const char *tracepoint, int *err);
size_t ps_tp_format__count(const struct ps_tp_format *f);
/* The tracepoint's id (perf_event_attr.config of PERF_TYPE_TRACEPOINT). */
uint64_t ps_tp_format__id(const struct ps_tp_format *f);
const struct ps_tp_field *ps_tp_format__field(const struct ps_tp_format *f, size_t i);
const struct ps_tp_field *ps_tp_format__find(const struct ps_tp_format *f, const char *name);
/* Element i of an integer field (or array) in raw, sign-extended as the
 * format says. 0, or -ERANGE when the record does not hold it. */
int ps_tp_field__int(const struct ps_tp_field *f, const void *raw, size_t size, size_t i,
		     int64_t *v);
/* The field's bytes in raw (a string without its NUL). 0 or -ERANGE. */
int ps_tp_field__bytes(const struct ps_tp_field *f, const void *raw, size_t size, const void **p,
		       size_t *len);
/* Elements of an array or dynamic field in this record (0 if it does not fit). */
size_t ps_tp_field__count(const struct ps_tp_field *f, const void *raw, size_t size);

struct ps_event_list_entry {
	const char *group; /* "hardware", "software", "cache", "tracepoint",
			    * "pmu/NAME" (sysfs), "libpfm4/PMU" */
	const char *name;  /* as the event parser accepts it */
	const char *desc;  /* "" when the source has none */
	int supported;	   /* 1 opened here, 0 the kernel refused it, -1 not checked */
};

struct ps_event_list;

/* What this machine can name, grouped in the order above, sorted within a
 * group. glob (fnmatch, case-insensitive; a word without wildcards matches
 * as a substring) filters by name; NULL or "" keeps everything. Hardware and
 * cache events are tried once with perf_event_open on the calling thread
 * (user space only) to fill supported. NULL + errno on failure. */
struct ps_event_list *ps_event_list__new(const char *glob);
void ps_event_list__free(struct ps_event_list *l);
size_t ps_event_list__count(const struct ps_event_list *l);
/* Why a kind of event is missing from the list (tracefs unreadable or not
 * mounted), or NULL. */
const char *ps_event_list__missing(const struct ps_event_list *l);
const struct ps_event_list_entry *ps_event_list__entry(const struct ps_event_list *l, size_t i);
/* Text (a heading per group, then "  name  description") or a JSON array. */
int ps_event_list__print(const struct ps_event_list *l, FILE *out, bool json);

/* ------------------------------------------------------------------------
 * Sessions and counters (runtime/core/counter.c, runtime/core/target.c).
 */

enum ps_target_kind {
	PS_TARGET_SELF,	   /* the calling process (pid 0, any CPU) */
	PS_TARGET_COMMAND, /* argv forked and held before exec */
	PS_TARGET_PID,	   /* every thread of an existing process */
	PS_TARGET_CPUS,	   /* system-wide on a CPU list */
};

struct ps_target_opts {
	size_t sz; /* sizeof(struct ps_target_opts) */
	enum ps_target_kind kind;
	pid_t pid;	    /* PS_TARGET_PID */
	char *const *argv;  /* PS_TARGET_COMMAND, NULL-terminated, run with execvp;
			     * may be set with PS_TARGET_CPUS too (like perf stat -a
			     * CMD): the command runs, counters stay per CPU */
	const char *cpus;   /* PS_TARGET_CPUS: "0-3,5"; NULL means every online CPU */
	const char *cgroup; /* PS_TARGET_CPUS: only the tasks of this cgroup v2 group and
			     * the groups below it (perf stat -G): its path below the
			     * cgroup2 mount ("app/web"), or an absolute one; NULL: all */
	bool no_children;   /* PS_TARGET_PID, PS_TARGET_COMMAND: the process's threads,
			     * those it starts later included, but not the processes
			     * it starts (perf_event_attr.inherit_thread; bcc's -p) */
};

struct ps_session;

/* For PS_TARGET_COMMAND the child is forked here and held before exec until
 * ps_session__release(). Fails with -ESRCH (errno) for a PID that is gone. */
struct ps_session *ps_session__new(const struct ps_target_opts *opts);
/* Closes every counter; a held command is killed and reaped. */
void ps_session__free(struct ps_session *s);

enum ps_target_kind ps_session__target_kind(const struct ps_session *s);
/* The command's or -p process's pid; 0 for self and CPUs without a command. */
pid_t ps_session__target_pid(const struct ps_session *s);
/* The pid of the process that made the session, taken when it was made (so
 * that no later getpid() of ours shows in a counter of ourselves). */
pid_t ps_session__self_pid(const struct ps_session *s);
/* The CPUs of a system-wide target (-a: every online CPU, -C: the list),
 * sorted; returns how many, 0 for other targets. */
int ps_session__target_cpus(const struct ps_session *s, const int **cpus);
/* A system-wide target's cgroup (PS_TARGET_CPUS with cgroup set): its
 * path below the cgroup2 mount ("/app/web"), or NULL. */
const char *ps_session__target_cgroup(const struct ps_session *s);
/* pidfd of the command or pid target (readable when it exits), or -1. */
int ps_session__target_pidfd(const struct ps_session *s);
/* Let a held command exec. Counters opened before this follow it from exec. */
int ps_session__release(struct ps_session *s);
/* Reap an exited command: returns 0 and its wait status, or -EAGAIN while it
 * still runs, or -ECHILD when there is no command. */
int ps_session__reap(struct ps_session *s, int *wstatus);
/* The user and system CPU time of the command, in microseconds: once it is
 * reaped, as wait4 reports it (the command's own and that of the children
 * it waited for); while it runs, what /proc says it used so far (the same
 * sums, to the clock tick). 0, -EAGAIN while it is held before its exec,
 * -ECHILD when there is no command. */
int ps_session__cpu_times(const struct ps_session *s, uint64_t *user_us, uint64_t *sys_us);
/* Send sig to the command and everything it started: its process group (a
 * command leads its own unless perfscript runs in a terminal's foreground,
 * where a group of its own could not read the terminal), else the command
 * and its descendants as /proc lists them. 0; -ESRCH when nothing is left
 * (sig 0 asks just that); -ECHILD without a command; or -errno. */
int ps_session__signal(struct ps_session *s, int sig);

typedef uint64_t ps_handle; /* non-zero; carries slot and generation */

/* Events one string may give; past it the parser fails with PS_ERR_LIMIT.
 * Enabling thousands of counters on perfscript itself takes the kernel
 * seconds (its cost per counter grows with the counters the process has). */
#define PS_EVENTS_MAX 16384u

/* Counters a session may hold at once; ps_session__allocate gives -PS_ERR_LIMIT
 * past it. */
#define PS_SESSION_MAX_COUNTERS (1u << 20)

/* Reserve one counter per event of spec (nothing is opened). Writes the
 * handles in order (a group gives its leader first) and returns how many, or
 * a negative code with *err filled: for a bad string; -ENOSPC when max is
 * too small, err->needed saying how many handles to pass; -PS_ERR_LIMIT past
 * the session's counter limit. */
int ps_session__allocate(struct ps_session *s, const char *spec, ps_handle *handles, size_t max,
			 struct ps_event_error *err);
/* Close and forget one counter. Freeing a leader frees its whole group. */
int ps_session__free_counter(struct ps_session *s, ps_handle h);
/* -PS_ERR_HANDLE unless h names a live counter of this session. */
int ps_session__check(const struct ps_session *s, ps_handle h);

/* Open every allocated counter that is not open yet (one fd per thread or
 * CPU of the target) and enable the ones not stopped explicitly. A group
 * whose own ps_session__open_counter() failed is skipped: its caller was
 * told then. On failure
 * nothing new stays open, and msg (when not NULL) explains it, naming the
 * event and what to do: "cannot open 'cycles:u': not supported by this
 * machine's PMU ...". */
int ps_session__open(struct ps_session *s, char *msg, size_t msglen);
/* While *flag is non-zero, ps_session__open stops between counters and
 * returns -EINTR, closing what it opened (a signal handler sets the flag:
 * enabling thousands of counters on this process takes the kernel seconds,
 * quadratic in their number). NULL turns it off. */
void ps_session__set_cancel(struct ps_session *s, const volatile int *flag);
/* Same, for one counter (and its group). */
int ps_session__open_counter(struct ps_session *s, ps_handle h, char *msg, size_t msglen);
/* Whether a counter was opened for user space only because the kernel
 * refused to let this user count the kernel (kernel.perf_event_paranoid 2
 * without CAP_PERFMON), as perf does (its attr then excludes the kernel;
 * its name stays as allocated). Only
 * events that count both without a modifier saying otherwise fall back;
 * tracepoints, probes, breakpoints and system-wide counters do not. */
bool ps_session__user_only(const struct ps_session *s);

int ps_session__start(struct ps_session *s, ps_handle h); /* opens it if needed */
int ps_session__stop(struct ps_session *s, ps_handle h);
int ps_session__reset(struct ps_session *s, ps_handle h);

struct ps_value {
	uint64_t value;	  /* raw scaled by enabled/running when multiplexed */
	uint64_t raw;	  /* sum over the counter's fds */
	uint64_t enabled; /* ns, summed */
	uint64_t running; /* ns, summed */
};

/* Read one counter: a counter not opened yet reads 0 (not an error), one
 * whose open failed -PS_ERR_NOT_SUPPORTED (it has no value: perf stat's
 * <not supported>); a freed handle is -PS_ERR_HANDLE. */
int ps_session__read(struct ps_session *s, ps_handle h, struct ps_value *v);
/* Read the group that leader heads with one PERF_FORMAT_GROUP read per fd;
 * vals[i] is member i (leader first). Returns the member count. */
int ps_session__read_group(struct ps_session *s, ps_handle leader, struct ps_value *vals,
			   size_t max);
/* Read now the fds of these counters (and of a group's members when its
 * leader reads them one by one) that count on a CPU, each from its own
 * CPU: the calling thread visits each CPU in turn and its CPU mask is put
 * back after, as perf stat reads. Reading another CPU's active counter
 * from afar interrupts that CPU once per fd. The next ps_session__read or
 * ps_session__read_group of each returns what was read here, once; a
 * later read-ahead drops what this one read and nobody took. 0 or -errno. */
int ps_session__read_ahead(struct ps_session *s, const ps_handle *h, size_t n);
/* Handles of the group h belongs to (leader first); returns the count. */
int ps_session__group(struct ps_session *s, ps_handle h, ps_handle *handles, size_t max);

const char *ps_session__spec(const struct ps_session *s, ps_handle h); /* as allocated */
const char *ps_session__name(const struct ps_session *s, ps_handle h); /* display name */
/* The event's sysfs .scale and .unit (1.0 and "" without them): the value
 * times *scale is in *unit, e.g. Joules for power/energy-pkg/. */
int ps_session__scale(const struct ps_session *s, ps_handle h, double *scale, const char **unit);
/* "subsys:event" of a tracepoint counter (its format: ps_tp_format__get), else NULL. */
const char *ps_session__tracepoint(const struct ps_session *s, ps_handle h);
/* The probe kind of counter h (an enum ps_probe_kind), or -ENOENT when it
 * is no probe (-PS_ERR_HANDLE for a stale handle). */
int ps_session__probe_kind(const struct ps_session *s, ps_handle h);
/* The PS_EVENT_* flags of the counter's event (ps_events__flags). */
unsigned ps_session__flags(const struct ps_session *s, ps_handle h);
const struct perf_event_attr *ps_session__attr(const struct ps_session *s, ps_handle h);
/* The counter's max-stack= term (ps_events__max_stack), 0 when none. */
unsigned ps_session__max_stack(const struct ps_session *s, ps_handle h);
bool ps_session__is_open(const struct ps_session *s, ps_handle h);
bool ps_session__is_running(const struct ps_session *s, ps_handle h);
/* fds of an open counter (for rings and BPF); returns how many. */
int ps_session__fds(const struct ps_session *s, ps_handle h, const int **fds);
size_t ps_session__count(const struct ps_session *s); /* live counters */

/* ------------------------------------------------------------------------
 * Overflow samples (runtime/sample/: the sampler, sample/perf/ and
 * sample/bpf/ its backends). A counter whose event string has period= or
 * freq= samples. The session opens it once per CPU of the target (per
 * thread and CPU for -p), maps one ring buffer per CPU (carried by a dummy
 * tracking event that also reports COMM, MMAP2, FORK and EXIT) and
 * redirects every sampling fd on that CPU into it with
 * PERF_EVENT_IOC_SET_OUTPUT. Sampling fds get PERF_SAMPLE_IDENTIFIER and
 * sample_id_all, so every record maps back to its counter. Whether the perf
 * ring or a BPF program serves a counter (below), its samples and records
 * reach the same ps_sample_ops, through the same poll API, in time order
 * across all sources when there are several (every source stamps them with
 * CLOCK_MONOTONIC; see ps_sampler__set_ordered). Pointers in a ps_sample or
 * ps_record are valid only during the callback that receives them.
 */

/* Registers of a sample (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_REGS_INTR): abi
 * is PERF_SAMPLE_REGS_ABI_NONE when the kernel had none to give (user
 * registers of a kernel thread), else _32 or _64; mask is the counter's
 * sample_regs_user or sample_regs_intr, and regs holds one value per bit
 * set in it, lowest bit first, numbered as the kernel's asm/perf_regs.h
 * (PERF_REG_X86_IP, ...). ps_sample__reg() picks one out. */
struct ps_regs {
	uint64_t abi, mask;
	const uint64_t *regs; /* NULL when abi is NONE */
};

struct ps_sample {
	ps_handle handle;     /* the counter that overflowed */
	uint64_t sample_type; /* PERF_SAMPLE_* bits present in this record (PERIOD
			       * always: a fixed period is filled from the attr) */
	uint64_t id;	      /* kernel id of the fd that overflowed */
	uint64_t ip, addr, period;
	uint64_t time; /* CLOCK_MONOTONIC ns, as clock_gettime() and BPF read it */
	uint32_t pid, tid, cpu;
	uint16_t misc;	 /* header misc: PERF_RECORD_MISC_CPUMODE_MASK bits */
	uint64_t nr_ips; /* PERF_SAMPLE_CALLCHAIN: entries, PERF_CONTEXT_* included */
	const uint64_t *ips;
	uint64_t read_format; /* of the counter, to decode read[] */
	uint64_t read_words;  /* PERF_SAMPLE_READ: u64 words at read */
	const uint64_t *read;
	uint32_t raw_size; /* PERF_SAMPLE_RAW (tracepoint fields) */
	const void *raw;
	/* Every pointer above and below is copied by the time-ordering queue
	 * (runtime/sample/order.c): a new pointer field must be copied there. */
	struct ps_regs regs_user;    /* PERF_SAMPLE_REGS_USER: the task's user registers */
	struct ps_regs regs_intr;    /* PERF_SAMPLE_REGS_INTR: registers where it overflowed */
	uint64_t stack_size;	     /* PERF_SAMPLE_STACK_USER: bytes of user stack at stack, */
	const void *stack;	     /* copied from the user stack pointer upwards */
	uint32_t strings_size;	     /* the BPF path: the user strings of the record's */
	const void *strings;	     /* user_string fields, read by the kernel at the event */
	uint64_t cgroup;	     /* PERF_SAMPLE_CGROUP: the task's cgroup v2 id (its
				      * directory's inode number), 0 when unknown */
	uint32_t py_n;		     /* PS_BPF_PYTHON: the thread's CPython frames, */
	const struct ps_pyframe *py; /* innermost first */
};

/* One CPython frame of a sample (PS_BPF_PYTHON): its code object's
 * address in the process, PS_PYFRAME_ENTRY set on the outermost frame of
 * one call of the interpreter's eval loop (_PyEval_EvalFrameDefault);
 * where in the code the frame was (3.11 and later: the address of its last
 * instruction; 3.10: that instruction's index); and the address of the
 * code's co_name, which tells it from a later code object at its address. */
#define PS_PYFRAME_ENTRY 0x1ull
struct ps_pyframe {
	uint64_t code, at, name;
};

/* The user string that s's tracepoint field at offset (a ps_tp_field with
 * user_string) pointed to, as the kernel read it at the event: 0 with *str
 * (NUL-terminated) and *len set, *cut when it was longer than 4095 bytes and
 * is cut there; -EFAULT when the kernel could not read it (the page was not
 * in memory), -ENOENT when the sample carries no string for that field (the
 * perf path: read it from the process, if it is still there). */
int ps_sample__string(const struct ps_sample *s, uint32_t offset, const char **str, size_t *len,
		      bool *cut);

/* Register reg (asm/perf_regs.h numbering) of a sample's user registers, or
 * with intr of its interrupt registers. 0 with *value set, or -ENOENT when
 * the sample did not record that register. */
int ps_sample__reg(const struct ps_sample *s, bool intr, unsigned reg, uint64_t *value);
/* Argument n (from 1) of a USDT counter's sample s, where the marker's
 * note says it is; off is the file offset of s->ip (the site it hit), or
 * PS_USDT_OFF_UNKNOWN: then -EAGAIN when the marker has several sites and
 * the offset is needed to tell them apart. 0 and *v; -ENOENT when s is not
 * a USDT counter's (its arguments are then the calling convention's
 * registers); -ERANGE past the marker's
 * arguments, -EINVAL for an operand perfscript cannot read, -EFAULT for
 * one the sample did not carry (a global, or memory outside its stack
 * copy, on the perf path): why says which and what to do. */
#define PS_USDT_OFF_UNKNOWN UINT64_MAX
int ps_session__usdt_arg(struct ps_session *sess, const struct ps_sample *s, uint64_t off, int n,
			 int64_t *v, char *why, size_t whylen);

/* Member i of a sample's PERF_SAMPLE_READ block (leader first): its value and
 * the enabled/running times. Returns the member count, or -ERANGE. */
int ps_sample__value(const struct ps_sample *s, size_t i, uint64_t *value, uint64_t *enabled,
		     uint64_t *running);

struct ps_record {
	uint32_t type; /* PERF_RECORD_LOST, _LOST_SAMPLES, _THROTTLE, _UNTHROTTLE,
			* _COMM, _MMAP2, _FORK, _EXIT */
	uint16_t misc;
	ps_handle handle; /* its counter, 0 for the tracking event */
	uint32_t pid, tid, ppid, ptid, cpu;
	uint64_t time, id;
	uint64_t lost;		   /* LOST, LOST_SAMPLES: samples lost */
	uint64_t addr, len, pgoff; /* MMAP2 */
	uint32_t prot, flags;
	uint8_t build_id_size; /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	const uint8_t *build_id;
	const char *filename; /* MMAP2 */
	const char *comm;     /* COMM */
	uint32_t maj, min;    /* MMAP2 without a build id: the file's device... */
	uint64_t ino;	      /* ...and inode (0 when unknown) */
};

struct ps_sample_ops {
	size_t sz; /* sizeof(struct ps_sample_ops) */
	/* Each sample; return < 0 to stop draining (the record is consumed). */
	int (*sample)(const struct ps_sample *s, void *ctx);
	/* Each other record we track; may be NULL. For LOST and LOST_SAMPLES,
	 * lost is what the counter lost since the last time this was told (it
	 * may be 0), counted by the one figure ps_sampler__stats gives. */
	int (*record)(const struct ps_record *r, void *ctx);
	void *ctx;
};

struct ps_sample_stats {
	uint64_t samples;   /* delivered to ops->sample */
	uint64_t lost;	    /* from LOST and LOST_SAMPLES records */
	uint64_t throttled; /* THROTTLE records */
	uint64_t unthrottled;
	uint64_t malformed; /* records skipped because they did not parse */
};

int ps_session__set_sample_ops(struct ps_session *s, const struct ps_sample_ops *ops);
/* Data pages per ring (a power of two up to PS_RING_PAGES_MAX; default 256,
 * i.e. 1 MiB, and 2048 once a counter takes user stacks). Takes effect for
 * rings mapped after the call. -EINVAL for any other value. */
#define PS_RING_PAGES_MAX (1u << 20) /* 4 GiB of 4 KiB pages */
int ps_session__set_ring_pages(struct ps_session *s, size_t pages);
/* The data pages of rings mapped next; *asked (if not NULL): whether
 * ps_session__set_ring_pages chose them (else the default). 0 without a
 * session. */
size_t ps_session__ring_pages(const struct ps_session *s, bool *asked);
bool ps_session__is_sampling(const struct ps_session *s, ps_handle h);
/* Make a counter that has no period= or freq= sample every hit, as perf
 * record does for tracepoints: only for events flagged PS_EVENT_SAMPLE_EVERY
 * (tracepoints, probes; else -EINVAL), before it opens (else
 * -PS_ERR_STATE). 0 when it samples (already did, or now). */
int ps_session__sample_every(struct ps_session *s, ps_handle h);
/* The fds to poll for EPOLLIN, whatever serves the counters: the perf rings
 * (one per CPU once a sampling counter is open) and the BPF ring buffer (once
 * a program forwards). The set only grows; *fds stays valid until the next
 * counter opens. Returns how many. */
int ps_sampler__poll_fds(const struct ps_session *s, const int **fds);
/* Decode and deliver at most budget records (0: all there are) of the source
 * behind fd, one of ps_sampler__poll_fds(). Returns the number consumed, or
 * a negative code: the value a callback returned to stop, -EBADMSG after
 * skipping a corrupt stretch (counted as malformed), -EBADF for an fd that
 * is not one of ours. A return equal to budget may have left records behind:
 * dispatch again, as the kernel signals an fd once per watermark written,
 * not again for what already waits. A dispatch that empties the BPF ring
 * buffer also reports the losses its programs counted (one map read per
 * counter), so a periodic dispatch of every fd keeps ops->record told. */
int ps_sampler__dispatch(struct ps_session *s, int fd, size_t budget);
/* Deliver everything waiting in every source, then tell ops->record of the
 * losses no record reported yet (a ring still full when its writer went
 * away), so what it was told adds up to ps_sampler__stats(). For the
 * end of a session. Returns the number of records delivered, or a callback's
 * stop value. */
int ps_sampler__flush(struct ps_session *s);
/* Time order (the default): with several sources (a perf ring per CPU, the
 * BPF ring buffer), dispatch delivers samples and records in timestamp
 * order across all of them, so one thread's time never goes back and a
 * child's FORK, COMM and MMAP2 come before its samples. It copies each
 * record into a queue and holds the newest 0.5 ms of a drain until every
 * source has been read past them (the loop drains every 5 ms), the latency
 * it adds. Off, each source's records come as its drain reads them. 0 or
 * -EINVAL. */
int ps_sampler__set_ordered(struct ps_session *s, bool on);
bool ps_sampler__ordered(const struct ps_session *s);
/* Stats of counter h, or with h == 0 the session's totals (which include
 * losses reported by the ring carriers and malformed records of no counter). */
int ps_sampler__stats(const struct ps_session *s, ps_handle h, struct ps_sample_stats *st);

/* ------------------------------------------------------------------------
 * In-kernel overflow handling (runtime/sample/bpf/, runtime/sample/bpf/ps_sample.bpf.c).
 * A sampling counter may be served by a BPF program attached to its fds
 * (libbpf, one object per counter, programs named ps_*) instead of the perf
 * ring: the program filters overflows in the kernel and forwards survivors
 * as compact records through one BPF ring buffer per session (one more fd of
 * ps_sampler__poll_fds) to the same ps_sample_ops->sample callback (ip pid tid time cpu period
 * user, addr, and a callchain from stack ids when the counter has the callchain term), or counts
 * them in a hash map keyed by any of pid, tid, cpu, comm, ip, user stack, kernel stack. Which path
 * a counter takes: its event string's bpf/nobpf term, else its ps_bpf_opts.backend, else the
 * session's backend; AUTO means BPF for counters that ask for in-kernel work (filters or
 * aggregation) and the perf ring for the rest. When AUTO cannot load BPF
 * (no permission, no BTF, no program type) the counter stays on the perf
 * path, its filters applied in user space, and ps_session__bpf_fallback()
 * says why; an explicit BPF request fails to open instead, with the reason.
 * Time is CLOCK_MONOTONIC on both paths (bpf_ktime_get_ns; every counter
 * is opened with that clock). A tracepoint's program runs on every hit of
 * the tracepoint and checks the target itself; the counter's own fds keep
 * counting (their period set out of reach), its stop/start pause the
 * program too, and a held command's hits count from its exec, as on the
 * perf path.
 */

enum ps_backend {
	PS_BACKEND_AUTO = 0, /* BPF for counters that ask for in-kernel work */
	PS_BACKEND_PERF,     /* the perf ring buffer */
	PS_BACKEND_BPF,	     /* a BPF program; failing to load is an error */
};

enum ps_bpf_mode {
	PS_BPF_FORWARD = 1,   /* deliver survivors to ps_sample_ops->sample */
	PS_BPF_AGGREGATE = 2, /* count survivors by key (ps_aggregate__read) */
	/* With AGGREGATE, on sched:sched_switch only: instead of counting
	 * switches, sum the nanoseconds each thread of the target spends
	 * switched out, from its switch-out (where the key is taken: its
	 * stacks, args.prev_state) to its next switch-in */
	PS_BPF_OFFCPU = 4,
	/* The same, on-CPU: sum the nanoseconds from a thread's switch-in to
	 * its next switch-out, under the key taken there, args.prev_state
	 * PS_STATE_ONCPU. With OFFCPU, each thread's time in the session is
	 * split whole between on-CPU, runnable and blocked. */
	PS_BPF_ONCPU = 8,
	/* With FORWARD, on a counter whose overflows are samples (not a
	 * tracepoint or probe): each sample of a CPython process (3.10 to
	 * 3.13) carries the Python frames its thread was running, read by the
	 * program at the overflow (ps_sample.py). Implies the BPF path; with
	 * call-graph=dwarf the user stack is taken there too. */
	PS_BPF_PYTHON = 16,
};

#define PS_STATE_ONCPU (-1) /* PS_BPF_ONCPU's args.prev_state */

enum ps_agg_field { /* aggregation key fields, ORed */
		    PS_AGG_PID = 1u << 0,
		    PS_AGG_TID = 1u << 1,
		    PS_AGG_CPU = 1u << 2,
		    PS_AGG_COMM = 1u << 3,
		    PS_AGG_IP = 1u << 4,
		    PS_AGG_USTACK = 1u << 5,
		    PS_AGG_KSTACK = 1u << 6,
		    PS_AGG_FIELD = 1u << 7, /* a tracepoint field: field_offset, field_size */
};

enum ps_bpf_priv { PS_PRIV_ANY = 0, PS_PRIV_USER, PS_PRIV_KERNEL };

struct ps_bpf_opts {
	size_t sz;		 /* sizeof(struct ps_bpf_opts) */
	enum ps_backend backend; /* AUTO: defer to the term and the session */
	unsigned mode;		 /* PS_BPF_FORWARD | PS_BPF_AGGREGATE; 0 = FORWARD */
	const pid_t *pids;	 /* keep only these processes (tgids); copied */
	size_t npids;
	pid_t tid;	 /* keep only this thread; 0 = any */
	const int *cpus; /* keep only these CPUs; copied */
	size_t ncpus;
	enum ps_bpf_priv priv; /* user-only or kernel-only overflows */
	uint64_t every;	       /* keep every Nth overflow that passed; 0 or 1 = all */
	uint32_t keys;	       /* PS_AGG_* fields of the aggregation key */
	uint32_t entries;      /* aggregation map size; 0 = 16384 */
	/* PS_AGG_FIELD: the tracepoint field keyed by (ps_tp_field's offset and
	 * size, 1 to 8 bytes, sign-extended when field_signed) */
	uint32_t field_offset, field_size;
	bool field_signed;
	uint64_t offcpu_min_ns; /* PS_BPF_OFFCPU: shorter intervals count stackless */
	/* PS_AGG_FIELD of a USDT counter: its marker's argument N (1 to 12), read
	 * where the marker's note says it is; 0: the field_* above */
	uint32_t usdt_arg;
};

/* Default for the session's counters (set before they open). */
int ps_session__set_backend(struct ps_session *s, enum ps_backend b);
/* Configure counter h's in-kernel handling. On an open counter the program
 * is replaced at once (a new object is loaded and attached before the old
 * one goes). msg explains a failure. */
int ps_session__set_bpf(struct ps_session *s, ps_handle h, const struct ps_bpf_opts *o, char *msg,
			size_t msglen);
/* The same, merged with what the counter has (what several parts of a
 * program ask of one counter: the binding's probes and aggregates): fields
 * o sets (non-zero) replace the counter's, the mode bits add up (a counter
 * that aggregates and also has a sample handler forwards), and nothing is
 * loaded again when nothing changed. On a counter never configured it is
 * ps_session__set_bpf. */
int ps_session__merge_bpf(struct ps_session *s, ps_handle h, const struct ps_bpf_opts *o, char *msg,
			  size_t msglen);
/* The path an open counter takes: PS_BACKEND_BPF or PS_BACKEND_PERF. */
enum ps_backend ps_session__backend(const struct ps_session *s, ps_handle h);
/* Why AUTO fell back to the perf path ("" when it did not); the first reason. */
const char *ps_session__bpf_fallback(const struct ps_session *s);
/* One aggregation entry; only the fields in `fields` are meaningful.
 * Stacks are leaf first; pointers are valid during the callback only. */
struct ps_agg_entry {
	uint32_t fields; /* PS_AGG_* */
	uint32_t pid, tid, cpu;
	char comm[16];
	uint64_t ip;
	bool user;		 /* ip is a user-space address */
	size_t nustack, nkstack; /* 0 with the field set: the stack was not captured */
	const uint64_t *ustack, *kstack;
	int64_t field; /* PS_AGG_FIELD: the tracepoint field's value */
	uint64_t count;
};
typedef int (*ps_agg_fn)(const struct ps_agg_entry *e, void *ctx);
/* Call fn for each key of counter h's aggregation map; fn < 0 stops. */
int ps_aggregate__read(struct ps_session *s, ps_handle h, ps_agg_fn fn, void *ctx);
/* Take the counts so far away and hand them to fn: every count is in
 * exactly one take, however fast they arrive (a swap of maps, not a read
 * and a delete). Stacks taken are forgotten with them. */
int ps_aggregate__take(struct ps_session *s, ps_handle h, ps_agg_fn fn, void *ctx);
/* Forget the counts so far (a take that hands them to no one). */
int ps_aggregate__clear(struct ps_session *s, ps_handle h);
/* Keys that found the map full (counted in the kernel, per CPU, summed). */
int ps_aggregate__dropped(const struct ps_session *s, ps_handle h, uint64_t *dropped);
/* How an off-CPU aggregate keyed by stacks took them: intervals given the
 * stacks remembered for their place (a thread that blocks again where it
 * blocked before; or the one of them that does not differ there), uses
 * that walked the stacks again to compare, the times a place was found
 * with another stack then (walked there every time after: before that, up
 * to 15 intervals of the place had the other one), and intervals walked
 * for want of a usable place. Zeros for others. */
struct ps_agg_places {
	uint64_t used, checked, unstable, walked;
};
int ps_aggregate__places(const struct ps_session *s, ps_handle h, struct ps_agg_places *places);
/* Show libbpf's log (and the verifier's) on stderr. Process-wide. */
void ps_bpf__set_verbose(bool on);
/* Whether the print function libbpf had before perfscript's (libbpf's
 * default, or a host program's) also gets libbpf's messages: yes unless
 * turned off (perfscript's command line does: its errors say what matters). */
void ps_bpf__chain_print(bool on);

/* ------------------------------------------------------------------------
 * Symbols (runtime/symbols/). Turns sampled addresses into "func+0x1a",
 * source lines and inline frames, and unwinds sampled user stacks.
 * User space: each process's executable mappings (from /proc/PID/maps or
 * from the MMAP2/FORK/COMM records of a ring) point at ELF files read with
 * elfutils' libdwfl, one per file (same device, inode, mtime and size; and
 * files with one build id share their tables) shared by every process that
 * maps it, so a process that has exited still resolves. A stripped file's
 * debug file is looked for on this machine by build id and by
 * .gnu_debuglink (under /usr/lib/debug, beside the file; a container's
 * first), and, when $DEBUGINFOD_URLS names servers, asked of them on a
 * thread of its own (ps_symbols__set_debuginfod). C++ and Rust names
 * are demangled unless raw names are asked for. Kernel:
 * /proc/kallsyms, read once on first use. Results are cached per file and
 * address. One thread at a time, as the rule at the top says: two
 * symbolizers in two threads share only what is locked or read once.
 */

struct ps_symbols;

struct ps_symbols *ps_symbols__new(void); /* NULL + errno */
void ps_symbols__free(struct ps_symbols *syms);

/* What the symbolizer holds for the files it read (their images, counted
 * by resident pages; symbol tables; cached answers; line tables) and for
 * processes that exited (their mappings) is kept under a budget in bytes
 * (0: the default, 128 MiB): the oldest exited processes no sample named
 * go first, then the least recently used files, down to 2 MiB under the
 * budget (a quarter under a budget below 8 MiB). The symbolizer keeps to
 * it by itself: call ps_symbols__maintain where no string or frame it
 * handed out is still in use, as often as you like (perfscript calls it
 * after each sample and from its loop once a second). It reads the clock
 * every 1024th call, or at once when a file was read (memory may have
 * jumped by megabytes; now_ns is the CLOCK_MONOTONIC time if the caller
 * has it, else 0), and then, when due: a trim to the budget when a file
 * was read since the last (once a second at most), at once when a file
 * read took it past the budget, and every 10 s; every 2 s
 * the pages of the files' images read only once back to the page cache
 * (they leave the RSS and come back from the page cache if needed; pages
 * read again since stay); every 10 s the cached answers (names of the
 * addresses asked so far) past 1 MiB forgotten. ps_symbols__give_back
 * does all three now, as after a large profile was dropped. */
void ps_symbols__set_budget(struct ps_symbols *syms, size_t bytes);
void ps_symbols__maintain(struct ps_symbols *syms, uint64_t now_ns);
void ps_symbols__give_back(struct ps_symbols *syms);
/* Whether source lines and inline frames are read from DWARF (the
 * default): off, addresses are named by symbol tables alone and no DWARF
 * is held (libc's takes 8.7 MB decompressed, plus its units' line tables);
 * what is held goes now, so call it where a trim may run. */
void ps_symbols__set_lines(struct ps_symbols *syms, bool on);
bool ps_symbols__lines(const struct ps_symbols *syms);

/* Stripped files (no symbol table, no local debug file) are asked of the
 * debuginfod servers $DEBUGINFOD_URLS names, by build id, on a thread of
 * their own; answers take effect at the next trim. ps_symbols__settle, the
 * step before reports, waits for answers still coming, within wait_s
 * seconds for the whole session (2 unless set; 0 waits not at all, a
 * negative wait_s asks no server), and has each JIT's perf map looked at
 * again at its next miss (a JIT may write it as it exits). */
void ps_symbols__set_debuginfod(struct ps_symbols *syms, double wait_s);
void ps_symbols__settle(struct ps_symbols *syms);
/* What the symbolizer has to tell the user, oldest first, each once: a JIT
 * map it would not read and why (a symlink, a FIFO, another user's file).
 * 1 with the sentence in buf, 0 when there is nothing (more). */
int ps_symbols__notice(struct ps_symbols *syms, char *buf, size_t len);

struct ps_symbols_stats {
	size_t sz;	      /* sizeof(struct ps_symbols_stats) */
	size_t files;	      /* files seen */
	size_t files_open;    /* of them, read and holding memory */
	size_t bytes, budget; /* what they hold; the budget */
	uint64_t evictions;   /* files given back to stay within it */
	size_t processes;     /* processes known (live, and recently exited) */
	size_t unwinders;     /* processes with a DWARF unwinder (at most 64) */
	size_t exited;	      /* processes known that exited (their mappings kept: the
			       * last 4096, and of older ones the last 16384 a sample
			       * named, all within the budget) */
};
int ps_symbols__stats(struct ps_symbols *syms, struct ps_symbols_stats *st);

/* Names as the symbol tables have them (raw) or readable (the default): C++
 * names through the C++ runtime's __cxa_demangle, as c++filt prints them,
 * legacy Rust names without their hash. Changing it forgets cached answers. */
void ps_symbols__set_raw_names(struct ps_symbols *syms, bool raw);

/* Learn pid's executable mappings from /proc/PID/maps (for -p and self,
 * whose mappings predate the session); replaces what was known of pid.
 * -ESRCH when the process is gone. A pid that resolve() has never heard of
 * is read this way once, on its first lookup, too. */
int ps_symbols__add_proc(struct ps_symbols *syms, pid_t pid);
/* Make sure pid's mappings are known now, reading /proc/PID/maps if pid was
 * never seen: call it as a sample of pid arrives, so that its addresses
 * still resolve at the end of the session after pid exited. 0, -EINVAL,
 * -ENOMEM (a pid already gone is not an error: it stays unknown).
 * Memory stays bounded however many processes come and go: of the
 * processes that exited, the last 4096 keep their mappings, and of the
 * older ones those that were seen() (the last 16384 of them). */
int ps_symbols__seen(struct ps_symbols *syms, pid_t pid);

/* Feed a record of the ring: MMAP2 adds an executable mapping to rec->pid
 * (replacing whatever it overlaps), FORK copies the parent's mappings to a
 * new process (threads share theirs already), COMM with
 * PERF_RECORD_MISC_COMM_EXEC forgets the pid's old mappings, EXIT of a
 * process keeps them a while (samples may still be in the rings; see
 * seen()). Other record types are ignored. */
int ps_symbols__record(struct ps_symbols *syms, const struct ps_record *rec);

/* Write "func+0x1a" for addr in pid's address space (kernel=false) or in the
 * kernel (kernel=true) to buf, truncated to len like snprintf. Returns 0, or
 * -ENOENT when addr has no symbol: buf then says where it is, as the
 * mapped file's name and the file offset ("libz.so.1.2.13+0x3a2f", what
 * perf report shows), or as hex ("0x7f12...": unknown pid, no mapping,
 * kernel addresses hidden by kptr_restrict); an unknown address is never an
 * error. Code in anonymous memory is named from the JIT's /tmp/perf-PID.map
 * ("START SIZE name" lines, re-read as it grows), the vDSO from the
 * kernel's image. -EINVAL for a NULL or empty buf. *dso, when dso is not
 * NULL, gets the mapping's file name, "[vdso]", "[anon]", the perf map's
 * path, "[kernel.kallsyms]", "[modname]" for a kernel module, or
 * "[unknown]"; the string is owned by syms. */
int ps_symbols__resolve(struct ps_symbols *syms, pid_t pid, uint64_t addr, bool kernel, char *buf,
			size_t len, const char **dso);

/* A process's mappings change: a library is dlclose'd and another loaded
 * at its address, an exec replaces the image. Each replacement starts a
 * new epoch of the process, and the mappings it replaced are kept (the
 * newest 256), so that an address counted during a sample and named at the
 * end is named by what was mapped at the sample: take the epoch with the
 * sample, and pass it to the _at functions. ps_symbols__epoch gives pid's
 * epoch now (0 for a process not known yet). PS_EPOCH_NOW names by the
 * live mappings, as the functions without _at do; PS_EPOCH_KERNEL names a
 * kernel address (kernel = true). */
#define PS_EPOCH_NOW	UINT32_MAX
#define PS_EPOCH_KERNEL (UINT32_MAX - 1)
uint32_t ps_symbols__epoch(struct ps_symbols *syms, pid_t pid);
int ps_symbols__resolve_at(struct ps_symbols *syms, pid_t pid, uint64_t addr, uint32_t epoch,
			   char *buf, size_t len, const char **dso);

/* One source-level frame at an address. */
struct ps_srcframe {
	const char *func; /* the function (demangled as resolve() does), NULL if DWARF has none */
	const char *file; /* its source file as DWARF names it, NULL when unknown */
	uint32_t line;	  /* 0 when unknown */
	bool inlined;	  /* inlined into the next frame; the last frame is the real function */
};

/* The source frames at user address addr of pid, from DWARF (the file's
 * own, or its debuginfo's under /usr/lib/debug): the functions inlined at
 * addr innermost first, each at the line it is at (for the innermost, the
 * line of addr; for the others, the line of the call that was inlined),
 * then the function that holds them. Returns the count (>= 1), 0 when there
 * is no DWARF for addr, or -ENOMEM. *frames stays valid for the life of
 * syms (answers are cached per file, by build id, and address), except a
 * Python frame's (symbols/python.c), valid until the next call on the
 * same thread. */
int ps_symbols__srcframes(struct ps_symbols *syms, pid_t pid, uint64_t addr,
			  const struct ps_srcframe **frames);
int ps_symbols__srcframes_at(struct ps_symbols *syms, pid_t pid, uint64_t addr, uint32_t epoch,
			     const struct ps_srcframe **frames);

/* The mapping of user address addr in pid, for profiles that other tools
 * symbolize again (pprof's Mapping): its runtime range and the file offset
 * at its start, the file, its build id, whether symbols and source lines
 * are known for it; and two names of the function holding addr: the symbol
 * table's own (mangled, or "f.part.0") and DWARF's (demangled), each NULL
 * when the file has none. 0, -ENOENT when no mapping holds addr. */
struct ps_mapping_info {
	size_t sz; /* sizeof(struct ps_mapping_info) */
	uint64_t start, limit, offset;
	const char *path;
	char build_id[41]; /* hex, "" when the file has none */
	bool has_functions, has_lines;
	const char *symbol, *dwarf_name;
};
int ps_symbols__mapping(struct ps_symbols *syms, pid_t pid, uint64_t addr,
			struct ps_mapping_info *out);
int ps_symbols__mapping_at(struct ps_symbols *syms, pid_t pid, uint64_t addr, uint32_t epoch,
			   struct ps_mapping_info *out);

/* A CPython sample's stack as its program ran it (s->py_n > 0: the BPF
 * backend read its Python frames, PS_BPF_PYTHON). pcs[0..n) are the
 * sample's frames, innermost first, each an address inside its function
 * (a return address stepped back); kernel frames may be among them. Each
 * call of the interpreter's eval loop (_PyEval_EvalFrameDefault, found by
 * its symbol's address in the process) gives way to the Python frames it
 * ran, innermost first, and the glue of CPython's perf trampolines (-X
 * perf, 3.12 and later) goes. Writes at most max frames: where from[i] is
 * -1, out[i] is a Python frame's address, which ps_symbols__resolve names
 * "py::QUALNAME:FILE" (and ps_symbols__srcframes FILE:LINE); else out[i]
 * is pcs[from[i]]. Returns how many, or 0 when no Python frame has a
 * place (the stack is as it was). */
int ps_symbols__python_stack(struct ps_symbols *syms, const struct ps_sample *s,
			     const uint64_t *pcs, int n, uint64_t *out, int *from, int max);
/* The Python frames of a CPython sample alone, innermost first, as the
 * addresses above: at most max; how many (0 for none or a process whose
 * CPython is not known). */
int ps_symbols__python_frames(struct ps_symbols *syms, const struct ps_sample *s, uint64_t *out,
			      int max);

/* Unwind the user stack of a sample taken with call-graph=dwarf (its
 * PERF_SAMPLE_REGS_USER registers and PERF_SAMPLE_STACK_USER bytes) in
 * s->pid's address space with the files' DWARF call frame information
 * (libdwfl; one Dwfl per process, reported again when its mappings change).
 * Writes at most max addresses to ips, innermost first: the sampled ip,
 * then each caller's return address minus one (inside its call, as perf
 * reports dwarf frames). Returns how many (unwinding stops where the stack
 * copy, the call frame information or the known mappings end), -ENODATA
 * when the sample has no user registers or stack, -ENOMEM. */
int ps_symbols__unwind(struct ps_symbols *syms, const struct ps_sample *s, uint64_t *ips,
		       size_t max);

/* The address of the data or function symbol name (STT_OBJECT, STT_FUNC)
 * in pid's address space: the ELF files it maps (learnt as add_proc()
 * does, when pid is new), the executable first, then its libraries in
 * address order; a name in several is taken from the first, a global
 * binding before a weak or local one. 0 with *addr set, -ENOENT for no such
 * symbol, -ESRCH when the process is gone, -EINVAL. */
int ps_symbols__lookup(struct ps_symbols *syms, pid_t pid, const char *name, uint64_t *addr);

/* Up to len bytes of kernel memory at addr (through /proc/kcore: root
 * only). Returns how many were read, or -errno (-ERANGE: not mapped). */
int ps_symbols__kernel_read(uint64_t addr, void *buf, size_t len);

/* Read /proc/kallsyms now rather than on the first kernel lookup. Returns 0,
 * -EACCES when every address reads as 0 (kptr_restrict, or not root:
 * kernel addresses then resolve to hex), or -errno. */
int ps_symbols__load_kernel(struct ps_symbols *syms);

/* ------------------------------------------------------------------------
 * Time (runtime/core/clock.c): the clock samples are stamped with
 * (CLOCK_MONOTONIC), in nanoseconds, read in user space: rdtsc converted
 * with the perf user page's time_zero/time_mult/time_shift where the kernel
 * publishes them (cap_user_time_zero), else clock_gettime through the vDSO.
 */
uint64_t ps_time(void);
/* "tsc" or "clock_gettime"; *why (if why is not NULL) says why not "tsc". */
const char *ps_time_source(const char **why);

/* ------------------------------------------------------------------------
 * Code regions (runtime/core/region.c), as LIKWID's marker API and PAPI's
 * high-level API: bracket code on any thread, get per-region call counts
 * and inclusive counter values. One event set per process: spec, else
 * $PERFSCRIPT_EVENTS, else "task-clock". Each thread counts on its own fds,
 * opened at its first begin (one group where the kernel allows it: one
 * read() per boundary, or rdpmc from the user pages where allowed). At exit
 * every thread's regions are reported as $PERFSCRIPT_REPORT says (table,
 * csv, json, none; default table) to $PERFSCRIPT_REPORT_FILE or stderr.
 * Calls return 0 or a negative code; ps_regions__message() then says why.
 */
/* Choose the set and open it on the calling thread. Optional: the first
 * begin does it with NULL. A second call with another spec: -PS_ERR_STATE. */
int ps_regions__init(const char *spec, char *msg, size_t msglen);
/* Begin / end region name on the calling thread. Regions nest; an end must
 * name the innermost open region; a region inside itself counts once. */
int ps_region__begin(const char *name);
int ps_region__end(const char *name);
/* The calling thread's totals of name: *calls and up to max values (in
 * the set's order); returns the number of events, or -ENOENT. */
int ps_region__read(const char *name, uint64_t *calls, uint64_t *values, size_t max);
/* The names of the set's events (up to max); returns how many it has. */
size_t ps_regions__events(const char **names, size_t max);
/* Every thread's regions as "table", "csv" or "json"; -EINVAL otherwise. */
int ps_regions__report(FILE *out, const char *format);
/* Close the calling thread's fds now (its results stay for the report);
 * a later begin opens them again. Done by itself when a thread exits. */
int ps_regions__close_thread(void);
/* Why the calling thread's last region call failed. */
const char *ps_regions__message(void);

/* ------------------------------------------------------------------------
 * Overflow signals, perfctr's interrupt mode (runtime/core/overflow.c): a
 * sampling counter (one event with period= or freq=) on the calling thread
 * alone, whose overflows arrive as a signal to that thread: O_ASYNC,
 * F_SETSIG to real-time signal ps_overflow__signal() (SIGRTMIN+3; overflows
 * queue, none merge) and F_SETOWN_EX to the thread's id. The counter opens
 * stopped: start it, or refresh it for n overflows.
 *
 * With fn, each overflow calls fn(o, ip, ctx) inside the signal handler, on
 * the counted thread, with the interrupted instruction's address. Only
 * async-signal-safe work belongs there (signal-safety(7): no malloc, no
 * stdio, no locks the interrupted code may hold); fn may call
 * ps_overflow__count, __refresh, __set_period, __stop and __start, which
 * are ioctl()s and atomics. Without fn, each overflow's ip is queued (4096
 * at most; more are counted by ps_overflow__dropped) for the thread to take
 * at a safe point with ps_overflow__take; and with ctx but no fn, the
 * counter is polled: ps_overflow__next hands its ips out one at a time,
 * with ctx, which is how perfscript's Lua and LuaJIT handlers run.
 *
 * A forked child shares each counter's open file with its parent: in the
 * child, start, stop, refresh and set_period return -EPERM, and free
 * closes the child's descriptor only, leaving the parent's counter as it
 * was.
 */
struct ps_overflow;
typedef void (*ps_overflow_fn)(struct ps_overflow *o, uint64_t ip, void *ctx);

/* The counter of spec on the calling thread, stopped; NULL + errno with msg
 * saying why (a string that is not one sampling event, an event this
 * thread may not count, more than 64 alive: errno PS_ERR_LIMIT, after the
 * thread's reclaim function, if any, had one chance to free some). */
struct ps_overflow *ps_overflow__new(const char *spec, ps_overflow_fn fn, void *ctx, char *msg,
				     size_t msglen);
/* For the calling thread: fn(ctx) is called when ps_overflow__new finds 64
 * counters alive, before it gives up: a binding frees the counters its
 * program dropped there (a garbage collection). NULL turns it off. */
void ps_overflow__set_reclaim(void (*fn)(void *ctx), void *ctx);
/* One queued ip of a polled counter of the calling thread (made with ctx
 * and no fn): the counter, its ctx in *ctx and the ip in *ip, or NULL when
 * none has one. Handing out one at a time lets a handler's error leave the
 * rest queued. */
struct ps_overflow *ps_overflow__next(void **ctx, uint64_t *ip);
/* Stop it, close it; a signal still queued for it is ignored. NULL is fine. */
void ps_overflow__free(struct ps_overflow *o);
/* Count and signal with no limit (a-mode's counting, i-mode's signals). */
int ps_overflow__start(struct ps_overflow *o);
int ps_overflow__stop(struct ps_overflow *o);
/* Deliver n more overflows, then stop (PERF_EVENT_IOC_REFRESH: perfctr's
 * iresume). The last of the n arrives with si_code POLL_HUP. */
int ps_overflow__refresh(struct ps_overflow *o, int n);
/* A new period, from the next overflow on (PERF_EVENT_IOC_PERIOD); -EINVAL
 * for 0 or a freq= counter. */
int ps_overflow__set_period(struct ps_overflow *o, uint64_t period);
/* The count so far (scaled if the PMU multiplexed it). */
int ps_overflow__read(struct ps_overflow *o, uint64_t *value);
/* Overflows signalled so far; ips that found the queue full. */
uint64_t ps_overflow__count(const struct ps_overflow *o);
uint64_t ps_overflow__dropped(const struct ps_overflow *o);
/* Up to max queued ips, oldest first (no fn only); how many. Call it from
 * the counted thread, outside the handler. */
size_t ps_overflow__take(struct ps_overflow *o, uint64_t *ips, size_t max);
/* The signal overflows arrive as; the event's display name; its fd. */
int ps_overflow__signal(void);
const char *ps_overflow__name(const struct ps_overflow *o);
int ps_overflow__fd(const struct ps_overflow *o);

#ifdef __cplusplus
}
#endif
#endif /* PERFSCRIPT_H */
