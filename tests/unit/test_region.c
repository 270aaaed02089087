/*
 * test_region.c: code regions (core/region.c) count exactly. A region makes
 * N getppid calls (syscalls:sys_enter_getppid) and touches N fresh pages
 * (page-faults): both are exact per region, nested regions are inclusive,
 * a region inside itself counts once, calls are counted, misuse is refused
 * with a message, four threads count apart, the report comes out as table,
 * CSV and JSON (also at exit, in a child), and 10,000 begin/end pairs and a
 * thread that ends leave no fd behind.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfscript.h"
#include "tap.h"

#define N   1000
#define SET "syscalls:sys_enter_getppid,page-faults"

static void touch(size_t n)
{
	long pg = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, n * pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return;
	madvise((void *)p, n * pg, MADV_NOHUGEPAGE); /* one fault per page */
	for (size_t i = 0; i < n; i++)
		p[i * pg] = 1;
	munmap((void *)p, n * pg);
}

static void calls(size_t n)
{
	for (size_t i = 0; i < n; i++)
		syscall(SYS_getppid);
}

static int nfds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static uint64_t get(const char *name, size_t i, uint64_t *ncalls)
{
	uint64_t v[4] = {0}, c = 0;

	ps_region__read(name, &c, v, 4);
	if (ncalls)
		*ncalls = c;
	return v[i];
}

static void test_exact(void)
{
	uint64_t c;

	for (int round = 0; round < 3; round++) {
		ps_region__begin("outer");
		calls(7);
		ps_region__begin("inner");
		calls(N);
		touch(N);
		ps_region__end("inner");
		ps_region__end("outer");
	}
	tap_is_u64(get("inner", 0, &c), 3 * N, "inner: 3 x %d getppid, exact", N);
	tap_is_u64(c, 3, "inner: 3 calls");
	tap_is_u64(get("inner", 1, NULL), 3 * N, "inner: 3 x %d pages touched, exact page-faults",
		   N);
	tap_is_u64(get("outer", 0, &c), 3 * (N + 7), "outer includes inner: 3 x (%d + 7) getppid",
		   N);
	tap_is_u64(c, 3, "outer: 3 calls");
	tap_ok(get("outer", 1, NULL) >= 3 * N, "outer includes inner's page-faults (%llu)",
	       (unsigned long long)get("outer", 1, NULL));
}

static void test_recursion_and_misuse(void)
{
	uint64_t c;
	int err;

	ps_region__begin("rec");
	calls(5);
	ps_region__begin("rec");
	calls(5);
	ps_region__end("rec");
	ps_region__end("rec");
	tap_is_u64(get("rec", 0, &c), 10, "a region inside itself counts once (10 getppid)");
	tap_is_u64(c, 2, "and both calls");

	ps_region__begin("a");
	ps_region__begin("b");
	err = ps_region__end("a");
	tap_ok(err == -PS_ERR_STATE && strstr(ps_regions__message(), "'b' is the innermost"),
	       "ending 'a' inside 'b' is refused: %s", ps_regions__message());
	ps_region__end("b");
	ps_region__end("a");
	err = ps_region__end("a");
	tap_ok(err == -PS_ERR_STATE && strstr(ps_regions__message(), "no region open"),
	       "an end with nothing open is refused: %s", ps_regions__message());
	tap_ok(ps_region__read("nosuch", NULL, NULL, 0) == -ENOENT, "reading an unknown region: %s",
	       ps_regions__message());
	err = ps_regions__init("task-clock", NULL, 0);
	tap_ok(err == -PS_ERR_STATE && strstr(ps_regions__message(), SET),
	       "a second set is refused: %s", ps_regions__message());
	tap_ok(ps_regions__init(SET, NULL, 0) == 0, "the same set again is fine");
}

static void *worker(void *arg)
{
	size_t k = (size_t)(uintptr_t)arg;
	uint64_t *got = malloc(sizeof(*got));

	ps_region__begin("thread");
	calls(100 * k);
	ps_region__end("thread");
	*got = get("thread", 0, NULL);
	return got;
}

static void test_threads(void)
{
	pthread_t th[4];
	int before = nfds(), bad = 0;

	for (size_t k = 0; k < 4; k++)
		pthread_create(&th[k], NULL, worker, (void *)(uintptr_t)(k + 1));
	for (size_t k = 0; k < 4; k++) {
		uint64_t *got;

		pthread_join(th[k], (void **)&got);
		bad += *got != 100 * (k + 1);
		free(got);
	}
	tap_ok(bad == 0, "4 threads count apart (100, 200, 300, 400 getppid each)");
	tap_is_u64(nfds(), before, "ended threads leave no fd open");
}

/* Threads adding regions (their arrays grow) while another thread reports:
 * the report never sees an array mid-move (ASan found it reading freed
 * memory 1 time in 5; `make tsan` runs this under ThreadSanitizer). */
static _Atomic bool adding_done;

static void *adder(void *arg)
{
	char name[32];

	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "race%zu_%d", (size_t)(uintptr_t)arg, i);
		ps_region__begin(name);
		ps_region__end(name);
	}
	return NULL;
}

static void test_report_race(void)
{
	pthread_t th[4];
	FILE *null = fopen("/dev/null", "w");
	char *text = NULL;
	size_t len = 0, rows = 0;
	FILE *mem;
	int reports = 0;

	adding_done = false;
	for (size_t k = 0; k < 4; k++)
		pthread_create(&th[k], NULL, adder, (void *)(uintptr_t)k);
	for (int i = 0; i < 200; i++, reports++)
		ps_regions__report(null, i % 2 ? "csv" : "json");
	for (size_t k = 0; k < 4; k++)
		pthread_join(th[k], NULL);
	fclose(null);
	mem = open_memstream(&text, &len);
	ps_regions__report(mem, "csv");
	fclose(mem);
	for (char *p = text; (p = strstr(p, "\nrace")); p++)
		rows++;
	free(text);
	tap_ok(rows == 1200,
	       "%d reports while 4 threads added 300 regions each; then all 1200 rows (%zu)",
	       reports, rows);
}

