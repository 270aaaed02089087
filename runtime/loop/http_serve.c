/*
 * http_serve.c: the requests of the loop's HTTP listener, answered by
 * libmicrohttpd in its external epoll mode with no listen socket of its own
 * (loop/http.c accepts, and decides which connections to keep). Each
 * connection gets a record when libmicrohttpd takes it and loses it when
 * libmicrohttpd closes it; a record is busy from a request's headers to its
 * reply, idle otherwise, which is what loop/http.c evicts by. Requests are
 * checked against the web configuration's users before the handler sees
 * them; TLS comes from the same file.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <poll.h>

#include "loop/http.h"

#define TEXT "text/plain; charset=utf-8"

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *type,
			       const char *header, const char *value, char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result rc;

	if (!body)
		return MHD_NO;
	r = ps_mhd.create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	if (type)
		ps_mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (header)
		ps_mhd.add_response_header(r, header, value);
	if (status == MHD_HTTP_UNAUTHORIZED)
		rc = ps_mhd.queue_basic_auth_fail_response(c, "perfscript", r);
	else
		rc = ps_mhd.queue_response(c, status, r);
	ps_mhd.destroy_response(r);
	return rc;
}

static enum MHD_Result respond_text(struct MHD_Connection *c, unsigned status, const char *text)
{
	return respond(c, status, TEXT,
		       status == MHD_HTTP_SERVICE_UNAVAILABLE ? "Retry-After" : NULL, "1",
		       strdup(text), strlen(text));
}

/* The client's address as text, for its own share of password checks. */
static const char *client_address(struct MHD_Connection *c, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *i =
	    ps_mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = i ? i->client_addr : NULL;

	*buf = '\0';
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf,
			  (socklen_t)len);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf,
			  (socklen_t)len);
	return buf;
}

/* NULL when the request may go on, else the reply's status. */
static unsigned authorize(struct ps_http *h, struct MHD_Connection *c)
{
	char *password = NULL, *user, addr[INET6_ADDRSTRLEN];
	enum ps_auth a;

	if (!h->web || !ps_webconfig__wants_auth(h->web))
		return 0;
	user = ps_mhd.basic_auth_get_username_password(c, &password);
	a = ps_webconfig__check(h->web, client_address(c, addr, sizeof(addr)), user, password,
				ps_http__now());
	if (password) {
		memset(password, 0, strlen(password));
		ps_mhd.free(password);
	}
	if (user)
		ps_mhd.free(user);
	return a == PS_AUTH_OK	   ? 0
	       : a == PS_AUTH_BUSY ? MHD_HTTP_SERVICE_UNAVAILABLE
				   : MHD_HTTP_UNAUTHORIZED;
}

static struct ps_http_conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i =
	    ps_mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

/* A deferred request, resumed: its reply, or 503 when the listener goes
 * before it came. */
static void unlink_later(struct ps_http *h, struct ps_http_later *l)
{
	struct ps_http_later **p = &h->later;

	while (*p && *p != l)
		p = &(*p)->next;
	if (*p) {
		*p = l->next;
		h->nlater--;
	}
}

static enum MHD_Result answer_later(struct ps_http *h, struct MHD_Connection *c,
				    struct ps_http_later *l)
{
	enum MHD_Result rc;

	unlink_later(h, l);
	rc = l->ready ? respond(c, (unsigned)l->status, l->ctype, NULL, NULL, l->body, l->len)
		      : respond_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				     "the session ended before the reply was ready\n");
	free(l);
	return rc;
}

void ps_http__resume_all(struct ps_http *h)
{
	for (struct ps_http_later *l = h->later; l; l = l->next)
		if (!l->ready && l->c) {
			ps_mhd.resume_connection(l->c);
			l->c = NULL; /* resumed: not again, and not answered */
		}
}

/* Whether the client at fd hung up (its end closed, or the socket broke). */
static bool hung_up(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};

	return fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

size_t ps_http__check_gone(struct ps_http *h, int64_t *ids)
{
	size_t n = 0;

	for (struct ps_http_later *l = h->later; l; l = l->next) {
		if (n == PS_HTTP_MAX_LATER || l->ready || !l->c || !hung_up(l->fd))
			continue;
		/* answered, to nobody: MHD finds the socket closed and lets the
		 * connection go; nothing is owed to l->id any more */
		l->ready = true;
		l->status = MHD_HTTP_SERVICE_UNAVAILABLE;
		snprintf(l->ctype, sizeof(l->ctype), "%s", TEXT);
		l->body = strdup("");
		ps_mhd.resume_connection(l->c);
		ids[n++] = l->id;
	}
	return n;
}

int64_t ps_http__defer(const struct ps_http_request *req)
{
	struct ps_http_call *call = req ? req->impl : NULL;
	struct ps_http_later *l;

	if (!call || call->later)
		return -EINVAL;
	if (call->h->nlater >= PS_HTTP_MAX_LATER)
		return -EBUSY;
	if (!(l = calloc(1, sizeof(*l))))
		return -ENOMEM;
	l->id = ++call->h->last_id;
	l->c = call->c;
	l->fd = conn_of(call->c) ? conn_of(call->c)->fd : -1;
	l->next = call->h->later;
	call->h->later = l;
	call->h->nlater++;
	call->later = l;
	*call->con_cls = l;
	return l->id;
}

