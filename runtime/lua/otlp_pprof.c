/*
 * otlp_pprof.c: otlp.from_pprof(profiles, head), the pprof tables the pprof
 * tapset builds as one OTLP profiles request, in C: a window of a busy
 * host is tens of thousands of samples, and this is the per-sample work
 * (a stack looked up in the stack table, labels in the attribute table)
 * that a Lua table per sample made 9 times the cost of pprof's encoding.
 *
 * One OTLP Profile per pprof table, of its default sample type; one
 * dictionary for all (every table starts with its zero value): strings,
 * mappings (the build id as process.executable.build_id.gnu), functions
 * and stacks deduplicated, one location per pprof Location. Labels become
 * sample attributes under OpenTelemetry's names (pid -> process.pid, tid
 * -> thread.id, comm -> thread.name, container -> container.id; others by
 * their own), comments profile attributes pprof.profile.comment. head is
 * { resource = {...}, scope = {...} } in the request's own shape.
 */
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <lauxlib.h>
#include <zlib.h>

#include "lua/internal.h"
#include "lua/otlp.h"
#include "lua/pprof.h"

/* The stack index of the sample at st: its location ids (a list, or a
 * packed string of them) by the table at locs, the stack deduplicated. */
static int32_t stack(struct ps_lua_otlp_conv *c, int st, int locs)
{
	lua_State *L = c->L;
	size_t n, packed_len = 0;
	const char *packed = NULL;
	int32_t *idx, i;
	OtlpStack *s;

	if (lua_getfield(L, st, "location_id") == LUA_TSTRING) {
		packed = lua_tolstring(L, -1, &packed_len);
		if (packed_len % sizeof(lua_Integer))
			ps_lua_otlp__bad(c, "location_id", "string of 8-byte integers");
		n = packed_len / sizeof(lua_Integer);
	} else if (lua_istable(L, -1)) {
		n = lua_rawlen(L, -1);
	} else if (lua_isnil(L, -1)) {
		n = 0;
	} else {
		return ps_lua_otlp__bad(c, "location_id", "list or packed string");
	}
	idx = ps_lua_otlp__ints(c, n);
	for (size_t k = 0; k < n; k++) {
		lua_Integer id;

		if (packed) {
			memcpy(&id, packed + k * sizeof(id), sizeof(id));
		} else {
			lua_rawgeti(L, -1, (lua_Integer)k + 1);
			if (!lua_isinteger(L, -1))
				ps_lua_otlp__bad(c, "location_id", "list of integers");
			id = lua_tointeger(L, -1);
			lua_pop(L, 1);
		}
		if (lua_rawgeti(L, locs, id) != LUA_TNUMBER) /* not index 0: none */
			ps_lua_otlp__bad(c, "location_id", "ids of the profile's Locations");
		idx[k] = (int32_t)lua_tointeger(L, -1);
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	lua_pushlstring(L, (const char *)idx, n * sizeof(*idx));
	if ((i = ps_lua_otlp__find(c, c->stacks)) >= 0)
		return i;
	s = ps_lua_otlp__alloc(c, sizeof(*s));
	opentelemetry__proto__stack__init(s);
	s->location_indices = idx;
	s->n_location_indices = n;
	i = (int32_t)c->stack.n;
	ps_lua_otlp__push(c, &c->stack, s);
	ps_lua_otlp__keep(c, c->stacks, i);
	return i;
}

/* The index of the attribute key of pprof label key (at the top of the
 * stack): OpenTelemetry's name for the ones it names. */
static int32_t label_key(struct ps_lua_otlp_conv *c)
{
	static const char *const names[][2] = {{"pid", "process.pid"},
					       {"tid", "thread.id"},
					       {"comm", "thread.name"},
					       {"container", "container.id"}};
	size_t n;
	const char *key = lua_tolstring(c->L, -1, &n);

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(key, names[i][0]))
			continue;
		if (!c->label_keys[i])
			c->label_keys[i] = ps_lua_otlp__intern_z(c, names[i][1]);
		return c->label_keys[i];
	}
	return ps_lua_otlp__intern(c, key, n);
}

/* The sample's labels as attribute indices. */
static void labels(struct ps_lua_otlp_conv *c, int st, OtlpSample *s)
{
	lua_State *L = c->L;
	size_t n = ps_lua_otlp__list_field(c, st, "label");
	const char *list = c->list;
	size_t at = c->at;

	s->attribute_indices = ps_lua_otlp__ints(c, n);
	for (size_t k = 1; k <= n; k++) {
		int lt = ps_lua_otlp__element(c, "label", k);
		int32_t key;

		if (lua_getfield(L, lt, "key") != LUA_TSTRING)
			ps_lua_otlp__bad(c, "key", "string");
		key = label_key(c);
		if (lua_getfield(L, lt, "str") == LUA_TNIL) {
			lua_pop(L, 1);
			lua_getfield(L, lt, "num");
		}
		if (!lua_isnil(L, -1))
			s->attribute_indices[s->n_attribute_indices++] =
			    ps_lua_otlp__attribute(c, key, lua_gettop(L));
		lua_pop(L, 3);
	}
	lua_pop(L, 1);
	c->list = list, c->at = at;
}

