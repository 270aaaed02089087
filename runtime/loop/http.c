/*
 * http.c: a small HTTP listener on the event loop, for endpoints such as
 * an OpenMetrics /metrics page. libmicrohttpd does the HTTP; it runs in
 * its external epoll mode, with no thread of its own: its epoll fd is one
 * source of perfscript's loop and MHD_run() is called when it is readable,
 * so a request is parsed a piece at a time between sample drains and a
 * slow or stalled client never blocks delivery. Handlers run on the loop
 * thread. A timer drives MHD's connection timeouts only while a connection
 * is open, so an idle listener costs no wake-up at all. The listen socket
 * is made here (getaddrinfo, bind, listen) so that a refused address gets
 * the system's own reason. libmicrohttpd (and the TLS stack it brings: ten
 * libraries, 3 MB and 1.7 ms at every start-up) is loaded with dlopen when
 * the first listener is made, not linked: a session without one never
 * maps it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "perfscript.h"

#define CONN_TIMEOUT_S 10 /* a client that sends nothing for this long is dropped */
#define CONN_LIMIT     64

struct ps_http {
	struct ps_loop *loop;
	struct MHD_Daemon *mhd;
	int epfd;  /* MHD's epoll fd, a source of the loop */
	int timer; /* loop timer id while connections are open, else -1 */
	int port;
	bool running; /* inside MHD_run: a handler may free the listener */
	bool doomed;  /* freed while running: done when MHD_run returns */
	ps_http_fn fn;
	void *ctx;
};

/* The calls used, resolved from the library at the first listener. */
static struct {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_get_timeout) *get_timeout;
	__typeof__(MHD_run) *run;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
} mhd;

/* Store dlsym(lib, name) into the function pointer at fp; false if missing. */
static bool resolve(void *lib, const char *name, void *fp)
{
	void *sym = dlsym(lib, name);

	memcpy(fp, &sym, sizeof(sym));
	return sym != NULL;
}

/* 0, or -ENOENT with msg naming the library and the package that has it. */
static int load_mhd(char *msg, size_t msglen)
{
	static void *lib;

	if (lib)
		return 0;
	if (!(lib = dlopen(PS_MHD_SONAME, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(msg, msglen,
			 "cannot load %s for the HTTP listener: %s (install libmicrohttpd12)",
			 PS_MHD_SONAME, dlerror());
		return -ENOENT;
	}
	if (resolve(lib, "MHD_start_daemon", &mhd.start_daemon) &&
	    resolve(lib, "MHD_stop_daemon", &mhd.stop_daemon) &&
	    resolve(lib, "MHD_get_daemon_info", &mhd.get_daemon_info) &&
	    resolve(lib, "MHD_get_timeout", &mhd.get_timeout) &&
	    resolve(lib, "MHD_run", &mhd.run) &&
	    resolve(lib, "MHD_lookup_connection_value", &mhd.lookup_connection_value) &&
	    resolve(lib, "MHD_create_response_from_buffer", &mhd.create_response_from_buffer) &&
	    resolve(lib, "MHD_add_response_header", &mhd.add_response_header) &&
	    resolve(lib, "MHD_queue_response", &mhd.queue_response) &&
	    resolve(lib, "MHD_destroy_response", &mhd.destroy_response))
		return 0;
	snprintf(msg, msglen, "cannot use %s for the HTTP listener: %s", PS_MHD_SONAME, dlerror());
	dlclose(lib);
	lib = NULL;
	return -ENOENT;
}

static void destroy(struct ps_http *h);

static int on_timer(struct ps_loop *loop, uint64_t expirations, void *ctx);

/* After MHD ran: keep a timer only while MHD has a timeout to keep. */
static void sync_timer(struct ps_http *h)
{
	MHD_UNSIGNED_LONG_LONG timeout;
	bool want = mhd.get_timeout(h->mhd, &timeout) == MHD_YES;

	if (want && h->timer < 0)
		h->timer = ps_loop__add_timer(h->loop, 1000000000ull, on_timer, h);
	else if (!want && h->timer >= 0) {
		ps_loop__del_timer(h->loop, h->timer);
		h->timer = -1;
	}
}

static int on_ready(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	struct ps_http *h = ctx;

	(void)loop;
	(void)fd;
	(void)events;
	h->running = true;
	mhd.run(h->mhd);
	h->running = false;
	if (h->doomed)
		destroy(h);
	else
		sync_timer(h);
	return 0;
}

static int on_timer(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	(void)expirations;
	return on_ready(loop, -1, 0, ctx);
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *type,
			       char *body, size_t len)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result rc;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	if (type)
		mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	rc = mhd.queue_response(c, status, r);
	mhd.destroy_response(r);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_size, void **con_cls)
{
	struct ps_http *h = cls;
	struct ps_http_request req = {.method = method, .path = url};
	struct ps_http_reply rep = {.status = 200};
	int rc;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		if (*upload_size) {
			*upload_size = 0; /* a body we do not want: drop it */
			return MHD_YES;
		}
		return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
			       strdup("only GET and HEAD\n"), strlen("only GET and HEAD\n"));
	}
	req.accept = mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	rc = h->doomed ? -ESHUTDOWN : h->fn(&req, &rep, h->ctx);
	if (rc < 0) {
		char msg[128];
		int n = snprintf(msg, sizeof(msg), "perfscript: %s\n", ps_strerror(rc));

		free(rep.body);
		return respond(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
			       strdup(msg), (size_t)n);
	}
	if (!rep.body) {
		rep.body = strdup("");
		rep.len = 0;
	}
	return respond(c, (unsigned)rep.status, rep.content_type, rep.body, rep.len);
}

