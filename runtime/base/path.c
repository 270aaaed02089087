/*
 * path.c: the PATH search of execvp (base/path.h), for refusing a command
 * that is not there before anything runs, and for finding the executable
 * of a command held before exec (breakpoints on its symbols).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/path.h"

static bool runnable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int ps_path__find_exec(const char *file, char *buf, size_t len)
{
	const char *path = getenv("PATH"), *p;

	if (!file || !*file || !buf || !len)
		return -ENOENT;
	if (strchr(file, '/')) {
		if ((size_t)snprintf(buf, len, "%s", file) >= len)
			return -ENAMETOOLONG;
		return runnable(buf) ? 0 : -ENOENT;
	}
	for (p = path && *path ? path : "/bin:/usr/bin"; *p;) {
		size_t n = strcspn(p, ":");

		if ((size_t)snprintf(buf, len, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", file) <
			len &&
		    runnable(buf))
			return 0;
		p += n + (p[n] == ':');
	}
	return -ENOENT;
}

int ps_path__self_dir(char *buf, size_t len)
{
	ssize_t n = len ? readlink("/proc/self/exe", buf, len - 1) : -1;
	char *slash;

	if (n < 0)
		return len ? -errno : -ENAMETOOLONG;
	if ((size_t)n >= len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	if (!(slash = strrchr(buf, '/')))
		return -ENOENT;
	*slash = '\0';
	return 0;
}
