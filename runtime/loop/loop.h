/*
 * loop.h: the loop layer's interface for perfscript's own binding and CLI
 * (runtime/lua/, runtime/cli/): the epoll loop, the session driver that
 * runs a session on it, and the HTTP listener and client on it. Not part
 * of libperfscript's ABI: libperfscript.so does not export these (its
 * version script, bindings/libperfscript.map, lists bindings/perfscript.h
 * only), and they change as the binding needs. A C program that samples
 * polls ps_sampler__poll_fds and calls ps_sampler__dispatch in its own
 * loop. Threads: a loop, a driver, a listener and a client are each used
 * by one thread at a time, as perfscript.h says of its objects.
 */
#ifndef PS_LOOP_LOOP_H
#define PS_LOOP_LOOP_H

#include "perfscript.h"

/* ------------------------------------------------------------------------
 * The event loop (runtime/loop/loop.c): one thread, epoll over fds, timerfds on
 * CLOCK_MONOTONIC and a signalfd.
 */

struct ps_loop;
/* Return 0 to keep going, a negative value to stop the loop with it. */
typedef int (*ps_fd_fn)(struct ps_loop *loop, int fd, uint32_t events, void *ctx);
typedef int (*ps_timer_fn)(struct ps_loop *loop, uint64_t expirations, void *ctx);

struct ps_loop *ps_loop__new(void);
void ps_loop__free(struct ps_loop *loop);
int ps_loop__add_fd(struct ps_loop *loop, int fd, uint32_t events, ps_fd_fn fn, void *ctx);
int ps_loop__del_fd(struct ps_loop *loop, int fd);
/* A periodic timer; the first expiry is one interval from now. Returns a
 * timer id (>= 0) for ps_loop__del_timer. */
int ps_loop__add_timer(struct ps_loop *loop, uint64_t interval_ns, ps_timer_fn fn, void *ctx);
int ps_loop__del_timer(struct ps_loop *loop, int id);
/* Block the signals of set and deliver them through a signalfd; fn gets the
 * signal number in expirations. */
int ps_loop__add_signals(struct ps_loop *loop, const int *signals, size_t n, ps_timer_fn fn,
			 void *ctx);
/* Run until ps_loop__stop() or a callback returns < 0. Returns 0 or that value. */
int ps_loop__run(struct ps_loop *loop);
void ps_loop__stop(struct ps_loop *loop, int status);
bool ps_loop__stopping(const struct ps_loop *loop);

/* ------------------------------------------------------------------------
 * The session driver (runtime/loop/): how perfscript runs a session on a
 * loop, for any client of the library. Its overflow sources are polled and
 * drained in budgets (512 records) that yield to a pending signal, and
 * every 5 ms whatever woke no one (so time order moves on); the target is
 * watched (its pidfd, or SIGCHLD without one) and the session ends when it
 * exits; SIGINT, SIGTERM, SIGHUP and SIGPIPE, caught by a handler from the
 * driver's creation on, end the session in any phase (a second SIGINT,
 * SIGTERM or SIGHUP ends the process at once; on_signal lets a client stop
 * a busy handler); an
 * optional duration ends it too. At the end, what the rings still hold is
 * delivered (not after a signal or a stop that halts delivery), and a
 * command still running is sent SIGTERM and, after a second, SIGKILL. COMM
 * and FORK records keep a pid -> command name table. BPF options given for a
 * counter several times (by several probes) are merged and handed to the
 * session once, when they changed.
 */

struct ps_driver;

enum ps_stop_reason {
	PS_STOP_NONE = 0,
	PS_STOP_CLIENT,	  /* the client ended it (a script's exit()): no more delivery */
	PS_STOP_ERROR,	  /* a handler failed: no more delivery */
	PS_STOP_SIGNAL,	  /* SIGINT, SIGTERM, SIGHUP, SIGPIPE: no more delivery */
	PS_STOP_TARGET,	  /* the command or process exited */
	PS_STOP_DEADLINE, /* the duration passed */
	PS_STOP_INPUT,	  /* the client's input ended (a REPL's stdin) */
};

struct ps_driver_opts {
	size_t sz;	 /* sizeof(struct ps_driver_opts) */
	double duration; /* seconds after start to end the session; 0: none */
	FILE *log; /* what the driver does, a line each ("sending SIGTERM ..."); NULL: quiet */
	/* SIGINT goes here first: true when the client took it (a REPL drops
	 * its line), false to end the session as without it; may be NULL */
	bool (*on_interrupt)(struct ps_driver *d, void *ctx);
	/* Called in the signal handler itself when SIGINT, SIGTERM, SIGHUP or
	 * SIGPIPE arrives, so a client can stop what it runs (a hook, a flag):
	 * only async-signal-safe work (lua_sethook is). May be NULL. */
	void (*on_signal)(int signo, void *ctx);
	void *ctx;
};

