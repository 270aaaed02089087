/*
 * pprof.c: package.preload["perfscript.pprof"], pprof profiles to and from
 * Lua tables. A profile is a table shaped like profile.proto's Profile
 * message, field for field, except that strings are written out where the
 * format keeps string-table indices (the encoder builds the table, the
 * decoder resolves it):
 *   { sample_type = { {type = "samples", unit = "count"}, ... },
 *     sample = { {location_id = {...} or packed, value = {...}, label = {...}}, ... },
 *     mapping = {...}, location = {...}, ["function"] = {...},
 *     period_type = {type =, unit =}, period =, time_nanos =, ... }
 * The tapset (tapsets/profile.lua) does the profiling and the symbols; this
 * file only turns the table into bytes with protobuf-c's code generated from
 * lua/profile.proto, gzip-compressed with zlib, and back
 * (lua/pprof_decode.c). Every array handed to protobuf-c comes from blocks
 * of Lua userdata anchored in one table on the stack, so a bad field can
 * raise at any point without leaking. A sample's location_id may be a list
 * or a packed string of ids (the tapset packs them: no table per sample).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <zlib.h>

#include "lua/pprof.h"
#include "lua/internal.h"

/* Stack slots of an encoding: the anchor table, then string -> index. */
struct enc {
	lua_State *L;
	int anchor, strings;
	char **strtab;
	size_t nstr, capstr;
	char where[96]; /* the element being encoded, for messages */
};

/* Allocations come from 256 KiB blocks, userdata kept in the anchor table
 * (the current one also at anchor[0]): a malformed profile raises with
 * nothing to free by hand, and a profile of 100k samples costs a few
 * blocks, not 400k userdata. */
#define PPROF_BLOCK (256u << 10)

struct block {
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

void *ps_lua_pprof__alloc(lua_State *L, int anchor, size_t size)
{
	struct block *b;
	void *p;

	size = size ? (size + 15) & ~(size_t)15 : 16;
	lua_rawgeti(L, anchor, 0);
	b = lua_touserdata(L, -1);
	lua_pop(L, 1);
	if (!b || b->cap - b->used < size) {
		size_t cap = size > PPROF_BLOCK ? size : PPROF_BLOCK;

		b = lua_newuserdatauv(L, sizeof(*b) + cap, 0);
		b->used = 0;
		b->cap = cap;
		lua_pushvalue(L, -1);
		lua_rawseti(L, anchor, 0);
		lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1);
	}
	p = b->data + b->used;
	b->used += size;
	memset(p, 0, size);
	return p;
}

static void *arena_alloc(void *data, size_t size)
{
	struct ps_lua_pb_arena *a = data;

	if (size > a->max - a->bytes) {
		a->over = true;
		return NULL;
	}
	a->bytes += size;
	return ps_lua_pprof__alloc(a->L, a->anchor, size);
}

static void arena_free(void *data, void *ptr)
{
	(void)data, (void)ptr; /* the userdata goes with the anchor table */
}

ProtobufCAllocator ps_lua_pprof__arena(struct ps_lua_pb_arena *a)
{
	return (ProtobufCAllocator){.alloc = arena_alloc, .free = arena_free, .allocator_data = a};
}

static void set_where(struct enc *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt); /* a long path is cut short: it is only a message */
	vsnprintf(e->where, sizeof(e->where), fmt, ap);
	va_end(ap);
}

static void *alloc(struct enc *e, size_t n, size_t size)
{
	return ps_lua_pprof__alloc(e->L, e->anchor, n * size);
}

static int bad(struct enc *e, const char *field, const char *want)
{
	return luaL_error(e->L, "pprof: %s%s%s: %s expected, got %s", e->where,
			  e->where[0] ? "." : "", field, want, luaL_typename(e->L, -1));
}

/* The index of the string at the top of the stack (popped), as valid
 * UTF-8: pprof's readers (and receivers, which refuse the whole profile)
 * want it so, whatever bytes a name came from. */
static int64_t intern_top(struct enc *e)
{
	lua_State *L = e->L;
	int64_t idx;

	ps_lua__valid_utf8(L, -1);

	lua_pushvalue(L, -1);
	if (lua_rawget(L, e->strings) == LUA_TNUMBER) {
		idx = lua_tointeger(L, -1);
		lua_pop(L, 2);
		return idx;
	}
	lua_pop(L, 1);
	if (e->nstr == e->capstr) {
		size_t cap = e->capstr ? e->capstr * 2 : 256;
		char **grown = alloc(e, cap, sizeof(*grown));

		if (e->nstr)
			memcpy(grown, e->strtab, e->nstr * sizeof(*grown));
		e->strtab = grown; /* the old array stays anchored until the end */
		e->capstr = cap;
	}
	idx = (int64_t)e->nstr;
	e->strtab[e->nstr++] = (char *)lua_tostring(L, -1); /* kept alive by e->strings */
	lua_pushvalue(L, -1);
	lua_pushinteger(L, idx);
	lua_rawset(L, e->strings);
	lua_pop(L, 1);
	return idx;
}

