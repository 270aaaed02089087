/*
 * target.c: what a session counts. SELF is the calling process; COMMAND is
 * argv forked here and held before exec (the child blocks reading a CLOEXEC
 * pipe) so counters can be opened on its pid with enable_on_exec before it
 * runs a single instruction of the command; a failed exec is reported back
 * through a second CLOEXEC pipe as an errno. The command dies with us
 * (PR_SET_PDEATHSIG) and leads its own process group, so that what it
 * starts can be stopped with it. PID attaches to every thread of
 * a running process; CPUS counts system-wide on a validated CPU list,
 * optionally running a command as well. This file also says, for each
 * counter, on which (pid, cpu) pairs its fds are opened: a counting counter
 * once per task (cpu -1) or CPU, a sampling one once per task and CPU.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/array.h"
#include "base/cgroup.h"
#include "base/cpus.h"
#include "core/internal.h"

static uint16_t next_tag(void)
{
	static _Atomic uint32_t seq;
	uint32_t v = atomic_fetch_add(&seq, 1);

	if (v == 0) { /* first session: start somewhere unpredictable */
		v = (uint32_t)time(NULL) ^ (uint32_t)getpid() << 7;
		atomic_store(&seq, v + 1);
	}
	/* Distinct for 32767 consecutive sessions of one process, never 0, and
	 * below 1<<15 so a handle stays positive as a Lua integer. */
	return (uint16_t)(v % 0x7fffu + 1);
}

static int pidfd_open_compat(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* Whether the command gets a process group of its own: not when we run in
 * a terminal's foreground, where a command in another group that reads the
 * terminal would be stopped (SIGTTIN) for good. */
static bool own_group(void)
{
	pid_t fg = tcgetpgrp(STDIN_FILENO);

	return fg < 0 || fg != getpgrp();
}

/* The child: wait for the go byte (EOF means the session died), then exec. */
static _Noreturn void run_child(char *const *argv, int go_rd, int status_wr, bool group)
{
	sigset_t none;
	char go = 0;
	ssize_t n;
	int err;

	/* the loop may have blocked signals for its signalfd; the command must not inherit that */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* If we die, however (SIGKILL included), the command goes too. No
	 * getppid() check for a death before this: the go pipe's EOF says so
	 * below, and a syscall here would be counted as the command's by a
	 * system-wide counter (or one opened while we were not looking). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		_exit(127);
	if (group)
		setpgid(0, 0);
	do
		n = read(go_rd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || go != 'g')
		_exit(127);
	execvp(argv[0], argv);
	err = errno;
	if (write(status_wr, &err, sizeof(err)) < 0)
		_exit(126);
	_exit(127);
}

static int fork_command(struct ps_session *s, char *const *argv)
{
	int go[2] = {-1, -1}, st[2] = {-1, -1}, err = 0;
	pid_t pid;
	bool group = own_group();

	if (!argv || !argv[0])
		return -EINVAL;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(st, O_CLOEXEC) < 0) {
		err = -errno;
		goto cleanup;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto cleanup;
	}
	if (pid == 0) {
		close(go[1]);
		close(st[0]);
		run_child(argv, go[0], st[1], group);
	}
	if (group)
		setpgid(pid, pid); /* as the child does: whichever runs first */
	/* what the command leaves behind when it exits comes to us, not to
	 * init: core/tree.c can still stop it and reap it */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	s->own_group = group;
	s->pid = pid;
	s->argv0 = strdup(argv[0]); /* NULL on ENOMEM only costs symbol breakpoints */
	s->has_command = true;
	s->held = true;
	s->go_fd = go[1];
	s->status_fd = st[0];
	go[1] = st[0] = -1;
	s->pidfd = pidfd_open_compat(pid); /* -1 on old kernels: the loop falls back to reap */
cleanup:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (st[i] >= 0)
			close(st[i]);
	}
	return err;
}

/* -G: the group's directory, for perf_event_open's PERF_FLAG_PID_CGROUP. */
static int open_cgroup(struct ps_session *s, const char *name)
{
	char rel[4096];

	s->cgroup_fd = ps_cgroup__open(name, rel, sizeof(rel));
	if (s->cgroup_fd < 0)
		return s->cgroup_fd;
	s->cgroup = strdup(rel);
	return s->cgroup ? 0 : -ENOMEM;
}

struct ps_session *ps_session__create(const struct ps_target_opts *opts)
{
	struct ps_session *s = NULL;
	int err = 0;

