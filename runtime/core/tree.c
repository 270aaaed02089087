/*
 * tree.c: the processes of a -c command, for the session's end, where none
 * may outlive it. In its own process group, the group is what is signalled;
 * but a group lives on in the kernel's eyes while any member is a zombie,
 * and in a container PID 1 may never reap one, so "is anything left" counts
 * the group's live members in /proc, not kill(-pgid, 0).
 *
 * In a terminal's foreground the command stays in perfscript's own group
 * (core/target.c says why), so its processes are found through /proc:
 * each signal walks the command's descendants and adds them to a list kept
 * with each one's start time, so that a process the command left behind,
 * which the kernel hands to a reaper once the command is gone, is still
 * signalled (and a pid reused meanwhile by someone else is not). perfscript
 * is that reaper (PR_SET_CHILD_SUBREAPER, set when it forks a command), so
 * an orphan the command left, even one that was never seen while the
 * command lived, is perfscript's child by then: every child of perfscript
 * is stopped with the command (a script's own io.popen child still running
 * at the end too: no child outlives the session), and reaped here.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/array.h"
#include "core/internal.h"

/* State and start time of pid from /proc/PID/stat; false if it is gone. */
static bool proc_stat(pid_t pid, char *state, pid_t *pgrp, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;
	int pg = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after the command name, which may hold spaces and ')' */
	if (!(p = strrchr(buf, ')')))
		return false;
	if (sscanf(p + 2,
		   "%c %*d %d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d "
		   "%llu",
		   state, &pg, start) != 3)
		return false;
	*pgrp = pg;
	return true;
}

static bool is_live(char state)
{
	return state != 'Z' && state != 'X' && state != 'x';
}

bool ps_tree__group_alive(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool alive = false;

	if (!d)
		return kill(-pgid, 0) == 0;
	while (!alive && (de = readdir(d))) {
		unsigned long long start;
		pid_t pgrp;
		char state;

		if (isdigit((unsigned char)de->d_name[0]) &&
		    proc_stat((pid_t)strtol(de->d_name, NULL, 10), &state, &pgrp, &start))
			alive = pgrp == pgid && is_live(state);
	}
	closedir(d);
	return alive;
}

static void collect(struct ps_session *s, pid_t pid, int depth);

/* Each child /proc lists for the threads of pid, collected. */
static void collect_children(struct ps_session *s, pid_t pid, int depth)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return;
	while ((de = readdir(d))) {
		char line[32];
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.20s/children", (int)pid, de->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		while (fscanf(f, "%31s", line) == 1)
			collect(s, (pid_t)strtol(line, NULL, 10), depth + 1);
		fclose(f);
	}
	closedir(d);
}

/* Add pid (if new) and its descendants to the list. */
static void collect(struct ps_session *s, pid_t pid, int depth)
{
	unsigned long long start;
	pid_t pgrp;
	char state;
	size_t i;

	if (depth > 64 || !proc_stat(pid, &state, &pgrp, &start))
		return;
	for (i = 0; i < s->ntree; i++)
		if (s->tree[i].pid == pid && s->tree[i].start == start)
			break;
	if (i == s->ntree) {
		if (ps_array__reserve(&s->tree, &s->captree, s->ntree + 1, sizeof(*s->tree)))
			return;
		s->tree[s->ntree++] = (struct ps_tree_proc){.pid = pid, .start = start};
	}
	collect_children(s, pid, depth);
}

int ps_tree__signal(struct ps_session *s, int sig)
{
	size_t live = 0;

	if (!s->reaped)
		collect(s, s->pid, 0);
	/* what the command left when it exited was handed to us, its subreaper */
	collect_children(s, getpid(), 0);
	for (size_t i = 0; i < s->ntree; i++) {
		struct ps_tree_proc *p = &s->tree[i];
		unsigned long long start;
		pid_t pgrp;
		char state;

		/* ours to reap once the command is gone (we are its subreaper) */
		if (p->pid != s->pid)
			waitpid(p->pid, NULL, WNOHANG);
		if (!proc_stat(p->pid, &state, &pgrp, &start) || start != p->start ||
		    !is_live(state))
			continue; /* gone, reused, or a zombie: nothing to stop */
		live++;
		if (sig)
			kill(p->pid, sig);
	}
	return live ? 0 : -ESRCH;
}