static void test_no_leak(void)
{
	int before = nfds(), fails = 0;

	for (int i = 0; i < 10000; i++)
		fails += ps_region__begin("loop") != 0 || ps_region__end("loop") != 0;
	tap_ok(fails == 0, "10,000 begin/end pairs succeed");
	tap_is_u64(nfds(), before, "and leave the fd count as it was");
	tap_is_u64(get("loop", 0, NULL), 0, "an empty region counts 0 getppid");
	ps_regions__close_thread();
	tap_is_u64(nfds(), before - 2, "ps_regions__close_thread closes the thread's 2 fds");
	ps_region__begin("loop");
	ps_region__end("loop");
	tap_is_u64(get("loop", 0, NULL), 0, "a begin after it opens them again");
}

static void test_formats(void)
{
	char *buf = NULL, want[128];
	size_t len = 0;
	FILE *f;

	snprintf(want, sizeof(want), "\ninner,%ld,3,%d,%d\n", (long)syscall(SYS_gettid), 3 * N,
		 3 * N);
	f = open_memstream(&buf, &len);
	ps_regions__report(f, "csv");
	fclose(f);
	tap_ok(!strncmp(buf, "region,tid,calls,syscalls:sys_enter_getppid,page-faults\n", 56) &&
		   strstr(buf, want),
	       "CSV: a header and the row of inner");
	free(buf);
	f = open_memstream(&buf, &len);
	ps_regions__report(f, "json");
	fclose(f);
	snprintf(want, sizeof(want),
		 "{\"region\":\"inner\",\"tid\":%ld,\"calls\":3,\"values\":{\"syscalls:sys_"
		 "enter_getppid\":%d,\"page-faults\":%d}}",
		 (long)syscall(SYS_gettid), 3 * N, 3 * N);
	tap_ok(strstr(buf, want) && buf[len - 2] == '}', "JSON: the object of inner");
	free(buf);
	f = open_memstream(&buf, &len);
	ps_regions__report(f, "table");
	fclose(f);
	tap_ok(strstr(buf, "region") && strstr(buf, "inner") && strstr(buf, "page-faults"),
	       "table: header and rows");
	free(buf);
	tap_ok(ps_regions__report(stdout, "xml") == -EINVAL, "an unknown format is refused");
}

/* A child with PERFSCRIPT_REPORT=csv reports its regions when it exits. */
static void test_at_exit(void)
{
	char path[] = "/tmp/ps-region-XXXXXX", line[256] = "";
	int fd = mkstemp(path), st;
	pid_t pid;
	FILE *f;

	if (fd < 0) {
		tap_skip("mkstemp failed", "the report at exit");
		return;
	}
	close(fd);
	pid = fork();
	if (pid == 0) {
		setenv("PERFSCRIPT_REPORT", "csv", 1);
		setenv("PERFSCRIPT_REPORT_FILE", path, 1);
		ps_region__begin("child");
		calls(42);
		ps_region__end("child");
		exit(0);
	}
	waitpid(pid, &st, 0);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f) && !strstr(line, "child,"))
		;
	if (f)
		fclose(f);
	unlink(path);
	tap_ok(strstr(line, "child,") && strstr(line, ",1,42,"),
	       "at exit, PERFSCRIPT_REPORT=csv writes the regions to PERFSCRIPT_REPORT_FILE: %s",
	       line);
}

/* Hardware counters are read with rdpmc under the user page's lock: in a
 * child (one set per process), instructions:u over a loop must count. */
static void test_rdpmc(void)
{
	struct perf_event_attr a = {.size = sizeof(a),
				    .type = PERF_TYPE_HARDWARE,
				    .config = PERF_COUNT_HW_INSTRUCTIONS,
				    .exclude_kernel = 1};
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0), st = 0;
	char why[160];
	pid_t pid;

	if (fd < 0) {
		snprintf(why, sizeof(why), "no hardware PMU here (instructions: %s)",
			 strerror(errno));
		tap_skip(why, "region reads of a hardware counter through rdpmc");
		return;
	}
	close(fd);
	pid = fork();
	if (pid == 0) {
		uint64_t v = 0;
		volatile unsigned x = 0;

		setenv("PERFSCRIPT_REPORT", "none", 1);
		if (ps_regions__init("instructions:u", NULL, 0) < 0 || ps_region__begin("hw") < 0)
			_exit(2);
		for (int i = 0; i < 100000; i++)
			x += (unsigned)i;
		ps_region__end("hw");
		ps_region__read("hw", NULL, &v, 1);
		_exit(v >= 100000 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "a region counts instructions:u of a 100000-iteration loop (user page or read())");
}

int main(void)
{
	char msg[512] = "";
	int err;

	setenv("PERFSCRIPT_REPORT", "none", 1);
	err = ps_regions__init(SET, msg, sizeof(msg));
	if (err) {
		printf("1..1\nok 1 - regions # SKIP %s\n", msg);
		return 0;
	}
	printf("1..27\n");
	test_exact();
	test_recursion_and_misuse();
	test_threads();
	test_report_race();
	test_no_leak();
	test_formats();
	test_at_exit();
	test_rdpmc();
	return tap_failed != 0;
}
