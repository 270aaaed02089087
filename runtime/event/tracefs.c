/*
 * tracefs.c: tracefs for a root perfscript on a machine that has none
 * mounted (a fresh VM, a container). It is mounted in a mount namespace of
 * perfscript's own, at /sys/kernel/tracing where everything looks for it,
 * so it is gone with the process however the process dies (SIGKILL, a
 * second Ctrl-C), no other tool sees it appear or disappear under it, and
 * nothing needs unmounting. The namespace follows the machine's mounts
 * (slave propagation) and shows none of its own to anyone. It is made by
 * an explicit call, never by parsing: the parser only reads.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "perfscript.h"

static bool has_events(const char *root)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/events", root);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int ps_tracefs__mount_private(char *msg, size_t msglen)
{
	const char *env = getenv("PERFSCRIPT_TRACEFS");
	const char *step = "make a mount namespace";

	if ((env && *env) || has_events("/sys/kernel/tracing") ||
	    has_events("/sys/kernel/debug/tracing"))
		return 0;
	if (unshare(CLONE_NEWNS) == 0) {
		step = "follow the machine's mounts";
		if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == 0) {
			step = "mount tracefs at /sys/kernel/tracing";
			if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
				return 1;
		}
	}
	if (msg && msglen)
		snprintf(msg, msglen, "cannot %s: %s", step, strerror(errno));
	return -errno;
}
