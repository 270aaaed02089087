/*
 * repl.c: perfscript -i, an interactive session. Lines of Lua are read
 * from stdin on the event loop, so timer and sample probes registered at
 * the prompt keep firing while it waits. On a terminal, libedit edits the
 * line (its callback interface, driven by the loop) and keeps history; from
 * a pipe, lines are read as they come, without prompts. As in lua(1), an
 * expression prints its value, and a chunk that is not complete yet asks for
 * more; tables show one level deep with sorted keys (cli/show.c). After
 * each chunk, counters it allocated are opened and started, as the context
 * is after begin probes. TAB completes Lua names, methods and fields, and
 * event names inside a string (cli/complete.c). What probes print while a
 * line is being typed goes above it: the prompt line is cleared, the
 * output written, the prompt and the half-typed line drawn again. Ctrl-C
 * drops the line being typed; Ctrl-D or exit() ends the session, which
 * runs the end probes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <editline/readline.h>
#include <lauxlib.h>

#include "base/array.h"
#include "cli/repl.h"

#define PROMPT	"perfscript> "
#define PROMPT2 "        >> "

static struct ps_script *repl_sc; /* libedit's line callback has no context */

struct repl {
	char *chunk; /* lines of an incomplete chunk so far */
	size_t len, cap;
	char *in; /* non-tty input not yet split into lines */
	size_t inlen, incap;
	bool tty;
	int show;     /* registry ref of cli/show.c's function */
	FILE *term;   /* the terminal's stdout, which libedit draws on */
	bool editing; /* the prompt and the line being typed are on screen */
};

static struct repl repl = {.show = LUA_NOREF};

/* Where the REPL itself writes: the terminal under the cookie streams. */
static FILE *screen(void)
{
	return repl.term ? repl.term : stdout;
}

/* ---- output above the line being typed ---- */

/* stdout or stderr of a terminal session. While the prompt waits, what
 * probes write goes out by whole lines: the prompt line is cleared, the
 * lines written, the prompt and the half-typed line drawn again; the rest
 * of a line waits for its newline (or for the prompt to go). */
struct tty_out {
	FILE *to;
	char *held; /* a line not finished yet */
	size_t n, cap;
};

static struct tty_out tty_outs[2];

static int put(FILE *to, const char *buf, size_t len)
{
	return len && fwrite(buf, 1, len, to) != len ? -1 : 0;
}

static ssize_t tty_write(void *cookie, const char *buf, size_t len)
{
	struct tty_out *t = cookie;
	const char *nl;
	size_t upto;

	if (!repl.editing) { /* nothing of ours on screen: straight through */
		if (put(t->to, t->held, t->n) || put(t->to, buf, len))
			return -1;
		t->n = 0;
		fflush(t->to);
		return (ssize_t)len;
	}
	if (ps_array__reserve(&t->held, &t->cap, t->n + len, 1))
		return -1;
	memcpy(t->held + t->n, buf, len);
	t->n += len;
	if (!(nl = memrchr(t->held, '\n', t->n)))
		return (ssize_t)len;
	upto = (size_t)(nl - t->held) + 1;
	fputs("\r\033[K", repl.term); /* the prompt line, cleared */
	fflush(repl.term);
	if (put(t->to, t->held, upto))
		return -1;
	fflush(t->to);
	memmove(t->held, t->held + upto, t->n - upto);
	t->n -= upto;
	rl_forced_update_display(); /* prompt and line, on the fresh line */
	return (ssize_t)len;
}

static int tty_close(void *cookie)
{
	struct tty_out *t = cookie;
	int rc = put(t->to, t->held, t->n);

	fflush(t->to);
	free(t->held);
	*t = (struct tty_out){0};
	return rc;
}

/* io.stdout or io.stderr (Lua's io library took the FILE * when the state
 * was made) writes to `to` from now on, if it wrote to `from`. */
static void io_retarget(lua_State *L, const char *name, FILE *from, FILE *to)
{
	int top = lua_gettop(L);
	luaL_Stream *p;

	lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	if (lua_type(L, -1) == LUA_TTABLE && lua_getfield(L, -1, "io") == LUA_TTABLE &&
	    lua_getfield(L, -1, name) == LUA_TUSERDATA) {
		p = luaL_testudata(L, -1, LUA_FILEHANDLE);
		if (p && p->f == from)
			p->f = to;
	}
	lua_settop(L, top);
}

