/*
 * test_gone.c: memory stays bounded however many processes come and go.
 * The pid table (base/pidmap.c) is checked against a plain array through a
 * million random puts and deletes; the symbolizer is fed FORK and EXIT
 * records of 100,000 short-lived processes (pids above any pid_max, so
 * nothing is found in /proc), every fifth of them sampled, and must keep
 * no more than its bounds while the recent and the sampled ones still
 * resolve to their file.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/pidmap.h"
#include "perfscript.h"
#include "symbols/internal.h"
#include "tap.h"

#define SPACE 4096 /* pids 0..SPACE-1: dense enough for long probe runs */

static void test_pidmap(void)
{
	static int ref[SPACE]; /* value + 1, 0 when absent */
	struct ps_pidmap m;
	size_t n = 0, bad = 0;
	unsigned seed = 42;

	ps_pidmap__init(&m, sizeof(int));
	for (int i = 0; i < 1000000; i++) {
		pid_t pid = (pid_t)(rand_r(&seed) % SPACE);

		if (rand_r(&seed) % 3) {
			int *v = ps_pidmap__put(&m, pid);

			n += !ref[pid];
			*v = i;
			ref[pid] = i + 1;
		} else {
			ps_pidmap__del(&m, pid);
			n -= !!ref[pid];
			ref[pid] = 0;
		}
	}
	for (pid_t pid = 0; pid < SPACE; pid++) {
		int *v = ps_pidmap__get(&m, pid);

		bad += ref[pid] ? !v || *v != ref[pid] - 1 : v != NULL;
	}
	tap_ok(bad == 0 && m.n == n,
	       "pidmap: 1M random puts and deletes agree with an array (%zu wrong, %zu of %zu "
	       "entries)",
	       bad, m.n, n);
	ps_pidmap__free(&m);
}

static struct ps_record rec(uint32_t type, pid_t pid, pid_t ppid)
{
	return (struct ps_record){.type = type,
				  .pid = (uint32_t)pid,
				  .tid = (uint32_t)pid,
				  .ppid = (uint32_t)ppid,
				  .ptid = (uint32_t)ppid};
}

static bool in_file(struct ps_symbols *syms, pid_t pid, uint64_t addr)
{
	const char *dso = NULL;
	char buf[256];

	ps_symbols__resolve(syms, pid, addr, false, buf, sizeof(buf), &dso);
	return dso && strcmp(dso, "[unknown]") != 0;
}

static size_t heap_in_use(void)
{
	return mallinfo2().uordblks;
}

static void test_symbols(void)
{
	const pid_t parent = 10000000, first = parent + 1, n = 100000;
	struct ps_symbols *syms = ps_symbols__new();
	struct ps_record r = rec(PERF_RECORD_MMAP2, parent, parent);
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const uint64_t addr = 0x400000;
	size_t heap_at_90k = 0;

	if (!syms || len <= 0) {
		tap_ok(0, "a symbolizer and this test's path");
		return;
	}
	exe[len] = '\0';
	r.addr = addr, r.len = 0x10000, r.prot = PROT_READ | PROT_EXEC, r.filename = exe;
	ps_symbols__record(syms, &r);
	for (pid_t i = 0; i < n; i++) {
		struct ps_record fork = rec(PERF_RECORD_FORK, first + i, parent);
		struct ps_record exit = rec(PERF_RECORD_EXIT, first + i, parent);

		ps_symbols__record(syms, &fork);
		if (i % 5 == 0)
			ps_symbols__seen(syms, first + i);
		ps_symbols__record(syms, &exit);
		if (i == 90000)
			heap_at_90k = heap_in_use();
	}
	tap_ok(syms->procs.n <= 1 + 4096 + 16384,
	       "100000 processes came and went: %zu kept (bound 1 + 4096 recent + 16384 sampled)",
	       syms->procs.n);
	tap_ok(heap_in_use() <= heap_at_90k + 64 * 1024,
	       "the heap stopped growing: %zu bytes at 90000 processes (both bounds reached), %zu "
	       "at 100000",
	       heap_at_90k, heap_in_use());
	tap_ok(in_file(syms, first + n - 1, addr) && in_file(syms, first + n - 4096, addr),
	       "the last 4096 processes to exit still resolve");
	tap_ok(!in_file(syms, first + n - 4097, addr),
	       "an older process no sample named is forgotten");
	tap_ok(in_file(syms, first + 60000, addr),
	       "an older process a sample named still resolves (a profile may hold its addresses)");
	tap_ok(!in_file(syms, first, addr),
	       "past the last 16384 sampled processes, the oldest is forgotten too");
	ps_symbols__free(syms);
}

int main(void)
{
	test_pidmap();
	test_symbols();
	return tap_done();
}
