/*
 * test_threads.c: two sessions and two symbolizers used by two threads at
 * once, as perfscript.h's thread rule allows (one thread at a time per
 * object, any objects side by side). Each thread counts with a session of
 * its own and names addresses of this program and of libc with a
 * symbolizer of its own, keeping it to a budget (64 KiB) small enough that its
 * upkeep gives files back and reads them again all the time: every name
 * must stay right. Under ThreadSanitizer (tests/slow/tsan.sh) it shows
 * what the two share (the pagemap fd, the mount namespace, libdwfl's
 * state) is shared safely.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "perfscript.h"
#include "tap.h"

#define ROUNDS 200

struct worker {
	int id;
	int counted;	    /* task-clock read > 0 */
	int named;	    /* rounds whose both names were right */
	int open_err;	    /* ps_session__open's error, or 0 */
	uint64_t evictions; /* files its symbolizer gave back to keep to its budget */
	char msg[256];
	char last[2][128];
};

__attribute__((noinline)) static int spin_here(int n)
{
	volatile int x = 0;

	for (int i = 0; i < n; i++)
		x += i;
	return x;
}

/* "getppid+0x1", or libc's own name of it with its debug file
 * ("__GI___getppid+0x1") */
static int names(const char *s, const char *func)
{
	const char *at = strstr(s, func);

	return at && (at == s || at[-1] == '_');
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct ps_target_opts t = {.sz = sizeof(t), .kind = PS_TARGET_SELF};
	struct ps_session *s = ps_session__new(&t);
	struct ps_symbols *syms = ps_symbols__new();
	struct ps_event_error err;
	struct ps_value v = {0};
	ps_handle h;

	if (!s || !syms || ps_session__allocate(s, "task-clock", &h, 1, &err) != 1) {
		snprintf(w->msg, sizeof(w->msg), "cannot make a session or a symbolizer");
		goto out;
	}
	w->open_err = ps_session__open(s, w->msg, sizeof(w->msg));
	ps_symbols__set_budget(syms, 64u << 10); /* 64 KiB: less than libc's names */
	for (int r = 0; r < ROUNDS; r++) {
		const uint64_t addrs[2] = {(uint64_t)(uintptr_t)spin_here + 1,
					   (uint64_t)(uintptr_t)getppid + 1};
		const char *want[2] = {"spin_here+", "getppid+"};
		int right = 0;

		spin_here(1000 * (w->id + 1));
		for (int k = 0; k < 2; k++) {
			char buf[128];

			if (ps_symbols__resolve(syms, getpid(), addrs[k], false, buf, sizeof(buf),
						NULL) == 0 &&
			    names(buf, want[k]))
				right++;
			else
				snprintf(w->last[k], sizeof(w->last[k]), "%s", buf);
		}
		w->named += right == 2;
		ps_symbols__maintain(syms, 0);
		if (r % 50 == 49)
			ps_symbols__give_back(syms);
	}
	{
		struct ps_symbols_stats st = {.sz = sizeof(st)};

		if (ps_symbols__stats(syms, &st) == 0)
			w->evictions = st.evictions;
	}
	if (!w->open_err && ps_session__read(s, h, &v) == 0)
		w->counted = v.value > 0;
out:
	ps_symbols__free(syms);
	ps_session__free(s);
	return NULL;
}

int main(void)
{
	struct worker w[2] = {{.id = 0}, {.id = 1}};
	pthread_t th[2];

	for (int i = 0; i < 2; i++)
		tap_ok(pthread_create(&th[i], NULL, work, &w[i]) == 0, "thread %d starts", i);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++) {
		if (w[i].open_err)
			tap_skip(w[i].msg, "thread %d: its own session counts its task-clock", i);
		else
			tap_ok(w[i].counted, "thread %d: its own session counts its task-clock", i);
		tap_ok(w[i].evictions > 0,
		       "thread %d: its symbolizer gave files back to keep to 64 KiB (%llu)", i,
		       (unsigned long long)w[i].evictions);
		tap_ok(w[i].named == ROUNDS,
		       "thread %d: its own symbolizer, kept to 64 KiB, names this program's and "
		       "libc's functions in all %d rounds (%d; last wrong: '%s', '%s')",
		       i, ROUNDS, w[i].named, w[i].last[0], w[i].last[1]);
	}
	return tap_done();
}