static FILE *tty_stream(struct tty_out *t, FILE *to, int mode)
{
	cookie_io_functions_t io = {.write = tty_write, .close = tty_close};
	FILE *f;

	t->to = to;
	f = fopencookie(t, "w", io);
	if (f)
		setvbuf(f, NULL, mode, BUFSIZ);
	return f ? f : to;
}

/* Load the chunk: as "return CHUNK" first, so an expression prints. Returns
 * LUA_OK, or LUA_ERRSYNTAX with the message pushed. */
static int load(lua_State *L, const char *chunk)
{
	const char *ret = lua_pushfstring(L, "return %s;", chunk);
	int rc = luaL_loadbuffer(L, ret, strlen(ret), "=stdin");

	lua_remove(L, -2);
	if (rc == LUA_OK)
		return rc;
	lua_pop(L, 1);
	return luaL_loadbuffer(L, chunk, strlen(chunk), "=stdin");
}

/* Whether a syntax error only says the chunk ended early (lua.c's test). */
static bool incomplete(lua_State *L)
{
	size_t len;
	const char *msg = lua_tolstring(L, -1, &len);

	return msg && len >= 5 && strcmp(msg + len - 5, "<eof>") == 0;
}

/* Protected: show the results (cli/show.c; it is given the chunk first),
 * else print(...) them. */
static int print_all(lua_State *L)
{
	int n = lua_gettop(L);

	if (lua_rawgeti(L, LUA_REGISTRYINDEX, repl.show) != LUA_TFUNCTION) {
		lua_pop(L, 1);
		lua_getglobal(L, "print");
		lua_remove(L, 1); /* the chunk */
		n--;
	}
	lua_insert(L, 1);
	lua_call(L, n, 0);
	return 0;
}

static void reset_chunk(void)
{
	free(repl.chunk);
	repl.chunk = NULL;
	repl.len = repl.cap = 0;
}

/* One line typed: add it to the chunk; run the chunk once it is complete. */
static void take_line(struct ps_script *sc, const char *line)
{
	lua_State *L = ps_lua_script__state(sc);
	size_t n = strlen(line);
	int base, rc;

	if (ps_array__reserve(&repl.chunk, &repl.cap, repl.len + n + 2, 1)) {
		fprintf(stderr, "perfscript: out of memory\n");
		return;
	}
	memcpy(repl.chunk + repl.len, line, n);
	repl.len += n;
	repl.chunk[repl.len++] = '\n';
	repl.chunk[repl.len] = '\0';
	base = lua_gettop(L);
	rc = load(L, repl.chunk);
	if (rc == LUA_ERRSYNTAX && incomplete(L)) {
		lua_settop(L, base);
		return; /* wait for more */
	}
	if (repl.tty && n > 0)
		add_history(repl.chunk[repl.len - 1] == '\n' ? line : repl.chunk);
	if (rc != LUA_OK) {
		fprintf(stderr, "%s\n", lua_tostring(L, -1));
	} else if (ps_lua__call(sc, 0, LUA_MULTRET, PS_CALL_REPL, "stdin") == 0) {
		if (lua_gettop(L) > base) {
			lua_pushcfunction(L, print_all);
			lua_insert(L, base + 1);
			lua_pushstring(L, repl.chunk);
			lua_insert(L, base + 2);
			ps_lua__call(sc, lua_gettop(L) - base - 1, 0, PS_CALL_REPL, "print");
		}
		ps_lua_script__settle(sc);
	}
	lua_settop(L, base);
	reset_chunk();
	fflush(stdout);
}

static const char *prompt(void)
{
	return repl.len ? PROMPT2 : PROMPT;
}

/* libedit's callback: a whole line, or NULL at end of input. */
static void on_line(char *line)
{
	struct ps_script *sc = repl_sc;

	repl.editing = false;
	if (!line) {
		putchar('\n');
		ps_lua_script__input_ended(sc);
		return;
	}
	take_line(sc, line);
	free(line);
	if (!ps_lua_script__stopping(sc)) {
		rl_callback_handler_remove();
		fflush(stdout);
		rl_callback_handler_install(prompt(), on_line);
		repl.editing = true;
	}
}

