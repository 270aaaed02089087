/*
 * otlp_dict.c: the dictionary of an OTLP profiles request built from pprof
 * tables (lua/otlp_pprof.c builds the profiles): strings and attributes
 * deduplicated through Lua tables keyed by their bytes, growing arrays of
 * messages in lua/pprof.c's userdata blocks (nothing to free by hand when
 * a bad field raises), and the pprof Mappings, Functions and Locations.
 * A Mapping's build id becomes its attribute process.executable.build_id.gnu;
 * Functions are deduplicated by what they say, Locations kept one each.
 */
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/internal.h"
#include "lua/otlp.h"
#include "lua/pprof.h"

void *ps_lua_otlp__alloc(struct ps_lua_otlp_conv *c, size_t size)
{
	return ps_lua_pprof__alloc(c->L, c->anchor, size);
}

void ps_lua_otlp__push(struct ps_lua_otlp_conv *c, struct ps_lua_otlp_vec *v, void *p)
{
	if (v->n == v->cap) { /* the old array stays in its block: at most as much again */
		size_t cap = v->cap ? 2 * v->cap : 64;
		void **n = ps_lua_otlp__alloc(c, cap * sizeof(*n));

		if (v->n)
			memcpy(n, v->v, v->n * sizeof(*n));
		v->v = n;
		v->cap = cap;
	}
	v->v[v->n++] = p;
}

int ps_lua_otlp__bad(struct ps_lua_otlp_conv *c, const char *field, const char *want)
{
	if (!c->list)
		return luaL_error(c->L, "otlp.from_pprof: %s: %s expected", field, want);
	return luaL_error(c->L, "otlp.from_pprof: %s[%d].%s: %s expected", c->list, (int)c->at,
			  field, want);
}

int32_t ps_lua_otlp__find(struct ps_lua_otlp_conv *c, int slot)
{
	int32_t i = -1;

	lua_pushvalue(c->L, -1);
	if (lua_rawget(c->L, slot) == LUA_TNUMBER)
		i = (int32_t)lua_tointeger(c->L, -1);
	lua_pop(c->L, i < 0 ? 1 : 2); /* the key goes once found */
	return i;
}

void ps_lua_otlp__keep(struct ps_lua_otlp_conv *c, int slot, int32_t i)
{
	lua_pushinteger(c->L, i);
	lua_rawset(c->L, slot);
}

/* The index of string s in the string table (invalid UTF-8 repaired, each
 * bad byte U+FFFD, as pprof's); the table's key keeps it. */
int32_t ps_lua_otlp__intern(struct ps_lua_otlp_conv *c, const char *s, size_t n)
{
	lua_State *L = c->L;
	int32_t i;

	lua_pushlstring(L, s, n);
	if ((i = ps_lua_otlp__find(c, c->strings)) >= 0)
		return i;
	i = (int32_t)c->str.n;
	lua_pushvalue(L, -1);
	ps_lua__valid_utf8(L, -1); /* proto3 strings are UTF-8: a process's name may not be */
	if (!lua_rawequal(L, -1, -2)) {
		lua_pushvalue(L, -1); /* the repaired copy, kept by its own key */
		ps_lua_otlp__keep(c, c->strings, i);
	}
	ps_lua_otlp__push(c, &c->str, (void *)lua_tostring(L, -1)); /* a key's bytes */
	lua_pop(L, 1);
	ps_lua_otlp__keep(c, c->strings, i);
	return i;
}

/* The string field of the table at t: its index (0, "", when absent). */
int32_t ps_lua_otlp__str_field(struct ps_lua_otlp_conv *c, int t, const char *field)
{
	size_t n;
	const char *s;
	int32_t i = 0;

	switch (lua_getfield(c->L, t, field)) {
	case LUA_TNIL:
		break;
	case LUA_TSTRING:
		s = lua_tolstring(c->L, -1, &n);
		i = ps_lua_otlp__intern(c, s, n);
		break;
	default:
		ps_lua_otlp__bad(c, field, "string");
	}
	lua_pop(c->L, 1);
	return i;
}

int64_t ps_lua_otlp__int_field(struct ps_lua_otlp_conv *c, int t, const char *field)
{
	int exact = 1;
	int64_t v = 0;

	if (lua_getfield(c->L, t, field) != LUA_TNIL)
		v = (int64_t)lua_tointegerx(c->L, -1, &exact);
	if (!exact)
		ps_lua_otlp__bad(c, field, "integer");
	lua_pop(c->L, 1);
	return v;
}

