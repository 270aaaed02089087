/*
 * http.c: a small HTTP listener on the event loop, for endpoints such as
 * an OpenMetrics /metrics page. perfscript accepts the connections itself
 * and hands each to libmicrohttpd (loop/http_serve.c), which runs in its
 * external epoll mode with no thread of its own: its epoll fd is one source
 * of the loop and MHD_run() is called when it is readable, so a request is
 * parsed a piece at a time between sample drains and a slow client never
 * blocks delivery. Accepting here is what keeps the listener answering
 * under attack: at most `limit` connections are kept, and a new one evicts
 * the oldest that is not being answered, so idle or trickling clients can
 * fill the table but never shut well-behaved ones out; and a connection
 * that has not sent a whole request within the idle time is closed, however
 * slowly it trickles bytes. A timer runs only while connections are open,
 * so an idle listener costs no wake-up at all.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "loop/http.h"

#define DEFAULT_LIMIT	64
#define DEFAULT_IDLE_MS 10000u
#define ACCEPT_BATCH	32	   /* per wake-up, so the loop's other sources get their turn */
#define PAUSE_NS	100000000u /* off the loop this long when no fd is left */

uint64_t ps_http__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void destroy(struct ps_http *h);
static int on_tick(struct ps_loop *loop, uint64_t expirations, void *ctx);

/* Shut a connection down; libmicrohttpd sees the end and closes it. */
static void evict(struct ps_http *h, struct ps_http_conn *c)
{
	if (c->fd >= 0)
		shutdown(c->fd, SHUT_RDWR);
	c->evicted = true;
	h->live--;
	h->evictions++;
}

/* Make room: evict the oldest connection that is not being answered. */
static bool evict_oldest(struct ps_http *h)
{
	for (struct ps_http_conn *c = h->head; c; c = c->next)
		if (!c->evicted && c->idle_since) {
			evict(h, c);
			return true;
		}
	return false;
}

/* Close connections that have had the idle time to send a request. */
static void expire(struct ps_http *h)
{
	uint64_t now = ps_http__now();

	for (struct ps_http_conn *c = h->head; c; c = c->next)
		if (!c->evicted && c->idle_since && now - c->idle_since >= h->idle_ns)
			evict(h, c);
}

/* Run libmicrohttpd, then keep a timer only while connections are open.
 * false when a handler freed the listener: h is gone. */
static bool run(struct ps_http *h)
{
	MHD_UNSIGNED_LONG_LONG wait;

	/* MHD asks to run again at once (timeout 0) when it left work in its
	 * buffers that no new epoll event will announce */
	h->running = true;
	for (int i = 0; i < 16; i++) {
		ps_mhd.run(h->mhd);
		if (h->doomed || ps_mhd.get_timeout(h->mhd, &wait) != MHD_YES || wait > 0)
			break;
	}
	h->running = false;
	if (h->doomed) {
		destroy(h);
		return false;
	}
	if (h->head && h->timer < 0)
		h->timer = ps_loop__add_timer(h->loop, 250000000ull, on_tick, h);
	else if (!h->head && h->timer >= 0) {
		ps_loop__del_timer(h->loop, h->timer);
		h->timer = -1;
	}
	return true;
}

static int on_ready(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	(void)loop;
	(void)fd;
	(void)events;
	run(ctx);
	return 0;
}

static int on_tick(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	struct ps_http *h = ctx;
	int64_t gone[PS_HTTP_MAX_LATER];
	size_t n;

	(void)loop;
	(void)expirations;
	expire(h);
	n = ps_http__check_gone(h, gone);
	/* the owner may close the listener from its callback: not under us */
	h->running = true;
	for (size_t i = 0; i < n && h->gone && !h->doomed; i++)
		h->gone(gone[i], h->ctx);
	h->running = false;
	if (h->doomed) {
		destroy(h);
		return 0;
	}
	run(h);
	return 0;
}

static int on_accept(struct ps_loop *loop, int fd, uint32_t events, void *ctx);