/* Field readers: t[field] of the table at index t; nil gives 0 / "". */
static int64_t get_str(struct enc *e, int t, const char *field)
{
	int type = lua_getfield(e->L, t, field);

	if (type == LUA_TNIL) {
		lua_pop(e->L, 1);
		return 0;
	}
	if (type != LUA_TSTRING && type != LUA_TNUMBER)
		bad(e, field, "string");
	lua_tostring(e->L, -1); /* a number becomes its text */
	return intern_top(e);
}

static int64_t get_int(struct enc *e, int t, const char *field)
{
	int isint;
	lua_Integer v;

	lua_getfield(e->L, t, field);
	v = lua_tointegerx(e->L, -1, &isint);
	if (!isint && !lua_isnil(e->L, -1))
		bad(e, field, "integer");
	lua_pop(e->L, 1);
	return (int64_t)v;
}

static bool get_bool(struct enc *e, int t, const char *field)
{
	bool v;

	lua_getfield(e->L, t, field);
	v = lua_toboolean(e->L, -1);
	lua_pop(e->L, 1);
	return v;
}

/* Push t[field], which must be a table (or nil: none); returns its length. */
static size_t get_list(struct enc *e, int t, const char *field)
{
	int type = lua_getfield(e->L, t, field);

	if (type == LUA_TNIL)
		return 0; /* the nil stays, to be popped as a list would be */
	if (type != LUA_TTABLE)
		bad(e, field, "table");
	return (size_t)lua_rawlen(e->L, -1);
}

/* Element i of the list at the top of the stack, which must be a table. */
static void list_elem(struct enc *e, const char *list, size_t i)
{
	set_where(e, "%s[%zu]", list, i + 1);
	if (lua_rawgeti(e->L, -1, (lua_Integer)i + 1) != LUA_TTABLE)
		luaL_error(e->L, "pprof: %s: table expected, got %s", e->where,
			   luaL_typename(e->L, -1));
}

/* An array of integers t[field] (uint64 ids or int64 values): a list, or
 * a string of 8-byte integers in the host's order (string.pack("=j...")). */
static int64_t *get_ints(struct enc *e, int t, const char *field, size_t *n)
{
	int64_t *v;

	if (lua_getfield(e->L, t, field) == LUA_TSTRING) {
		size_t len;
		const char *packed = lua_tolstring(e->L, -1, &len);

		if (len % sizeof(*v))
			bad(e, field, "string of 8-byte integers");
		*n = len / sizeof(*v);
		v = alloc(e, *n, sizeof(*v));
		memcpy(v, packed, len);
		lua_pop(e->L, 1);
		return v;
	}
	lua_pop(e->L, 1);
	*n = get_list(e, t, field);
	v = alloc(e, *n, sizeof(*v));
	for (size_t i = 0; i < *n; i++) {
		int isint;

		lua_rawgeti(e->L, -1, (lua_Integer)i + 1);
		v[i] = (int64_t)lua_tointegerx(e->L, -1, &isint);
		if (!isint)
			bad(e, field, "list of integers");
		lua_pop(e->L, 1);
	}
	lua_pop(e->L, 1);
	return v;
}

