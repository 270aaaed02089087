/*
 * otlp.c: package.preload["perfscript.otlp"], OTLP profiles requests from
 * Lua tables. A request is a table shaped like lua/otlp.proto's
 * ExportProfilesServiceRequest, field for field and by the schema's own
 * names: { resource_profiles = {...}, dictionary = { string_table = {...},
 * ... } }. The tapset (tapsets/otlp.lua) turns pprof tables into that
 * shape (the dictionary's indices); this file fills protobuf-c's messages
 * by walking the descriptors protoc-c generated from the schema, so a
 * field added to the schema needs no code here, and packs them.
 *
 * A key the message does not have, a value of the wrong type or out of its
 * field's range raises an error naming the field's path
 * (e.g. "dictionary.stack_table[3].location_indices[2]"). Memory comes
 * from lua/pprof.c's userdata blocks: an error leaks nothing.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

#include "base/utf8.h"
#include "lua/internal.h"
#include "lua/otlp.h"
#include "lua/pprof.h"

struct enc {
	lua_State *L;
	int anchor;
	char path[160]; /* where the value being read sits, for messages */
};

static void fill(struct enc *e, int t, const ProtobufCMessageDescriptor *d, ProtobufCMessage *m);

static int fail(struct enc *e, const char *fmt, ...)
{
	char why[96];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return luaL_error(e->L, "otlp.encode: %s: %s", e->path[0] ? e->path : "request", why);
}

static size_t scalar_size(ProtobufCType type)
{
	switch (type) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	default: /* 32-bit integers, enums, float, bool (protobuf_c_boolean) */
		return 4;
	}
}

static lua_Integer integer(struct enc *e, int i, lua_Integer lo, lua_Integer hi)
{
	int exact;
	lua_Integer v = lua_tointegerx(e->L, i, &exact);

	if (!exact)
		fail(e, "wants an integer, not %s", luaL_typename(e->L, i));
	if (v < lo || v > hi)
		fail(e, "%lld is out of its field's range", (long long)v);
	return v;
}

/* The Lua value at stack index i into the field's storage at p. */
static void value(struct enc *e, int i, const ProtobufCFieldDescriptor *f, void *p)
{
	lua_State *L = e->L;
	size_t n;
	const char *s;

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_ENUM:
		*(int32_t *)p = (int32_t)integer(e, i, INT32_MIN, INT32_MAX);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		*(uint32_t *)p = (uint32_t)integer(e, i, 0, UINT32_MAX);
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64: /* addresses above 2^63 come as negative integers */
	case PROTOBUF_C_TYPE_FIXED64:
		*(int64_t *)p = (int64_t)integer(e, i, LUA_MININTEGER, LUA_MAXINTEGER);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		if (!lua_isboolean(L, i))
			fail(e, "wants a boolean, not %s", luaL_typename(L, i));
		*(protobuf_c_boolean *)p = lua_toboolean(L, i);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
	case PROTOBUF_C_TYPE_FLOAT:
		if (lua_type(L, i) != LUA_TNUMBER)
			fail(e, "wants a number, not %s", luaL_typename(L, i));
		if (f->type == PROTOBUF_C_TYPE_DOUBLE)
			*(double *)p = lua_tonumber(L, i);
		else
			*(float *)p = (float)lua_tonumber(L, i);
		break;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
		if (lua_type(L, i) != LUA_TSTRING)
			fail(e, "wants a string, not %s", luaL_typename(L, i));
		s = lua_tolstring(L, i, &n); /* kept alive by the request table */
		if (f->type == PROTOBUF_C_TYPE_STRING) {
			if (strlen(s) != n)
				fail(e, "a string with a zero byte in it: give it as bytes");
			if (!ps_utf8__valid(s, n)) { /* repaired, the copy kept by the anchor */
				lua_pushvalue(L, i);
				ps_lua__valid_utf8(L, -1);
				s = lua_tostring(L, -1);
				lua_rawseti(L, e->anchor,
					    (lua_Integer)lua_rawlen(L, e->anchor) + 1);
			}
			*(const char **)p = s;
		} else {
			*(ProtobufCBinaryData *)p = (ProtobufCBinaryData){n, (uint8_t *)s};
		}
		break;
	case PROTOBUF_C_TYPE_MESSAGE: {
		const ProtobufCMessageDescriptor *d = f->descriptor;
		ProtobufCMessage *m;

		if (!lua_istable(L, i))
			fail(e, "wants a table, not %s", luaL_typename(L, i));
		m = ps_lua_pprof__alloc(L, e->anchor, d->sizeof_message);
		d->message_init(m);
		fill(e, lua_absindex(L, i), d, m);
		*(ProtobufCMessage **)p = m;
		break;
	}
	}
}

