/*
 * http.c: package.preload["perfscript.http"], the loop's HTTP listener
 * (loop/http.c) for Lua: http.listen(addr, handler) serves GET requests
 * with a Lua function, on the loop thread, between samples and timers. The
 * openmetrics tapset serves its /metrics page with it. The handler runs
 * through the one protected call path (ps_lua__protect) inside a small C
 * function that calls it and copies its reply out; a handler that raises is
 * reported on one line and the client gets a 500, but the session goes on
 * and its exit status is kept: no client can end it (PS_CALL_REQUEST). A listener
 * keeps the session running, as a timer does, and stays open without a
 * reference from the script, until server:close() or the session's end.
 * A handler may answer later: req:defer() gives a reply object whose
 * send() answers when the script has the body (a profile of the next N
 * seconds).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/internal.h"

#define SERVER_MT "perfscript.http_server"
#define REPLY_MT  "perfscript.http_reply"

struct server_ud {
	struct ps_script *sc;
	struct ps_http *h; /* NULL once closed */
	int handler;	   /* registry ref */
	int self;	   /* registry ref to this userdata while open: no GC */
	int gone;	   /* registry ref: reply id -> what req:defer(on_gone) gave */
	int64_t gone_id;   /* the reply whose client went (call_gone's argument) */
	char addr[128];
	char ctype[128]; /* the last reply's content type (the listener wants a stable string) */
	const struct ps_http_request *current; /* the request being handled, or NULL */
	bool deferred;			       /* ...and whether its reply comes later */
};

/* A reply owed (req:defer()); its user value is the server's userdata. */
struct reply_ud {
	struct server_ud *u;
	int64_t id; /* 0 once sent */
};

struct call {
	struct server_ud *u;
	const struct ps_http_request *req;
	struct ps_http_reply *rep;
};

static void add_arg(const char *key, const char *value, void *ctx)
{
	lua_State *L = ctx;

	lua_pushstring(L, value);
	lua_setfield(L, -2, key);
}

/* on_gone of reply id: set (fn at idx), or taken (idx 0: pushed, or nil). */
static void gone_fn(lua_State *L, struct server_ud *u, int64_t id, int idx)
{
	if (u->gone == LUA_NOREF) {
		lua_newtable(L);
		u->gone = luaL_ref(L, LUA_REGISTRYINDEX);
	}
	lua_rawgeti(L, LUA_REGISTRYINDEX, u->gone);
	if (idx) {
		lua_pushvalue(L, idx);
		lua_rawseti(L, -2, id);
		lua_pop(L, 1);
		return;
	}
	lua_rawgeti(L, -1, id);
	lua_pushnil(L);
	lua_rawseti(L, -3, id);
	lua_remove(L, -2);
}

/* req:defer([on_gone]) -> reply: the handler returns nothing, and
 * reply:send() answers later; on_gone() runs if the client hangs up first.
 * Only inside the handler, once. */
static int req_defer(lua_State *L)
{
	struct server_ud *u = lua_touserdata(L, lua_upvalueindex(1));
	struct reply_ud *r;
	int64_t id;

	if (!lua_isnoneornil(L, 2))
		luaL_checktype(L, 2, LUA_TFUNCTION);
	if (!u->current || u->deferred)
		return luaL_error(L, "req:defer() is for the handler's own request, once");
	id = ps_http__defer(u->current);
	if (id == -EBUSY)
		return luaL_error(L, "req:defer(): %d replies are owed already", PS_HTTP_MAX_LATER);
	if (id < 0)
		return luaL_error(L, "req:defer(): %s", ps_strerror((int)id));
	u->deferred = true;
	if (!lua_isnoneornil(L, 2))
		gone_fn(L, u, id, 2);
	r = lua_newuserdatauv(L, sizeof(*r), 1);
	r->u = u;
	r->id = id;
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_setiuservalue(L, -2, 1); /* the server lives as long as the reply */
	luaL_setmetatable(L, REPLY_MT);
	return 1;
}

/* reply:send(body [, content_type [, status]]) -> true, or nil, message. */
static int reply_send(lua_State *L)
{
	struct reply_ud *r = luaL_checkudata(L, 1, REPLY_MT);
	size_t len;
	const char *body = luaL_checklstring(L, 2, &len);
	const char *ctype = luaL_optstring(L, 3, "text/plain; charset=utf-8");
	lua_Integer status = luaL_optinteger(L, 4, 200);
	int rc;

	luaL_argcheck(L, status >= 100 && status <= 599, 4, "a status from 100 to 599");
	rc = r->id && r->u->h ? ps_http__answer(r->u->h, r->id, (int)status, ctype, body, len)
			      : -ENOENT;
	if (r->id && r->u->gone != LUA_NOREF) {
		gone_fn(L, r->u, r->id, 0);
		lua_pop(L, 1);
	}
	r->id = 0;
	if (rc < 0) {
		lua_pushnil(L);
		lua_pushstring(L, rc == -ENOENT ? "the request was answered already, or its server "
						  "closed"
						: ps_strerror(rc));
		return 2;
	}
	lua_pushboolean(L, 1);
	return 1;
}