	if (!opts || opts->sz < offsetof(struct ps_target_opts, cpus) ||
	    (unsigned)opts->kind > PS_TARGET_CPUS) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->free_head = PS_NO_SLOT;
	s->self = getpid();
	s->tag = next_tag();
	s->kind = opts->kind;
	s->no_children = opts->sz > offsetof(struct ps_target_opts, no_children) &&
			 opts->no_children && opts->kind != PS_TARGET_SELF;
	s->pidfd = s->go_fd = s->status_fd = s->cgroup_fd = -1;
	switch (opts->kind) {
	case PS_TARGET_SELF:
		break;
	case PS_TARGET_COMMAND:
		err = fork_command(s, opts->argv);
		break;
	case PS_TARGET_PID:
		if (opts->pid <= 0) {
			err = -EINVAL;
			break;
		}
		s->pid = opts->pid;
		s->pidfd = pidfd_open_compat(opts->pid);
		if (s->pidfd < 0 && errno != ENOSYS && errno != EPERM)
			err = -errno;
		else if (s->pidfd < 0 && kill(opts->pid, 0) < 0 && errno == ESRCH)
			err = -ESRCH;
		break;
	case PS_TARGET_CPUS:
		err = ps_cpus__select(opts->sz > offsetof(struct ps_target_opts, cpus) ? opts->cpus
										       : NULL,
				      &s->cpus, &s->ncpus);
		if (!err && opts->sz > offsetof(struct ps_target_opts, cgroup) && opts->cgroup)
			err = open_cgroup(s, opts->cgroup);
		if (!err && opts->argv)
			err = fork_command(s, opts->argv);
		break;
	}
	if (err) {
		ps_session__free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

void ps_session__set_cancel(struct ps_session *s, const volatile int *flag)
{
	if (s)
		s->cancel = flag;
}

void ps_session__free(struct ps_session *s)
{
	int saved = errno;

	if (!s)
		return;
	ps_counters__free_all(s);
	if (s->hooks)
		s->hooks->free(s); /* after the counters: their fds hold references to rings */
	free(s->slots);
	ps_session__free_ahead(s);
	if (s->has_command && s->held && !s->reaped) {
		kill(s->pid, SIGKILL);
		while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
			;
	} else if (s->has_command && !s->reaped) {
		/* a released command is the user's to wait for; just collect it if done */
		waitpid(s->pid, NULL, WNOHANG);
	}
	if (s->go_fd >= 0)
		close(s->go_fd);
	if (s->status_fd >= 0)
		close(s->status_fd);
	if (s->pidfd >= 0)
		close(s->pidfd);
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	free(s->cgroup);
	free(s->cpus);
	free(s->argv0);
	free(s->tree);
	free(s);
	errno = saved;
}

enum ps_target_kind ps_session__target_kind(const struct ps_session *s)
{
	return s ? s->kind : PS_TARGET_SELF;
}

pid_t ps_session__self_pid(const struct ps_session *s)
{
	return s ? s->self : 0;
}

pid_t ps_session__target_pid(const struct ps_session *s)
{
	/* a command run beside system-wide counters (-a -c) is a target too */
	return s && (s->kind == PS_TARGET_PID || s->has_command) ? s->pid : 0;
}

const char *ps_session__target_cgroup(const struct ps_session *s)
{
	return s ? s->cgroup : NULL;
}

int ps_session__target_cpus(const struct ps_session *s, const int **cpus)
{
	bool any = s && s->kind == PS_TARGET_CPUS;

	if (cpus)
		*cpus = any ? s->cpus : NULL;
	return any ? s->ncpus : 0;
}

int ps_session__target_pidfd(const struct ps_session *s)
{
	return s ? s->pidfd : -1;
}

int ps_session__release(struct ps_session *s)
{
	int child_errno = 0;
	ssize_t n;

	if (!s)
		return -EINVAL;
	if (!s->has_command)
		return -ECHILD;
	if (!s->held)
		return -EALREADY;
	s->held = false;
	n = write(s->go_fd, "g", 1);
	close(s->go_fd);
	s->go_fd = -1;
	if (n != 1)
		return -EPIPE; /* the child is gone before exec (killed) */
	/* EOF: the exec closed the CLOEXEC pipe; an int: the exec's errno */
	do
		n = read(s->status_fd, &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	close(s->status_fd);
	s->status_fd = -1;
	if (n == (ssize_t)sizeof(child_errno))
		return child_errno > 0 ? -child_errno : -ENOEXEC;
	return 0;
}

int ps_session__reap(struct ps_session *s, int *wstatus)
{
	pid_t r;

	if (!s)
		return -EINVAL;
	if (!s->has_command)
		return -ECHILD;
	if (!s->reaped) {
		struct rusage ru;

		do
			r = wait4(s->pid, &s->wstatus, WNOHANG, &ru);
		while (r < 0 && errno == EINTR);
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EAGAIN;
		s->reaped = true;
		s->user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec;
		s->sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
	}
	if (wstatus)
		*wstatus = s->wstatus;
	return 0;
}

int ps_session__signal(struct ps_session *s, int sig)
{
	if (!s)
		return -EINVAL;
	if (!s->has_command)
		return -ECHILD;
	if (!s->own_group)
		return ps_tree__signal(s, sig);
	/* the group outlives its reaped leader while members remain; members
	 * it orphaned are ours to reap (we are their subreaper), the leader is
	 * ps_session__reap's */
	if (s->reaped)
		while (waitpid(-s->pid, NULL, WNOHANG) > 0)
			;
	if (sig == 0) /* a zombie nobody reaps is not "left" */
		return ps_tree__group_alive(s->pid) ? 0 : -ESRCH;
	return killpg(s->pid, sig) < 0 ? -errno : 0;
}

/* Every thread of s->pid, from /proc/PID/task. */
static int list_threads(pid_t pid, int cpu, struct ps_position **pos)
{
	char path[64];
	struct ps_position *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		if (ps_array__reserve(&v, &cap, n + 1, sizeof(*v))) {
			err = -ENOMEM;
			goto cleanup;
		}
		v[n].pid = (pid_t)tid;
		v[n++].cpu = cpu;
	}
	if (n == 0)
		err = -ESRCH; /* a zombie has no tasks left to count */
cleanup:
	closedir(d);
	if (err) {
		free(v);
		return err;
	}
	*pos = v;
	return (int)n;
}

/* Sampling positions: every (task, CPU) pair. The kernel will not mmap an
 * inherited per-task event on cpu -1, and SET_OUTPUT wants the same CPU as
 * the ring, so a sampling counter on a task is opened once per CPU. */
static int per_cpu_positions(const struct ps_session *s, int cpu, struct ps_position **pos)
{
	struct ps_position *tasks = NULL, *v = NULL;
	int *cpus = NULL, ncpus = 0, ntasks = 1, err = 0;
	pid_t pid = s->kind == PS_TARGET_COMMAND ? s->pid : s->kind == PS_TARGET_CPUS ? -1 : 0;

	if (cpu >= 0) {
		ncpus = 1;
		cpus = malloc(sizeof(*cpus));
		if (!cpus)
			return -ENOMEM;
		cpus[0] = cpu;
	} else if (s->kind == PS_TARGET_CPUS) {
		ncpus = s->ncpus;
		cpus = malloc((ncpus ? ncpus : 1) * sizeof(*cpus));
		if (!cpus)
			return -ENOMEM;
		memcpy(cpus, s->cpus, ncpus * sizeof(*cpus));
	} else {
		err = ps_cpus__online(&cpus, &ncpus);
		if (err)
			return err;
	}
	if (s->kind == PS_TARGET_PID) {
		ntasks = list_threads(s->pid, -1, &tasks);
		if (ntasks < 0) {
			err = ntasks;
			goto cleanup;
		}
	}
	v = malloc((size_t)ntasks * ncpus * sizeof(*v) + 1);
	if (!v) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (int t = 0; t < ntasks; t++) {
		for (int c = 0; c < ncpus; c++) {
			v[t * ncpus + c].pid = tasks ? tasks[t].pid : pid;
			v[t * ncpus + c].cpu = cpus[c];
		}
	}
	*pos = v;
	err = ntasks * ncpus;
cleanup:
	free(tasks);
	free(cpus);
	return err;
}

int ps_target__positions(const struct ps_session *s, int cpu, bool per_cpu,
			 struct ps_position **pos)
{
	struct ps_position *v;
	int n = 1;

	*pos = NULL;
	if (per_cpu)
		return per_cpu_positions(s, cpu, pos);
	if (s->kind == PS_TARGET_PID)
		return list_threads(s->pid, cpu, pos);
	if (s->kind == PS_TARGET_CPUS && cpu < 0)
		n = s->ncpus;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (s->kind == PS_TARGET_CPUS) {
		for (int i = 0; i < n; i++) {
			v[i].pid = -1;
			v[i].cpu = cpu >= 0 ? cpu : s->cpus[i];
		}
	} else {
		v[0].pid = s->kind == PS_TARGET_COMMAND ? s->pid : 0;
		v[0].cpu = cpu;
	}
	*pos = v;
	return n;
}
