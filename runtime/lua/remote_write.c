/*
 * remote_write.c: package.preload["perfscript.remote_write"], Prometheus
 * remote write 1.0 request bodies: encode(series) turns a list of series
 * ({name = "x_total", labels = {k = v}, value = n [, timestamp_ms = t]})
 * into a WriteRequest (lua/remote.proto), each series' labels sorted by
 * name with __name__ among them, snappy-compressed in the block format, as
 * a receiver wants it (Content-Encoding: snappy); decode(bytes) reads one
 * back, for tests. libsnappy is loaded at the first call (it brings the C++
 * runtime, which a session that sends nothing should not map).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>

#include "lua/internal.h"
#include "lua/pprof.h"
#include "remote.pb-c.h"

#define PS_SNAPPY_SONAME "libsnappy.so.1"

typedef Prometheus__WriteRequest WriteRequest;
typedef Prometheus__TimeSeries TimeSeries;
typedef Prometheus__Label Label;
typedef Prometheus__Sample Sample;

/* snappy-c.h's calls (0 is SNAPPY_OK). */
static struct {
	int (*compress)(const char *in, size_t n, char *out, size_t *out_len);
	int (*uncompress)(const char *in, size_t n, char *out, size_t *out_len);
	size_t (*max_compressed_length)(size_t n);
	int (*uncompressed_length)(const char *in, size_t n, size_t *len);
} sn;

/* libsnappy, loaded once per process (any thread may encode): sn_why
 * says why it is not there, "" when it is. */
static pthread_once_t sn_once = PTHREAD_ONCE_INIT;
static char sn_why[256];

static void load_snappy(void)
{
	void *lib = dlopen(PS_SNAPPY_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		snprintf(sn_why, sizeof(sn_why),
			 "remote_write: cannot load %s: %s (install libsnappy1v5)",
			 PS_SNAPPY_SONAME, dlerror());
		return;
	}
	*(void **)&sn.compress = dlsym(lib, "snappy_compress");
	*(void **)&sn.uncompress = dlsym(lib, "snappy_uncompress");
	*(void **)&sn.max_compressed_length = dlsym(lib, "snappy_max_compressed_length");
	*(void **)&sn.uncompressed_length = dlsym(lib, "snappy_uncompressed_length");
	if (!sn.compress || !sn.uncompress || !sn.max_compressed_length || !sn.uncompressed_length)
		snprintf(sn_why, sizeof(sn_why), "remote_write: %s lacks the snappy C API",
			 PS_SNAPPY_SONAME);
}

/* Whether libsnappy is there; else nil and why are pushed (an environment
 * failure: the caller returns them). */
static bool have_snappy(lua_State *L)
{
	pthread_once(&sn_once, load_snappy);
	if (!sn_why[0])
		return true;
	lua_pushnil(L);
	lua_pushstring(L, sn_why);
	return false;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(Label *const *)a)->name, (*(Label *const *)b)->name);
}

/* The series at the top of the stack into ts (memory from the anchor). */
static void series(lua_State *L, int anchor, TimeSeries *ts, int64_t now_ms, lua_Integer i)
{
	size_t n = 1;
	Label **labels;
	Sample *s;

	if (lua_getfield(L, -1, "name") != LUA_TSTRING)
		luaL_error(L, "remote_write.encode: series %d has no name", (int)i);
	lua_getfield(L, -2, "labels");
	if (!lua_isnil(L, -1)) {
		luaL_checktype(L, -1, LUA_TTABLE);
		for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1))
			n++;
	}
	labels = ps_lua_pprof__alloc(L, anchor, n * sizeof(*labels));
	labels[0] = ps_lua_pprof__alloc(L, anchor, sizeof(Label));
	prometheus__label__init(labels[0]);
	labels[0]->name = "__name__";
	labels[0]->value = (char *)lua_tostring(L, -2); /* anchored: the series table holds it */
	n = 1;
	if (!lua_isnil(L, -1))
		for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) {
			Label *l = ps_lua_pprof__alloc(L, anchor, sizeof(Label));

			prometheus__label__init(l);
			if (lua_type(L, -2) != LUA_TSTRING)
				luaL_error(
				    L,
				    "remote_write.encode: series %d: a label name must be a string",
				    (int)i);
			lua_pushvalue(L, -1);
			ps_lua__valid_utf8(L, -1); /* a copy: numbers become strings */
			l->value = (char *)lua_tostring(L, -1);
			lua_pushvalue(L, -1);
			lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1);
			lua_pop(L, 1);
			l->name = (char *)lua_tostring(L, -2);
			labels[n++] = l;
		}
	qsort(labels, n, sizeof(*labels), by_name);
	lua_pop(L, 2);
	s = ps_lua_pprof__alloc(L, anchor, sizeof(*s));
	prometheus__sample__init(s);
	lua_getfield(L, -1, "value");
	s->value = luaL_checknumber(L, -1);
	lua_getfield(L, -2, "timestamp_ms");
	s->timestamp = lua_isnil(L, -1) ? now_ms : (int64_t)luaL_checkinteger(L, -1);
	lua_pop(L, 2);
	ts->labels = labels;
	ts->n_labels = n;
	ts->samples = ps_lua_pprof__alloc(L, anchor, sizeof(*ts->samples));
	ts->samples[0] = s;
	ts->n_samples = 1;
}