/* A repeated field from the list at stack index i. */
static void repeated(struct enc *e, int i, const ProtobufCFieldDescriptor *f, ProtobufCMessage *m)
{
	lua_State *L = e->L;
	size_t n, size = scalar_size(f->type), len = strlen(e->path);
	char *items;

	if (!lua_istable(L, i))
		fail(e, "wants a list, not %s", luaL_typename(L, i));
	n = lua_rawlen(L, i);
	items = n ? ps_lua_pprof__alloc(L, e->anchor, n * size) : NULL;
	for (size_t k = 0; k < n; k++) {
		snprintf(e->path + len, sizeof(e->path) - len, "[%zu]", k + 1);
		lua_rawgeti(L, i, (lua_Integer)k + 1);
		value(e, -1, f, items + k * size);
		lua_pop(L, 1);
	}
	e->path[len] = '\0';
	*(size_t *)((char *)m + f->quantifier_offset) = n;
	*(void **)((char *)m + f->offset) = items;
}

/* Message m (of descriptor d) from the table at stack index t: every key
 * must be one of its fields. */
static void fill(struct enc *e, int t, const ProtobufCMessageDescriptor *d, ProtobufCMessage *m)
{
	lua_State *L = e->L;
	size_t len = strlen(e->path);

	lua_pushnil(L);
	while (lua_next(L, t)) {
		const ProtobufCFieldDescriptor *f = NULL;
		const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;

		if (key)
			f = protobuf_c_message_descriptor_get_field_by_name(d, key);
		if (!f)
			fail(e, "%s has no field %s", d->short_name,
			     key ? key : luaL_typename(L, -2));
		snprintf(e->path + len, sizeof(e->path) - len, "%s%s", len ? "." : "", key);
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			repeated(e, lua_gettop(L), f, m);
		} else {
			value(e, -1, f, (char *)m + f->offset);
			if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) /* which member is set */
				*(uint32_t *)((char *)m + f->quantifier_offset) = f->id;
		}
		e->path[len] = '\0';
		lua_pop(L, 1);
	}
}

void ps_lua_otlp__fill(lua_State *L, int anchor, int t, const ProtobufCMessageDescriptor *d,
		       ProtobufCMessage *m)
{
	struct enc e = {.L = L, .anchor = anchor};

	fill(&e, lua_absindex(L, t), d, m);
}

/* otlp.encode(request) -> the ExportProfilesServiceRequest's bytes. */
static int l_encode(lua_State *L)
{
	const ProtobufCMessageDescriptor *d =
	    &opentelemetry__proto__export_profiles_service_request__descriptor;
	struct enc e = {.L = L};
	ProtobufCMessage *m;
	size_t size;
	uint8_t *buf;

	luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 1);
	lua_newtable(L);
	e.anchor = lua_gettop(L);
	m = ps_lua_pprof__alloc(L, e.anchor, d->sizeof_message);
	d->message_init(m);
	fill(&e, 1, d, m);
	size = protobuf_c_message_get_packed_size(m);
	buf = ps_lua_pprof__alloc(L, e.anchor, size);
	protobuf_c_message_pack(m, buf);
	lua_pushlstring(L, (const char *)buf, size);
	return 1;
}

static void push_message(lua_State *L, const ProtobufCMessage *m);