/* "ADDR:PORT", "[V6ADDR]:PORT" or ":PORT" (every address) -> host, port. */
static int split_addr(const char *addr, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon = strrchr(addr, ':');
	size_t n;

	if (!colon || !colon[1] || strlen(colon + 1) >= plen)
		return -EINVAL;
	n = (size_t)(colon - addr);
	if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
		addr++;
		n -= 2;
	}
	if (n >= hlen)
		return -EINVAL;
	memcpy(host, addr, n);
	host[n] = '\0';
	snprintf(port, plen, "%s", colon + 1);
	return 0;
}

static int listen_on(const char *addr, char *msg, size_t msglen)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
			*res = NULL;
	char host[256], port[16];
	int rc, fd = -1, one = 1;

	if (split_addr(addr, host, sizeof(host), port, sizeof(port)) < 0) {
		snprintf(msg, msglen,
			 "bad listen address '%s' (want ADDR:PORT, e.g. 127.0.0.1:9100)", addr);
		return -EINVAL;
	}
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (rc != 0) {
		snprintf(msg, msglen, "cannot listen on %s: %s", addr, gai_strerror(rc));
		return -EINVAL;
	}
	rc = 0;
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 64) < 0) {
		rc = -errno;
		snprintf(msg, msglen, "cannot listen on %s: %s", addr, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	freeaddrinfo(res);
	return rc < 0 ? rc : fd;
}

static int bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

struct ps_http *ps_http__new(struct ps_loop *loop, const char *addr, ps_http_fn fn, void *ctx,
			     char *msg, size_t msglen)
{
	struct ps_http *h = calloc(1, sizeof(*h));
	const union MHD_DaemonInfo *info;
	int fd, err = ENOMEM;

	if (!h) {
		snprintf(msg, msglen, "out of memory");
		goto fail;
	}
	*h = (struct ps_http){.loop = loop, .epfd = -1, .timer = -1, .fn = fn, .ctx = ctx};
	if ((err = -load_mhd(msg, msglen)) != 0)
		goto fail;
	fd = listen_on(addr, msg, msglen);
	if (fd < 0) {
		err = -fd;
		goto fail;
	}
	h->port = bound_port(fd);
	h->mhd =
	    mhd.start_daemon(MHD_USE_EPOLL, 0, NULL, NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET,
			     fd, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_LIMIT, MHD_OPTION_END);
	if (!h->mhd) {
		close(fd);
		err = EIO;
		snprintf(msg, msglen, "cannot start the HTTP server on %s (libmicrohttpd)", addr);
		goto fail;
	}
	info = mhd.get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	h->epfd = info ? info->epoll_fd : -1;
	if (h->epfd < 0 || (err = -ps_loop__add_fd(loop, h->epfd, EPOLLIN, on_ready, h)) != 0) {
		snprintf(msg, msglen, "cannot watch the HTTP server: %s",
			 strerror(err ? err : EINVAL));
		goto fail;
	}
	return h;
fail:
	ps_http__free(h);
	errno = err ? err : EINVAL;
	return NULL;
}

static void destroy(struct ps_http *h)
{
	if (h->timer >= 0)
		ps_loop__del_timer(h->loop, h->timer);
	if (h->epfd >= 0)
		ps_loop__del_fd(h->loop, h->epfd);
	if (h->mhd)
		mhd.stop_daemon(h->mhd); /* closes the listen socket and every connection */
	free(h);
}

void ps_http__free(struct ps_http *h)
{
	if (!h)
		return;
	if (h->running)
		h->doomed = true; /* from a handler: MHD is still on the stack */
	else
		destroy(h);
}

int ps_http__port(const struct ps_http *h)
{
	return h->port;
}
