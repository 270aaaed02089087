-- perfscript.lua: the LuaJIT FFI binding of libperfscript, for programs that
-- measure their own code regions with the same event strings, counters and
-- error messages as perfscript scripts, without the perfscript runtime.
--
--   local perfscript = require "perfscript"
--   local s = assert(perfscript.session())          -- this process
--   local c = assert(s:counter("task-clock"))
--   c:start(); work(); print(c:read())              -- value, enabled, running
--   print(perfscript.measure("page-faults", work))  -- { ["page-faults"] = n }
--
-- The library is found as $PERFSCRIPT_LIB, else beside this file as make
-- install lays it out (PREFIX/share/lua/5.1/perfscript.lua and
-- PREFIX/lib/libperfscript.so.0, whatever PREFIX), else as "perfscript" on
-- the dynamic linker's path. It binds the C header bindings/perfscript.h
-- directly: the declarations below mirror it.
local ffi = require "ffi"

ffi.cdef [[
typedef uint64_t ps_handle;
struct ps_session;
struct ps_events;
struct ps_event_error {
  int code; int column; char token[64]; char suggestion[64]; char message[320]; unsigned needed;
};
enum ps_error {
  PS_ERR_SYNTAX = 4096, PS_ERR_UNKNOWN_EVENT, PS_ERR_UNKNOWN_TERM, PS_ERR_BAD_VALUE,
  PS_ERR_HANDLE, PS_ERR_NOT_SUPPORTED, PS_ERR_STATE, PS_ERR_LIMIT
};
enum ps_target_kind { PS_TARGET_SELF, PS_TARGET_COMMAND, PS_TARGET_PID, PS_TARGET_CPUS };
struct ps_target_opts {
  size_t sz; enum ps_target_kind kind; int pid; char *const *argv; const char *cpus;
  const char *cgroup; bool no_children;
};
struct ps_value { uint64_t value, raw, enabled, running; };

const char *ps_strerror(int err);
int ps_text__check(const char *s, size_t len, const char *what, char *msg, size_t msglen);
int ps_tracefs__mount_private(char *msg, size_t msglen);
uint64_t ps_time(void);
const char *ps_time_source(const char **why);

typedef struct FILE FILE;
FILE *open_memstream(char **ptr, size_t *sizeloc);
int fclose(FILE *f);
void free(void *p);
int ps_regions__init(const char *spec, char *msg, size_t msglen);
int ps_region__begin(const char *name);
int ps_region__end(const char *name);
int ps_region__read(const char *name, uint64_t *calls, uint64_t *values, size_t max);
size_t ps_regions__events(const char **names, size_t max);
int ps_regions__report(FILE *out, const char *format);
int ps_regions__close_thread(void);
const char *ps_regions__message(void);
struct ps_overflow;
typedef void (*ps_overflow_fn)(struct ps_overflow *o, uint64_t ip, void *ctx);
struct ps_overflow *ps_overflow__new(const char *spec, ps_overflow_fn fn, void *ctx, char *msg,
                                     size_t msglen);
void ps_overflow__set_reclaim(void (*fn)(void *ctx), void *ctx);
struct ps_overflow *ps_overflow__next(void **ctx, uint64_t *ip);
void ps_overflow__free(struct ps_overflow *o);
int ps_overflow__start(struct ps_overflow *o);
int ps_overflow__stop(struct ps_overflow *o);
int ps_overflow__refresh(struct ps_overflow *o, int n);
int ps_overflow__set_period(struct ps_overflow *o, uint64_t period);
int ps_overflow__read(struct ps_overflow *o, uint64_t *value);
uint64_t ps_overflow__count(const struct ps_overflow *o);
uint64_t ps_overflow__dropped(const struct ps_overflow *o);
size_t ps_overflow__take(struct ps_overflow *o, uint64_t *ips, size_t max);
const char *ps_overflow__name(const struct ps_overflow *o);
struct ps_events *ps_events__parse(const char *spec, struct ps_event_error *err);
void ps_events__free(struct ps_events *evs);
size_t ps_events__count(const struct ps_events *evs);
const char *ps_events__name(const struct ps_events *evs, size_t i);
size_t ps_events__leader(const struct ps_events *evs, size_t i);

struct ps_session *ps_session__new(const struct ps_target_opts *opts);
void ps_session__free(struct ps_session *s);
int ps_session__allocate(struct ps_session *s, const char *spec, ps_handle *handles,
                         size_t max, struct ps_event_error *err);
int ps_session__free_counter(struct ps_session *s, ps_handle h);
int ps_session__open_counter(struct ps_session *s, ps_handle h, char *msg, size_t msglen);
int ps_session__start(struct ps_session *s, ps_handle h);
int ps_session__stop(struct ps_session *s, ps_handle h);
int ps_session__reset(struct ps_session *s, ps_handle h);
int ps_session__read(struct ps_session *s, ps_handle h, struct ps_value *v);
int ps_session__read_group(struct ps_session *s, ps_handle leader, struct ps_value *vals,
                           size_t max);
int ps_session__read_ahead(struct ps_session *s, const ps_handle *h, size_t n);
int ps_session__group(struct ps_session *s, ps_handle h, ps_handle *handles, size_t max);
const char *ps_session__name(const struct ps_session *s, ps_handle h);
const char *ps_session__spec(const struct ps_session *s, ps_handle h);
bool ps_session__is_open(const struct ps_session *s, ps_handle h);
]]