/* remote_write.encode(series [, now_ms]) -> snappy-compressed WriteRequest. */
static int l_encode(lua_State *L)
{
	WriteRequest w = PROMETHEUS__WRITE_REQUEST__INIT;
	struct timespec t;
	int64_t now_ms;
	size_t n, size, out_len;
	uint8_t *buf;
	char *out;
	int anchor;

	luaL_checktype(L, 1, LUA_TTABLE);
	clock_gettime(CLOCK_REALTIME, &t);
	now_ms = (int64_t)luaL_optinteger(L, 2, (lua_Integer)t.tv_sec * 1000 + t.tv_nsec / 1000000);
	if (!have_snappy(L))
		return 2;
	lua_settop(L, 1);
	lua_newtable(L);
	anchor = lua_gettop(L);
	n = lua_rawlen(L, 1);
	w.timeseries = ps_lua_pprof__alloc(L, anchor, (n ? n : 1) * sizeof(*w.timeseries));
	for (size_t i = 0; i < n; i++) {
		TimeSeries *ts = ps_lua_pprof__alloc(L, anchor, sizeof(*ts));

		prometheus__time_series__init(ts);
		lua_rawgeti(L, 1, (lua_Integer)i + 1);
		luaL_checktype(L, -1, LUA_TTABLE);
		series(L, anchor, ts, now_ms, (lua_Integer)i + 1);
		lua_pop(L, 1);
		w.timeseries[i] = ts;
	}
	w.n_timeseries = n;
	size = prometheus__write_request__get_packed_size(&w);
	buf = ps_lua_pprof__alloc(L, anchor, size);
	prometheus__write_request__pack(&w, buf);
	out_len = sn.max_compressed_length(size);
	out = ps_lua_pprof__alloc(L, anchor, out_len);
	if (sn.compress((const char *)buf, size, out, &out_len) != 0)
		return luaL_error(L, "remote_write.encode: snappy could not compress");
	lua_pushlstring(L, out, out_len);
	return 1;
}

/* remote_write.decode(bytes) -> series (as encode takes them, with
 * timestamp_ms; __name__ as name), or nil, message. */
static int l_decode(lua_State *L)
{
	size_t n, len;
	const char *in = luaL_checklstring(L, 1, &n);
	WriteRequest *w;
	char *raw;

	if (!have_snappy(L))
		return 2;
	if (sn.uncompressed_length(in, n, &len) != 0 || len > (64u << 20) ||
	    !(raw = malloc(len ? len : 1)) || sn.uncompress(in, n, raw, &len) != 0) {
		lua_pushnil(L);
		lua_pushliteral(L, "not a snappy block");
		return 2;
	}
	w = prometheus__write_request__unpack(NULL, len, (const uint8_t *)raw);
	free(raw);
	if (!w) {
		lua_pushnil(L);
		lua_pushliteral(L, "not a WriteRequest");
		return 2;
	}
	lua_createtable(L, (int)w->n_timeseries, 0);
	for (size_t i = 0; i < w->n_timeseries; i++) {
		TimeSeries *ts = w->timeseries[i];

		lua_createtable(L, 0, 4);
		lua_newtable(L);
		for (size_t j = 0; j < ts->n_labels; j++) {
			if (!strcmp(ts->labels[j]->name, "__name__")) {
				lua_pushstring(L, ts->labels[j]->value);
				lua_setfield(L, -3, "name");
				continue;
			}
			lua_pushstring(L, ts->labels[j]->value);
			lua_setfield(L, -2, ts->labels[j]->name);
		}
		lua_setfield(L, -2, "labels");
		if (ts->n_samples) {
			lua_pushnumber(L, ts->samples[0]->value);
			lua_setfield(L, -2, "value");
			lua_pushinteger(L, ts->samples[0]->timestamp);
			lua_setfield(L, -2, "timestamp_ms");
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	prometheus__write_request__free_unpacked(w, NULL);
	return 1;
}

static int open_remote_write(lua_State *L)
{
	static const luaL_Reg fns[] = {
	    {"encode", l_encode},
	    {"decode", l_decode},
	    {NULL, NULL},
	};

	luaL_newlib(L, fns);
	return 1;
}

void ps_lua_remote_write__open(lua_State *L)
{
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, open_remote_write);
	lua_setfield(L, -2, "perfscript.remote_write");
	lua_pop(L, 1);
}