static int on_resume(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	struct ps_http *h = ctx;

	(void)expirations;
	ps_loop__del_timer(loop, h->pause_timer);
	h->pause_timer = -1;
	ps_loop__add_fd(loop, h->lfd, EPOLLIN, on_accept, h);
	return 0;
}

/* No descriptor left to accept with: stop listening for a moment rather
 * than spin on a listen socket that stays readable. */
static void pause_accepting(struct ps_http *h)
{
	if (h->pause_timer >= 0)
		return;
	h->pause_timer = ps_loop__add_timer(h->loop, PAUSE_NS, on_resume, h);
	if (h->pause_timer >= 0)
		ps_loop__del_fd(h->loop, h->lfd);
}

static int on_accept(struct ps_loop *loop, int lfd, uint32_t events, void *ctx)
{
	struct ps_http *h = ctx;
	bool evicted = false;

	(void)loop;
	(void)events;
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if ((errno == EMFILE || errno == ENFILE) && !evicted && evict_oldest(h)) {
				if (!run(h)) /* closes it, giving its descriptor back */
					return 0;
				evicted = true;
				continue;
			}
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				pause_accepting(h);
			break;
		}
		if (h->live >= h->limit)
			evict_oldest(h); /* if all are busy, MHD's own limit is the bound */
		/* MHD closes fd itself if it cannot take it */
		ps_mhd.add_connection(h->mhd, fd, (struct sockaddr *)&ss, len);
	}
	run(h);
	return 0;
}

