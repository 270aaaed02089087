/*
 * repl.c: perfscript -i, an interactive session. Lines of Lua are read
 * from stdin on the event loop, so timer and sample probes registered at
 * the prompt keep firing while it waits. On a terminal, libedit edits the
 * line (its callback interface, driven by the loop) and keeps history; from
 * a pipe, lines are read as they come, without prompts. As in lua(1), an
 * expression prints its value, and a chunk that is not complete yet asks for
 * more. After each chunk, counters it allocated are opened and started, as
 * the context is after begin probes. TAB completes Lua names, and event
 * names (what -l lists) inside a string. Ctrl-C drops the line being typed;
 * Ctrl-D or exit() ends the session, which runs the end probes.
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
};

static struct repl repl;

/* ---- completion: Lua names outside strings, event names inside them ---- */

static struct ps_event_list *event_names; /* what -l lists, loaded on first TAB */
static char **cands;			  /* candidates of the completion under way */
static size_t ncands, capcands, next_cand;

static void cands_free(void)
{
	for (size_t i = 0; i < ncands; i++)
		free(cands[i]);
	free(cands);
	cands = NULL;
	ncands = capcands = next_cand = 0;
}

static void cand_add(const char *prefix, const char *name, const char *text)
{
	size_t pl = strlen(prefix), tl = strlen(text);

	if (strncmp(text, prefix, pl < tl ? pl : tl) != 0)
		return;
	if (pl < tl && strncmp(text + pl, name, tl - pl) != 0)
		return;
	if (ps_array__reserve(&cands, &capcands, ncands + 1, sizeof(*cands)))
		return;
	if (asprintf(&cands[ncands], "%s%s", prefix, name) >= 0)
		ncands++;
}

/* Fields of the table a dotted prefix names ("perfmon." -> perfmon's).
 * Protected: a strict _G's __index may raise, and a table's __index too. */
static int lua_cands(lua_State *L)
{
	const char *text = lua_touserdata(L, 1);
	const char *dot = strrchr(text, '.');
	char prefix[128] = "";

	lua_pushglobaltable(L);
	if (dot && (size_t)(dot - text) < sizeof(prefix) - 1) {
		char table[128];

		snprintf(table, sizeof(table), "%.*s", (int)(dot - text), text);
		memcpy(prefix, text, (size_t)(dot - text) + 1); /* "table." */
		prefix[dot - text + 1] = '\0';
		if (lua_getfield(L, -1, table) != LUA_TTABLE)
			return 0;
		lua_remove(L, -2);
	}
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		if (lua_type(L, -2) == LUA_TSTRING)
			cand_add(prefix, lua_tostring(L, -2), text);
		lua_pop(L, 1);
	}
	return 0;
}

/* Whether the cursor is inside a string literal of the line. */
static bool in_string(void)
{
	char quote = 0;

	for (int i = 0; i < rl_point && rl_line_buffer[i]; i++) {
		char c = rl_line_buffer[i];

		if (quote && c == '\\')
			i++;
		else if (quote && c == quote)
			quote = 0;
		else if (!quote && (c == '"' || c == '\''))
			quote = c;
	}
	return quote != 0;
}

static char *complete_next(const char *text, int state)
{
	if (state == 0) {
		cands_free();
		if (in_string()) {
			if (!event_names)
				event_names = ps_event_list__new(NULL);
			for (size_t i = 0; event_names && i < ps_event_list__count(event_names);
			     i++)
				cand_add("", ps_event_list__entry(event_names, i)->name, text);
		} else {
			ps_lua__protect(repl_sc, lua_cands, (void *)text, PS_CALL_SILENT,
					"completion");
		}
	}
	return next_cand < ncands ? strdup(cands[next_cand++]) : NULL;
}

static char **complete(const char *text, int start, int end)
{
	(void)start;
	(void)end;
	rl_completion_append_character = '\0';
	return rl_completion_matches(text, complete_next);
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

/* Protected: print(...) of the results, as lua(1) does. */
static int print_all(lua_State *L)
{
	int n = lua_gettop(L);

	lua_getglobal(L, "print");
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

	if (!line) {
		putchar('\n');
		ps_lua_script__input_ended(sc);
		return;
	}
	take_line(sc, line);
	free(line);
	if (!ps_lua_script__stopping(sc)) {
		rl_callback_handler_remove();
		rl_callback_handler_install(prompt(), on_line);
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
		printf("\n");
		rl_replace_line("", 0);
		rl_callback_handler_remove();
		rl_callback_handler_install(prompt(), on_line);
	}
	return true;
}

int ps_cli_repl__run(struct ps_script *sc)
{
	repl_sc = sc;
	repl.tty = isatty(STDIN_FILENO);
	ps_lua_script__on_interrupt(sc, interrupt, NULL);
	if (ps_lua_script__args(sc, "-i", NULL, 0, NULL, 0) < 0 || ps_lua_script__start(sc) < 0)
		return ps_lua_script__end(sc);
	if (repl.tty) {
		printf("perfscript %s (Lua 5.4): Lua at the prompt; perfmon, probe() and the "
		       "helpers are here.\nTAB completes names, and event names inside "
		       "quotes. Ctrl-D or exit() ends the session.\n",
		       PS_VERSION);
		rl_attempted_completion_function = complete;
		/* ':' and '.' belong to event and table names, not between words */
		rl_completer_word_break_characters = " \t\n\"'(),=+*/<>{}[];";
		rl_callback_handler_install(prompt(), on_line);
	}
	if (ps_loop__add_fd(ps_lua_script__loop(sc), STDIN_FILENO, EPOLLIN, on_stdin, sc) == 0) {
		ps_loop__run(ps_lua_script__loop(sc));
	} else {
		/* A regular file or /dev/null cannot be polled: it is all there
		 * already, so read it straight through. */
		while (!ps_lua_script__stopping(sc) && read_pipe(sc) == 0)
			;
	}
	if (repl.tty)
		rl_callback_handler_remove();
	reset_chunk();
	free(repl.in);
	repl.in = NULL;
	repl.inlen = repl.incap = 0;
	cands_free();
	ps_event_list__free(event_names);
	event_names = NULL;
	return ps_lua_script__end(sc);
}
