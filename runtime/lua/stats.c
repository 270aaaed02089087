/*
 * stats.c: the C half of the stats tapset's summary mode, offered as
 * package.preload["perfscript.stats_core"]. Once an aggregate has seen more
 * distinct values than its exact map keeps, every add costs one closure
 * call; in Lua that closure does a dozen upvalue updates and, when the
 * magnitude changes, a math.log. Here it is one C call, with the bucket from
 * clz or frexp. tapsets/stats.lua uses it when it loads and keeps its Lua
 * closure for LuaJIT and plain Lua, so both must agree to the last bit: the
 * running figures follow Lua 5.4's arithmetic exactly (integer sums wrap as
 * Lua's do, and turn float when a float value arrives), comparisons mixing
 * integers and floats are exact as in lvm.c, and the buckets are
 * stats_hist.log_bucket's and linear_bucket's.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/internal.h"

#define MAXK 1024 /* |bucket| of the largest finite double: frexp gives 1024 */

/* A Lua number as Lua holds it: an integer or a float. */
struct num {
	bool isint;
	lua_Integer i;
	double f;
};

struct acc {
	lua_Integer n;
	struct num shift, sd, sd2, mn, mx;
	bool linear;
	struct num lo, hi, step;
	lua_Integer h[2 * MAXK + 1]; /* log buckets -MAXK..MAXK */
};

static struct num inum(lua_Integer i)
{
	return (struct num){.isint = true, .i = i};
}

static struct num fnum(double f)
{
	return (struct num){.isint = false, .f = f};
}

static double tof(struct num a)
{
	return a.isint ? (double)a.i : a.f;
}

/* Integer arithmetic wraps around, as Lua's does (lvm.c's intop). */
static struct num num_sub(struct num a, struct num b)
{
	if (a.isint && b.isint)
		return inum((lua_Integer)((lua_Unsigned)a.i - (lua_Unsigned)b.i));
	return fnum(tof(a) - tof(b));
}

static struct num num_add(struct num a, struct num b)
{
	if (a.isint && b.isint)
		return inum((lua_Integer)((lua_Unsigned)a.i + (lua_Unsigned)b.i));
	return fnum(tof(a) + tof(b));
}

static struct num num_mul(struct num a, struct num b)
{
	if (a.isint && b.isint)
		return inum((lua_Integer)((lua_Unsigned)a.i * (lua_Unsigned)b.i));
	return fnum(tof(a) * tof(b));
}

/* Is f, rounded by fl (floor or ceil), an integer? lvm.c's luaV_flttointns. */
static bool flt_to_int(double f, double (*fl)(double), lua_Integer *out)
{
	f = fl(f);
	if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0))
		return false;
	*out = (lua_Integer)f;
	return true;
}

#define FITS_DOUBLE(i) ((i) >= -(1LL << 53) && (i) <= (1LL << 53))

/* a < b with Lua's exact mixed comparison (lvm.c's LTnum). */
static bool num_lt(struct num a, struct num b)
{
	lua_Integer x;

	if (a.isint && b.isint)
		return a.i < b.i;
	if (!a.isint && !b.isint)
		return a.f < b.f;
	if (a.isint) { /* i < f <=> i < ceil(f) */
		if (FITS_DOUBLE(a.i))
			return (double)a.i < b.f;
		return flt_to_int(b.f, ceil, &x) ? a.i < x : b.f > 0;
	}
	if (FITS_DOUBLE(b.i)) /* f < i <=> floor(f) < i */
		return a.f < (double)b.i;
	return flt_to_int(a.f, floor, &x) ? x < b.i : a.f < 0;
}

static void push_num(lua_State *L, struct num a)
{
	if (a.isint)
		lua_pushinteger(L, a.i);
	else
		lua_pushnumber(L, a.f);
}

/* stats_hist.log_bucket: 0 for (-1, 1), k for [2^(k-1), 2^k), -k for
 * (-2^k, -2^(k-1)]. */