struct args {
	void (*fn)(const char *key, const char *value, void *ctx);
	void *ctx;
	int n;
};

static enum MHD_Result each_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				const char *value)
{
	struct args *a = cls;

	(void)kind;
	a->fn(key, value ? value : "", a->ctx);
	a->n++;
	return MHD_YES;
}

int ps_http__args(const struct ps_http_request *req,
		  void (*fn)(const char *key, const char *value, void *ctx), void *ctx)
{
	struct ps_http_call *call = req ? req->impl : NULL;
	struct args a = {fn, ctx, 0};

	if (!call || !fn)
		return -EINVAL;
	ps_mhd.get_connection_values(call->c, MHD_GET_ARGUMENT_KIND, each_arg, &a);
	return a.n;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_size, void **con_cls)
{
	struct ps_http *h = cls;
	struct ps_http_call call = {.h = h, .c = c, .con_cls = con_cls};
	struct ps_http_request req = {.method = method, .path = url, .impl = &call};
	struct ps_http_reply rep = {.status = 200};
	struct ps_http_conn *conn = conn_of(c);
	unsigned refused;
	int rc;

	(void)version;
	(void)upload_data;
	if (*con_cls)
		return answer_later(h, c, *con_cls);
	if (conn)
		conn->idle_since = 0; /* busy until the reply is sent */
	if ((refused = authorize(h, c)) != 0)
		return respond_text(c, refused,
				    refused == MHD_HTTP_UNAUTHORIZED
					? "unauthorized\n"
					: "too many new passwords to check: retry in a second\n");
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		if (*upload_size) {
			*upload_size = 0; /* a body we do not want: drop it */
			return MHD_YES;
		}
		return respond_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	}
	req.accept = ps_mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	rc = h->doomed ? -ESHUTDOWN : h->fn(&req, &rep, h->ctx);
	if (call.later) { /* its reply comes with ps_http__answer */
		free(rep.body);
		if (rc >= 0) {
			ps_mhd.suspend_connection(c);
			return MHD_YES;
		}
		*con_cls = NULL; /* the handler failed after all: the 500 below */
		unlink_later(h, call.later);
		free(call.later);
	}
	if (rc < 0) {
		char msg[128];

		snprintf(msg, sizeof(msg), "perfscript: %s\n", ps_strerror(rc));
		free(rep.body);
		return respond_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, msg);
	}
	if (!rep.body) {
		rep.body = strdup("");
		rep.len = 0;
	}
	return respond(c, (unsigned)rep.status, rep.content_type, NULL, NULL, rep.body, rep.len);
}

/* A reply was sent (or the request failed): the connection is idle again. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct ps_http_conn *conn = conn_of(c);

	(void)cls;
	(void)con_cls;
	(void)toe;
	if (conn)
		conn->idle_since = ps_http__now();
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct ps_http *h = cls;
	struct ps_http_conn *conn = *socket_context;
	const union MHD_ConnectionInfo *fd;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		fd = ps_mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		conn = calloc(1, sizeof(*conn));
		if (!conn)
			return; /* kept, but never evicted: only MHD's timeout ends it */
		*conn = (struct ps_http_conn){
		    .fd = fd ? fd->connect_fd : -1, .idle_since = ps_http__now(), .prev = h->tail};
		*(h->tail ? &h->tail->next : &h->head) = conn;
		h->tail = conn;
		h->live++;
		*socket_context = conn;
		return;
	}
	if (!conn)
		return;
	*(conn->prev ? &conn->prev->next : &h->head) = conn->next;
	*(conn->next ? &conn->next->prev : &h->tail) = conn->prev;
	if (!conn->evicted)
		h->live--;
	free(conn);
	*socket_context = NULL;
}

struct MHD_Daemon *ps_http__start_mhd(struct ps_http *h, char *msg, size_t msglen)
{
	const char *cert = h->web ? ps_webconfig__cert(h->web) : NULL;
	const char *key = h->web ? ps_webconfig__key(h->web) : NULL;
	unsigned flags = MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_SUSPEND_RESUME;
	const char *prio = h->web ? ps_webconfig__priorities(h->web) : NULL;
	struct MHD_OptionItem tls[] = {
	    {MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)cert},
	    {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)key},
	    {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)prio},
	    {MHD_OPTION_END, 0, NULL},
	};
	struct MHD_Daemon *d;

	if (cert)
		flags |= MHD_USE_TLS;
	/* MHD's own limit leaves room for connections we shut down and it has
	 * not closed yet; ours (h->limit) is the one that counts. */
	d = ps_mhd.start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned)(h->idle_ns / 1000000000u), MHD_OPTION_CONNECTION_LIMIT,
				4 * h->limit + 64, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_ARRAY,
				cert ? tls : tls + 3, MHD_OPTION_END);
	if (!d)
		snprintf(msg, msglen, "cannot start the HTTP server%s (libmicrohttpd)",
			 cert ? " with TLS: check the certificate and key" : "");
	return d;
}
