/*
 * test_api.c: the public header's promises at its edges. Every call accepts
 * NULL where its peers do (an error code, never a crash), and the strings
 * the library returns stay valid: ps_strerror's for any number, names and
 * specs for the life of their counter.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "loop/loop.h"
#include "session_util.h"
#include "tap.h"

static int on_fd(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	(void)loop, (void)fd, (void)events, (void)ctx;
	return 0;
}

static int on_timer(struct ps_loop *loop, uint64_t n, void *ctx)
{
	(void)loop, (void)n, (void)ctx;
	return 0;
}

static void test_strerror(void)
{
	const char *unknown = ps_strerror(123456), *copy = strdup(unknown);

	ps_strerror(654321);
	ps_strerror(-EINVAL);
	tap_ok(copy && !strcmp(unknown, copy),
	       "ps_strerror: an unknown number's text survives the next call ('%s')", unknown);
	tap_ok(
	    strstr(ps_strerror(-PS_ERR_LIMIT), "as many counters as it may") != NULL,
	    "the session's counter limit has its own code, not EMFILE's \"Too many open files\"");
	tap_ok(!strcmp(ps_strerror(INT_MIN), "unknown error"), "ps_strerror(INT_MIN) is defined");
	tap_ok(!strcmp(ps_strerror(-ENOENT), ps_strerror(ENOENT)) &&
		   !strcmp(ps_strerror(ENOENT), "No such file or directory"),
	       "ps_strerror: errno of either sign");
	tap_ok(!strcmp(ps_strerror(-PS_ERR_HANDLE), ps_strerror(PS_ERR_HANDLE)),
	       "ps_strerror: project codes of either sign");
	free((void *)copy);
}

static void test_null_loop(void)
{
	int sig = 10;

	tap_ok(ps_loop__add_fd(NULL, 0, 0, on_fd, NULL) == -EINVAL &&
		   ps_loop__del_fd(NULL, 0) == -EINVAL &&
		   ps_loop__add_timer(NULL, 1000, on_timer, NULL) == -EINVAL &&
		   ps_loop__del_timer(NULL, 0) == -EINVAL &&
		   ps_loop__add_signals(NULL, &sig, 1, on_timer, NULL) == -EINVAL &&
		   ps_loop__run(NULL) == -EINVAL && !ps_loop__stopping(NULL),
	       "ps_loop__*: a NULL loop is -EINVAL");
	ps_loop__stop(NULL, 0);
	ps_loop__free(NULL);
	tap_ok(1, "ps_loop__stop and __free accept NULL");
}

static void test_null_session(void)
{
	struct ps_value v;
	ps_handle h = 1;

	tap_ok(ps_session__new(NULL) == NULL && errno == EINVAL,
	       "ps_session__new(NULL): NULL, EINVAL");
	ps_session__free(NULL);
	tap_ok(ps_session__allocate(NULL, "task-clock", &h, 1, NULL) == -EINVAL &&
		   ps_session__open(NULL, NULL, 0) == -EINVAL &&
		   ps_session__read(NULL, h, &v) == -PS_ERR_HANDLE &&
		   ps_session__start(NULL, h) == -PS_ERR_HANDLE &&
		   ps_session__stop(NULL, h) == -PS_ERR_HANDLE &&
		   ps_session__release(NULL) == -EINVAL &&
		   ps_session__reap(NULL, NULL) == -EINVAL &&
		   ps_session__signal(NULL, 0) == -EINVAL && ps_session__name(NULL, h) == NULL &&
		   ps_session__spec(NULL, h) == NULL && ps_session__attr(NULL, h) == NULL &&
		   ps_session__count(NULL) == 0 && ps_session__target_pidfd(NULL) == -1,
	       "ps_session__*: a NULL session is an error code, never a crash");
}

static void test_closed_counter(void)
{
	struct ps_target_opts o = {.sz = sizeof(o), .kind = PS_TARGET_SELF};
	struct ps_session *s = ps_session__new(&o);
	ps_handle h = s ? alloc1(s, "task-clock") : 0;
	const char *name = h ? ps_session__name(s, h) : NULL;
	struct ps_value v;

	tap_ok(name && !strcmp(name, "task-clock"), "a counter's name while it lives");
	ps_session__free_counter(s, h);
	tap_ok(ps_session__name(s, h) == NULL && ps_session__read(s, h, &v) == -PS_ERR_HANDLE &&
		   ps_session__free_counter(s, h) == -PS_ERR_HANDLE,
	       "a freed counter: no name, reads and frees are -PS_ERR_HANDLE");
	ps_session__free(s);
}

static void test_null_events(void)
{
	struct ps_event_error e;

	tap_ok(ps_events__parse(NULL, &e) == NULL, "ps_events__parse(NULL) is NULL");
	ps_events__free(NULL);
	tap_ok(ps_events__count(NULL) == 0 && ps_events__attr(NULL, 0) == NULL &&
		   ps_events__name(NULL, 0) == NULL && ps_events__spec(NULL) == NULL,
	       "ps_events__*: NULL events read as empty");
	ps_event_list__free(NULL);
	tap_ok(ps_event_list__count(NULL) == 0 && ps_event_list__entry(NULL, 0) == NULL,
	       "ps_event_list__*: NULL lists read as empty");
	ps_symbols__free(NULL);
	tap_ok(ps_symbols__add_proc(NULL, 1) == -EINVAL &&
		   ps_symbols__resolve(NULL, 1, 0, false, NULL, 0, NULL) == -EINVAL,
	       "ps_symbols__*: NULL is -EINVAL");
}

/* What both bindings ask of C: a NUL byte found, room for a long string. */
static void test_binding_policy(void)
{
	char msg[160] = "";
	struct ps_target_opts o = {.sz = sizeof(o), .kind = PS_TARGET_SELF};
	struct ps_session *s = ps_session__new(&o);
	struct ps_event_error err = {0};
	ps_handle hs[2];
	int n;

	tap_is_i64(ps_text__check("task-clock", 10, "event string", msg, sizeof(msg)), 0,
		   "ps_text__check: a plain string is fine");
	tap_is_i64(ps_text__check("cycles\0:k", 9, "event string", msg, sizeof(msg)),
		   -PS_ERR_SYNTAX, "a NUL byte inside is -PS_ERR_SYNTAX");
	tap_is_str(msg, "NUL byte at column 7 of the event string (it would end the string there)",
		   "naming its column");
	tap_is_i64(ps_text__check(NULL, 0, NULL, NULL, 0), -EINVAL, "NULL is -EINVAL");
	n = ps_session__allocate(s, "task-clock,page-faults,minor-faults", hs, 2, &err);
	tap_ok(n == -ENOSPC && err.needed == 3 && strstr(err.message, "3 events"),
	       "too few handles: -ENOSPC, err.needed 3, '%s'", err.message);
	n = ps_session__allocate(s, "task-clock,page-faults,minor-faults", NULL, 0, &err);
	tap_ok(n == -ENOSPC && err.needed == 3, "no handles at all: how many it needs (3)");
	ps_session__free(s);
}

/* libbpf's print function of the host program still gets libbpf's
 * messages once perfscript installs its own. */
static int host_prints;

static int host_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	host_prints++;
	return 0;
}

static void test_libbpf_chain(void)
{
	struct bpf_object *obj;

	libbpf_set_print(host_print);
	ps_bpf__set_verbose(false); /* installs perfscript's print function */
	obj = bpf_object__open_file("/nonexistent/ps.bpf.o", NULL);
	tap_ok(!obj && host_prints > 0,
	       "a host program's libbpf print function still gets libbpf's messages (%d)",
	       host_prints);
	host_prints = 0;
	ps_bpf__chain_print(false);
	bpf_object__open_file("/nonexistent/ps.bpf.o", NULL);
	tap_ok(host_prints == 0, "and none once ps_bpf__chain_print(false)");
	ps_bpf__chain_print(true);
}

int main(void)
{
	test_strerror();
	test_libbpf_chain();
	test_binding_policy();
	test_null_loop();
	test_null_session();
	test_closed_counter();
	test_null_events();
	return tap_done();
}