static int log_bucket(struct num v)
{
	int e;

	if (v.isint) {
		lua_Unsigned u = v.i < 0 ? 0 - (lua_Unsigned)v.i : (lua_Unsigned)v.i;
		int k = u ? 64 - __builtin_clzll((unsigned long long)u) : 0;

		return v.i < 0 ? -k : k;
	}
	if (v.f >= 1) {
		frexp(v.f, &e); /* v = m * 2^e, m in [0.5, 1): 2^(e-1) <= v < 2^e */
		return e;
	}
	if (v.f <= -1) {
		frexp(-v.f, &e);
		return -e;
	}
	return 0;
}

/* floor(x) + 1 or ceil(x) + 1 as the Lua number math.floor/ceil would make. */
static struct num rounded_plus1(double x, double (*fl)(double))
{
	lua_Integer i;

	if (flt_to_int(x, fl, &i))
		return num_add(inum(i), inum(1));
	return fnum(fl(x) + 1);
}

/* stats_hist.linear_bucket */
static struct num linear_bucket(const struct acc *a, struct num v)
{
	if (num_lt(v, a->lo))
		return inum(0);
	if (!num_lt(v, a->hi))
		return rounded_plus1(tof(num_sub(a->hi, a->lo)) / tof(a->step), ceil);
	return rounded_plus1(tof(num_sub(v, a->lo)) / tof(a->step), floor);
}

/* counts[k] = (counts[k] or 0) + c, counts at index t */
static void bump(lua_State *L, int t, struct num k, lua_Integer c)
{
	push_num(L, k);
	lua_pushvalue(L, -1);
	lua_rawget(L, t);
	c = (lua_Integer)((lua_Unsigned)lua_tointeger(L, -1) + (lua_Unsigned)c);
	lua_pop(L, 1);
	lua_pushinteger(L, c);
	lua_rawset(L, t);
}

/* Argument arg as a finite number, or raise as the Lua path's exact mode
 * does, blaming the caller of s:add. */
static struct num check_value(lua_State *L, int arg)
{
	struct num v;

	if (lua_type(L, arg) != LUA_TNUMBER) {
		luaL_where(L, 2);
		lua_pushfstring(L, "stats add: want a number, got %s", luaL_typename(L, arg));
		lua_concat(L, 2);
		lua_error(L);
	}
	if (lua_isinteger(L, arg))
		return inum(lua_tointeger(L, arg));
	v = fnum(lua_tonumber(L, arg));
	if (!isfinite(v.f)) {
		luaL_where(L, 2);
		lua_pushfstring(L, "stats add: want a finite number, got %s",
				v.f != v.f ? "nan"
				: v.f > 0  ? "inf"
					   : "-inf");
		lua_concat(L, 2);
		lua_error(L);
	}
	return v;
}

/* c copies of v; upvalue 2 is the linear counts table or nil. */
static void acc_put(lua_State *L, struct acc *a, struct num v, lua_Integer c)
{
	struct num d = num_sub(v, a->shift);
	struct num cn = inum(c);

	a->n = (lua_Integer)((lua_Unsigned)a->n + (lua_Unsigned)c);
	if (c == 1) { /* sd + d, not sd + d * 1: the same value, one step less */
		a->sd = num_add(a->sd, d);
		a->sd2 = num_add(a->sd2, num_mul(d, d));
	} else {
		a->sd = num_add(a->sd, num_mul(d, cn));
		a->sd2 = num_add(a->sd2, num_mul(num_mul(d, d), cn));
	}
	if (num_lt(v, a->mn))
		a->mn = v;
	if (num_lt(a->mx, v))
		a->mx = v;
	a->h[log_bucket(v) + MAXK] += c;
	if (a->linear)
		bump(L, lua_upvalueindex(2), linear_bucket(a, v), c);
}

/* add(self, v): the aggregate's add method; self is not looked at. */
static int acc_add(lua_State *L)
{
	struct acc *a = lua_touserdata(L, lua_upvalueindex(1));
	struct num v;

	if (lua_isinteger(L, 2) && !a->linear && a->shift.isint && a->sd.isint && a->sd2.isint &&
	    a->mn.isint && a->mx.isint) {
		/* all integers so far: the common case, in plain C */
		lua_Integer i = lua_tointeger(L, 2);
		lua_Unsigned d = (lua_Unsigned)i - (lua_Unsigned)a->shift.i;

		a->n++;
		a->sd.i = (lua_Integer)((lua_Unsigned)a->sd.i + d);
		a->sd2.i = (lua_Integer)((lua_Unsigned)a->sd2.i + d * d);
		if (i < a->mn.i)
			a->mn.i = i;
		if (i > a->mx.i)
			a->mx.i = i;
		a->h[log_bucket(inum(i)) + MAXK]++;
		return 0;
	}
	v = check_value(L, 2);
	acc_put(L, a, v, 1);
	return 0;
}