/* The column of the pprof table's default sample type (1-based; the last
 * type when none is named), its ValueType table pushed. */
static size_t default_type(struct ps_lua_otlp_conv *c, int t)
{
	lua_State *L = c->L;
	size_t n = ps_lua_otlp__list_field(c, t, "sample_type"), col = n;
	const char *want;

	lua_getfield(L, t, "default_sample_type");
	want = lua_tostring(L, -1);
	for (size_t i = 1; want && i <= n; i++) {
		lua_rawgeti(L, -2, (lua_Integer)i);
		lua_getfield(L, -1, "type");
		if (lua_tostring(L, -1) && !strcmp(lua_tostring(L, -1), want))
			col = i;
		lua_pop(L, 2);
	}
	lua_pop(L, 1);
	if (!col)
		ps_lua_otlp__bad(c, "sample_type", "one type at least");
	lua_rawgeti(L, -1, (lua_Integer)col);
	lua_remove(L, -2);
	return col;
}

static OtlpValueType *value_type(struct ps_lua_otlp_conv *c, int vt)
{
	OtlpValueType *v = ps_lua_otlp__alloc(c, sizeof(*v));

	opentelemetry__proto__value_type__init(v);
	v->type_strindex = ps_lua_otlp__str_field(c, vt, "type");
	v->unit_strindex = ps_lua_otlp__str_field(c, vt, "unit");
	return v;
}

/* A profile's 16-byte id: its start and 8 random bytes. */
static void profile_id(struct ps_lua_otlp_conv *c, OtlpProfile *p)
{
	uint8_t *id = ps_lua_otlp__alloc(c, 16);
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint64_t)clock() ^ ((uint64_t)(uintptr_t)id << 16); /* no entropy yet */
	memcpy(id, &p->time_unix_nano, 8);
	memcpy(id + 8, &r, 8);
	p->profile_id = (ProtobufCBinaryData){16, id};
}

static void samples(struct ps_lua_otlp_conv *c, int t, int locs, size_t col, OtlpProfile *p)
{
	lua_State *L = c->L;
	size_t n = ps_lua_otlp__list_field(c, t, "sample");

	p->samples = n ? ps_lua_otlp__alloc(c, n * sizeof(*p->samples)) : NULL;
	for (size_t i = 1; i <= n; i++) {
		int st = ps_lua_otlp__element(c, "sample", i);
		OtlpSample *s = ps_lua_otlp__alloc(c, sizeof(*s));
		int isint;

		opentelemetry__proto__sample__init(s);
		s->stack_index = stack(c, st, locs);
		labels(c, st, s);
		lua_getfield(L, st, "value");
		if (!lua_istable(L, -1) || lua_rawgeti(L, -1, (lua_Integer)col) == LUA_TNIL)
			ps_lua_otlp__bad(c, "value", "a value of the default sample type");
		s->values = ps_lua_otlp__alloc(c, sizeof(*s->values));
		s->values[0] = (int64_t)lua_tointegerx(L, -1, &isint);
		if (!isint)
			ps_lua_otlp__bad(c, "value", "list of integers");
		s->n_values = 1;
		p->samples[p->n_samples++] = s;
		lua_pop(L, 3);
	}
	lua_pop(L, 1);
}