-- The library of the install tree this file is in, when there is one.
local function installed_lib()
  local src = debug.getinfo(1, "S").source
  local dir = src:match("^@(.*)/share/lua/5%.1/[^/]*$")
  local path = dir and dir .. "/lib/libperfscript.so.0"
  local f = path and io.open(path)
  if f then f:close(); return path end
end

local lib = ffi.load(os.getenv("PERFSCRIPT_LIB") or installed_lib() or "perfscript")
local MAX = 256 -- handles tried first; a longer string says how many it needs
local ENOSPC = 28

local M = { version = "0.1.0" }

local function strerror(rc) return ffi.string(lib.ps_strerror(rc)) end

-- The string s unless it holds a NUL byte, which C would take for its end:
-- then nil and the library's message (ps_text__check).
local text_msg = ffi.new("char[256]")
local function text_error(s, what)
  local rc = lib.ps_text__check(s, #s, what, text_msg, 256)
  if rc < 0 then return ffi.string(text_msg), -rc end
end

-- Misuse raises, as in the Lua 5.4 binding; an environment failure returns
-- nil, message, errno.
local PS_ERR_HANDLE = lib.PS_ERR_HANDLE
local function closed(what, level) error("attempt to use a closed " .. what, level + 1) end

-- A counter: one handle of a session. Reads return Lua numbers (exact below 2^53).
local Counter = {}
Counter.__index = Counter

-- Whether handle h is a live counter of session pointer s.
local function live(s, h) return s ~= nil and lib.ps_session__name(s, h) ~= nil end

local function session_of(c, what)
  if not live(c.s.ptr, c.h) then closed(what or "counter", 3) end
  return c.s.ptr
end

local function checked(rc, what)
  if rc >= 0 then return true end
  if -rc == PS_ERR_HANDLE then closed(what, 3) end
  return nil, strerror(rc), -rc
end

local open_msg = ffi.new("char[1024]")
function Counter:start()
  local s, rc = session_of(self), 0
  open_msg[0] = 0
  if not lib.ps_session__is_open(s, self.h) then rc = lib.ps_session__open_counter(s, self.h, open_msg, 1024) end
  if rc == 0 then rc = lib.ps_session__start(s, self.h) end
  if rc < 0 then
    if -rc == PS_ERR_HANDLE then closed(self.counters and "group" or "counter", 2) end
    return nil, open_msg[0] ~= 0 and ffi.string(open_msg) or strerror(rc), -rc
  end
  return self
end

function Counter:stop()
  local ok, msg, code = checked(lib.ps_session__stop(session_of(self), self.h), "counter")
  if not ok then return nil, msg, code end
  return self
end

function Counter:reset()
  local ok, msg, code = checked(lib.ps_session__reset(session_of(self), self.h), "counter")
  if not ok then return nil, msg, code end
  return self
end

function Counter:read()
  local v = self.s.val
  local ok, msg, code = checked(lib.ps_session__read(session_of(self), self.h, v), "counter")
  if not ok then return nil, msg, code end
  return tonumber(v.value), tonumber(v.enabled), tonumber(v.running), tonumber(v.raw)
end

function Counter:name()
  return ffi.string(lib.ps_session__name(session_of(self), self.h))
end

-- Closing twice, or after the session closed, is harmless.
function Counter:close()
  if self.s.ptr ~= nil then lib.ps_session__free_counter(self.s.ptr, self.h) end
end

Counter.__tostring = function(c)
  if not live(c.s.ptr, c.h) then return "perfscript.counter (closed)" end
  return ("perfscript.counter '%s': %d"):format(c:name(), (c:read()))
end

-- A group: counters opened and read together. Closing one of its counters
-- closes the group for reading: its values would no longer line up.
local Group = {}
Group.__index = Group

local function group_of(g)
  local s = g.s.ptr
  if not live(s, g.h) then closed("group", 3) end
  for _, c in ipairs(g.counters) do
    if not live(s, c.h) then closed("group", 3) end
  end
  return s
end

function Group:start() group_of(self); return Counter.start(self) end
function Group:stop() group_of(self); return Counter.stop(self) end
function Group:close() Counter.close(self) end

function Group:read()
  local s, n = group_of(self), #self.counters
  local vals = ffi.new("struct ps_value[?]", n)
  local rc = lib.ps_session__read_group(s, self.h, vals, n)
  local ok, msg, code = checked(rc, "group")
  if not ok then return nil, msg, code end
  local out = {}
  for i = 0, rc - 1 do
    out[i + 1] = tonumber(vals[i].value)
    out[self.counters[i + 1]:name()] = out[i + 1]
  end
  return out, tonumber(vals[0].enabled), tonumber(vals[0].running)
end

Group.__tostring = function(g)
  if not live(g.s.ptr, g.h) then return "perfscript.group (closed)" end
  return ("perfscript.group '%s' (%d counters)"):format(ffi.string(lib.ps_session__spec(g.s.ptr, g.h)),
                                                        #g.counters)
end

-- A session: counters on one target (this process unless told otherwise).
local Session = {}
Session.__index = Session

-- The handles of spec's events, and how many; or nil, message, errno. The
-- library says how many handles a long string needs, and whether it holds
-- a NUL byte.
local function allocate(self, spec)
  if self.ptr == nil then closed("session", 3) end
  if type(spec) ~= "string" then error("bad argument #1 (string expected, got " .. type(spec) .. ")", 3) end
  local tmsg, tcode = text_error(spec, "event string")
  if tmsg then return nil, tmsg, tcode end
  local err, cap = ffi.new("struct ps_event_error"), MAX
  local hs, n
  repeat
    hs = ffi.new("ps_handle[?]", cap)
    n = lib.ps_session__allocate(self.ptr, spec, hs, cap, err)
    cap = err.needed
  until n ~= -ENOSPC
  if n < 0 then
    return nil, err.message[0] ~= 0 and ffi.string(err.message) or strerror(n), -n
  end
  return hs, n
end

-- s:counter(spec) -> counter, ... (one per event of spec) | nil, message, code
function Session:counter(spec)
  local hs, n, code = allocate(self, spec)
  if not hs then return nil, n, code end
  local out = {}
  for i = 0, n - 1 do out[i + 1] = setmetatable({ s = self, h = hs[i] }, Counter) end
  return unpack(out)
end

-- s:group("{a,b}") -> group | nil, message, code
function Session:group(spec)
  local hs, n, code = allocate(self, spec)
  if not hs then return nil, n, code end
  local g = setmetatable({ s = self, h = hs[0], counters = {} }, Group)
  for i = 0, n - 1 do g.counters[i + 1] = setmetatable({ s = self, h = hs[i] }, Counter) end
  if lib.ps_session__group(self.ptr, hs[0], hs, n) ~= n then
    lib.ps_session__free_counter(self.ptr, hs[0])
    error("bad argument #1 to 'group' (one group expected, e.g. '{task-clock,page-faults}')", 2)
  end
  return g
end

-- s:read_ahead({counter or group, ...}) -> true | nil, message, errno: their
-- CPU-bound fds read now, each from its CPU, for the reads that follow
function Session:read_ahead(list)
  if self.ptr == nil then closed("session", 2) end
  local hs, n = ffi.new("ps_handle[?]", #list + 1), 0
  for _, c in ipairs(list) do
    if type(c) == "table" and c.s == self and c.h then hs[n], n = c.h, n + 1 end
  end
  local rc = lib.ps_session__read_ahead(self.ptr, hs, n)
  if rc < 0 then return nil, strerror(rc), -rc end
  return true
end

function Session:close()
  if self.ptr ~= nil then
    lib.ps_session__free(ffi.gc(self.ptr, nil))
    self.ptr = nil
  end
end

-- perfscript.session([{pid = PID} | {cpus = "0-1"} | {cgroup = "app"[, cpus = "0-1"]}])
--   -> session | nil, message
function M.session(opts)
  opts = opts or {}
  local t = ffi.new("struct ps_target_opts")
  t.sz = ffi.sizeof(t)
  if opts.pid then
    t.kind, t.pid = lib.PS_TARGET_PID, opts.pid
  elseif opts.cpus or opts.cgroup then
    t.kind = lib.PS_TARGET_CPUS
    if opts.cpus and opts.cpus ~= true then t.cpus = opts.cpus end
    t.cgroup = opts.cgroup -- opts keeps the strings alive through the call
  end
  local ptr = lib.ps_session__new(t)
  if ptr == nil then return nil, "perfscript: cannot create the session: " .. strerror(ffi.errno()) end
  return setmetatable({ ptr = ffi.gc(ptr, lib.ps_session__free), val = ffi.new("struct ps_value") },
                      Session)
end

-- perfscript.parse(spec) -> { {name =, leader =}, ... } | nil, message, column:
-- the events a string names, without opening anything.
function M.parse(spec)
  local tmsg = text_error(spec, "event string")
  if tmsg then return nil, tmsg, #spec:match("^[^%z]*") + 1 end
  local err = ffi.new("struct ps_event_error")
  local evs = lib.ps_events__parse(spec, err)
  if evs == nil then return nil, ffi.string(err.message), err.column end
  local out = {}
  for i = 0, tonumber(lib.ps_events__count(evs)) - 1 do
    out[i + 1] = { name = ffi.string(lib.ps_events__name(evs, i)),
                   leader = tonumber(lib.ps_events__leader(evs, i)) + 1 }
  end
  lib.ps_events__free(evs)
  return out
end

-- perfscript.measure(spec, fn, ...) -> { [name] = value }, fn's results:
-- counts one call of fn on this process.
function M.measure(spec, fn, ...)
  local s = assert(M.session())
  local cs = { assert(s:counter(spec)) }
  for _, c in ipairs(cs) do assert(c:start()) end
  local res = { pcall(fn, ...) }
  local out = {}
  for _, c in ipairs(cs) do
    c:stop()
    out[c:name()] = (c:read())
  end
  s:close()
  if not res[1] then error(res[2], 2) end
  return out, unpack(res, 2)
end

-- Code regions, as perfmon.region/perfmon.regions in scripts (core/region.c):
-- one event set per process, counted on each thread that begins a region.
local Regions = {}
Regions.__index = Regions
Regions.__tostring = function() return "perfscript.regions" end
local regions_obj = setmetatable({}, Regions)

local function region_error(level)
  error(ffi.string(lib.ps_regions__message()), level + 1)
end

-- A region name C can take whole, or a raised error, as for the Lua 5.4 binding.
local function region_name(name, fname)
  if type(name) ~= "string" then
    error(("bad argument #1 to '%s' (string expected, got %s)"):format(fname, type(name)), 3)
  end
  local msg = text_error(name, "region name")
  if msg then error(("bad argument #1 to '%s' (%s)"):format(fname, msg), 3) end
  return name
end

function Regions:start(name)
  region_name(name, "start")
  M.poll() -- a region boundary is a safe point for overflow handlers
  if lib.ps_region__begin(name) < 0 then region_error(2) end
  return self
end

function Regions:stop(name)
  if lib.ps_region__end(region_name(name, "stop")) < 0 then region_error(2) end
  M.poll()
  return self
end

-- r:read(name) -> { calls = n, [event] = value } | nil, message
local read_calls, read_vals = ffi.new("uint64_t[1]"), ffi.new("uint64_t[16]")
local read_names = ffi.new("const char *[16]")
function Regions:read(name)
  local n = lib.ps_region__read(region_name(name, "read"), read_calls, read_vals, 16)
  if n < 0 then return nil, ffi.string(lib.ps_regions__message()) end
  lib.ps_regions__events(read_names, 16)
  local t = { calls = tonumber(read_calls[0]) }
  for i = 0, n - 1 do t[ffi.string(read_names[i])] = tonumber(read_vals[i]) end
  return t
end

-- r:report([format]) -> text: "table" (default), "csv" or "json"
function Regions:report(format)
  local buf, len = ffi.new("char *[1]"), ffi.new("size_t[1]")
  local f = lib.open_memstream(buf, len)
  if f == nil then error("perfscript: open_memstream: " .. strerror(ffi.errno()), 2) end
  local rc = lib.ps_regions__report(f, format or "table")
  lib.fclose(f)
  local text = ffi.string(buf[0], len[0])
  lib.free(buf[0])
  if rc < 0 then error("bad argument #1 to 'report' (want \"table\", \"csv\" or \"json\")", 2) end
  return text
end

-- perfscript.regions([spec]) -> regions | nil, message: spec, else
-- $PERFSCRIPT_EVENTS, else task-clock.
function M.regions(spec)
  if spec ~= nil then
    local tmsg, tcode = text_error(spec, "event string")
    if tmsg then return nil, tmsg, tcode end
  end
  local msg = ffi.new("char[512]")
  local rc = lib.ps_regions__init(spec, msg, 512)
  if rc < 0 then return nil, ffi.string(msg), -rc end
  return regions_obj
end

-- perfscript.region(name, fn, ...) -> fn's results, fn(...) inside region name
function M.region(name, fn, ...)
  region_name(name, "region")
  M.poll()
  if lib.ps_region__begin(name) < 0 then region_error(2) end
  local res = { pcall(fn, ...) }
  local rc = lib.ps_region__end(name)
  if not res[1] then error(res[2], 0) end
  if rc < 0 then region_error(2) end
  M.poll()
  return unpack(res, 2)
end

-- Overflow signals, as perfmon.overflow/perfmon.poll in scripts
-- (core/overflow.c): a sampling counter on the calling thread whose
-- overflows arrive as a signal; LuaJIT cannot run in a signal handler, so
-- the ips queue and handler(ov, ip) runs at perfscript.poll() or a region
-- boundary, as the library hands them out (ps_overflow__next). A counter
-- with a handler is made with an id as its C context; the table of live
-- ones by id has weak values: one the program drops is closed by the GC.
local Overflow = {}
Overflow.__index = Overflow
local polled, next_id = setmetatable({}, { __mode = "v" }), 0
local take_buf, ov_value = ffi.new("uint64_t[256]"), ffi.new("uint64_t[1]")

local function ov_live(self)
  if self.o == nil then closed("overflow counter", 3) end
  return self.o
end
local function ov_result(self, rc)
  if rc < 0 then return nil, strerror(rc), -rc end
  return self
end
-- An integer argument, with the Lua 5.4 binding's words for what is wrong.
local function ov_integer(v, fname, ok, what)
  local why = type(v) ~= "number" and ("number expected, got " .. type(v))
              or v % 1 ~= 0 and "number has no integer representation"
              or not ok(v) and what
  if why then error(("bad argument #1 to '%s' (%s)"):format(fname, why), 3) end
  return v
end

function Overflow:start() return ov_result(self, lib.ps_overflow__start(ov_live(self))) end
function Overflow:stop() return ov_result(self, lib.ps_overflow__stop(ov_live(self))) end
function Overflow:refresh(n)
  ov_integer(n, "refresh", function(v) return v >= 1 and v <= 2147483647 end,
             "refresh wants 1 to 2147483647 overflows")
  return ov_result(self, lib.ps_overflow__refresh(ov_live(self), n))
end
function Overflow:set_period(p)
  ov_integer(p, "set_period", function(v) return v >= 1 end, "a period is 1 or more events")
  return ov_result(self, lib.ps_overflow__set_period(ov_live(self), p))
end
function Overflow:read()
  local rc = lib.ps_overflow__read(ov_live(self), ov_value)
  if rc < 0 then return nil, strerror(rc), -rc end
  return tonumber(ov_value[0])
end
function Overflow:overflows() return tonumber(lib.ps_overflow__count(ov_live(self))) end
function Overflow:dropped() return tonumber(lib.ps_overflow__dropped(ov_live(self))) end
function Overflow:name() return ffi.string(lib.ps_overflow__name(ov_live(self))) end
-- ov:take() -> { ip, ... }: the queued ips (a counter with no handler)
function Overflow:take()
  local o, t = ov_live(self), {}
  repeat
    local n = tonumber(lib.ps_overflow__take(o, take_buf, 256))
    for i = 0, n - 1 do t[#t + 1] = tonumber(take_buf[i]) end
  until n == 0
  return t
end
function Overflow:close()
  if self.o ~= nil then
    lib.ps_overflow__free(ffi.gc(self.o, nil))
    self.o = nil
  end
end
Overflow.__tostring = function(self)
  if self.o == nil then return "perfscript.overflow (closed)" end
  return ("perfscript.overflow '%s' (%d overflows)"):format(self:name(), self:overflows())
end

-- The library's last resort when 64 counters are alive: collect the ones
-- the program dropped. A callback into LuaJIT is safe only from a C call
-- the interpreter made, so M.overflow is kept out of compiled traces.
local reclaim = ffi.cast("void (*)(void *)", function() collectgarbage() end)

-- perfscript.overflow(spec [, handler]) -> overflow | nil, message, errno
function M.overflow(spec, handler)
  if handler ~= nil and type(handler) ~= "function" then
    error("bad argument #2 to 'overflow' (function expected)", 2)
  end
  if type(spec) ~= "string" then error("bad argument #1 to 'overflow' (string expected)", 2) end
  local tmsg, tcode = text_error(spec, "event string")
  if tmsg then return nil, tmsg, tcode end
  local msg, ctx = ffi.new("char[512]"), nil
  if handler then
    next_id = next_id + 1
    ctx = ffi.cast("void *", next_id)
  end
  lib.ps_overflow__set_reclaim(reclaim, nil)
  local o = lib.ps_overflow__new(spec, nil, ctx, msg, 512)
  local err = ffi.errno()
  lib.ps_overflow__set_reclaim(nil, nil)
  if o == nil then return nil, ffi.string(msg), err end
  local ov = setmetatable({ o = ffi.gc(o, lib.ps_overflow__free), fn = handler }, Overflow)
  if handler then polled[next_id] = ov end
  return ov
end
jit.off(M.overflow)

-- perfscript.poll() -> handler calls made: run what the signals queued, one
-- at a time, so that after a handler's error the rest stay queued.
local next_ctx, next_ip = ffi.new("void *[1]"), ffi.new("uint64_t[1]")
function M.poll()
  local calls = 0
  while lib.ps_overflow__next(next_ctx, next_ip) ~= nil do
    local ov = polled[tonumber(ffi.cast("uintptr_t", next_ctx[0]))]
    if ov and ov.o ~= nil then -- else being collected: its ip goes with it
      ov.fn(ov, tonumber(next_ip[0]))
      calls = calls + 1
    end
  end
  return calls
end

-- perfscript.mount_tracefs() -> true (mounted), false (there already) | nil,
-- message, errno: tracefs for a root program on a machine without it, in a
-- mount namespace of the program's own (call it before starting threads).
function M.mount_tracefs()
  local msg = ffi.new("char[256]")
  local rc = lib.ps_tracefs__mount_private(msg, 256)
  if rc < 0 then return nil, ffi.string(msg), -rc end
  return rc > 0
end

-- perfscript.time() -> ns: the sample clock (CLOCK_MONOTONIC), read in user space.
function M.time()
  return tonumber(lib.ps_time())
end

-- perfscript.time_source() -> "tsc" | "clock_gettime", why not tsc
function M.time_source()
  local why = ffi.new("const char *[1]")
  local src = ffi.string(lib.ps_time_source(why))
  return src, ffi.string(why[0])
end

return M
