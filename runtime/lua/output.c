/*
 * output.c: the script's output (see output.h). stdout becomes a stream of
 * our own whose writes go to one file descriptor, out.fd: 1 at first, a
 * file of -o or perfmon.output, or 2. stdio forgets why a write failed;
 * this stream keeps the first errno so the end of the run can say it
 * (ENOSPC, EPIPE, ...).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lua/output.h"

static struct {
	bool watched;	  /* stdout is our stream (not in the REPL) */
	int fd;		  /* where its writes go */
	int err;	  /* the first write error */
	const char *name; /* for messages: "standard output", a path */
	char path[4096];
	const char *script; /* not to be overwritten */
	bool closed_std;    /* fd 1 was closed when perfscript started */
	bool told;	    /* ... and that was said */
} out = {.fd = STDOUT_FILENO, .name = "standard output"};

static ssize_t output_write(void *cookie, const char *buf, size_t len)
{
	size_t done = 0;

	(void)cookie;
	if (out.fd == STDOUT_FILENO && out.closed_std && !out.told) {
		out.told = true;
		fprintf(stderr, "perfscript: standard output is closed: the script's output is "
				"discarded (give -o FILE)\n");
	}
	while (done < len) {
		ssize_t n = write(out.fd, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!out.err)
				out.err = n < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

void ps_lua_output__watch(const char *script, bool out_closed)
{
	cookie_io_functions_t io = {.write = output_write};
	FILE *f = fopencookie(NULL, "w", io);

	out.script = script;
	out.closed_std = out_closed;
	if (!f)
		return;
	setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
	fflush(stdout);
	stdout = f;
	out.watched = true;
}

/* Whether a and b name the same existing file. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* What is written so far goes where it was headed; a file left behind is
 * closed (an error closing it is the output's error). */
static void leave_current(void)
{
	fflush(stdout);
	if (out.fd > STDERR_FILENO && close(out.fd) != 0 && !out.err)
		out.err = errno;
}

int ps_lua_output__redirect(const char *path, char *msg, size_t len)
{
	int fd;

	if (!path) {
		leave_current();
		out.fd = STDERR_FILENO;
		out.name = "standard error";
		/* a line at a time, so it keeps its place among the messages */
		setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
		return 0;
	}
	if (out.script && same_file(path, out.script)) {
		snprintf(msg, len, "%s is the script itself: refusing to overwrite it", path);
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(msg, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!out.watched) { /* the REPL: its terminal stream writes to fd 1 */
		fflush(stdout);
		if (fd != STDOUT_FILENO && dup2(fd, STDOUT_FILENO) < 0) {
			snprintf(msg, len, "%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		close(fd);
		return 0;
	}
	leave_current();
	out.fd = fd;
	snprintf(out.path, sizeof(out.path), "%s", path);
	out.name = out.path;
	setvbuf(stdout, NULL, isatty(fd) ? _IOLBF : _IOFBF, BUFSIZ);
	return 0;
}

int ps_lua_output__finish(int rc)
{
	int flushed, err, bad = 0;

	errno = 0;
	flushed = fflush(stdout);
	err = errno;
	if (flushed != 0 || ferror(stdout))
		bad = out.err ? out.err : err ? err : EIO;
	if (!bad && fclose(stdout) != 0 && errno != EBADF)
		bad = out.err ? out.err : errno;
	if (!bad && out.fd > STDERR_FILENO && close(out.fd) != 0)
		bad = errno;
	if (!bad && out.err)
		bad = out.err;
	/* a reader that went away (| head -1) ended the session quietly */
	if (!bad || bad == EPIPE)
		return rc;
	fprintf(stderr, "perfscript: cannot write to %s: %s\n", out.name, strerror(bad));
	return rc ? rc : 1;
}

/* perfmon.output(): the output's name. perfmon.output(FILE) or
 * perfmon.output(io.stderr): send it there from now on; true, or nil and
 * the reason (a file that cannot be made, the script itself). */
int ps_lua_output__fn(lua_State *L)
{
	char msg[4200];
	luaL_Stream *s;
	const char *path;
	size_t n;

	if (lua_isnone(L, 1)) {
		lua_pushstring(L, out.name);
		return 1;
	}
	if (!out.watched)
		return luaL_error(L, "perfmon.output: at the prompt the output is the terminal");
	s = luaL_testudata(L, 1, LUA_FILEHANDLE);
	if (s) {
		luaL_argcheck(L, s->f == stderr, 1, "a file name or io.stderr expected");
		ps_lua_output__redirect(NULL, msg, sizeof(msg));
		lua_pushboolean(L, 1);
		return 1;
	}
	path = luaL_checklstring(L, 1, &n);
	luaL_argcheck(L, strlen(path) == n, 1, "a file name has no NUL byte");
	if (ps_lua_output__redirect(path, msg, sizeof(msg)) < 0) {
		lua_pushnil(L);
		lua_pushstring(L, msg);
		return 2;
	}
	lua_pushboolean(L, 1);
	return 1;
}
