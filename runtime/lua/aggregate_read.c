/*
 * aggregate_read.c: an in-kernel aggregate's map as Lua sees it
 * (aggregate:read() and take()): { [key] = count }, one field's value or
 * several joined with ";", or, with {rows = true}, one table per key, its
 * fields by the names `by` gave them and its count, so no script parses a
 * joined key back. An ip is its function's name and a stack is folded as
 * "root;...;leaf", both through the sample object's symbolizer; entries
 * that symbolize alike are summed.
 */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/perfmon.h"

/* "func" of "func+0x1a": a profile merges a function's addresses. */
static void push_frame(luaL_Buffer *b, struct ps_script *sc, pid_t pid, uint64_t ip, bool kernel)
{
	char buf[256];
	struct ps_symbols *syms = ps_lua_sample_object__symbols(sc);
	char *plus;

	if (!syms || ps_symbols__resolve(syms, pid, ip, kernel, buf, sizeof(buf), NULL) < 0) {
		/* no mapping: a word a frame-pointer walk read past the root
		 * names no code, and equal stacks must merge (as folded's) */
		if (!syms || !strncmp(buf, "0x", 2))
			snprintf(buf, sizeof(buf), "[unknown]");
	} else if ((plus = strrchr(buf, '+')) && plus != buf) {
		*plus = '\0';
	}
	luaL_addstring(b, buf);
}

/* The stack folded, root first; what a key puts for an empty one. */
static void push_stack(luaL_Buffer *b, struct ps_script *sc, const struct ps_agg_entry *e,
		       bool kernel, const char *empty)
{
	size_t n = kernel ? e->nkstack : e->nustack, leaf = 0;
	const uint64_t *ips = kernel ? e->kstack : e->ustack;

	if (n == 0)
		luaL_addstring(b, empty);
	while (kernel && leaf + 1 < n && ps_lua_stack__glue(sc, ips[leaf]))
		leaf++;
	for (size_t i = n; i-- > leaf;) { /* root first */
		push_frame(b, sc, (pid_t)e->pid, ips[i], kernel);
		if (i > leaf)
			luaL_addchar(b, ';');
	}
}

/* Key i of entry e as a string into b. */
static void add_key(luaL_Buffer *b, const struct ps_lua_agg *u, const struct ps_agg_entry *e, int i,
		    const char *empty)
{
	uint32_t bit = u->bit[i];
	char num[24];

	if (bit == PS_AGG_FIELD) {
		snprintf(num, sizeof(num), "%lld", (long long)e->field);
		luaL_addstring(b, num);
	} else if (bit & (PS_AGG_PID | PS_AGG_TID | PS_AGG_CPU)) {
		snprintf(num, sizeof(num), "%u",
			 bit == PS_AGG_PID   ? e->pid
			 : bit == PS_AGG_TID ? e->tid
					     : e->cpu);
		luaL_addstring(b, num);
	} else if (bit == PS_AGG_COMM) {
		luaL_addstring(b, e->comm);
	} else if (bit == PS_AGG_IP) {
		push_frame(b, u->sc, (pid_t)e->pid, e->ip, !e->user);
	} else {
		push_stack(b, u->sc, e, bit == PS_AGG_KSTACK, empty);
	}
}

/* The key of e, as read() gives it: one integer field as an integer, else
 * the fields joined with ';' (an empty stack left out but for the last). */