/* "ADDR:PORT", "[V6ADDR]:PORT" or ":PORT" (every address) -> host, port. */
static int split_addr(const char *addr, char *host, size_t hlen, char *port, size_t plen, char *msg,
		      size_t msglen)
{
	const char *colon = strrchr(addr, ':'), *close = strchr(addr, ']');
	bool bracketed = addr[0] == '[';
	unsigned long p;
	char *end;
	size_t n;

	if (!colon || !colon[1] || (bracketed && (!close || colon < close))) {
		snprintf(msg, msglen,
			 "bad listen address '%s': the port is missing (want ADDR:PORT, "
			 "[V6ADDR]:PORT or :PORT, e.g. 127.0.0.1:9100)",
			 addr);
		return -EINVAL;
	}
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (*end || errno || p > 65535 || colon[1] < '0' || colon[1] > '9') {
		snprintf(msg, msglen,
			 "bad listen address '%s': the port must be a number from 0 to 65535",
			 addr);
		return -EINVAL;
	}
	n = (size_t)(colon - addr);
	if (bracketed) {
		if (close + 1 != colon) {
			snprintf(msg, msglen, "bad listen address '%s' (want [V6ADDR]:PORT)", addr);
			return -EINVAL;
		}
		addr++;
		n -= 2;
	} else if (memchr(addr, ':', n)) {
		snprintf(
		    msg, msglen,
		    "bad listen address '%s': write an IPv6 address in brackets, [V6ADDR]:PORT",
		    addr);
		return -EINVAL;
	}
	if (n >= hlen) {
		snprintf(msg, msglen, "bad listen address '%s': the host name is too long", addr);
		return -EINVAL;
	}
	memcpy(host, addr, n);
	host[n] = '\0';
	snprintf(port, plen, "%lu", p);
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

	if ((rc = split_addr(addr, host, sizeof(host), port, sizeof(port), msg, msglen)) < 0)
		return rc;
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (rc != 0) {
		snprintf(msg, msglen, "cannot listen on %s: %s", addr, gai_strerror(rc));
		return -EINVAL;
	}
	rc = 0;
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 128) < 0) {
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

/* The listener's parts, in order; errno-style code on failure, with msg. */
static int start(struct ps_http *h, const char *addr, const struct ps_http_opts *o, char *msg,
		 size_t msglen)
{
	const union MHD_DaemonInfo *info;
	int rc;

	if ((rc = ps_mhd__load(msg, msglen)) < 0)
		return -rc;
	if (o && o->web_config && !(h->web = ps_webconfig__read(o->web_config, msg, msglen)))
		return errno;
	if ((h->lfd = listen_on(addr, msg, msglen)) < 0)
		return -h->lfd;
	h->port = bound_port(h->lfd);
	if (!(h->mhd = ps_http__start_mhd(h, msg, msglen)))
		return EIO;
	info = ps_mhd.get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	h->epfd = info ? info->epoll_fd : -1;
	if (h->epfd < 0 || (rc = ps_loop__add_fd(h->loop, h->epfd, EPOLLIN, on_ready, h)) < 0 ||
	    (rc = ps_loop__add_fd(h->loop, h->lfd, EPOLLIN, on_accept, h)) < 0) {
		rc = h->epfd < 0 ? -EINVAL : rc;
		snprintf(msg, msglen, "cannot watch the HTTP server: %s", strerror(-rc));
		return -rc;
	}
	return 0;
}

struct ps_http *ps_http__new(struct ps_loop *loop, const char *addr, ps_http_fn fn, void *ctx,
			     const struct ps_http_opts *opts, char *msg, size_t msglen)
{
	struct ps_http *h = calloc(1, sizeof(*h));
	int err;

	if (!h) {
		snprintf(msg, msglen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	*h = (struct ps_http){.loop = loop,
			      .lfd = -1,
			      .epfd = -1,
			      .timer = -1,
			      .pause_timer = -1,
			      .fn = fn,
			      .ctx = ctx,
			      .limit = DEFAULT_LIMIT,
			      .idle_ns = DEFAULT_IDLE_MS * 1000000ull};
	if (opts && opts->sz >= sizeof(*opts)) {
		if (opts->max_connections)
			h->limit = opts->max_connections;
		if (opts->idle_timeout_ms)
			h->idle_ns = opts->idle_timeout_ms * 1000000ull;
		h->gone = opts->gone;
	}
	if (!addr || !fn) {
		snprintf(msg, msglen, "no address or no handler for the HTTP listener");
		err = EINVAL;
	} else
		err = start(h, addr, opts, msg, msglen);
	if (err) {
		ps_http__free(h);
		errno = err;
		return NULL;
	}
	return h;
}

static void destroy(struct ps_http *h)
{
	if (h->mhd && h->later) { /* MHD must not stop with a connection suspended */
		ps_http__resume_all(h);
		for (int i = 0; i < 4 && h->later; i++)
			ps_mhd.run(h->mhd);
	}
	if (h->timer >= 0)
		ps_loop__del_timer(h->loop, h->timer);
	if (h->pause_timer >= 0)
		ps_loop__del_timer(h->loop, h->pause_timer);
	else if (h->lfd >= 0)
		ps_loop__del_fd(h->loop, h->lfd);
	if (h->epfd >= 0)
		ps_loop__del_fd(h->loop, h->epfd);
	if (h->mhd)
		ps_mhd.stop_daemon(h->mhd); /* closes every connection */
	if (h->lfd >= 0)
		close(h->lfd);
	ps_webconfig__free(h->web);
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
	return h ? h->port : -EINVAL;
}

uint64_t ps_http__evictions(const struct ps_http *h)
{
	return h ? h->evictions : 0;
}

bool ps_http__tls(const struct ps_http *h)
{
	return h && h->web && ps_webconfig__cert(h->web);
}

int ps_http__answer(struct ps_http *h, int64_t id, int status, const char *content_type,
		    const char *body, size_t len)
{
	struct ps_http_later *l = h ? h->later : NULL;

	while (l && (l->id != id || l->ready || !l->c))
		l = l->next;
	if (!l)
		return -ENOENT;
	if (!(l->body = malloc(len ? len : 1)))
		return -ENOMEM;
	memcpy(l->body, body, len);
	l->len = len;
	l->status = status;
	snprintf(l->ctype, sizeof(l->ctype), "%s", content_type ? content_type : "text/plain");
	l->ready = true;
	ps_mhd.resume_connection(l->c);
	if (!h->running) /* in external polling MHD must run after a resume */
		run(h);
	return 0;
}

unsigned ps_http__owed(const struct ps_http *h)
{
	return h ? h->nlater : 0;
}
