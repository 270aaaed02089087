/*
 * pprof_decode.c: pprof.decode(bytes), a pprof profile (gzip-compressed or
 * not) back to the table lua/pprof.c encodes, strings resolved from the
 * string table. The profile tapset reads the base of a differential
 * profile with it. protobuf-c allocates through Lua userdata anchored on the
 * stack, so a malformed profile is reported as nil and a message and
 * nothing leaks on any path.
 */
#include <string.h>

#include <lauxlib.h>
#include <zlib.h>

#include "lua/pprof.h"

struct dec {
	lua_State *L;
	int anchor;
	const PprofProfile *p;
};

/* What reading one profile may take in C, whatever it inflates to: a
 * small file of many tiny samples (60 MiB of one-frame samples from 92 KB)
 * took 4.7 GB before. */
#define DECODE_MAX (128u << 20)

/* Inflate a gzip (or zlib) stream of at most max bytes into a new Lua
 * string (pushed): a small file may inflate a thousandfold. */
static void push_gunzip(lua_State *L, const char *in, size_t n, size_t max)
{
	z_stream z = {0};
	luaL_Buffer b;
	size_t total = 0;
	int rc;

	if (inflateInit2(&z, 15 + 32) != Z_OK)
		luaL_error(L, "pprof: cannot start zlib's inflate");
	luaL_buffinit(L, &b);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	do {
		char *out =
		    luaL_prepbuffsize(&b, 1 << 16); /* may raise: no zlib memory yet at risk */

		z.next_out = (Bytef *)out;
		z.avail_out = 1 << 16;
		rc = inflate(&z, Z_NO_FLUSH);
		total += (1 << 16) - z.avail_out;
		luaL_addsize(&b, (1 << 16) - z.avail_out);
	} while (rc == Z_OK && total <= max);
	inflateEnd(&z);
	if (total > max)
		luaL_error(L,
			   "pprof: the profile inflates to more than %d MiB (raise the limit with "
			   "pprof.read's max_bytes if it is real)",
			   (int)(max >> 20));
	if (rc != Z_STREAM_END)
		luaL_error(L, "pprof: not a gzip-compressed profile (zlib: %s)",
			   z.msg ? z.msg : "truncated");
	luaL_pushresult(&b);
}

static void push_str(struct dec *d, int64_t i)
{
	if (i < 0 || (size_t)i >= d->p->n_string_table)
		luaL_error(d->L, "pprof: bad profile: string index %d of %d", (int)i,
			   (int)d->p->n_string_table);
	lua_pushstring(d->L, d->p->string_table[i]);
}

static void set_str(struct dec *d, const char *field, int64_t i)
{
	if (i == 0)
		return; /* "" is the default: leave the field out */
	push_str(d, i);
	lua_setfield(d->L, -2, field);
}

static void set_int(lua_State *L, const char *field, int64_t v)
{
	lua_pushinteger(L, (lua_Integer)v);
	lua_setfield(L, -2, field);
}

static void set_bool(lua_State *L, const char *field, bool v)
{
	lua_pushboolean(L, v);
	lua_setfield(L, -2, field);
}

static void push_value_type(struct dec *d, const PprofValueType *vt)
{
	lua_createtable(d->L, 0, 2);
	push_str(d, vt->type);
	lua_setfield(d->L, -2, "type");
	push_str(d, vt->unit);
	lua_setfield(d->L, -2, "unit");
}

