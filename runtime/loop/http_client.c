/*
 * http_client.c: HTTP POST from the loop, for pushing what a session
 * measured (Prometheus remote write, a profile to an ingest API): libcurl's
 * multi interface on the loop's epoll set, so a request never blocks the
 * loop and its samples; libcurl tells which sockets to watch and when to
 * time out, the loop calls it back when one is ready. libcurl (and its TLS
 * stack) is loaded with dlopen at the first client, as libmicrohttpd is for
 * the listener: a session that pushes nothing never maps it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <time.h>

#include <curl/curl.h>

#include "base/array.h"
#include "loop/loop.h"

#define PS_CURL_SONAME "libcurl.so.4"
#define PS_REPLY_MAX   65536	  /* bytes of a reply's body kept for the callback */
#define PS_REPLY_READ  (1u << 20) /* read at most: past it the reply is done (an endless body) */
#define PS_REDIRECTS   10	  /* followed at most, as Go's client (and Prometheus) do */
#define PS_CONNECT_MS  5000

static struct {
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_multi_init) *multi_init;
	__typeof__(curl_multi_setopt) *multi_setopt;
	__typeof__(curl_multi_add_handle) *multi_add_handle;
	__typeof__(curl_multi_remove_handle) *multi_remove_handle;
	__typeof__(curl_multi_socket_action) *multi_socket_action;
	__typeof__(curl_multi_info_read) *multi_info_read;
	__typeof__(curl_multi_assign) *multi_assign;
	__typeof__(curl_multi_cleanup) *multi_cleanup;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
} cu;

struct post {
	struct post *next;
	CURL *easy;
	struct curl_slist *headers;
	void *body; /* the request's, kept until it is done */
	char *reply;
	size_t reply_len, read; /* kept, and read in all */
	ps_http_done_fn fn;
	void *ctx;
	char error[CURL_ERROR_SIZE];
};

struct ps_http_client {
	struct ps_loop *loop;
	CURLM *multi;
	int timer; /* the loop timer libcurl asked for, or -1 */
	struct post *posts;
	unsigned npending;
	struct pollfd *socks; /* the sockets libcurl watches, for a flush off the loop */
	size_t nsocks, capsocks;
};

static bool resolve(void *lib, const char *name, void *fp)
{
	void *sym = dlsym(lib, name);

	memcpy(fp, &sym, sizeof(sym));
	return sym != NULL;
}