/* A driver of s on loop (neither is owned). NULL + errno. */
struct ps_driver *ps_driver__new(struct ps_session *s, struct ps_loop *loop,
				 const struct ps_driver_opts *opts);
void ps_driver__free(struct ps_driver *d);
/* The client's sample ops, called through the driver (which keeps its name
 * table and stops delivery once halted). */
int ps_driver__set_sample_ops(struct ps_driver *d, const struct ps_sample_ops *ops);
/* The sample rings are drained when the kernel wakes the driver (a quarter
 * ring written) and by a timer, every 5 ms while records come: a client
 * that can wait longer for them sets that shortest interval (1 ms to 1 s;
 * -EINVAL outside), and drains at once with drain_now when it needs them
 * (which does nothing from inside a handler a drain called). */
int ps_driver__set_drain_interval(struct ps_driver *d, uint64_t ns);
uint64_t ps_driver__drain_interval(const struct ps_driver *d);
void ps_driver__drain_now(struct ps_driver *d);
/* After counters opened: put new poll fds on the loop, with the drain timer. */
int ps_driver__sync(struct ps_driver *d);
/* Start the session: apply BPF options, open the counters, let a held
 * command run, watch the target, arm the duration and the signals. 0, or
 * -errno with msg saying what failed. */
int ps_driver__start(struct ps_driver *d, char *msg, size_t msglen);
bool ps_driver__started(const struct ps_driver *d);
/* Run the loop until the session ends; 0 or the loop's error. */
int ps_driver__run(struct ps_driver *d);
/* Set (or, with NULL, clear) opts.on_interrupt after creation: a REPL that
 * starts on a driver made for a script. */
void ps_driver__set_on_interrupt(struct ps_driver *d, bool (*fn)(struct ps_driver *d, void *ctx));
/* End the session; the first reason given is kept. */
void ps_driver__stop(struct ps_driver *d, enum ps_stop_reason why);
/* Act on signo as on a signal now: the REPL's on_interrupt for SIGINT, else
 * the session ends (PS_STOP_SIGNAL). */
void ps_driver__signal(struct ps_driver *d, int signo);
/* Act now on a signal caught and not yet acted on (the loop does it when it
 * runs; a client interrupted outside the loop calls this). */
void ps_driver__take_signal(struct ps_driver *d);
/* Whether a signal was caught or acted on this session. */
bool ps_driver__signalled(const struct ps_driver *d);
bool ps_driver__stopping(const struct ps_driver *d);
enum ps_stop_reason ps_driver__stop_reason(const struct ps_driver *d);
/* Why it ended, in words ("SIGINT", "the target exited", ...); "" while it runs. */
const char *ps_driver__stop_text(const struct ps_driver *d);
/* Deliver what the sources still hold, unless delivery was halted or a
 * signal ended the session. Returns what ps_sampler__flush returned, or 0. */
int ps_driver__finish(struct ps_driver *d);
/* A command still running is sent SIGTERM, then SIGKILL after a second, and
 * reaped; so are the processes it left (outside a terminal, its process
 * group; in one, its descendants and, as the process that forked it is
 * their subreaper, every child of that process). Zombies are not waited
 * for. */
void ps_driver__end(struct ps_driver *d);
/* Whether the command or process exited during the session, with its wait
 * status (meaningful for a command only). */
bool ps_driver__target_exited(const struct ps_driver *d, int *wstatus);
/* The name of thread tid of process pid (pid <= 0: not known), from COMM
 * records or /proc/PID/task/TID/comm; "" if unknown. A process's name is
 * its main thread's: ps_driver__comm(d, pid, pid). */
const char *ps_driver__comm(struct ps_driver *d, pid_t pid, pid_t tid);

/* ------------------------------------------------------------------------
 * An HTTP listener on the loop (runtime/loop/http.c), for endpoints such as
 * an OpenMetrics page: libmicrohttpd in its external epoll mode, driven by
 * the loop, so requests are served on the loop thread between other events
 * and a slow client never blocks them. GET and HEAD only.
 */

struct ps_http;

struct ps_http_request {
	const char *method; /* "GET" or "HEAD" */
	const char *path;   /* "/metrics" */
	const char *accept; /* the Accept header, or NULL */
	void *impl;	    /* the listener's, for ps_http__args and ps_http__defer */
};

struct ps_http_reply {
	int status;		  /* 200 unless set */
	const char *content_type; /* a static string, or NULL */
	char *body;		  /* malloc'd; the listener frees it */
	size_t len;
};