static PprofValueType *value_type(struct enc *e, int t)
{
	PprofValueType *vt = alloc(e, 1, sizeof(*vt));

	*vt = (PprofValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	vt->type = get_str(e, t, "type");
	vt->unit = get_str(e, t, "unit");
	return vt;
}

static PprofLabel **labels(struct enc *e, int t, size_t *n)
{
	PprofLabel **v;
	char where[96];

	memcpy(where, e->where, sizeof(where));
	*n = get_list(e, t, "label");
	v = alloc(e, *n, sizeof(*v));
	for (size_t i = 0; i < *n; i++) {
		PprofLabel *l = v[i] = alloc(e, 1, sizeof(*l));

		set_where(e, "%s.label[%zu]", where, i + 1);
		if (lua_rawgeti(e->L, -1, (lua_Integer)i + 1) != LUA_TTABLE)
			bad(e, "", "table");
		*l = (PprofLabel)PERFTOOLS__PROFILES__LABEL__INIT;
		l->key = get_str(e, -1, "key");
		l->str = get_str(e, -1, "str");
		l->num = get_int(e, -1, "num");
		l->num_unit = get_str(e, -1, "num_unit");
		lua_pop(e->L, 1);
	}
	lua_pop(e->L, 1);
	return v;
}

static void samples(struct enc *e, PprofProfile *p)
{
	p->n_sample = get_list(e, 1, "sample");
	p->sample = alloc(e, p->n_sample, sizeof(*p->sample));
	for (size_t i = 0; i < p->n_sample; i++) {
		PprofSample *s = p->sample[i] = alloc(e, 1, sizeof(*s));

		list_elem(e, "sample", i);
		*s = (PprofSample)PERFTOOLS__PROFILES__SAMPLE__INIT;
		s->location_id = (uint64_t *)get_ints(e, -1, "location_id", &s->n_location_id);
		s->value = get_ints(e, -1, "value", &s->n_value);
		if (s->n_value != p->n_sample_type)
			luaL_error(e->L, "pprof: %s has %d values for %d sample types", e->where,
				   (int)s->n_value, (int)p->n_sample_type);
		s->label = labels(e, -1, &s->n_label);
		lua_pop(e->L, 1);
	}
	lua_pop(e->L, 1);
}

static void mappings(struct enc *e, PprofProfile *p)
{
	p->n_mapping = get_list(e, 1, "mapping");
	p->mapping = alloc(e, p->n_mapping, sizeof(*p->mapping));
	for (size_t i = 0; i < p->n_mapping; i++) {
		PprofMapping *m = p->mapping[i] = alloc(e, 1, sizeof(*m));

		list_elem(e, "mapping", i);
		*m = (PprofMapping)PERFTOOLS__PROFILES__MAPPING__INIT;
		m->id = (uint64_t)get_int(e, -1, "id");
		m->memory_start = (uint64_t)get_int(e, -1, "memory_start");
		m->memory_limit = (uint64_t)get_int(e, -1, "memory_limit");
		m->file_offset = (uint64_t)get_int(e, -1, "file_offset");
		m->filename = get_str(e, -1, "filename");
		m->build_id = get_str(e, -1, "build_id");
		m->has_functions = get_bool(e, -1, "has_functions");
		m->has_filenames = get_bool(e, -1, "has_filenames");
		m->has_line_numbers = get_bool(e, -1, "has_line_numbers");
		m->has_inline_frames = get_bool(e, -1, "has_inline_frames");
		lua_pop(e->L, 1);
	}
	lua_pop(e->L, 1);
}

static void locations(struct enc *e, PprofProfile *p)
{
	p->n_location = get_list(e, 1, "location");
	p->location = alloc(e, p->n_location, sizeof(*p->location));
	for (size_t i = 0; i < p->n_location; i++) {
		PprofLocation *l = p->location[i] = alloc(e, 1, sizeof(*l));

		list_elem(e, "location", i);
		*l = (PprofLocation)PERFTOOLS__PROFILES__LOCATION__INIT;
		l->id = (uint64_t)get_int(e, -1, "id");
		l->mapping_id = (uint64_t)get_int(e, -1, "mapping_id");
		l->address = (uint64_t)get_int(e, -1, "address");
		l->is_folded = get_bool(e, -1, "is_folded");
		l->n_line = get_list(e, -1, "line");
		l->line = alloc(e, l->n_line, sizeof(*l->line));
		for (size_t j = 0; j < l->n_line; j++) {
			PprofLine *ln = l->line[j] = alloc(e, 1, sizeof(*ln));

			if (lua_rawgeti(e->L, -1, (lua_Integer)j + 1) != LUA_TTABLE)
				bad(e, "line", "list of tables");
			*ln = (PprofLine)PERFTOOLS__PROFILES__LINE__INIT;
			ln->function_id = (uint64_t)get_int(e, -1, "function_id");
			ln->line = get_int(e, -1, "line");
			ln->column = get_int(e, -1, "column");
			lua_pop(e->L, 1);
		}
		lua_pop(e->L, 2);
	}
	lua_pop(e->L, 1);
}

static void functions(struct enc *e, PprofProfile *p)
{
	p->n_function = get_list(e, 1, "function");
	p->function = alloc(e, p->n_function, sizeof(*p->function));
	for (size_t i = 0; i < p->n_function; i++) {
		PprofFunction *f = p->function[i] = alloc(e, 1, sizeof(*f));

		list_elem(e, "function", i);
		*f = (PprofFunction)PERFTOOLS__PROFILES__FUNCTION__INIT;
		f->id = (uint64_t)get_int(e, -1, "id");
		f->name = get_str(e, -1, "name");
		f->system_name = get_str(e, -1, "system_name");
		f->filename = get_str(e, -1, "filename");
		f->start_line = get_int(e, -1, "start_line");
		lua_pop(e->L, 1);
	}
	lua_pop(e->L, 1);
}

static void header(struct enc *e, PprofProfile *p)
{
	p->n_sample_type = get_list(e, 1, "sample_type");
	p->sample_type = alloc(e, p->n_sample_type, sizeof(*p->sample_type));
	for (size_t i = 0; i < p->n_sample_type; i++) {
		list_elem(e, "sample_type", i);
		p->sample_type[i] = value_type(e, lua_gettop(e->L));
		lua_pop(e->L, 1);
	}
	lua_pop(e->L, 1);
	e->where[0] = '\0';
	if (lua_getfield(e->L, 1, "period_type") == LUA_TTABLE)
		p->period_type = value_type(e, lua_gettop(e->L));
	else if (!lua_isnil(e->L, -1))
		bad(e, "period_type", "table");
	lua_pop(e->L, 1);
	p->period = get_int(e, 1, "period");
	p->time_nanos = get_int(e, 1, "time_nanos");
	p->duration_nanos = get_int(e, 1, "duration_nanos");
	p->drop_frames = get_str(e, 1, "drop_frames");
	p->keep_frames = get_str(e, 1, "keep_frames");
	p->default_sample_type = get_str(e, 1, "default_sample_type");
	p->n_comment = get_list(e, 1, "comment");
	p->comment = alloc(e, p->n_comment, sizeof(*p->comment));
	for (size_t i = 0; i < p->n_comment; i++) {
		lua_rawgeti(e->L, -1, (lua_Integer)i + 1);
		if (!lua_isstring(e->L, -1))
			bad(e, "comment", "list of strings");
		p->comment[i] = intern_top(e);
	}
	lua_pop(e->L, 1);
}

void ps_lua_pprof__push_gzip(lua_State *L, const uint8_t *in, size_t n, int level)
{
	z_stream z = {0};
	luaL_Buffer b;
	int rc;

	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		luaL_error(L, "gzip: cannot start zlib's deflate");
	luaL_buffinit(L, &b);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	do {
		size_t room = deflateBound(&z, z.avail_in) + 64;
		char *out = luaL_prepbuffsize(&b, room);

		z.next_out = (Bytef *)out;
		z.avail_out = (uInt)room;
		rc = deflate(&z, Z_FINISH);
		luaL_addsize(&b, room - z.avail_out);
	} while (rc == Z_OK || rc == Z_BUF_ERROR);
	deflateEnd(&z);
	if (rc != Z_STREAM_END)
		luaL_error(L, "gzip: zlib's deflate failed (%d)", rc);
	luaL_pushresult(&b);
}

/* pprof.encode(profile [, gzip]) -> bytes: gzip-compressed unless gzip is false. */
static int l_encode(lua_State *L)
{
	PprofProfile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	struct enc e = {.L = L};
	bool gz = lua_isnoneornil(L, 2) || lua_toboolean(L, 2);
	size_t size;
	uint8_t *buf;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 1);
	lua_newtable(L);
	e.anchor = lua_gettop(L);
	lua_newtable(L);
	e.strings = lua_gettop(L);
	lua_pushliteral(L, "");
	intern_top(&e); /* string_table[0] is "" */
	header(&e, &p);
	functions(&e, &p);
	mappings(&e, &p);
	locations(&e, &p);
	samples(&e, &p);
	p.string_table = e.strtab;
	p.n_string_table = e.nstr;
	size = perftools__profiles__profile__get_packed_size(&p);
	buf = alloc(&e, size, 1);
	perftools__profiles__profile__pack(&p, buf);
	if (gz)
		ps_lua_pprof__push_gzip(L, buf, size, Z_DEFAULT_COMPRESSION);
	else
		lua_pushlstring(L, (const char *)buf, size);
	return 1;
}

static int open_pprof(lua_State *L)
{
	static const luaL_Reg fns[] = {
	    {"encode", l_encode},
	    {"decode", ps_lua_pprof__decode},
	    {NULL, NULL},
	};

	luaL_newlib(L, fns);
	return 1;
}

void ps_lua_pprof__open(lua_State *L)
{
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, open_pprof);
	lua_setfield(L, -2, "perfscript.pprof");
	lua_pop(L, 1);
}