/* Runs protected (1 = the call): handler(request) -> body [, content_type
 * [, status]], or nothing after req:defer(). */
static int serve(lua_State *L)
{
	struct call *c = lua_touserdata(L, 1);
	size_t len;
	const char *body;

	lua_rawgeti(L, LUA_REGISTRYINDEX, c->u->handler);
	lua_createtable(L, 0, 5);
	lua_newtable(L);
	ps_http__args(c->req, add_arg, L);
	lua_setfield(L, -2, "args");
	lua_rawgeti(L, LUA_REGISTRYINDEX, c->u->self); /* the server's userdata */
	lua_pushcclosure(L, req_defer, 1);
	lua_setfield(L, -2, "defer");
	lua_pushstring(L, c->req->method);
	lua_setfield(L, -2, "method");
	lua_pushstring(L, c->req->path);
	lua_setfield(L, -2, "path");
	lua_pushstring(L, c->req->accept ? c->req->accept : "");
	lua_setfield(L, -2, "accept");
	lua_call(L, 1, 3);
	body = lua_tolstring(L, -3, &len);
	if (c->u->deferred && !body)
		return 0; /* reply:send() answers */
	if (c->u->deferred)
		return luaL_error(L, "http handler for %s returned a body after req:defer()",
				  c->req->path);
	if (!body)
		return luaL_error(L, "http handler for %s returned %s, not a string body",
				  c->req->path, luaL_typename(L, -3));
	c->rep->status = (int)luaL_optinteger(L, -1, 200);
	if (c->rep->status < 100 || c->rep->status > 599)
		return luaL_error(L, "http handler for %s returned status %d", c->req->path,
				  c->rep->status);
	snprintf(c->u->ctype, sizeof(c->u->ctype), "%s",
		 luaL_optstring(L, -2, "text/plain; charset=utf-8"));
	c->rep->content_type = c->u->ctype;
	c->rep->body = malloc(len ? len : 1);
	if (!c->rep->body)
		return luaL_error(L, "out of memory");
	memcpy(c->rep->body, body, len);
	c->rep->len = len;
	return 0;
}

static int on_request(const struct ps_http_request *req, struct ps_http_reply *rep, void *ctx)
{
	struct server_ud *u = ctx;
	struct call c = {.u = u, .req = req, .rep = rep};
	int rc;

	u->current = req;
	u->deferred = false;
	rc = ps_lua__protect(u->sc, serve, &c, PS_CALL_REQUEST, "http handler");
	u->current = NULL;
	if (rc < 0) {
		free(rep->body);
		rep->body = NULL;
		return -EIO;
	}
	return 0;
}

/* Runs protected (1 = the server): its on_gone for the id in u->gone_id. */
static int call_gone(lua_State *L)
{
	struct server_ud *u = lua_touserdata(L, 1);

	gone_fn(L, u, u->gone_id, 0);
	if (lua_isfunction(L, -1))
		lua_call(L, 0, 0);
	return 0;
}

static void on_gone(int64_t id, void *ctx)
{
	struct server_ud *u = ctx;

	if (u->gone == LUA_NOREF)
		return;
	u->gone_id = id;
	ps_lua__protect(u->sc, call_gone, u, PS_CALL_REQUEST, "http on_gone");
}

static struct server_ud *check_server(lua_State *L)
{
	return luaL_checkudata(L, 1, SERVER_MT);
}

static int server_close(lua_State *L)
{
	struct server_ud *u = check_server(L);

	if (u->h) {
		ps_http__free(u->h);
		u->h = NULL;
		u->sc->listeners--;
		ps_lua_script__source_ended(u->sc);
	}
	luaL_unref(L, LUA_REGISTRYINDEX, u->handler);
	luaL_unref(L, LUA_REGISTRYINDEX, u->self);
	luaL_unref(L, LUA_REGISTRYINDEX, u->gone);
	u->handler = u->self = u->gone = LUA_NOREF;
	return 0;
}

static int server_port(lua_State *L)
{
	struct server_ud *u = check_server(L);

	if (!u->h)
		return luaL_error(L, "this http server is closed");
	lua_pushinteger(L, ps_http__port(u->h));
	return 1;
}