/* One OTLP Profile of the pprof table at t. */
static OtlpProfile *profile(struct ps_lua_otlp_conv *c, int t)
{
	lua_State *L = c->L;
	OtlpProfile *p = ps_lua_otlp__alloc(c, sizeof(*p));
	int locs;
	size_t col, n;

	opentelemetry__proto__profile__init(p);
	c->list = NULL;
	col = default_type(c, t);
	p->sample_type = value_type(c, lua_gettop(L));
	if (lua_getfield(L, t, "period_type") == LUA_TTABLE)
		p->period_type = value_type(c, lua_gettop(L));
	else
		p->period_type = p->sample_type;
	lua_pop(L, 2);
	p->period = ps_lua_otlp__int_field(c, t, "period");
	p->time_unix_nano = (uint64_t)ps_lua_otlp__int_field(c, t, "time_nanos");
	p->duration_nano = (uint64_t)ps_lua_otlp__int_field(c, t, "duration_nanos");
	profile_id(c, p);
	n = ps_lua_otlp__list_field(c, t, "comment");
	p->attribute_indices = ps_lua_otlp__ints(c, n);
	for (size_t i = 1; i <= n; i++) {
		lua_rawgeti(L, -1, (lua_Integer)i);
		p->attribute_indices[p->n_attribute_indices++] = ps_lua_otlp__attribute(
		    c, ps_lua_otlp__intern_z(c, "pprof.profile.comment"), lua_gettop(L));
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	lua_newtable(L);
	locs = lua_gettop(L);
	ps_lua_otlp__import(c, t, locs);
	samples(c, t, locs, col, p);
	lua_pop(L, 1);
	return p;
}

/* Every table of the dictionary starts with its zero value. */
static void zeros(struct ps_lua_otlp_conv *c)
{
	OtlpMapping *m = ps_lua_otlp__alloc(c, sizeof(*m));
	OtlpLocation *l = ps_lua_otlp__alloc(c, sizeof(*l));
	OtlpFunction *f = ps_lua_otlp__alloc(c, sizeof(*f));
	OtlpStack *s = ps_lua_otlp__alloc(c, sizeof(*s));
	OtlpAttribute *a = ps_lua_otlp__alloc(c, sizeof(*a));

	opentelemetry__proto__mapping__init(m);
	opentelemetry__proto__location__init(l);
	opentelemetry__proto__function__init(f);
	opentelemetry__proto__stack__init(s);
	opentelemetry__proto__key_value_and_unit__init(a);
	ps_lua_otlp__push(c, &c->map, m);
	ps_lua_otlp__push(c, &c->loc, l);
	ps_lua_otlp__push(c, &c->fn, f);
	ps_lua_otlp__push(c, &c->stack, s);
	ps_lua_otlp__push(c, &c->attr, a);
	ps_lua_otlp__intern(c, "", 0);
	lua_pushlstring(c->L, "", 0); /* the empty stack is stack 0 */
	ps_lua_otlp__keep(c, c->stacks, 0);
}

/* otlp.from_pprof(profiles, head[, gzip]) -> bytes: profiles a list of
 * pprof tables, head { resource = Resource, scope = InstrumentationScope }
 * in the request's shape; gzip-compressed when gzip is true. */
int ps_lua_otlp__from_pprof(lua_State *L)
{
	OtlpRequest req = OPENTELEMETRY__PROTO__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	OtlpDictionary dict = OPENTELEMETRY__PROTO__PROFILES_DICTIONARY__INIT;
	OtlpResourceProfiles rp = OPENTELEMETRY__PROTO__RESOURCE_PROFILES__INIT, *rps = &rp;
	OtlpScopeProfiles sp = OPENTELEMETRY__PROTO__SCOPE_PROFILES__INIT, *sps = &sp;
	struct ps_lua_otlp_conv c = {.L = L};
	size_t n, size;
	uint8_t *buf;
	bool gz;

	luaL_checktype(L, 1, LUA_TTABLE);
	luaL_checktype(L, 2, LUA_TTABLE);
	gz = lua_toboolean(L, 3);
	lua_settop(L, 2);
	for (int i = 0; i < 5; i++)
		lua_newtable(L);
	c.anchor = 3, c.strings = 4, c.attrs = 5, c.stacks = 6, c.funcs = 7;
	zeros(&c);
	n = lua_rawlen(L, 1);
	sp.profiles = n ? ps_lua_otlp__alloc(&c, n * sizeof(*sp.profiles)) : NULL;
	for (size_t i = 1; i <= n; i++) {
		if (lua_rawgeti(L, 1, (lua_Integer)i) != LUA_TTABLE)
			return luaL_error(L, "otlp.from_pprof: profile %d is not a table", (int)i);
		sp.profiles[sp.n_profiles++] = profile(&c, lua_gettop(L));
		lua_pop(L, 1);
	}
	if (lua_getfield(L, 2, "resource") == LUA_TTABLE) {
		rp.resource = ps_lua_otlp__alloc(&c, sizeof(*rp.resource));
		opentelemetry__proto__resource__init(rp.resource);
		ps_lua_otlp__fill(L, c.anchor, lua_gettop(L),
				  &opentelemetry__proto__resource__descriptor, &rp.resource->base);
	}
	if (lua_getfield(L, 2, "scope") == LUA_TTABLE) {
		sp.scope = ps_lua_otlp__alloc(&c, sizeof(*sp.scope));
		opentelemetry__proto__instrumentation_scope__init(sp.scope);
		ps_lua_otlp__fill(L, c.anchor, lua_gettop(L),
				  &opentelemetry__proto__instrumentation_scope__descriptor,
				  &sp.scope->base);
	}
	rp.scope_profiles = &sps;
	rp.n_scope_profiles = 1;
	req.resource_profiles = &rps;
	req.n_resource_profiles = 1;
	dict.mapping_table = (OtlpMapping **)c.map.v, dict.n_mapping_table = c.map.n;
	dict.location_table = (OtlpLocation **)c.loc.v, dict.n_location_table = c.loc.n;
	dict.function_table = (OtlpFunction **)c.fn.v, dict.n_function_table = c.fn.n;
	dict.stack_table = (OtlpStack **)c.stack.v, dict.n_stack_table = c.stack.n;
	dict.attribute_table = (OtlpAttribute **)c.attr.v, dict.n_attribute_table = c.attr.n;
	dict.string_table = (char **)c.str.v, dict.n_string_table = c.str.n;
	req.dictionary = &dict;
	size = opentelemetry__proto__export_profiles_service_request__get_packed_size(&req);
	buf = ps_lua_otlp__alloc(&c, size);
	opentelemetry__proto__export_profiles_service_request__pack(&req, buf);
	if (gz)
		ps_lua_pprof__push_gzip(L, buf, size, Z_BEST_SPEED);
	else
		lua_pushlstring(L, (const char *)buf, size);
	return 1;
}
