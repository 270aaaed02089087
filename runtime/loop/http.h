/*
 * http.h: what the parts of the HTTP listener share. loop/http.c accepts
 * connections and decides which to keep; loop/http_serve.c answers requests
 * through libmicrohttpd; loop/http_mhd.c loads libmicrohttpd at the first
 * listener; loop/webconfig.c reads a web configuration file (TLS, basic
 * auth). None of this is part of the public ABI.
 */
#ifndef PS_LOOP_HTTP_H
#define PS_LOOP_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

#include "loop/loop.h"

/* The calls used, resolved from the library at the first listener. */
struct ps_mhd_api {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_get_timeout) *get_timeout;
	__typeof__(MHD_run) *run;
	__typeof__(MHD_add_connection) *add_connection;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_queue_basic_auth_fail_response) *queue_basic_auth_fail_response;
	__typeof__(MHD_basic_auth_get_username_password) *basic_auth_get_username_password;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_free) *free;
	__typeof__(MHD_get_connection_values) *get_connection_values;
	__typeof__(MHD_suspend_connection) *suspend_connection;
	__typeof__(MHD_resume_connection) *resume_connection;
};
extern struct ps_mhd_api ps_mhd;

/* loop/http_mhd.c: 0, or -ENOENT with msg naming the library and its package. */
int ps_mhd__load(char *msg, size_t msglen);

/* ---- loop/webconfig.c, loop/webtls.c, loop/auth.c ---- */

struct ps_webconfig;

struct ps_webuser {
	char *name, *hash;
};

#define PS_WEBTLS_MAX_SUITES 32
/* tls_server_config's versions (0 = TLS10 ... 3 = TLS13, -1 = not given)
 * and cipher suites (Go's names). */
struct ps_webtls {
	int min, max;
	char *suites[PS_WEBTLS_MAX_SUITES];
	size_t nsuites;
};

/* Read a web configuration file in the Prometheus exporters' format:
 *   tls_server_config: {cert_file: PATH, key_file: PATH, min_version: TLS12,
 *                       max_version: TLS13, cipher_suites: [NAME, ...]}
 *   basic_auth_users: {NAME: BCRYPT_HASH, ...}
 * Relative paths are taken from the file's folder. NULL + errno on
 * failure, with msg naming the file, the line and the problem. */
struct ps_webconfig *ps_webconfig__read(const char *path, char *msg, size_t msglen);
/* The same from text; files it names are read from dir, or, with dir
 * NULL, not read at all (their names stand for their contents). */
struct ps_webconfig *ps_webconfig__parse(const char *text, size_t len, const char *path,
					 const char *dir, char *msg, size_t msglen);
void ps_webconfig__free(struct ps_webconfig *w);
/* The PEM texts for TLS, or NULL when the file asks for none. */
const char *ps_webconfig__cert(const struct ps_webconfig *w);
const char *ps_webconfig__key(const struct ps_webconfig *w);
/* The GnuTLS priority string for its TLS versions and suites, or NULL. */
const char *ps_webconfig__priorities(const struct ps_webconfig *w);
/* Whether requests must carry a user and password. */
bool ps_webconfig__wants_auth(const struct ps_webconfig *w);

/* TLS10..TLS13 -> 0..3; -1 for anything else. */
int ps_webtls__version(const char *name);
/* The priority string for t into out; -EINVAL with msg when GnuTLS would
 * not speak exactly the versions and suites t names. */
int ps_webtls__priorities(const struct ps_webtls *t, char *out, size_t outlen, char *msg,
			  size_t msglen);

enum ps_auth {
	PS_AUTH_OK,
	PS_AUTH_DENIED,
	PS_AUTH_BUSY, /* too many new passwords to check this second: try later */
};
/* Check user and password from a client address (any may be NULL:
 * denied). A password once accepted is remembered, so a scraper's every
 * request does not cost a bcrypt; new ones are checked at most
 * PS_AUTH_CHECKS_PER_S a second, of which one is shared by the addresses
 * with PS_AUTH_SUSPECT_FAILS failures in the last minute (loop/auth.c). */
