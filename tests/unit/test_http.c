/*
 * test_http.c: the loop's HTTP listener (runtime/loop/http.c). Clients are
 * forked children that speak HTTP over a socket and report what they read
 * through a pipe, which the loop watches as one more source: the listener
 * is served by the loop alone, as in perfscript. Checks the reply, a second
 * request while another client stalls half-way, 405 for POST, 500 from a
 * failing handler, freeing the listener from inside its own handler, a
 * reply that comes later (ps_http__defer, ps_http__answer) with the
 * query's arguments, and the messages of a bad or busy address.
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loop/loop.h"
#include "tap.h"

struct server {
	struct ps_http *h;
	int calls;
	bool fail;	      /* the handler returns an error */
	bool free_in_handler; /* the handler frees the listener */
	char path[64];
	int64_t later; /* a deferred request's id */
	char args[64]; /* its query, as "k=v;" */
};

static void take_arg(const char *key, const char *value, void *ctx)
{
	struct server *s = ctx;
	size_t n = strlen(s->args);

	snprintf(s->args + n, sizeof(s->args) - n, "%s=%s;", key, value);
}

static int handler(const struct ps_http_request *req, struct ps_http_reply *rep, void *ctx)
{
	struct server *s = ctx;

	s->calls++;
	snprintf(s->path, sizeof(s->path), "%s", req->path);
	if (s->fail)
		return -EIO;
	if (!strcmp(req->path, "/later")) {
		s->args[0] = '\0';
		ps_http__args(req, take_arg, s);
		s->later = ps_http__defer(req);
		return 0; /* no body: it comes with ps_http__answer */
	}
	if (s->free_in_handler) {
		ps_http__free(s->h);
		s->h = NULL;
	}
	rep->content_type = "text/plain";
	rep->body = strdup("hello\n");
	rep->len = 6;
	return 0;
}