static int load_curl(char *msg, size_t msglen)
{
	static void *lib;

	if (lib)
		return 0;
	if (!(lib = dlopen(PS_CURL_SONAME, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(msg, msglen, "cannot load %s for HTTP requests: %s (install libcurl4)",
			 PS_CURL_SONAME, dlerror());
		return -ENOENT;
	}
	if (resolve(lib, "curl_global_init", &cu.global_init) &&
	    resolve(lib, "curl_multi_init", &cu.multi_init) &&
	    resolve(lib, "curl_multi_setopt", &cu.multi_setopt) &&
	    resolve(lib, "curl_multi_add_handle", &cu.multi_add_handle) &&
	    resolve(lib, "curl_multi_remove_handle", &cu.multi_remove_handle) &&
	    resolve(lib, "curl_multi_socket_action", &cu.multi_socket_action) &&
	    resolve(lib, "curl_multi_info_read", &cu.multi_info_read) &&
	    resolve(lib, "curl_multi_assign", &cu.multi_assign) &&
	    resolve(lib, "curl_multi_cleanup", &cu.multi_cleanup) &&
	    resolve(lib, "curl_easy_init", &cu.easy_init) &&
	    resolve(lib, "curl_easy_setopt", &cu.easy_setopt) &&
	    resolve(lib, "curl_easy_getinfo", &cu.easy_getinfo) &&
	    resolve(lib, "curl_easy_cleanup", &cu.easy_cleanup) &&
	    resolve(lib, "curl_easy_strerror", &cu.easy_strerror) &&
	    resolve(lib, "curl_slist_append", &cu.slist_append) &&
	    resolve(lib, "curl_slist_free_all", &cu.slist_free_all) &&
	    cu.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK)
		return 0;
	snprintf(msg, msglen, "cannot use %s for HTTP requests", PS_CURL_SONAME);
	dlclose(lib);
	lib = NULL;
	return -ENOENT;
}

static void post_free(struct post *p)
{
	if (p->easy)
		cu.easy_cleanup(p->easy);
	cu.slist_free_all(p->headers);
	free(p->body);
	free(p->reply);
	free(p);
}

/* Finished transfers: their callbacks, with the status or why none came. */
static void collect(struct ps_http_client *c)
{
	CURLMsg *m;
	int left;

	while ((m = cu.multi_info_read(c->multi, &left))) {
		struct post *p = NULL, **at = &c->posts;
		long status = 0;
		int rc;

		if (m->msg != CURLMSG_DONE)
			continue;
		while (*at && (*at)->easy != m->easy_handle)
			at = &(*at)->next;
		if (!(p = *at))
			continue;
		*at = p->next;
		c->npending--;
		cu.easy_getinfo(p->easy, CURLINFO_RESPONSE_CODE, &status);
		rc = m->data.result == CURLE_OK ||
			     (m->data.result == CURLE_WRITE_ERROR && p->read > PS_REPLY_READ)
			 ? (int)status
		     : m->data.result == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT
		     : m->data.result == CURLE_COULDNT_CONNECT	  ? -ECONNREFUSED
		     : m->data.result == CURLE_TOO_MANY_REDIRECTS ? -ELOOP
								  : -EIO;
		cu.multi_remove_handle(c->multi, p->easy);
		p->fn(rc,
		      rc < 0	 ? p->error
		      : p->reply ? p->reply
				 : "",
		      rc < 0 ? strlen(p->error) : p->reply_len, p->ctx);
		post_free(p);
	}
}

static int on_socket_ready(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	struct ps_http_client *c = ctx;
	int running, flags = (events & EPOLLIN ? CURL_CSELECT_IN : 0) |
			     (events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
			     (events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);

	(void)loop;
	cu.multi_socket_action(c->multi, fd, flags, &running);
	collect(c);
	return 0;
}

/* Keep c's list of sockets as libcurl asks: fd for events, or (0) no more. */
static void track(struct ps_http_client *c, int fd, short events)
{
	size_t i = 0;

	while (i < c->nsocks && c->socks[i].fd != fd)
		i++;
	if (!events) {
		if (i < c->nsocks)
			c->socks[i] = c->socks[--c->nsocks];
		return;
	}
	if (i == c->nsocks &&
	    ps_array__reserve(&c->socks, &c->capsocks, c->nsocks + 1, sizeof(*c->socks)))
		return; /* out of memory: only a flush misses it */
	c->socks[i] = (struct pollfd){.fd = fd, .events = events};
	c->nsocks += i == c->nsocks;
}

/* libcurl: watch fd for what, or stop watching it. */
static int on_socket(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
	struct ps_http_client *c = userp;
	uint32_t ev = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);

	(void)easy;
	if (socketp)
		ps_loop__del_fd(c->loop, fd);
	track(c, fd,
	      what == CURL_POLL_REMOVE
		  ? 0
		  : (short)((ev & EPOLLIN ? POLLIN : 0) | (ev & EPOLLOUT ? POLLOUT : 0)));
	if (what == CURL_POLL_REMOVE) {
		cu.multi_assign(c->multi, fd, NULL);
		return 0;
	}
	ps_loop__add_fd(c->loop, fd, ev, on_socket_ready, c);
	cu.multi_assign(c->multi, fd, c); /* watched: socketp is set from now */
	return 0;
}

static int on_timeout(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	struct ps_http_client *c = ctx;
	int running;

	(void)expirations;
	ps_loop__del_timer(loop, c->timer); /* once; libcurl asks again if it wants */
	c->timer = -1;
	cu.multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	collect(c);
	return 0;
}

/* libcurl: call back in ms (-1: never). */
static int on_timer(CURLM *multi, long ms, void *userp)
{
	struct ps_http_client *c = userp;

	(void)multi;
	if (c->timer >= 0)
		ps_loop__del_timer(c->loop, c->timer);
	c->timer = ms < 0 ? -1
			  : ps_loop__add_timer(c->loop, ms > 0 ? (uint64_t)ms * 1000000u : 1000u,
					       on_timeout, c);
	return 0;
}

static size_t on_body(char *data, size_t size, size_t n, void *userp)
{
	struct post *p = userp;
	size_t len = size * n, keep = p->reply_len + len <= PS_REPLY_MAX ? len : 0;
	char *r = keep ? realloc(p->reply, p->reply_len + keep + 1) : p->reply;

	if (keep && r) {
		memcpy(r + p->reply_len, data, keep);
		p->reply = r;
		p->reply_len += keep;
		r[p->reply_len] = '\0';
	}
	p->read += len;
	/* the rest of a long reply is read and dropped; an endless one is cut
	 * off (a write error, which done() reports with the reply's status) */
	return p->read > PS_REPLY_READ ? 0 : len;
}

struct ps_http_client *ps_http_client__new(struct ps_loop *loop, char *msg, size_t msglen)
{
	struct ps_http_client *c;

	if (load_curl(msg, msglen)) {
		errno = ENOENT;
		return NULL;
	}
	if (!(c = calloc(1, sizeof(*c))) || !(c->multi = cu.multi_init())) {
		free(c);
		snprintf(msg, msglen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	c->loop = loop;
	c->timer = -1;
	cu.multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
	cu.multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
	cu.multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	cu.multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
	return c;
}

/* The request's easy handle: the URL, POST of body, headers, limits. */
static int setup(struct post *p, const char *url, const char *const *headers, size_t len,
		 unsigned timeout_ms)
{
	for (size_t i = 0; headers && headers[i]; i++) {
		struct curl_slist *h = cu.slist_append(p->headers, headers[i]);

		if (!h)
			return -ENOMEM;
		p->headers = h;
	}
	if (!(p->easy = cu.easy_init()))
		return -ENOMEM;
	cu.easy_setopt(p->easy, CURLOPT_URL, url);
	cu.easy_setopt(p->easy, CURLOPT_POST, 1L);
	cu.easy_setopt(p->easy, CURLOPT_POSTFIELDS, p->body);
	cu.easy_setopt(p->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	cu.easy_setopt(p->easy, CURLOPT_HTTPHEADER, p->headers);
	cu.easy_setopt(p->easy, CURLOPT_WRITEFUNCTION, on_body);
	cu.easy_setopt(p->easy, CURLOPT_WRITEDATA, p);
	cu.easy_setopt(p->easy, CURLOPT_ERRORBUFFER, p->error);
	cu.easy_setopt(p->easy, CURLOPT_TIMEOUT_MS, (long)(timeout_ms ? timeout_ms : 30000));
	cu.easy_setopt(p->easy, CURLOPT_CONNECTTIMEOUT_MS, (long)PS_CONNECT_MS);
	cu.easy_setopt(p->easy, CURLOPT_NOSIGNAL, 1L);
	/* http and https only: a URL of another scheme is refused, and a
	 * redirect to one; redirects are followed as Go's client follows
	 * them (a POST stays a POST), at most PS_REDIRECTS */
	cu.easy_setopt(p->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	cu.easy_setopt(p->easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	cu.easy_setopt(p->easy, CURLOPT_FOLLOWLOCATION, 1L);
	cu.easy_setopt(p->easy, CURLOPT_MAXREDIRS, (long)PS_REDIRECTS);
	cu.easy_setopt(p->easy, CURLOPT_POSTREDIR, (long)CURL_REDIR_POST_ALL);
	cu.easy_setopt(p->easy, CURLOPT_USERAGENT, "perfscript/" PS_VERSION);
	return 0;
}

int ps_http_client__post(struct ps_http_client *c, const char *url, const char *const *headers,
			 const void *body, size_t len, unsigned timeout_ms, ps_http_done_fn fn,
			 void *ctx)
{
	struct post *p;
	int err;

	if (!c || !url || !fn || (!body && len))
		return -EINVAL;
	if (!(p = calloc(1, sizeof(*p))) || !(p->body = malloc(len ? len : 1))) {
		free(p);
		return -ENOMEM;
	}
	memcpy(p->body, body, len);
	p->fn = fn;
	p->ctx = ctx;
	err = setup(p, url, headers, len, timeout_ms);
	if (!err && cu.multi_add_handle(c->multi, p->easy) != CURLM_OK)
		err = -EIO;
	if (err) {
		post_free(p);
		return err;
	}
	p->next = c->posts;
	c->posts = p;
	c->npending++;
	return 0;
}

unsigned ps_http_client__pending(const struct ps_http_client *c)
{
	return c ? c->npending : 0;
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

unsigned ps_http_client__flush(struct ps_http_client *c, unsigned timeout_ms,
			       const volatile int *cancel)
{
	uint64_t end = now_ms() + timeout_ms;

	while (c && c->npending && !(cancel && *cancel)) {
		uint64_t t = now_ms();
		int running, n;

		if (t >= end)
			break;
		/* slices of at most 50 ms: a signal is seen soon */
		n = poll(c->socks, c->nsocks, end - t < 50 ? (int)(end - t) : 50);
		for (size_t i = 0; n > 0 && i < c->nsocks; i++) {
			short r = c->socks[i].revents;

			if (r)
				cu.multi_socket_action(
				    c->multi, c->socks[i].fd,
				    (r & POLLIN ? CURL_CSELECT_IN : 0) |
					(r & POLLOUT ? CURL_CSELECT_OUT : 0) |
					(r & (POLLERR | POLLHUP) ? CURL_CSELECT_ERR : 0),
				    &running);
		}
		cu.multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
		collect(c); /* a callback may post again: it is flushed too */
	}
	return c ? c->npending : 0;
}

void ps_http_client__free(struct ps_http_client *c)
{
	if (!c)
		return;
	while (c->posts) { /* not done: dropped, no callback */
		struct post *p = c->posts;

		c->posts = p->next;
		cu.multi_remove_handle(c->multi, p->easy);
		post_free(p);
	}
	cu.multi_cleanup(c->multi); /* closes its sockets through on_socket */
	if (c->timer >= 0)
		ps_loop__del_timer(c->loop, c->timer);
	free(c->socks);
	free(c);
}