/* The list field of the table at t, pushed (an empty table when absent). */
size_t ps_lua_otlp__list_field(struct ps_lua_otlp_conv *c, int t, const char *field)
{
	int type = lua_getfield(c->L, t, field);

	if (type == LUA_TNIL) {
		lua_pop(c->L, 1);
		lua_newtable(c->L);
	} else if (type != LUA_TTABLE) {
		ps_lua_otlp__bad(c, field, "list");
	}
	return lua_rawlen(c->L, -1);
}

/* The index of the attribute whose key is string k = the value at stack
 * index v (a string or an integer), looked up by k, the kind and the
 * value's bytes. */
int32_t ps_lua_otlp__attribute(struct ps_lua_otlp_conv *c, int32_t k, int v)
{
	lua_State *L = c->L;
	bool num = lua_type(L, v) == LUA_TNUMBER;
	size_t n = 0;
	const char *s = num ? NULL : lua_tolstring(L, v, &n);
	lua_Integer x = num ? lua_tointeger(L, v) : 0;
	char small[256];
	OtlpAttribute *a;
	int32_t i;

	if (!num && !s)
		ps_lua_otlp__bad(c, c->str.v[k], "string or integer");
	if (num)
		n = sizeof(x), s = (const char *)&x;
	if (n + 5 <= sizeof(small)) {
		memcpy(small, &k, 4);
		small[4] = num ? 'i' : 's';
		memcpy(small + 5, s, n);
		lua_pushlstring(L, small, n + 5);
	} else {
		lua_pushlstring(L, (const char *)&k, 4);
		lua_pushstring(L, num ? "i" : "s");
		lua_pushlstring(L, s, n);
		lua_concat(L, 3);
	}
	if ((i = ps_lua_otlp__find(c, c->attrs)) >= 0)
		return i;
	a = ps_lua_otlp__alloc(c, sizeof(*a));
	opentelemetry__proto__key_value_and_unit__init(a);
	a->key_strindex = k;
	a->value = ps_lua_otlp__alloc(c, sizeof(*a->value));
	opentelemetry__proto__any_value__init(a->value);
	if (num) {
		a->value->value_case = OPENTELEMETRY__PROTO__ANY_VALUE__VALUE_INT_VALUE;
		a->value->int_value = x;
	} else {
		a->value->value_case = OPENTELEMETRY__PROTO__ANY_VALUE__VALUE_STRING_VALUE;
		int32_t si = ps_lua_otlp__intern(c, s, n); /* first: it may move c->str.v */

		a->value->string_value = c->str.v[si];
	}
	i = (int32_t)c->attr.n;
	ps_lua_otlp__push(c, &c->attr, a);
	ps_lua_otlp__keep(c, c->attrs, i);
	return i;
}

int32_t ps_lua_otlp__intern_z(struct ps_lua_otlp_conv *c, const char *s)
{
	return ps_lua_otlp__intern(c, s, strlen(s));
}

/* An int32 array of n entries, for a repeated field. */
int32_t *ps_lua_otlp__ints(struct ps_lua_otlp_conv *c, size_t n)
{
	return n ? ps_lua_otlp__alloc(c, n * sizeof(int32_t)) : NULL;
}

/* Element i of the list on top of the stack, pushed as a table (absolute
 * index returned), and c->where names it. */
int ps_lua_otlp__element(struct ps_lua_otlp_conv *c, const char *list, size_t i)
{
	c->list = list, c->at = i;
	if (lua_rawgeti(c->L, -1, (lua_Integer)i) != LUA_TTABLE)
		ps_lua_otlp__bad(c, "", "table");
	return lua_gettop(c->L);
}

/* The index that table ids (at its stack index) gives the id field of the
 * table at t, or 0. */
static int32_t index_of(struct ps_lua_otlp_conv *c, int ids, int t, const char *field)
{
	int32_t i;

	lua_rawgeti(c->L, ids, (lua_Integer)ps_lua_otlp__int_field(c, t, field));
	i = (int32_t)lua_tointeger(c->L, -1);
	lua_pop(c->L, 1);
	return i;
}

/* The pprof table's (at t) Mappings into the dictionary, their indices by
 * id into the table at ids. */
