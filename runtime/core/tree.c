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
#include "base/procstat.h"
#include "core/internal.h"

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
		struct ps_procstat st;

		if (isdigit((unsigned char)de->d_name[0]) &&
		    !ps_procstat__read((pid_t)strtol(de->d_name, NULL, 10), &st))
			alive = st.pgrp == pgid && is_live(st.state);
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
	struct ps_procstat st;
	size_t i;

	if (depth > 64 || ps_procstat__read(pid, &st))
		return;
	for (i = 0; i < s->ntree; i++)
		if (s->tree[i].pid == pid && s->tree[i].start == st.start)
			break;
	if (i == s->ntree) {
		if (ps_array__reserve(&s->tree, &s->captree, s->ntree + 1, sizeof(*s->tree)))
			return;
		s->tree[s->ntree++] = (struct ps_tree_proc){.pid = pid, .start = st.start};
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
		struct ps_procstat st;

		/* ours to reap once the command is gone (we are its subreaper) */
		if (p->pid != s->pid)
			waitpid(p->pid, NULL, WNOHANG);
		if (ps_procstat__read(p->pid, &st) || st.start != p->start || !is_live(st.state))
			continue; /* gone, reused, or a zombie: nothing to stop */
		live++;
		if (sig)
			kill(p->pid, sig);
	}
	return live ? 0 : -ESRCH;
}