static void push_ints(lua_State *L, const int64_t *v, size_t n)
{
	lua_createtable(L, (int)n, 0);
	for (size_t i = 0; i < n; i++) {
		lua_pushinteger(L, (lua_Integer)v[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

static void push_sample(struct dec *d, const PprofSample *s)
{
	lua_State *L = d->L;

	lua_createtable(L, 0, 3);
	push_ints(L, (const int64_t *)s->location_id, s->n_location_id);
	lua_setfield(L, -2, "location_id");
	push_ints(L, s->value, s->n_value);
	lua_setfield(L, -2, "value");
	lua_createtable(L, (int)s->n_label, 0);
	for (size_t i = 0; i < s->n_label; i++) {
		const PprofLabel *l = s->label[i];

		lua_createtable(L, 0, 3);
		set_str(d, "key", l->key);
		if (l->str)
			set_str(d, "str", l->str);
		else
			set_int(L, "num", l->num);
		set_str(d, "num_unit", l->num_unit);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, "label");
}

/* A sample's locations and labels as one string: the same for samples
 * pprof counts as one. */
static void push_key(lua_State *L, const PprofSample *s)
{
	luaL_Buffer b;

	luaL_buffinit(L, &b);
	luaL_addlstring(&b, (const char *)s->location_id, s->n_location_id * sizeof(uint64_t));
	for (size_t k = 0; k < s->n_label; k++) {
		int64_t l[4] = {s->label[k]->key, s->label[k]->str, s->label[k]->num,
				s->label[k]->num_unit};

		luaL_addlstring(&b, (const char *)l, sizeof(l));
	}
	luaL_pushresult(&b);
}

/* The sample at index at of the list on top gets s's values added. */
static void add_values(lua_State *L, lua_Integer at, const PprofSample *s)
{
	lua_rawgeti(L, -1, at);
	lua_getfield(L, -1, "value");
	for (size_t v = 0; v < s->n_value; v++) {
		lua_rawgeti(L, -1, (lua_Integer)v + 1);
		lua_pushinteger(L, lua_tointeger(L, -1) + (lua_Integer)s->value[v]);
		lua_rawseti(L, -3, (lua_Integer)v + 1);
		lua_pop(L, 1);
	}
	lua_pop(L, 2);
}

/* The samples, those with the same locations and labels as one with their
 * values added (as pprof's own reader merges them): the tables take what
 * the profile's distinct samples need, not what their count would. */
static void push_samples(struct dec *d)
{
	lua_State *L = d->L;
	const PprofProfile *p = d->p;
	lua_Integer n = 0;

	lua_newtable(L); /* key -> index in the list */
	lua_newtable(L); /* the list */
	for (size_t i = 0; i < p->n_sample; i++) {
		push_key(L, p->sample[i]);
		lua_pushvalue(L, -1);
		if (lua_rawget(L, -4) == LUA_TNUMBER) {
			lua_Integer at = lua_tointeger(L, -1);

			lua_pop(L, 2);
			add_values(L, at, p->sample[i]);
			continue;
		}
		lua_pop(L, 1);
		lua_pushinteger(L, ++n);
		lua_rawset(L, -4); /* keys[key] = n */
		push_sample(d, p->sample[i]);
		lua_rawseti(L, -2, n);
	}
	lua_setfield(L, -3, "sample");
	lua_pop(L, 1); /* the keys */
}

static void push_mapping(struct dec *d, const PprofMapping *m)
{
	lua_State *L = d->L;

	lua_createtable(L, 0, 10);
	set_int(L, "id", (int64_t)m->id);
	set_int(L, "memory_start", (int64_t)m->memory_start);
	set_int(L, "memory_limit", (int64_t)m->memory_limit);
	set_int(L, "file_offset", (int64_t)m->file_offset);
	set_str(d, "filename", m->filename);
	set_str(d, "build_id", m->build_id);
	set_bool(L, "has_functions", m->has_functions);
	set_bool(L, "has_filenames", m->has_filenames);
	set_bool(L, "has_line_numbers", m->has_line_numbers);
	set_bool(L, "has_inline_frames", m->has_inline_frames);
}

static void push_location(struct dec *d, const PprofLocation *l)
{
	lua_State *L = d->L;

	lua_createtable(L, 0, 5);
	set_int(L, "id", (int64_t)l->id);
	set_int(L, "mapping_id", (int64_t)l->mapping_id);
	set_int(L, "address", (int64_t)l->address);
	set_bool(L, "is_folded", l->is_folded);
	lua_createtable(L, (int)l->n_line, 0);
	for (size_t i = 0; i < l->n_line; i++) {
		lua_createtable(L, 0, 3);
		set_int(L, "function_id", (int64_t)l->line[i]->function_id);
		set_int(L, "line", l->line[i]->line);
		set_int(L, "column", l->line[i]->column);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, "line");
}

static void push_function(struct dec *d, const PprofFunction *f)
{
	lua_createtable(d->L, 0, 5);
	set_int(d->L, "id", (int64_t)f->id);
	set_str(d, "name", f->name);
	set_str(d, "system_name", f->system_name);
	set_str(d, "filename", f->filename);
	set_int(d->L, "start_line", f->start_line);
}

#define PUSH_LIST(d, field, n, arr, push)                                                          \
	do {                                                                                       \
		lua_createtable((d)->L, (int)(n), 0);                                              \
		for (size_t i_ = 0; i_ < (n); i_++) {                                              \
			push((d), (arr)[i_]);                                                      \
			lua_rawseti((d)->L, -2, (lua_Integer)i_ + 1);                              \
		}                                                                                  \
		lua_setfield((d)->L, -2, (field));                                                 \
	} while (0)

/* The table of an unpacked profile (pushed). */
static void push_profile(struct dec *d)
{
	const PprofProfile *p = d->p;
	lua_State *L = d->L;

	if (p->n_string_table == 0 || p->string_table[0][0] != '\0')
		luaL_error(L, "pprof: bad profile: string_table[0] is not \"\"");
	lua_createtable(L, 0, 16);
	PUSH_LIST(d, "sample_type", p->n_sample_type, p->sample_type, push_value_type);
	push_samples(d);
	PUSH_LIST(d, "mapping", p->n_mapping, p->mapping, push_mapping);
	PUSH_LIST(d, "location", p->n_location, p->location, push_location);
	PUSH_LIST(d, "function", p->n_function, p->function, push_function);
	if (p->period_type) {
		push_value_type(d, p->period_type);
		lua_setfield(L, -2, "period_type");
	}
	set_int(L, "period", p->period);
	set_int(L, "time_nanos", p->time_nanos);
	set_int(L, "duration_nanos", p->duration_nanos);
	set_str(d, "drop_frames", p->drop_frames);
	set_str(d, "keep_frames", p->keep_frames);
	set_str(d, "default_sample_type", p->default_sample_type);
	lua_createtable(L, (int)p->n_comment, 0);
	for (size_t i = 0; i < p->n_comment; i++) {
		push_str(d, p->comment[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, "comment");
}

/* Runs protected: the bytes at 1, the limit at 2; returns the table. */
static int decode(lua_State *L)
{
	size_t n, max = (size_t)lua_tointeger(L, 2);
	const char *bytes = luaL_checklstring(L, 1, &n);
	struct dec d = {.L = L};
	struct ps_lua_pb_arena mem = {.L = L, .max = DECODE_MAX};
	ProtobufCAllocator a = ps_lua_pprof__arena(&mem);

	if (n >= 2 && (uint8_t)bytes[0] == 0x1f && (uint8_t)bytes[1] == 0x8b) {
		push_gunzip(L, bytes, n, max);
		bytes = lua_tolstring(L, -1, &n);
	}
	lua_newtable(L);
	d.anchor = mem.anchor = lua_gettop(L);
	d.p = perftools__profiles__profile__unpack(&a, n, (const uint8_t *)bytes);
	if (!d.p && mem.over)
		return luaL_error(L,
				  "pprof: the profile needs more than %d MiB to read (%d MiB of "
				  "protobuf): it holds too many samples",
				  (int)(DECODE_MAX >> 20), (int)(n >> 20));
	if (!d.p)
		return luaL_error(L, "pprof: not a pprof profile (the protobuf does not parse)");
	push_profile(&d);
	return 1;
}

int ps_lua_pprof__decode(lua_State *L)
{
	lua_Integer max = luaL_optinteger(L, 2, PS_PPROF_MAX_BYTES);

	luaL_checkstring(L, 1);
	luaL_argcheck(L, max > 0, 2, "a positive size in bytes expected");
	lua_settop(L, 1);
	lua_pushinteger(L, max);
	lua_pushcfunction(L, decode);
	lua_insert(L, 1);
	if (lua_pcall(L, 2, 1, 0) == LUA_OK)
		return 1;
	lua_pushnil(L);
	lua_insert(L, -2); /* nil, message */
	return 2;
}