static void mappings(struct ps_lua_otlp_conv *c, int t, int ids)
{
	lua_State *L = c->L;
	size_t n = ps_lua_otlp__list_field(c, t, "mapping");

	for (size_t i = 1; i <= n; i++) {
		int mt = ps_lua_otlp__element(c, "mapping", i);
		OtlpMapping *m = ps_lua_otlp__alloc(c, sizeof(*m));

		opentelemetry__proto__mapping__init(m);
		m->memory_start = (uint64_t)ps_lua_otlp__int_field(c, mt, "memory_start");
		m->memory_limit = (uint64_t)ps_lua_otlp__int_field(c, mt, "memory_limit");
		m->file_offset = (uint64_t)ps_lua_otlp__int_field(c, mt, "file_offset");
		m->filename_strindex = ps_lua_otlp__str_field(c, mt, "filename");
		if (lua_getfield(L, mt, "build_id") == LUA_TSTRING && lua_rawlen(L, -1)) {
			m->attribute_indices = ps_lua_otlp__ints(c, 1);
			m->n_attribute_indices = 1;
			m->attribute_indices[0] = ps_lua_otlp__attribute(
			    c, ps_lua_otlp__intern_z(c, "process.executable.build_id.gnu"),
			    lua_gettop(L));
		}
		lua_pop(L, 1);
		lua_pushinteger(L, (lua_Integer)c->map.n);
		lua_rawseti(L, ids, ps_lua_otlp__int_field(c, mt, "id"));
		ps_lua_otlp__push(c, &c->map, m);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

/* The Functions, deduplicated across the request by what they say. */
static void functions(struct ps_lua_otlp_conv *c, int t, int ids)
{
	lua_State *L = c->L;
	size_t n = ps_lua_otlp__list_field(c, t, "function");

	for (size_t i = 1; i <= n; i++) {
		int ft = ps_lua_otlp__element(c, "function", i);
		int32_t key[4] = {ps_lua_otlp__str_field(c, ft, "name"),
				  ps_lua_otlp__str_field(c, ft, "system_name"),
				  ps_lua_otlp__str_field(c, ft, "filename"),
				  (int32_t)ps_lua_otlp__int_field(c, ft, "start_line")};
		OtlpFunction *f;
		int32_t fi;

		lua_pushlstring(L, (const char *)key, sizeof(key));
		if ((fi = ps_lua_otlp__find(c, c->funcs)) < 0) {
			f = ps_lua_otlp__alloc(c, sizeof(*f));
			opentelemetry__proto__function__init(f);
			f->name_strindex = key[0];
			f->system_name_strindex = key[1];
			f->filename_strindex = key[2];
			f->start_line = key[3];
			fi = (int32_t)c->fn.n;
			ps_lua_otlp__push(c, &c->fn, f);
			ps_lua_otlp__keep(c, c->funcs, fi);
		}
		lua_pushinteger(L, fi);
		lua_rawseti(L, ids, ps_lua_otlp__int_field(c, ft, "id")); /* its index, by id */
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

/* The Locations, one each: Lines (inline frames first) by function index. */
static void locations(struct ps_lua_otlp_conv *c, int t, int ids, int maps, int fns)
{
	lua_State *L = c->L;
	size_t n = ps_lua_otlp__list_field(c, t, "location");

	for (size_t i = 1; i <= n; i++) {
		int lt = ps_lua_otlp__element(c, "location", i);
		OtlpLocation *l = ps_lua_otlp__alloc(c, sizeof(*l));
		size_t nl;

		opentelemetry__proto__location__init(l);
		l->mapping_index = index_of(c, maps, lt, "mapping_id");
		l->address = (uint64_t)ps_lua_otlp__int_field(c, lt, "address");
		nl = ps_lua_otlp__list_field(c, lt, "line");
		l->lines = nl ? ps_lua_otlp__alloc(c, nl * sizeof(*l->lines)) : NULL;
		for (size_t k = 0; k < nl; k++) {
			OtlpLine *ln = ps_lua_otlp__alloc(c, sizeof(*ln));
			int at = ps_lua_otlp__element(c, "line", k + 1);

			opentelemetry__proto__line__init(ln);
			ln->function_index = index_of(c, fns, at, "function_id");
			ln->line = ps_lua_otlp__int_field(c, at, "line");
			ln->column = ps_lua_otlp__int_field(c, at, "column");
			l->lines[k] = ln;
			lua_pop(L, 1);
		}
		l->n_lines = nl;
		lua_pop(L, 1);
		lua_pushinteger(L, (lua_Integer)c->loc.n);
		lua_rawseti(L, ids, ps_lua_otlp__int_field(c, lt, "id"));
		ps_lua_otlp__push(c, &c->loc, l);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

/* The pprof table's (at t) Mappings, Functions and Locations into the
 * dictionary: the index of each Location by id into the table at locs. */
void ps_lua_otlp__import(struct ps_lua_otlp_conv *c, int t, int locs)
{
	int maps, fns;

	lua_newtable(c->L);
	maps = lua_gettop(c->L);
	lua_newtable(c->L);
	fns = lua_gettop(c->L);
	mappings(c, t, maps);
	functions(c, t, fns);
	locations(c, t, locs, maps, fns);
	lua_pop(c->L, 2);
}