/* Fill the reply; return 0, or a negative code for a 500 reply. */
typedef int (*ps_http_fn)(const struct ps_http_request *req, struct ps_http_reply *reply,
			  void *ctx);

struct ps_http_opts {
	size_t sz;		  /* sizeof(struct ps_http_opts) */
	const char *web_config;	  /* TLS and basic auth from this file (docs/fleet.md), or NULL */
	unsigned max_connections; /* kept at once, 0: 64; a new one evicts the oldest idle */
	unsigned idle_timeout_ms; /* a connection must send a whole request within this, 0: 10 s */
	/* the client of deferred request id hung up before its reply (checked
	 * four times a second): nothing is owed to id any more; NULL: none */
	void (*gone)(int64_t id, void *ctx);
};

/* Listen on addr, "HOST:PORT", "[V6]:PORT" or ":PORT" (every address); port
 * 0 picks a free one; opts may be NULL. NULL + errno on failure, with msg
 * saying why ("cannot listen on 127.0.0.1:80: Address already in use"). */
struct ps_http *ps_http__new(struct ps_loop *loop, const char *addr, ps_http_fn fn, void *ctx,
			     const struct ps_http_opts *opts, char *msg, size_t msglen);
/* Close the listener and its connections; NULL is fine. */
void ps_http__free(struct ps_http *h);
/* The port it listens on; -EINVAL for NULL. */
int ps_http__port(const struct ps_http *h);
/* Connections closed to make room or for sending no request in time. */
uint64_t ps_http__evictions(const struct ps_http *h);
/* Whether it speaks HTTPS (its web configuration has a certificate). */
bool ps_http__tls(const struct ps_http *h);
/* Inside the handler: each query argument of req ("seconds", "5" for
 * /debug/pprof/profile?seconds=5), in order, to fn; how many. */
int ps_http__args(const struct ps_http_request *req,
		  void (*fn)(const char *key, const char *value, void *ctx), void *ctx);

/* Replies owed at once, at most (ps_http__defer). */
#define PS_HTTP_MAX_LATER 16
/* Inside the handler: req's reply comes later, from ps_http__answer, and
 * the handler leaves the reply it was given empty (a profile of the next N
 * seconds). Returns the request's id (> 0), -EBUSY when PS_HTTP_MAX_LATER
 * replies are owed already (reply 503 then), -EINVAL outside a handler.
 * The connection waits meanwhile, counted as busy (never evicted); when the
 * listener closes first, the client gets a 503. */
int64_t ps_http__defer(const struct ps_http_request *req);
/* The reply owed to request id: status, content type (NULL: text), body
 * (copied). 0, or -ENOENT when nothing is owed to id (answered already). */
int ps_http__answer(struct ps_http *h, int64_t id, int status, const char *content_type,
		    const char *body, size_t len);
/* Replies owed now. */
unsigned ps_http__owed(const struct ps_http *h);

/* ------------------------------------------------------------------------
 * HTTP POST from the loop (runtime/loop/http_client.c), for pushing what a
 * session measures: libcurl's multi interface on the loop's epoll set, so
 * no request blocks the loop. libcurl is loaded at the first client.
 */

struct ps_http_client;

/* A request's end: status is the HTTP status, or a negative code when no
 * reply came (-ETIMEDOUT, -ECONNREFUSED, -EIO), with body then libcurl's
 * message; body is the reply's first 64 KiB otherwise. */
typedef void (*ps_http_done_fn)(int status, const char *body, size_t len, void *ctx);

/* NULL + errno with msg (libcurl missing: ENOENT, naming the package). */
struct ps_http_client *ps_http_client__new(struct ps_loop *loop, char *msg, size_t msglen);
/* POST body (copied) to url (http or https), with headers ("Name: value",
 * NULL-terminated; may be NULL), within timeout_ms (0: 30 s); fn is called
 * from the loop when it ends. 0 or -errno. */
int ps_http_client__post(struct ps_http_client *c, const char *url, const char *const *headers,
			 const void *body, size_t len, unsigned timeout_ms, ps_http_done_fn fn,
			 void *ctx);
/* Requests not ended yet. */
unsigned ps_http_client__pending(const struct ps_http_client *c);
/* Run the requests under way, off the loop (when it no longer runs: at a
 * session's end), until none is left, timeout_ms pass or *cancel (may be
 * NULL) is set; their fns are called as they end, and requests those post
 * are run too. Returns how many are left. */
unsigned ps_http_client__flush(struct ps_http_client *c, unsigned timeout_ms,
			       const volatile int *cancel);
/* Drops the requests not ended (their fn is not called); NULL is fine. */
void ps_http_client__free(struct ps_http_client *c);

#endif /* PS_LOOP_LOOP_H */
