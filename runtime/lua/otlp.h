/*
 * otlp.h: what lua/otlp.c (the module, the generic encoder and decoder) and
 * lua/otlp_pprof.c (pprof tables to a request) share.
 */
#ifndef PS_LUA_OTLP_H
#define PS_LUA_OTLP_H

#include <lua.h>

#include <stdint.h>

#include "otlp.pb-c.h"

typedef Opentelemetry__Proto__ExportProfilesServiceRequest OtlpRequest;
typedef Opentelemetry__Proto__ProfilesDictionary OtlpDictionary;
typedef Opentelemetry__Proto__Profile OtlpProfile;
typedef Opentelemetry__Proto__ValueType OtlpValueType;
typedef Opentelemetry__Proto__Sample OtlpSample;
typedef Opentelemetry__Proto__Stack OtlpStack;
typedef Opentelemetry__Proto__Mapping OtlpMapping;
typedef Opentelemetry__Proto__Location OtlpLocation;
typedef Opentelemetry__Proto__Line OtlpLine;
typedef Opentelemetry__Proto__Function OtlpFunction;
typedef Opentelemetry__Proto__KeyValueAndUnit OtlpAttribute;
typedef Opentelemetry__Proto__AnyValue OtlpAnyValue;
typedef Opentelemetry__Proto__ResourceProfiles OtlpResourceProfiles;
typedef Opentelemetry__Proto__ScopeProfiles OtlpScopeProfiles;

struct ps_lua_otlp_vec {
	void **v;
	size_t n, cap;
};

/* Stack slots of a conversion: the anchor, then string -> index, attribute
 * key -> index, stack key -> index, function key -> index. */
struct ps_lua_otlp_conv {
	lua_State *L;
	int anchor, strings, attrs, stacks, funcs;
	struct ps_lua_otlp_vec str, map, loc, fn, stack, attr;
	const char *list; /* the element being read, for messages: list[at] */
	size_t at;
	int32_t label_keys[4]; /* the index of each label name of names[], once known */
};

void *ps_lua_otlp__alloc(struct ps_lua_otlp_conv *c, size_t size);
/* Append p to v, which grows by doubling (the old array stays in its block). */
void ps_lua_otlp__push(struct ps_lua_otlp_conv *c, struct ps_lua_otlp_vec *v, void *p);
/* Raise: "otlp.from_pprof: list[at].field: want expected". */
int ps_lua_otlp__bad(struct ps_lua_otlp_conv *c, const char *field, const char *want);
/* The index the table at slot gives the key on top of the stack, which
 * it pops, or -1 with the key left for ps_lua_otlp__keep, which records
 * it as index i (and pops it). */
int32_t ps_lua_otlp__find(struct ps_lua_otlp_conv *c, int slot);
void ps_lua_otlp__keep(struct ps_lua_otlp_conv *c, int slot, int32_t i);
/* The index of a string in the string table (added if new). */
int32_t ps_lua_otlp__intern(struct ps_lua_otlp_conv *c, const char *s, size_t n);
int32_t ps_lua_otlp__intern_z(struct ps_lua_otlp_conv *c, const char *s);
/* The index of the attribute of key string k = the value at stack index v. */
int32_t ps_lua_otlp__attribute(struct ps_lua_otlp_conv *c, int32_t k, int v);
/* Fields of the table at t: a string's index, an integer, a list pushed. */
int32_t ps_lua_otlp__str_field(struct ps_lua_otlp_conv *c, int t, const char *field);
int64_t ps_lua_otlp__int_field(struct ps_lua_otlp_conv *c, int t, const char *field);
size_t ps_lua_otlp__list_field(struct ps_lua_otlp_conv *c, int t, const char *field);
/* An int32 array of n entries; element i of the list on top, pushed. */
int32_t *ps_lua_otlp__ints(struct ps_lua_otlp_conv *c, size_t n);
int ps_lua_otlp__element(struct ps_lua_otlp_conv *c, const char *list, size_t i);
/* The pprof table's (at t) Mappings, Functions and Locations into the
 * dictionary: each Location's index by id into the table at locs. */
void ps_lua_otlp__import(struct ps_lua_otlp_conv *c, int t, int locs);

/* Message m (of descriptor d) from the table at stack index t, field by
 * field by the schema's names; memory from the userdata anchored at
 * anchor. Raises naming the field's path on a bad key or value. */
void ps_lua_otlp__fill(lua_State *L, int anchor, int t, const ProtobufCMessageDescriptor *d,
		       ProtobufCMessage *m);

/* otlp.from_pprof(profiles, head) -> bytes (lua/otlp_pprof.c). */
int ps_lua_otlp__from_pprof(lua_State *L);

#endif