static void push_key(lua_State *L, const struct ps_lua_agg *u, const struct ps_agg_entry *e)
{
	uint32_t first = u->bit[0];
	luaL_Buffer b;
	bool any = false;

	if (u->nkeys == 1 && first == PS_AGG_FIELD) {
		lua_pushinteger(L, (lua_Integer)e->field);
		return;
	}
	if (u->nkeys == 1 && (first & (PS_AGG_PID | PS_AGG_TID | PS_AGG_CPU))) {
		lua_pushinteger(L, first == PS_AGG_PID	 ? e->pid
				   : first == PS_AGG_TID ? e->tid
							 : e->cpu);
		return;
	}
	luaL_buffinit(L, &b);
	for (int i = 0; i < u->nkeys; i++) {
		size_t depth = u->bit[i] == PS_AGG_USTACK ? e->nustack : e->nkstack;

		/* a user-mode sample has no kernel stack (and a kernel thread no
		 * user stack): the key leaves it out rather than say so */
		if ((u->bit[i] & (PS_AGG_USTACK | PS_AGG_KSTACK)) && depth == 0 &&
		    (any || i + 1 < u->nkeys))
			continue;
		if (any)
			luaL_addchar(&b, ';');
		any = true;
		add_key(&b, u, e, i,
			u->bit[i] == PS_AGG_KSTACK ? "[no kernel stack]" : "[no user stack]");
	}
	luaL_pushresult(&b);
}

/* Row field i of e: an integer, or a string (a stack "" when empty). */
static void push_field(lua_State *L, const struct ps_lua_agg *u, const struct ps_agg_entry *e,
		       int i)
{
	uint32_t bit = u->bit[i];
	luaL_Buffer b;

	if (bit == PS_AGG_FIELD) {
		lua_pushinteger(L, (lua_Integer)e->field);
	} else if (bit & (PS_AGG_PID | PS_AGG_TID | PS_AGG_CPU)) {
		lua_pushinteger(L, bit == PS_AGG_PID   ? e->pid
				   : bit == PS_AGG_TID ? e->tid
						       : e->cpu);
	} else {
		luaL_buffinit(L, &b);
		add_key(&b, u, e, i, "");
		luaL_pushresult(&b);
	}
}

struct read_ctx {
	lua_State *L;
	const struct ps_lua_agg *u;
	bool rows; /* the result at -2, keys -> rows at -1; else the result at -1 */
};

static int add_entry(const struct ps_agg_entry *e, void *ctx)
{
	struct read_ctx *r = ctx;
	lua_State *L = r->L;

	push_key(L, r->u, e);
	if (!r->rows) { /* result[key] += count */
		lua_pushvalue(L, -1);
		lua_rawget(L, -3);
		lua_Integer prev = lua_tointeger(L, -1);
		lua_pop(L, 1);
		lua_pushinteger(L, prev + (lua_Integer)e->count);
		lua_rawset(L, -3);
		return 0;
	}
	lua_pushvalue(L, -1);
	if (lua_rawget(L, -3) == LUA_TNIL) { /* a new row, in the result and by its key */
		lua_pop(L, 1);
		lua_createtable(L, 0, r->u->nkeys + 1);
		for (int i = 0; i < r->u->nkeys; i++) {
			push_field(L, r->u, e, i);
			lua_setfield(L, -2, r->u->name[i]);
		}
		lua_pushinteger(L, 0);
		lua_setfield(L, -2, "count");
		lua_pushvalue(L, -1);
		lua_rawseti(L, -5, (lua_Integer)lua_rawlen(L, -5) + 1);
		lua_pushvalue(L, -2);
		lua_pushvalue(L, -2);
		lua_rawset(L, -5);
	}
	lua_getfield(L, -1, "count");
	lua_Integer prev = lua_tointeger(L, -1);
	lua_pop(L, 1);
	lua_pushinteger(L, prev + (lua_Integer)e->count);
	lua_setfield(L, -2, "count");
	lua_pop(L, 2); /* the row and its key */
	return 0;
}

int ps_lua_aggregate__entries(lua_State *L, const struct ps_lua_agg *u, bool take, bool rows)
{
	struct read_ctx r = {L, u, rows};
	int rc;

	lua_newtable(L);
	if (rows)
		lua_newtable(L);
	rc = take ? ps_aggregate__take(u->sc->session, u->h, add_entry, &r)
		  : ps_aggregate__read(u->sc->session, u->h, add_entry, &r);
	if (rows)
		lua_pop(L, 1);
	if (rc < 0)
		lua_pop(L, 1);
	return rc;
}