/* add_many(v, c): how the exact map is folded in. */
static int acc_add_many(lua_State *L)
{
	struct acc *a = lua_touserdata(L, lua_upvalueindex(1));
	struct num v = check_value(L, 1);

	acc_put(L, a, v, luaL_checkinteger(L, 2));
	return 0;
}

/* figures() -> n, sd, sd2, min, max, shift */
static int acc_figures(lua_State *L)
{
	struct acc *a = lua_touserdata(L, lua_upvalueindex(1));

	lua_pushinteger(L, a->n);
	push_num(L, a->sd);
	push_num(L, a->sd2);
	push_num(L, a->mn);
	push_num(L, a->mx);
	push_num(L, a->shift);
	return 6;
}

/* log() -> {bucket = count}, the non-empty buckets */
static int acc_log(lua_State *L)
{
	struct acc *a = lua_touserdata(L, lua_upvalueindex(1));

	lua_newtable(L);
	for (int k = -MAXK; k <= MAXK; k++) {
		if (a->h[k + MAXK]) {
			lua_pushinteger(L, a->h[k + MAXK]);
			lua_rawseti(L, -2, k);
		}
	}
	return 1;
}

static struct num field_num(lua_State *L, int t, const char *name)
{
	struct num v;

	if (lua_getfield(L, t, name) != LUA_TNUMBER)
		luaL_error(L, "stats_core: linear.%s is not a number", name);
	v = lua_isinteger(L, -1) ? inum(lua_tointeger(L, -1)) : fnum(lua_tonumber(L, -1));
	lua_pop(L, 1);
	return v;
}

/* summary(shift, lin) -> add, figures, log, add_many, as stats.lua's summary(). */
static int core_summary(lua_State *L)
{
	struct num shift = check_value(L, 1);
	bool linear = !lua_isnoneornil(L, 2);
	struct acc *a;

	if (linear)
		luaL_checktype(L, 2, LUA_TTABLE);
	a = lua_newuserdatauv(L, sizeof(*a), 0);
	memset(a, 0, sizeof(*a));
	a->shift = shift;
	a->sd = inum(0);
	a->sd2 = inum(0);
	a->mn = fnum(HUGE_VAL);
	a->mx = fnum(-HUGE_VAL);
	a->linear = linear;
	if (linear) {
		a->lo = field_num(L, 2, "lo");
		a->hi = field_num(L, 2, "hi");
		a->step = field_num(L, 2, "step");
		if (lua_getfield(L, 2, "counts") != LUA_TTABLE)
			return luaL_error(L, "stats_core: linear.counts is not a table");
	} else {
		lua_pushnil(L);
	}
	/* stack: ud (3), counts or nil (4) */
	lua_pushvalue(L, 3);
	lua_pushvalue(L, 4);
	lua_pushcclosure(L, acc_add, 2);
	lua_pushvalue(L, 3);
	lua_pushcclosure(L, acc_figures, 1);
	lua_pushvalue(L, 3);
	lua_pushcclosure(L, acc_log, 1);
	lua_pushvalue(L, 3);
	lua_pushvalue(L, 4);
	lua_pushcclosure(L, acc_add_many, 2);
	return 4;
}

/* log_bucket(v): the bucket the core puts v in, for the tests. */
static int core_log_bucket(lua_State *L)
{
	lua_pushinteger(L, log_bucket(check_value(L, 1)));
	return 1;
}

static int open_core(lua_State *L)
{
	static const luaL_Reg fns[] = {
	    {"summary", core_summary},
	    {"log_bucket", core_log_bucket},
	    {NULL, NULL},
	};

	luaL_newlib(L, fns);
	return 1;
}

void ps_lua_stats__open(lua_State *L)
{
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, open_core);
	lua_setfield(L, -2, "perfscript.stats_core");
	lua_pop(L, 1);
}
