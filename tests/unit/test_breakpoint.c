/*
 * test_breakpoint.c: breakpoints on symbols, mem:SYMBOL[+OFF], against the
 * real kernel: the session looks the name up in its target when the counter
 * opens. A global of this binary (self target) and the workload's
 * poke_target (-p target, `workload --wait-usr1 poke N`) are written an exact
 * number of times and must count exactly that; ps_symbols__lookup is checked
 * against the addresses the linker gave; the refusals (unknown symbol,
 * system-wide, a PIE command before exec) must say what went wrong, naming
 * the event. Breakpoints need root or kernel.perf_event_paranoid <= 1: the
 * counting checks skip with the reason otherwise.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfscript.h"
#include "session_util.h"
#include "tap.h"

#define N 1000

/* Global and not static: the tests find it by name. */
volatile uint64_t ps_test_var;
extern char **environ;

static const char *workload;

static struct ps_session *new_session(enum ps_target_kind kind, pid_t pid, char *const *argv)
{
	struct ps_target_opts o = {.sz = sizeof(o), .kind = kind, .pid = pid, .argv = argv};

	return ps_session__new(&o);
}

/* Whether this machine lets us set a breakpoint at all; *why says why not. */
static bool can_breakpoint(const char **why)
{
	struct ps_session *s = new_session(PS_TARGET_SELF, 0, NULL);
	ps_handle h = alloc1(s, "mem:ps_test_var:w");
	char msg[512] = "";
	int err = h ? ps_session__open(s, msg, sizeof(msg)) : -EINVAL;
	uint64_t fired = 0;

	if (!err) {
		ps_test_var = 1;
		fired = value(s, h);
	}
	ps_session__free(s);
	if (err == -EACCES || err == -EPERM)
		*why = "breakpoints need root or kernel.perf_event_paranoid <= 1";
	else if (err)
		*why = "this machine refuses hardware breakpoints";
	else if (!fired)
		*why = "this machine opens hardware breakpoints but never fires them "
		       "(a VM without debug registers: perf stat -e mem:ADDR:w counts 0 too)";
	if (err)
		tap_diag("%s", msg);
	return err == 0 && fired;
}

static void test_lookup(void)
{
	struct ps_symbols *syms = ps_symbols__new();
	uint64_t addr = 0;

	tap_ok(syms && ps_symbols__lookup(syms, getpid(), "ps_test_var", &addr) == 0 &&
		   addr == (uintptr_t)&ps_test_var,
	       "lookup: a global variable of this binary is at its linked address");
	addr = 0;
	tap_ok(ps_symbols__lookup(syms, getpid(), "ps_session__new", &addr) == 0 &&
		   addr == (uintptr_t)&ps_session__new,
	       "lookup: a function");
	addr = 0;
	tap_ok(ps_symbols__lookup(syms, getpid(), "environ", &addr) == 0 &&
		   addr == (uintptr_t)&environ,
	       "lookup: a libc variable");
	tap_ok(ps_symbols__lookup(syms, getpid(), "ps_no_such_symbol_zz", &addr) == -ENOENT,
	       "lookup: an unknown name is -ENOENT");
	tap_ok(ps_symbols__lookup(syms, getpid(), "", &addr) == -EINVAL &&
		   ps_symbols__lookup(NULL, getpid(), "x", &addr) == -EINVAL,
	       "lookup: an empty name or NULL syms is -EINVAL");
	ps_symbols__free(syms);
}

static void test_self(void)
{
	struct ps_session *s = new_session(PS_TARGET_SELF, 0, NULL);
	ps_handle w = alloc1(s, "mem:ps_test_var:w");
	ps_handle rw = alloc1(s, "mem:ps_test_var+0x0/8:rw");
	const struct perf_event_attr *a;
	char msg[512] = "";
	uint64_t sink = 0;

	tap_ok(ps_session__open(s, msg, sizeof(msg)) == 0, "self: open mem:ps_test_var (%s)", msg);
	a = ps_session__attr(s, w);
	tap_ok(a && a->bp_addr == (uintptr_t)&ps_test_var, "self: bp_addr is &ps_test_var");
	for (int i = 0; i < N; i++)
		ps_test_var = (uint64_t)i;
	for (int i = 0; i < N / 2; i++)
		sink += ps_test_var;
	(void)sink;
	tap_is_u64(value(s, w), N, "self: mem:ps_test_var:w counts exactly %d writes", N);
	tap_is_u64(value(s, rw), N + N / 2,
		   "self: mem:ps_test_var+0x0/8:rw counts %d writes and %d reads", N, N / 2);
	ps_session__free(s);
}

