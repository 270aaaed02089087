/*
 * comm.c: the command name of each process a session saw, for execname()
 * and profiles: COMM records name a process (and rename it at exec), a FORK
 * gives the child its parent's name until its own COMM, and a process we
 * never heard of is looked up once in /proc/PID/comm; pid 0, the CPUs'
 * idle tasks, which /proc does not list, is "swapper" as the kernel names
 * them (a failed lookup is not kept, so every idle sample of a -a profile
 * would try /proc/0/comm again). A process that
 * exited keeps its name until PS_COMM_KEEP more have exited (its last
 * samples may come after its EXIT), so that the table stays bounded on a
 * host that forks without end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop/internal.h"

#define COMM_LEN     16 /* TASK_COMM_LEN */
#define PS_COMM_KEEP 4096

static void comm_set(struct ps_driver *d, pid_t pid, const char *comm)
{
	char *e = ps_pidmap__put(&d->comms, pid);

	if (e) /* names are a convenience: without memory, /proc is asked again */
		snprintf(e, COMM_LEN, "%s", comm);
}

const char *ps_driver__comm(struct ps_driver *d, pid_t pid)
{
	const char *e = ps_pidmap__get(&d->comms, pid);
	char path[64], comm[32] = "";
	FILE *f;

	if (e)
		return e;
	if (pid == 0)
		return "swapper";
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return "";
	if (fgets(comm, sizeof(comm), f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
	comm_set(d, pid, comm);
	e = ps_pidmap__get(&d->comms, pid);
	return e ? e : "";
}

/* pid exited: the name of the process that exited PS_COMM_KEEP exits ago
 * goes (a pid used again since is asked of /proc again, which is right). */
static void comm_exited(struct ps_driver *d, pid_t pid)
{
	size_t at;

	if (!d->exited && !(d->exited = malloc(PS_COMM_KEEP * sizeof(*d->exited))))
		return; /* then names stay: memory is short anyway */
	if (d->nexited < PS_COMM_KEEP) {
		d->exited[d->nexited++] = pid;
		return;
	}
	at = d->exited_head;
	ps_pidmap__del(&d->comms, d->exited[at]);
	d->exited[at] = pid;
	d->exited_head = (at + 1) % PS_COMM_KEEP;
}

void ps_driver__record_comm(struct ps_driver *d, const struct ps_record *r)
{
	if (r->type == PERF_RECORD_EXIT && r->pid == r->tid)
		comm_exited(d, (pid_t)r->pid);
	if (r->type == PERF_RECORD_COMM)
		comm_set(d, (pid_t)r->pid, r->comm);
	if (r->type == PERF_RECORD_FORK && r->pid != r->ppid) {
		char comm[COMM_LEN];

		snprintf(comm, sizeof(comm), "%s", ps_driver__comm(d, (pid_t)r->ppid));
		comm_set(d, (pid_t)r->pid, comm);
	}
}

void ps_driver__free_comms(struct ps_driver *d)
{
	ps_pidmap__free(&d->comms);
	free(d->exited);
	d->exited = NULL;
	d->exited_head = d->nexited = 0;
}