static int server_evictions(lua_State *L)
{
	struct server_ud *u = check_server(L);

	lua_pushinteger(L, (lua_Integer)ps_http__evictions(u->h));
	return 1;
}

static int server_tls(lua_State *L)
{
	struct server_ud *u = check_server(L);

	lua_pushboolean(L, ps_http__tls(u->h));
	return 1;
}

static int server_tostring(lua_State *L)
{
	struct server_ud *u = check_server(L);

	if (u->h)
		lua_pushfstring(L, SERVER_MT " %s (port %d)", u->addr, ps_http__port(u->h));
	else
		lua_pushliteral(L, SERVER_MT " (closed)");
	return 1;
}

/* An unsigned option of the table at index 3 (0 when absent). */
static unsigned opt_uint(lua_State *L, const char *name)
{
	lua_Integer v;

	lua_getfield(L, 3, name);
	if (lua_isnil(L, -1)) {
		lua_pop(L, 1);
		return 0;
	}
	v = lua_tointeger(L, -1);
	if (!lua_isinteger(L, -1) || v < 1 || v > 1000000)
		luaL_error(
		    L, "bad option '%s' to 'listen' (a whole number from 1 to 1000000 expected)",
		    name);
	lua_pop(L, 1);
	return (unsigned)v;
}

/* http.listen(addr, handler [, {web_config=, max_connections=,
 * idle_timeout_ms=}]) -> server, or nil, message, errno. */
static int l_listen(lua_State *L)
{
	const char *addr = luaL_checkstring(L, 1);
	struct ps_script *sc = ps_lua_script__from(L);
	struct ps_http_opts opts = {.sz = sizeof(opts), .gone = on_gone};
	struct server_ud *u;
	char msg[512];

	luaL_checktype(L, 2, LUA_TFUNCTION);
	if (!lua_isnoneornil(L, 3)) {
		luaL_checktype(L, 3, LUA_TTABLE);
		lua_getfield(L, 3, "web_config");
		opts.web_config = lua_isnil(L, -1) ? NULL : luaL_checkstring(L, -1);
		lua_pop(L, 1); /* the string stays in the table */
		opts.max_connections = opt_uint(L, "max_connections");
		opts.idle_timeout_ms = opt_uint(L, "idle_timeout_ms");
	}
	u = lua_newuserdatauv(L, sizeof(*u), 0);
	memset(u, 0, sizeof(*u));
	u->sc = sc;
	u->handler = u->self = u->gone = LUA_NOREF;
	luaL_setmetatable(L, SERVER_MT); /* closed until the listener exists */
	snprintf(u->addr, sizeof(u->addr), "%s", addr);
	u->h = ps_http__new(sc->loop, addr, on_request, u, &opts, msg, sizeof(msg));
	if (!u->h) {
		int err = errno;

		lua_pushnil(L);
		lua_pushstring(L, msg);
		lua_pushinteger(L, err);
		return 3;
	}
	sc->listeners++;
	lua_pushvalue(L, 2);
	u->handler = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_pushvalue(L, -1);
	u->self = luaL_ref(L, LUA_REGISTRYINDEX); /* open until closed, as a timer is */
	return 1;
}

static int open_http(lua_State *L)
{
	static const luaL_Reg fns[] = {
	    {"listen", l_listen},
	    {"post", ps_lua_http__post},
	    {"flush", ps_lua_http__flush},
	    {NULL, NULL},
	};
	static const luaL_Reg methods[] = {
	    {"port", server_port},
	    {"close", server_close},
	    {"evictions", server_evictions},
	    {"tls", server_tls},
	    {NULL, NULL},
	};

	if (luaL_newmetatable(L, REPLY_MT)) {
		lua_createtable(L, 0, 1);
		lua_pushcfunction(L, reply_send);
		lua_setfield(L, -2, "send");
		lua_setfield(L, -2, "__index");
	}
	lua_pop(L, 1);
	if (luaL_newmetatable(L, SERVER_MT)) {
		luaL_newlib(L, methods);
		lua_setfield(L, -2, "__index");
		lua_pushcfunction(L, server_close);
		lua_setfield(L, -2, "__gc");
		lua_pushcfunction(L, server_close);
		lua_setfield(L, -2, "__close");
		lua_pushcfunction(L, server_tostring);
		lua_setfield(L, -2, "__tostring");
	}
	lua_pop(L, 1);
	luaL_newlib(L, fns);
	return 1;
}

void ps_lua_http__open(lua_State *L)
{
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, open_http);
	lua_setfield(L, -2, "perfscript.http");
	lua_pop(L, 1);
}
