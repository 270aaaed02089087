/*
 * jitwhere.c: where a process's perf map (/tmp/perf-PID.map) is, and what
 * says a map there is its own. A process in a container names its map by
 * its pid in its own pid namespace, in its own /tmp: read through
 * /proc/PID/root. A map must belong to the process's user or root, and
 * must not be older than the process: JITs leave their maps behind, and
 * with pids reused (32768 of them here: a busy host goes round in
 * seconds) an earlier process's map would name this one's code.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/procstat.h"
#include "symbols/jitwhere.h"

/* Whether pid's /tmp is our /tmp (the same directory) and its pids are
 * ours: a mount namespace of perfscript's own (its private tracefs) or a
 * copy made for something else leaves both alike, and the map is then read
 * from our /tmp, where it stays after the process is gone. */
static bool same_tmp_and_pids(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/root/tmp", (int)pid);
	if (stat(path, &a) < 0 || stat("/tmp", &b) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	return stat(path, &a) == 0 && stat("/proc/self/ns/pid", &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

static struct stat mine; /* our own mount namespace, taken once for every thread */
static int mine_rc;
static pthread_once_t mine_once = PTHREAD_ONCE_INIT;

static void take_mine(void)
{
	mine_rc = stat("/proc/self/ns/mnt", &mine);
}

/* pid's pid in its own pid namespace (the last NSpid), with *root_pid set
 * when it lives in another mount namespace whose /tmp is not ours; pid
 * itself, *root_pid 0, when it shares ours, sees our /tmp, or cannot be told. */
static pid_t in_namespace(pid_t pid, pid_t *root_pid)
{
	char path[64], line[256];
	struct stat theirs;
	pid_t ns = pid;
	FILE *f;

	*root_pid = 0;
	pthread_once(&mine_once, take_mine);
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	/* one stat for a process in ours: its map is in our /tmp */
	if (mine_rc < 0 || stat(path, &theirs) < 0 ||
	    (mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino) ||
	    same_tmp_and_pids(pid))
		return pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return pid;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "NSpid:", 6)) {
			char *end, *p = line + 6;
			long v;

			/* the last number is its pid in its innermost namespace */
			while ((v = strtol(p, &end, 10)), end != p) {
				ns = (pid_t)v;
				p = end;
			}
			break;
		}
	fclose(f);
	*root_pid = pid;
	return ns;
}

/* The boot's wall-clock time in seconds (/proc/stat's btime), read once. */
static uint64_t boot_s;
static pthread_once_t boot_once = PTHREAD_ONCE_INIT;

static void read_boot(void)
{
	FILE *f = fopen("/proc/stat", "re");
	char line[256];
	unsigned long long v;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %llu", &v) == 1)
			boot_s = v;
	if (f)
		fclose(f);
}

/* When pid started, in CLOCK_REALTIME ns: never later than it did (btime
 * is whole seconds, cut down), so a map it wrote is never older; 0 when
 * unknown. */
static uint64_t born_ns(pid_t pid)
{
	struct ps_procstat st;
	long hz = sysconf(_SC_CLK_TCK);

	pthread_once(&boot_once, read_boot);
	if (!boot_s || hz <= 0 || ps_procstat__read(pid, &st) < 0)
		return 0;
	return boot_s * 1000000000u + st.start * (1000000000u / (uint64_t)hz);
}

void ps_jit__where(pid_t pid, struct ps_jit_where *w)
{
	char proc[32];
	struct stat st;

	snprintf(w->path, sizeof(w->path), "/tmp/perf-%d.map",
		 (int)in_namespace(pid, &w->root_pid));
	/* /proc/PID belongs to the process's effective user (root when it is
	 * not dumpable); a process already gone trusts root's maps only */
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	w->uid = stat(proc, &st) == 0 ? st.st_uid : 0;
	w->born_ns = born_ns(pid);
}