/* Start `workload --wait-usr1 poke n`; its pid once it said "ready". */
static pid_t spawn_poke(const char *n)
{
	int p[2];
	char line[64] = "";
	pid_t pid;
	ssize_t got;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl(workload, workload, "--wait-usr1", "poke", n, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	got = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	if (pid < 0 || got <= 0 || strncmp(line, "ready ", 6)) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return -1;
	}
	return pid;
}

static void test_pid(void)
{
	char n[16], msg[512] = "", want[128];
	pid_t pid;
	struct ps_session *s;
	ps_handle h, bad;
	int st = -1, err;

	snprintf(n, sizeof(n), "%d", N);
	pid = spawn_poke(n);
	if (pid < 0) {
		tap_ok(0, "-p: start %s --wait-usr1 poke %s", workload, n);
		return;
	}
	s = new_session(PS_TARGET_PID, pid, NULL);
	bad = alloc1(s, "mem:poke_targte:w");
	err = ps_session__open_counter(s, bad, msg, sizeof(msg));
	snprintf(want, sizeof(want), "no symbol 'poke_targte' in process %d", (int)pid);
	tap_ok(err == -ENOENT && strstr(msg, "cannot open 'mem:poke_targte:w'") &&
		   strstr(msg, want) && strstr(msg, "(did you mean 'poke_target'?)"),
	       "-p: an unknown symbol names the event, the process and the nearest name");
	tap_diag("%s", msg);
	h = alloc1(s, "mem:poke_target:w");
	msg[0] = '\0';
	tap_ok(ps_session__open(s, msg, sizeof(msg)) == 0, "-p: open mem:poke_target:w (%s)", msg);
	kill(pid, SIGUSR1);
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "-p: the workload ran");
	tap_is_u64(value(s, h), N, "-p: mem:poke_target:w counts exactly %d writes", N);
	ps_session__free(s);
}

static void test_refusals(void)
{
	struct ps_session *s = new_session(PS_TARGET_SELF, 0, NULL);
	ps_handle h = alloc1(s, "mem:ps_test_vra:w");
	char msg[512] = "";
	int err = ps_session__open(s, msg, sizeof(msg));

	tap_diag("%s", msg);
	tap_ok(err == -ENOENT &&
		   !strcmp(msg, "cannot open 'mem:ps_test_vra:w': no symbol 'ps_test_vra' in "
				"this process (did you mean 'ps_test_var'?)"),
	       "self: an unknown symbol is refused with a did-you-mean");
	tap_ok(h && !ps_session__is_open(s, h), "and the counter stays closed");
	ps_session__free(s);

	s = new_session(PS_TARGET_CPUS, 0, NULL);
	h = alloc1(s, "mem:ps_test_var:w");
	msg[0] = '\0';
	err = ps_session__open(s, msg, sizeof(msg));
	tap_diag("%s", msg);
	tap_ok(h && err == -EINVAL && strstr(msg, "cannot open 'mem:ps_test_var:w'") &&
		   strstr(msg, "system-wide session has none"),
	       "-a: a symbol breakpoint is refused: no address space");
	ps_session__free(s);
}

/* ET_EXEC or ET_DYN from the ELF header, -1 when unreadable. */
static int elf_type(const char *path)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC), t = -1;

	if (fd >= 0 && read(fd, &eh, sizeof(eh)) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG))
		t = eh.e_type;
	if (fd >= 0)
		close(fd);
	return t;
}

static void test_command(void)
{
	char *argv[] = {(char *)workload, "poke", "10", NULL};
	struct ps_session *s;
	char msg[512] = "";
	ps_handle h;
	int err;

	if (elf_type(workload) != ET_DYN) {
		tap_skip("the workload is not PIE here",
			 "-c: a PIE command is refused before exec");
		return;
	}
	s = new_session(PS_TARGET_COMMAND, 0, argv);
	h = alloc1(s, "mem:poke_target:w");
	err = ps_session__open(s, msg, sizeof(msg));
	tap_diag("%s", msg);
	tap_ok(h && err == -EADDRNOTAVAIL &&
		   !strcmp(msg, "cannot open 'mem:poke_target:w': symbol 'poke_target': the "
				"command's addresses are not known before exec (PIE); attach "
				"to the running process, or use a non-PIE build"),
	       "-c: a PIE command is refused before exec, saying what to do");
	ps_session__free(s);
}

int main(void)
{
	const char *why = NULL;

	workload = getenv("WORKLOAD") ? getenv("WORKLOAD") : "build/tests/workload";
	test_lookup();
	test_refusals();
	if (access(workload, X_OK) != 0) {
		tap_ok(0, "workload %s missing (make build/tests/workload)", workload);
		return tap_done();
	}
	test_command();
	if (!can_breakpoint(&why)) {
		tap_skip(why, "counting writes with mem:SYMBOL on self and -p");
		return tap_done();
	}
	test_self();
	test_pid();
	return tap_done();
}