/* The field's value at p, pushed. */
static void push_value(lua_State *L, const ProtobufCFieldDescriptor *f, const void *p)
{
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_ENUM:
		lua_pushinteger(L, *(const int32_t *)p);
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		lua_pushinteger(L, *(const uint32_t *)p);
		break;
	case PROTOBUF_C_TYPE_BOOL:
		lua_pushboolean(L, *(const protobuf_c_boolean *)p);
		break;
	case PROTOBUF_C_TYPE_DOUBLE:
		lua_pushnumber(L, *(const double *)p);
		break;
	case PROTOBUF_C_TYPE_FLOAT:
		lua_pushnumber(L, *(const float *)p);
		break;
	case PROTOBUF_C_TYPE_STRING:
		lua_pushstring(L, *(const char *const *)p);
		break;
	case PROTOBUF_C_TYPE_BYTES:
		lua_pushlstring(L, (const char *)((const ProtobufCBinaryData *)p)->data,
				((const ProtobufCBinaryData *)p)->len);
		break;
	case PROTOBUF_C_TYPE_MESSAGE:
		push_message(L, *(const ProtobufCMessage *const *)p);
		break;
	default: /* 64-bit integers: above 2^63 as negative integers */
		lua_pushinteger(L, (lua_Integer) * (const int64_t *)p);
		break;
	}
}

/* Message m as a table: every field, repeated ones as lists, a oneof's
 * member only when it is the one set, an absent message left out. */
static void push_message(lua_State *L, const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;

	luaL_checkstack(L, 4, "otlp.decode: message nested too deep");
	lua_createtable(L, 0, (int)d->n_fields);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *at = (const char *)m + f->offset;

		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)((const char *)m + f->quantifier_offset);
			const char *items = *(const char *const *)at;

			lua_createtable(L, (int)n, 0);
			for (size_t k = 0; k < n; k++) {
				push_value(L, f, items + k * scalar_size(f->type));
				lua_rawseti(L, -2, (lua_Integer)k + 1);
			}
		} else if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
			   *(const uint32_t *)((const char *)m + f->quantifier_offset) != f->id) {
			continue;
		} else if (f->type == PROTOBUF_C_TYPE_MESSAGE && !*(const void *const *)at) {
			continue;
		} else {
			push_value(L, f, at);
		}
		lua_setfield(L, -2, f->name);
	}
}

/* What unpacking may take: each message of a few bytes becomes a struct
 * of up to a hundred, so a request's C image is bounded by its size. */
#define DECODE_MAX (128u << 20)

/* otlp.decode(bytes) -> the request as a table shaped as encode takes it,
 * or nil and why. What protobuf-c allocates is Lua userdata: an error on
 * the way leaks nothing. */
static int l_decode(lua_State *L)
{
	size_t n;
	const char *bytes = luaL_checklstring(L, 1, &n);
	struct ps_lua_pb_arena mem = {.L = L, .max = DECODE_MAX};
	ProtobufCAllocator a = ps_lua_pprof__arena(&mem);
	ProtobufCMessage *m;

	lua_settop(L, 1);
	lua_newtable(L);
	mem.anchor = lua_gettop(L);
	m = protobuf_c_message_unpack(
	    &opentelemetry__proto__export_profiles_service_request__descriptor, &a, n,
	    (const uint8_t *)bytes);
	if (!m) {
		luaL_pushfail(L);
		lua_pushstring(
		    L, mem.over ? "an OTLP profiles request too large to read"
				: "not an OTLP profiles request (the protobuf does not parse)");
		return 2;
	}
	push_message(L, m);
	return 1;
}

static int open_otlp(lua_State *L)
{
	static const luaL_Reg fns[] = {
	    {"encode", l_encode},
	    {"decode", l_decode},
	    {"from_pprof", ps_lua_otlp__from_pprof},
	    {NULL, NULL},
	};

	luaL_newlib(L, fns);
	return 1;
}

void ps_lua_otlp__open(lua_State *L)
{
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, open_otlp);
	lua_setfield(L, -2, "perfscript.otlp");
	lua_pop(L, 1);
}
