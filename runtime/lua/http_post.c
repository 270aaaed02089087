/*
 * http_post.c: http.post(url, body, [opts,] callback) of
 * package.preload["perfscript.http"]: a POST from the loop
 * (loop/http_client.c), whose callback(status, body) runs on the loop like
 * any handler once the reply (or its failure) is in. One client per
 * script, made at the first post and kept in the registry; requests still
 * under way when the script's state closes are dropped, their callbacks
 * never called.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/internal.h"

#define CLIENT_MT   "perfscript.http_client"
#define MAX_HEADERS 32

struct pending {
	struct pending *prev, *next;
	struct ps_script *sc;
	int fn; /* the callback, in the registry */
};

struct client_ud {
	struct ps_http_client *c;
	struct pending *head; /* requests under way */
};

struct done {
	struct pending *p;
	int status;
	const char *body;
	size_t len;
};

static int call_done(lua_State *L)
{
	struct done *d = lua_touserdata(L, 1);

	lua_rawgeti(L, LUA_REGISTRYINDEX, d->p->fn);
	lua_pushinteger(L, d->status);
	lua_pushlstring(L, d->body, d->len);
	lua_call(L, 2, 0);
	return 0;
}

static struct client_ud *client_of(lua_State *L)
{
	struct client_ud *u;

	if (lua_getfield(L, LUA_REGISTRYINDEX, CLIENT_MT) == LUA_TUSERDATA) {
		u = lua_touserdata(L, -1);
		lua_pop(L, 1);
		return u;
	}
	lua_pop(L, 1);
	return NULL;
}

static void unlink_pending(struct client_ud *u, struct pending *p)
{
	*(p->prev ? &p->prev->next : &u->head) = p->next;
	if (p->next)
		p->next->prev = p->prev;
}

static void on_done(int status, const char *body, size_t len, void *ctx)
{
	struct pending *p = ctx;
	struct ps_script *sc = p->sc;
	struct client_ud *u = client_of(sc->L);
	struct done d = {p, status, body, len};

	if (u)
		unlink_pending(u, p);
	sc->listeners--;
	ps_lua__protect(sc, call_done, &d, 0, "http.post callback");
	luaL_unref(sc->L, LUA_REGISTRYINDEX, p->fn);
	free(p);
	ps_lua_script__source_ended(sc);
}

static int client_gc(lua_State *L)
{
	struct client_ud *u = luaL_checkudata(L, 1, CLIENT_MT);

	ps_http_client__free(u->c); /* no callback is called */
	u->c = NULL;
	while (u->head) {
		struct pending *p = u->head;

		u->head = p->next;
		free(p);
	}
	return 0;
}

/* The script's client, made at the first post; NULL with a message pushed. */
static struct client_ud *client(lua_State *L, struct ps_script *sc)
{
	struct client_ud *u = client_of(L);
	char msg[256];

	if (u)
		return u;
	u = lua_newuserdatauv(L, sizeof(*u), 0);
	memset(u, 0, sizeof(*u));
	if (luaL_newmetatable(L, CLIENT_MT)) {
		lua_pushcfunction(L, client_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	if (!(u->c = ps_http_client__new(sc->loop, msg, sizeof(msg)))) {
		lua_pop(L, 1);
		lua_pushstring(L, msg);
		return NULL;
	}
	lua_setfield(L, LUA_REGISTRYINDEX, CLIENT_MT);
	return u;
}

/* opts.headers, {name = value} or {"Name: value", ...}, into h: the
 * strings are kept in a table left on the stack until the post is made. */
static int headers_of(lua_State *L, int opts, const char **h)
{
	int n = 0, keep;

	lua_newtable(L);
	keep = lua_gettop(L);
	if (lua_getfield(L, opts, "headers") == LUA_TNIL) {
		lua_pop(L, 1);
		return 0;
	}
	luaL_checktype(L, -1, LUA_TTABLE);
	lua_pushnil(L);
	while (lua_next(L, -2)) {
		if (n == MAX_HEADERS)
			luaL_error(L, "http.post: at most %d headers", MAX_HEADERS);
		if (lua_type(L, -2) == LUA_TSTRING)
			lua_pushfstring(L, "%s: %s", lua_tostring(L, -2), luaL_checkstring(L, -1));
		else
			lua_pushstring(L, luaL_checkstring(L, -1));
		h[n] = lua_tostring(L, -1);
		lua_rawseti(L, keep, ++n);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	return n;
}

/* http.post(url, body, [{headers = ..., timeout_ms = N},] callback) ->
 * true, or nil, message. */
int ps_lua_http__post(lua_State *L)
{
	struct ps_script *sc = ps_lua_script__from(L);
	const char *url = luaL_checkstring(L, 1), *h[MAX_HEADERS + 1] = {NULL};
	size_t len;
	const char *body = luaL_checklstring(L, 2, &len);
	int fnidx = lua_istable(L, 3) ? 4 : 3, n = 0, rc;
	lua_Integer timeout = 0;
	struct client_ud *u;
	struct pending *p;

	luaL_checktype(L, fnidx, LUA_TFUNCTION);
	if (fnidx == 4) {
		if (lua_getfield(L, 3, "timeout_ms") != LUA_TNIL)
			timeout = luaL_checkinteger(L, -1);
		lua_pop(L, 1);
		luaL_argcheck(L, timeout >= 0 && timeout <= 3600000, 3,
			      "timeout_ms from 0 (30 s) to 3600000");
		n = headers_of(L, 3, h);
	}
	h[n] = NULL;
	if (!(u = client(L, sc))) {
		lua_pushnil(L);
		lua_insert(L, -2);
		return 2;
	}
	if (!(p = calloc(1, sizeof(*p))))
		return luaL_error(L, "out of memory");
	p->sc = sc;
	rc = ps_http_client__post(u->c, url, h, body, len, (unsigned)timeout, on_done, p);
	if (rc < 0) {
		free(p);
		lua_pushnil(L);
		lua_pushfstring(L, "http.post %s: %s", url, ps_strerror(rc));
		return 2;
	}
	lua_pushvalue(L, fnidx);
	p->fn = luaL_ref(L, LUA_REGISTRYINDEX);
	p->next = u->head;
	if (u->head)
		u->head->prev = p;
	u->head = p;
	sc->listeners++; /* under way: the session goes on */
	lua_pushboolean(L, 1);
	return 1;
}

/* http.flush([timeout_ms]) -> left: run the posts under way (and those
 * their callbacks make) off the loop, for an end probe, where the loop no
 * longer runs them: until none is left, timeout_ms (default 5000) pass or
 * a signal comes. How many are left (dropped when the session ends). */
int ps_lua_http__flush(lua_State *L)
{
	struct ps_script *sc = ps_lua_script__from(L);
	lua_Integer ms = luaL_optinteger(L, 1, 5000);
	struct client_ud *u = client_of(L);

	luaL_argcheck(L, ms >= 0 && ms <= 3600000, 1, "timeout_ms from 0 to 3600000");
	lua_pushinteger(L, u && u->c ? (lua_Integer)ps_http_client__flush(u->c, (unsigned)ms,
									  &sc->signal_pending)
				     : 0);
	return 1;
}
