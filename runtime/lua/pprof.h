/*
 * pprof.h: what lua/pprof.c (the encoder and the module) and
 * lua/pprof_decode.c share: short names for the message types protoc-c
 * generates from lua/profile.proto, and the userdata-backed allocator.
 */
#ifndef PS_LUA_PPROF_H
#define PS_LUA_PPROF_H

#include <lua.h>

#include <stdbool.h>

#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile PprofProfile;
typedef Perftools__Profiles__ValueType PprofValueType;
typedef Perftools__Profiles__Sample PprofSample;
typedef Perftools__Profiles__Label PprofLabel;
typedef Perftools__Profiles__Mapping PprofMapping;
typedef Perftools__Profiles__Location PprofLocation;
typedef Perftools__Profiles__Line PprofLine;
typedef Perftools__Profiles__Function PprofFunction;

/* size zeroed bytes owned by a userdata appended to the table at anchor (an
 * absolute stack index): freed by the GC with the table, even after an error. */
void *ps_lua_pprof__alloc(lua_State *L, int anchor, size_t size);

/* What protobuf-c allocates while it unpacks: userdata anchored at anchor
 * (nothing to free by hand after an error), at most max bytes in all;
 * over once an allocation was refused (the unpack then fails). */
struct ps_lua_pb_arena {
	lua_State *L;
	int anchor;
	size_t bytes, max;
	bool over;
};
/* An allocator for protobuf-c's unpack that allocates from a. */
ProtobufCAllocator ps_lua_pprof__arena(struct ps_lua_pb_arena *a);

/* gzip the n bytes at in into a new Lua string (pushed), at zlib's level
 * (Z_DEFAULT_COMPRESSION for pprof's files, Z_BEST_SPEED for OTLP's
 * request bodies: sent once, over the network). */
void ps_lua_pprof__push_gzip(lua_State *L, const uint8_t *in, size_t n, int level);

/* The most a profile may inflate to, by default: a pprof file of a whole
 * host for minutes is a few MiB. */
#define PS_PPROF_MAX_BYTES (64 << 20)
/* pprof.decode(bytes [, max_bytes]) -> profile table, or nil and a message
 * (lua/pprof_decode.c). */
int ps_lua_pprof__decode(lua_State *L);

#endif
