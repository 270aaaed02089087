/*
 * comm.c: the name of each thread a session saw, for s.comm, execname()
 * and profiles, as perf names a sample by its own thread: COMM records
 * name a thread (at exec, prctl(PR_SET_NAME), pthread_setname_np), a FORK
 * gives the new thread or process the name of the thread that made it
 * until its own COMM, and a thread we never heard of is looked up once in
 * /proc/PID/task/TID/comm. A process's name (s.process) is its main
 * thread's (tid == pid). Pid 0, the CPUs' idle tasks, which /proc does not
 * list, is "swapper" as the kernel names them (a failed lookup is not
 * kept, so every idle sample of a -a profile would try /proc again). A
 * thread that exited keeps its name until PS_COMM_KEEP more have exited
 * (its last samples may come after its EXIT), so that the table stays
 * bounded on a host that forks without end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop/internal.h"

#define COMM_LEN     16 /* TASK_COMM_LEN */
#define PS_COMM_KEEP 4096

static void comm_set(struct ps_driver *d, pid_t tid, const char *comm)
{
	char *e = ps_pidmap__put(&d->comms, tid);

	if (e) /* names are a convenience: without memory, /proc is asked again */
		snprintf(e, COMM_LEN, "%s", comm);
}

const char *ps_driver__comm(struct ps_driver *d, pid_t pid, pid_t tid)
{
	const char *e = ps_pidmap__get(&d->comms, tid);
	char path[64], comm[32] = "";
	FILE *f;

	if (e)
		return e;
	if (tid == 0)
		return "swapper";
	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	else /* the thread's process is not known: /proc finds a tid too */
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return "";
	if (fgets(comm, sizeof(comm), f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
	comm_set(d, tid, comm);
	e = ps_pidmap__get(&d->comms, tid);
	return e ? e : "";
}

/* tid exited: the name of the thread that exited PS_COMM_KEEP exits ago
 * goes (a tid used again since is asked of /proc again, which is right). */
static void comm_exited(struct ps_driver *d, pid_t tid)
{
	size_t at;

	if (!d->exited && !(d->exited = malloc(PS_COMM_KEEP * sizeof(*d->exited))))
		return; /* then names stay: memory is short anyway */
	if (d->nexited < PS_COMM_KEEP) {
		d->exited[d->nexited++] = tid;
		return;
	}
	at = d->exited_head;
	ps_pidmap__del(&d->comms, d->exited[at]);
	d->exited[at] = tid;
	d->exited_head = (at + 1) % PS_COMM_KEEP;
}

void ps_driver__record_comm(struct ps_driver *d, const struct ps_record *r)
{
	if (r->type == PERF_RECORD_EXIT)
		comm_exited(d, (pid_t)r->tid);
	if (r->type == PERF_RECORD_COMM)
		comm_set(d, (pid_t)r->tid, r->comm);
	if (r->type == PERF_RECORD_FORK && r->tid != r->ptid) {
		char comm[COMM_LEN];

		snprintf(comm, sizeof(comm), "%s",
			 ps_driver__comm(d, (pid_t)r->ppid, (pid_t)r->ptid));
		comm_set(d, (pid_t)r->tid, comm);
	}
}

void ps_driver__free_comms(struct ps_driver *d)
{
	ps_pidmap__free(&d->comms);
	free(d->exited);
	d->exited = NULL;
	d->exited_head = d->nexited = 0;
}