/* A pipe: split what arrived into lines. */
static int read_pipe(struct ps_script *sc)
{
	char buf[4096];
	ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
	char *nl;

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0) {
		if (repl.inlen) { /* a last line without its newline */
			repl.in[repl.inlen] = '\0';
			take_line(sc, repl.in);
			repl.inlen = 0;
		}
		if (repl.len)
			fprintf(stderr, "perfscript: stdin ended inside a chunk: %s", repl.chunk);
		ps_lua_script__input_ended(sc);
		return 0;
	}
	if (ps_array__reserve(&repl.in, &repl.incap, repl.inlen + (size_t)n + 1, 1))
		return -ENOMEM;
	memcpy(repl.in + repl.inlen, buf, (size_t)n);
	repl.inlen += (size_t)n;
	while (!ps_lua_script__stopping(sc) && (nl = memchr(repl.in, '\n', repl.inlen))) {
		size_t len = (size_t)(nl - repl.in);

		*nl = '\0';
		take_line(sc, repl.in);
		memmove(repl.in, nl + 1, repl.inlen - len - 1);
		repl.inlen -= len + 1;
	}
	return 0;
}

static int on_stdin(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	struct ps_script *sc = ctx;

	(void)events;
	if (repl.tty) {
		rl_callback_read_char();
		return 0;
	}
	if (read_pipe(sc) < 0 || ps_lua_script__stopping(sc))
		ps_loop__del_fd(loop, fd);
	return 0;
}

/* SIGINT at the prompt drops the line being typed, not the session. */
static bool interrupt(void *ctx)
{
	(void)ctx;
	reset_chunk();
	if (repl.tty) {
		repl.editing = false; /* the dropped line stays, the prompt goes below */
		fputc('\n', screen());
		fflush(screen());
		rl_replace_line("", 0);
		rl_callback_handler_remove();
		rl_callback_handler_install(prompt(), on_line);
		repl.editing = true;
	}
	return true;
}

/* cli/show.c's function, kept in the registry. */
static void show_init(lua_State *L)
{
	if (ps_cli_show__load(L) == LUA_OK && lua_pcall(L, 0, 1, 0) == LUA_OK) {
		repl.show = luaL_ref(L, LUA_REGISTRYINDEX);
		return;
	}
	fprintf(stderr, "perfscript: results show as print() shows them: %s\n",
		lua_tostring(L, -1));
	lua_pop(L, 1);
}

int ps_cli_repl__run(struct ps_script *sc)
{
	lua_State *L = ps_lua_script__state(sc);
	FILE *saved_err = stderr;
	int rc;

	repl_sc = sc;
	repl.tty = isatty(STDIN_FILENO);
	ps_lua_script__on_interrupt(sc, interrupt, NULL);
	if (ps_lua_script__args(sc, "-i", NULL, 0, NULL, 0) < 0 || ps_lua_script__start(sc) < 0)
		return ps_lua_script__end(sc);
	show_init(L);
	if (repl.tty && isatty(STDOUT_FILENO)) {
		fflush(NULL);
		repl.term = stdout;
		rl_outstream = repl.term;
		stdout = tty_stream(&tty_outs[0], repl.term, _IOLBF);
		stderr = tty_stream(&tty_outs[1], saved_err, _IONBF);
		io_retarget(L, "stdout", repl.term, stdout);
		io_retarget(L, "stderr", saved_err, stderr);
	}
	if (repl.tty) {
		printf("perfscript %s (Lua 5.4): Lua at the prompt; perfmon, probe() and the "
		       "helpers are here.\nTAB completes names, and event names inside "
		       "quotes. Ctrl-D or exit() ends the session.\n",
		       PS_VERSION);
		ps_cli_complete__install(sc);
		rl_callback_handler_install(prompt(), on_line);
		repl.editing = true;
	}
	if (ps_loop__add_fd(ps_lua_script__loop(sc), STDIN_FILENO, EPOLLIN, on_stdin, sc) == 0) {
		ps_loop__run(ps_lua_script__loop(sc));
	} else {
		/* A regular file or /dev/null cannot be polled: it is all there
		 * already, so read it straight through. */
		while (!ps_lua_script__stopping(sc) && read_pipe(sc) == 0)
			;
	}
	if (repl.editing) { /* ended from inside (exit(), -T, an error): leave the line */
		repl.editing = false;
		fputc('\n', screen());
	}
	if (repl.tty)
		rl_callback_handler_remove();
	reset_chunk();
	free(repl.in);
	repl.in = NULL;
	repl.inlen = repl.incap = 0;
	ps_cli_complete__free();
	rc = ps_lua_script__end(sc);
	if (repl.term) { /* the end probes wrote through the cookies */
		io_retarget(L, "stdout", stdout, repl.term);
		io_retarget(L, "stderr", stderr, saved_err);
		fclose(stdout);
		fclose(stderr);
		stdout = repl.term;
		stderr = saved_err;
		repl.term = NULL;
	}
	return rc;
}
