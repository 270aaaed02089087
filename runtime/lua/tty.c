/*
 * tty.c: package.preload["perfscript.tty"], the terminal of a full-screen
 * script (examples/top.lua): whether a descriptor is a terminal, the
 * screen's size, and the keys as they are typed, each given to a function
 * from the session's loop. While keys are read the terminal is raw (no
 * echo, no line editing; Ctrl-C stays a signal) and, with screen = FILE
 * (the stream the script draws on: io.stderr, where reports go), on its
 * alternate screen with the cursor hidden; it is put back as it was
 * when the keys are closed, which the session's end does (__gc) whatever
 * ended it: exit(), q, Ctrl-C, -T, an error.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <lauxlib.h>

#include "lua/internal.h"

#define KEYS_MT	   "perfscript.tty.keys"
#define SCREEN_ON  "\033[?1049h\033[?25l" /* the alternate screen, no cursor */
#define SCREEN_OFF "\033[?25h\033[?1049l"

struct keys_ud {
	struct ps_script *sc;
	int fn, self, screen_ref; /* registry refs: handler, object while open, screen */
	bool open;
	FILE *screen; /* the alternate screen's stream, or NULL */
	struct termios saved;
};

/* tty.isatty([fd]) -> whether fd (default 1, standard output) is a terminal */
static int l_isatty(lua_State *L)
{
	lua_pushboolean(L, isatty((int)luaL_optinteger(L, 1, STDOUT_FILENO)) == 1);
	return 1;
}

/* tty.size() -> rows, columns of the terminal on standard output, or nil
 * and why */
static int l_size(lua_State *L)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 || !ws.ws_row || !ws.ws_col) {
		luaL_pushfail(L);
		lua_pushstring(L, "standard output is not a terminal");
		return 2;
	}
	lua_pushinteger(L, ws.ws_row);
	lua_pushinteger(L, ws.ws_col);
	return 2;
}

static void keys_off(struct keys_ud *u)
{
	lua_State *L = u->sc->L;

	if (!u->open)
		return;
	u->open = false;
	ps_loop__del_fd(u->sc->loop, STDIN_FILENO);
	tcsetattr(STDIN_FILENO, TCSADRAIN, &u->saved);
	if (u->screen) {
		fputs(SCREEN_OFF, u->screen);
		fflush(u->screen);
	}
	luaL_unref(L, LUA_REGISTRYINDEX, u->fn);
	luaL_unref(L, LUA_REGISTRYINDEX, u->self);
	luaL_unref(L, LUA_REGISTRYINDEX, u->screen_ref);
	u->fn = u->self = u->screen_ref = LUA_NOREF;
}

/* Each key typed (an escape sequence whole, as one read gives it) to the
 * handler; the end of input closes the keys. */
static int on_key(struct ps_loop *loop, int fd, uint32_t events, void *ctx)
{
	struct keys_ud *u = ctx;
	lua_State *L = u->sc->L;
	char buf[64];
	ssize_t n = read(fd, buf, sizeof(buf));

	(void)loop;
	(void)events;
	if (n <= 0) {
		if (n == 0 || (errno != EINTR && errno != EAGAIN))
			keys_off(u);
		return 0;
	}
	for (ssize_t i = 0; i < n && u->open;) {
		ssize_t len = buf[i] == '\033' ? n - i : 1;

		lua_rawgeti(L, LUA_REGISTRYINDEX, u->fn);
		lua_pushlstring(L, buf + i, (size_t)len);
		ps_lua__call(u->sc, 1, 0, 0, "tty.keys handler");
		i += len;
	}
	return 0;
}

/* tty.keys(fn[, {screen = FILE}]) -> keys (keys:close()), or nil and why
 * when standard input is not a terminal */
static int l_keys(lua_State *L)
{
	struct ps_script *sc = ps_lua_script__from(L);
	struct keys_ud *u;
	struct termios raw;

	luaL_checktype(L, 1, LUA_TFUNCTION);
	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TTABLE);
	if (!isatty(STDIN_FILENO)) {
		luaL_pushfail(L);
		lua_pushstring(L, "standard input is not a terminal");
		return 2;
	}
	u = lua_newuserdatauv(L, sizeof(*u), 0);
	memset(u, 0, sizeof(*u));
	u->sc = sc;
	u->fn = u->self = u->screen_ref = LUA_NOREF;
	luaL_setmetatable(L, KEYS_MT);
	if (tcgetattr(STDIN_FILENO, &u->saved) < 0 ||
	    ps_loop__add_fd(sc->loop, STDIN_FILENO, EPOLLIN, on_key, u) < 0) {
		luaL_pushfail(L);
		lua_pushfstring(L, "cannot read keys: %s", strerror(errno));
		return 2;
	}
	raw = u->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSADRAIN, &raw);
	u->open = true;
	if (!lua_isnoneornil(L, 2) && lua_getfield(L, 2, "screen") != LUA_TNIL) {
		luaL_Stream *f = luaL_testudata(L, -1, LUA_FILEHANDLE);

		if (!f || !f->f) {
			keys_off(u);
			return luaL_error(L, "tty.keys: screen must be an open file (io.stderr)");
		}
		u->screen = f->f;
		u->screen_ref = luaL_ref(L, LUA_REGISTRYINDEX);
		fputs(SCREEN_ON, u->screen);
		fflush(u->screen);
	}
	lua_settop(L, 3);
	lua_pushvalue(L, 1);
	u->fn = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_pushvalue(L, 3);
	u->self = luaL_ref(L, LUA_REGISTRYINDEX); /* open until closed, as a timer is */
	return 1;
}

static int keys_close(lua_State *L)
{
	keys_off(luaL_checkudata(L, 1, KEYS_MT));
	return 0;
}

static int open_tty(lua_State *L)
{
	static const luaL_Reg fns[] = {
	    {"isatty", l_isatty},
	    {"size", l_size},
	    {"keys", l_keys},
	    {NULL, NULL},
	};

	if (luaL_newmetatable(L, KEYS_MT)) {
		lua_createtable(L, 0, 1);
		lua_pushcfunction(L, keys_close);
		lua_setfield(L, -2, "close");
		lua_setfield(L, -2, "__index");
		lua_pushcfunction(L, keys_close);
		lua_setfield(L, -2, "__gc");
		lua_pushcfunction(L, keys_close);
		lua_setfield(L, -2, "__close");
	}
	lua_pop(L, 1);
	luaL_newlib(L, fns);
	return 1;
}

void ps_lua_tty__open(lua_State *L)
{
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, open_tty);
	lua_setfield(L, -2, "perfscript.tty");
	lua_pop(L, 1);
}