static int connect_to(int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A child sends request and writes what it reads back (the status line)
 * to the pipe; returns the pipe's read end. */
static int client(int port, const char *request, int *pid)
{
	int p[2];

	if (pipe(p) < 0)
		return -1;
	*pid = fork();
	if (*pid == 0) {
		char buf[512] = "";
		int fd = connect_to(port);
		ssize_t n = 0;

		close(p[0]);
		if (fd >= 0 && write(fd, request, strlen(request)) > 0)
			n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\r\n")] = '\0';
		if (write(p[1], buf, strlen(buf) + 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	return p[0];
}

struct reply {
	char line[512];
	bool done;
};

static int on_reply(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	struct reply *r = ctx;
	ssize_t n = read(fd, r->line, sizeof(r->line) - 1);

	(void)events;
	r->line[n > 0 ? n : 0] = '\0';
	r->done = true;
	ps_loop__del_fd(loop, fd);
	ps_loop__stop(loop, 0);
	return 0;
}

static int answer_now(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	struct server *s = ctx;

	(void)loop;
	(void)expirations;
	ps_http__answer(s->h, s->later, 201, "text/plain", "later\n", 6);
	return 0; /* again: -ENOENT, harmless */
}

static int on_deadline(struct ps_loop *loop, uint64_t expirations, void *ctx)
{
	(void)expirations;
	(void)ctx;
	ps_loop__stop(loop, -ETIMEDOUT);
	return 0;
}

/* The status line a client got for request, the loop serving meanwhile. */
static const char *ask(struct ps_loop *loop, int port, const char *request, struct reply *r)
{
	int pid, fd = client(port, request, &pid);
	int timer = ps_loop__add_timer(loop, 5000000000ull, on_deadline, NULL);

	memset(r, 0, sizeof(*r));
	ps_loop__add_fd(loop, fd, EPOLLIN, on_reply, r);
	ps_loop__run(loop);
	ps_loop__del_timer(loop, timer);
	if (!r->done)
		ps_loop__del_fd(loop, fd);
	close(fd);
	waitpid(pid, NULL, 0);
	return r->line;
}

int main(void)
{
	struct ps_loop *loop = ps_loop__new();
	struct server s = {0};
	struct reply r;
	char msg[256] = "";
	int port, stall;

	signal(SIGPIPE, SIG_IGN);
	s.h = ps_http__new(loop, "127.0.0.1:0", handler, &s, NULL, msg, sizeof(msg));
	if (!tap_ok(s.h != NULL, "listens on 127.0.0.1:0 (%s)", msg))
		return 1;
	port = ps_http__port(s.h);
	tap_ok(port > 0, "port 0 gets a free port (%d)", port);

	ask(loop, port, "GET /metrics HTTP/1.0\r\n\r\n", &r);
	tap_ok(strstr(r.line, " 200 OK") != NULL, "GET gets 200 (%s)", r.line);
	tap_ok(s.calls == 1 && strcmp(s.path, "/metrics") == 0, "the handler saw /metrics");

	stall = connect_to(port); /* half a request, never finished */
	tap_ok(stall >= 0 && write(stall, "GET / HTTP/1.1\r\nHost: x", 23) == 23,
	       "a client sends half a request and stalls");
	ask(loop, port, "GET /again HTTP/1.0\r\n\r\n", &r);
	tap_ok(strstr(r.line, " 200 OK") && strcmp(s.path, "/again") == 0,
	       "another client is served meanwhile (%s)", r.line);
	close(stall);

	ask(loop, port, "POST / HTTP/1.0\r\nContent-Length: 1\r\n\r\nx", &r);
	tap_ok(strstr(r.line, " 405 ") != NULL, "POST gets 405 (%s)", r.line);
	s.fail = true;
	ask(loop, port, "GET / HTTP/1.0\r\n\r\n", &r);
	tap_ok(strstr(r.line, " 500 ") != NULL, "a failing handler gives 500 (%s)", r.line);
	s.fail = false;

	{ /* the reply comes from a timer, 50 ms after the request */
		int t = ps_loop__add_timer(loop, 50000000ull, answer_now, &s);

		ask(loop, port, "GET /later?n=7&x HTTP/1.0\r\n\r\n", &r);
		tap_ok(strstr(r.line, " 201 ") != NULL && s.later > 0,
		       "a deferred request is answered when ps_http__answer is called (%s)",
		       r.line);
		tap_ok(!strcmp(s.args, "n=7;x=;"), "its query's arguments, in order (%s)", s.args);
		tap_ok(ps_http__answer(s.h, s.later, 200, NULL, "", 0) == -ENOENT &&
			   ps_http__owed(s.h) == 0,
		       "answered once: a second answer is -ENOENT, nothing owed");
		ps_loop__del_timer(loop, t);
	}

	{
		struct ps_http *busy = ps_http__new(loop, "127.0.0.1:0", handler, &s, NULL, msg, 0);
		char addr[32];

		snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
		ps_http__free(busy);
		busy = ps_http__new(loop, addr, handler, &s, NULL, msg, sizeof(msg));
		tap_ok(!busy && errno == EADDRINUSE && strstr(msg, "Address already in use"),
		       "a busy port: EADDRINUSE, '%s'", msg);
		busy = ps_http__new(loop, "nonsense", handler, &s, NULL, msg, sizeof(msg));
		tap_ok(!busy && errno == EINVAL && strstr(msg, "bad listen address 'nonsense'"),
		       "a bad address: EINVAL, '%s'", msg);
	}

	{ /* a full table: each new connection evicts the oldest idle one */
		struct ps_http_opts o = {.sz = sizeof(o), .max_connections = 4};
		struct server s2 = {0};
		int idle[8], p2;

		s2.h = ps_http__new(loop, "127.0.0.1:0", handler, &s2, &o, msg, sizeof(msg));
		p2 = ps_http__port(s2.h);
		for (int i = 0; i < 8; i++)
			idle[i] = connect_to(p2);
		ask(loop, p2, "GET /full HTTP/1.0\r\n\r\n", &r);
		tap_ok(strstr(r.line, " 200 OK") != NULL && ps_http__evictions(s2.h) >= 5,
		       "8 idle connections to a table of 4, then a request: answered (%s), %llu "
		       "evicted",
		       r.line, (unsigned long long)ps_http__evictions(s2.h));
		for (int i = 0; i < 8; i++)
			close(idle[i]);
		ps_http__free(s2.h);
	}
	tap_ok(ps_http__port(NULL) == -EINVAL && ps_http__evictions(NULL) == 0 &&
		   !ps_http__tls(NULL),
	       "NULL listener: port -EINVAL, no evictions, no TLS");
	tap_ok(!ps_http__tls(s.h), "no web configuration: no TLS");

	s.free_in_handler = true;
	ask(loop, port, "GET /last HTTP/1.0\r\n\r\n", &r);
	tap_ok(s.h == NULL && strcmp(s.path, "/last") == 0,
	       "the listener freed from its own handler (%s)", r.line);
	tap_ok(connect_to(port) < 0, "and it no longer listens");
	ps_http__free(NULL);
	ps_loop__free(loop);
	return tap_done();
}