#define PS_AUTH_CHECKS_PER_S  4
#define PS_AUTH_SUSPECT_FAILS 3
enum ps_auth ps_webconfig__check(struct ps_webconfig *w, const char *client, const char *user,
				 const char *password, uint64_t now_ns);

struct ps_auth_state;
/* $2a/b/x/y$, a cost of 4 to 31, 53 characters of salt and hash. */
bool ps_auth__is_bcrypt(const char *hash);
/* The users' names and hashes are borrowed: they outlive the state. */
struct ps_auth_state *ps_auth__new(const struct ps_webuser *users, size_t n);
void ps_auth__free(struct ps_auth_state *a);
enum ps_auth ps_auth__check(struct ps_auth_state *a, const char *client, const char *user,
			    const char *password, uint64_t now_ns);

/* ---- the listener (loop/http.c) and its requests (loop/http_serve.c) ---- */

/* A request whose reply comes later (ps_http__defer): its connection is
 * suspended until ps_http__answer resumes it with the reply (ready), or the
 * listener goes (not ready: 503). */
struct ps_http_later {
	struct ps_http_later *next;
	int64_t id;
	struct MHD_Connection *c;
	int fd; /* its socket, to see the client hang up */
	bool ready;
	int status;
	char ctype[128];
	char *body;
	size_t len;
};

/* A handler's call: what ps_http_request.impl points to. */
struct ps_http_call {
	struct ps_http *h;
	struct MHD_Connection *c;
	void **con_cls;		     /* MHD's per-request pointer: the later, once deferred */
	struct ps_http_later *later; /* set by ps_http__defer */
};

/* http_serve.c: resume every request still owed a reply, to be answered
 * 503 by the next run of MHD (the listener goes). */
void ps_http__resume_all(struct ps_http *h);
/* http_serve.c: the deferred requests whose clients hung up, answered (to
 * nobody): their ids into ids (room for PS_HTTP_MAX_LATER), how many. */
size_t ps_http__check_gone(struct ps_http *h, int64_t *ids);

/* A connection, from the time it is accepted until libmicrohttpd closes it. */
struct ps_http_conn {
	struct ps_http_conn *prev, *next; /* in the order they were accepted */
	int fd;
	uint64_t idle_since; /* accepted or last answered (ns); 0 while a request is served */
	bool evicted;	     /* shut down by us: no longer counted */
};

struct ps_http {
	struct ps_loop *loop;
	struct MHD_Daemon *mhd;
	struct ps_webconfig *web; /* NULL: plain HTTP, no users */
	int lfd;		  /* the listen socket */
	int epfd;		  /* MHD's epoll fd, a source of the loop */
	int timer;		  /* loop timer id while connections are open, else -1 */
	int pause_timer;	  /* while the listen socket is off the loop (no fd left) */
	int port;
	unsigned limit;	  /* connections kept at once; a new one evicts the oldest idle */
	uint64_t idle_ns; /* a connection must send a whole request within this */
	unsigned live;	  /* connections not evicted */
	struct ps_http_conn *head, *tail;
	uint64_t evictions;
	struct ps_http_later *later; /* replies owed */
	unsigned nlater;
	int64_t last_id;
	bool running; /* inside MHD_run: a handler may free the listener */
	bool doomed;  /* freed while running: done when MHD_run returns */
	ps_http_fn fn;
	void (*gone)(int64_t id, void *ctx);
	void *ctx;
};

uint64_t ps_http__now(void);
/* The libmicrohttpd daemon for h, with TLS when h->web asks; NULL with msg. */
struct MHD_Daemon *ps_http__start_mhd(struct ps_http *h, char *msg, size_t msglen);

#endif /* PS_LOOP_HTTP_H */
