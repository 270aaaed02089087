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
-- The library is found as $PERFSCRIPT_LIB, else "perfscript" on the
-- dynamic linker's path (make install puts it there). It binds the C header
-- bindings/perfscript.h directly: the declarations below mirror it.
local ffi = require "ffi"

ffi.cdef [[
typedef uint64_t ps_handle;
struct ps_session;
struct ps_events;
struct ps_event_error {
  int code; int column; char token[64]; char suggestion[64]; char message[320];
};
enum ps_error {
  PS_ERR_SYNTAX = 4096, PS_ERR_UNKNOWN_EVENT, PS_ERR_UNKNOWN_TERM, PS_ERR_BAD_VALUE,
  PS_ERR_HANDLE, PS_ERR_NOT_SUPPORTED, PS_ERR_STATE, PS_ERR_LIMIT
};
enum ps_target_kind { PS_TARGET_SELF, PS_TARGET_COMMAND, PS_TARGET_PID, PS_TARGET_CPUS };
struct ps_target_opts {
  size_t sz; enum ps_target_kind kind; int pid; char *const *argv; const char *cpus;
};
struct ps_value { uint64_t value, raw, enabled, running; };

const char *ps_strerror(int err);
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
int ps_session__group(struct ps_session *s, ps_handle h, ps_handle *handles, size_t max);
const char *ps_session__name(const struct ps_session *s, ps_handle h);
const char *ps_session__spec(const struct ps_session *s, ps_handle h);
bool ps_session__is_open(const struct ps_session *s, ps_handle h);
]]

local lib = ffi.load(os.getenv("PERFSCRIPT_LIB") or "perfscript")
local MAX = 256 -- handles tried first; a longer string is counted and retried

local M = { version = "0.1.0" }

local function strerror(rc) return ffi.string(lib.ps_strerror(rc)) end

-- A counter: one handle of a session. Reads return Lua numbers (exact below 2^53).
local Counter = {}
Counter.__index = Counter

function Counter:start()
  local msg = ffi.new("char[1024]")
  local rc = 0
  if not lib.ps_session__is_open(self.s.ptr, self.h) then
    rc = lib.ps_session__open_counter(self.s.ptr, self.h, msg, 1024)
  end
  if rc == 0 then rc = lib.ps_session__start(self.s.ptr, self.h) end
  if rc < 0 then
    return nil, msg[0] ~= 0 and ffi.string(msg) or strerror(rc), -rc
  end
  return self
end

-- A failed call: misuse (a closed counter or session) raises, like the Lua
-- binding's; an environment failure returns nil, message, errno.
local PS_ERR_HANDLE = lib.PS_ERR_HANDLE
local function failed(rc, what)
  if -rc == PS_ERR_HANDLE then error("perfscript: " .. what .. ": the counter is closed", 3) end
  return nil, "perfscript: " .. what .. ": " .. strerror(rc), -rc
end

function Counter:stop()
  local rc = lib.ps_session__stop(self.s.ptr, self.h)
  if rc < 0 then return failed(rc, "stop") end
  return self
end

function Counter:reset()
  local rc = lib.ps_session__reset(self.s.ptr, self.h)
  if rc < 0 then return failed(rc, "reset") end
  return self
end

function Counter:read()
  local v = self.s.val
  local rc = lib.ps_session__read(self.s.ptr, self.h, v)
  if rc < 0 then
    if -rc == PS_ERR_HANDLE then error("perfscript: read: the counter is closed", 2) end
    error("perfscript: read: " .. strerror(rc), 2)
  end
  return tonumber(v.value), tonumber(v.enabled), tonumber(v.running), tonumber(v.raw)
end

function Counter:name()
  local p = lib.ps_session__name(self.s.ptr, self.h)
  if p == nil then error("perfscript: name: the counter is closed", 2) end
  return ffi.string(p)
end

-- Closing twice, or after the session closed, is harmless.
function Counter:close()
  if self.s.ptr ~= nil then lib.ps_session__free_counter(self.s.ptr, self.h) end
end

Counter.__tostring = function(c)
  local p = lib.ps_session__name(c.s.ptr, c.h)
  if p == nil then return "perfscript.counter (closed)" end
  return ("perfscript.counter '%s': %d"):format(ffi.string(p), (c:read()))
end

-- A group: counters opened and read together.
local Group = {}
Group.__index = Group

function Group:start() return Counter.start(self.counters[1]) and self end
function Group:stop() return Counter.stop(self) and self end

function Group:read()
  local vals = ffi.new("struct ps_value[?]", #self.counters)
  local n = lib.ps_session__read_group(self.s.ptr, self.h, vals, #self.counters)
  if n < 0 then
    if -n == PS_ERR_HANDLE then error("perfscript: read: the group is closed", 2) end
    error("perfscript: read: " .. strerror(n), 2)
  end
  local out = {}
  for i = 0, n - 1 do
    out[i + 1] = tonumber(vals[i].value)
    out[self.counters[i + 1]:name()] = out[i + 1]
  end
  return out, tonumber(vals[0].enabled), tonumber(vals[0].running)
end

-- A session: counters on one target (this process unless told otherwise).
local Session = {}
Session.__index = Session

-- How many events spec gives (when they did not fit in the first try).
local function count_events(spec)
  local evs = lib.ps_events__parse(spec, nil)
  local n = tonumber(lib.ps_events__count(evs))
  lib.ps_events__free(evs)
  return n
end

local ENOSPC = 28

local function allocate(self, spec)
  if self.ptr == nil then error("perfscript: the session is closed", 3) end
  if type(spec) == "string" and spec:find("\0", 1, true) then
    -- C would see the string end there
    return nil, ("NUL byte at column %d of the event string (it would end the string "
                 .. "there; event strings are text)"):format(spec:find("\0", 1, true)), 22
  end
  local err, cap = ffi.new("struct ps_event_error"), MAX
  local hs, n
  repeat
    hs = ffi.new("ps_handle[?]", cap)
    n = lib.ps_session__allocate(self.ptr, spec, hs, cap, err)
    if n == -ENOSPC then cap = count_events(spec) end
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
    error("perfscript: group wants one group, e.g. '{task-clock,page-faults}'", 2)
  end
  return g
end

function Session:close()
  if self.ptr ~= nil then
    lib.ps_session__free(ffi.gc(self.ptr, nil))
    self.ptr = nil
  end
end

-- perfscript.session([{pid = PID} | {cpus = "0-1"}]) -> session | nil, message
function M.session(opts)
  opts = opts or {}
  local t = ffi.new("struct ps_target_opts")
  t.sz = ffi.sizeof(t)
  if opts.pid then
    t.kind, t.pid = lib.PS_TARGET_PID, opts.pid
  elseif opts.cpus then
    t.kind = lib.PS_TARGET_CPUS
    if opts.cpus ~= true then t.cpus = opts.cpus end
  end
  local ptr = lib.ps_session__new(t)
  if ptr == nil then return nil, "perfscript: cannot create the session: " .. strerror(ffi.errno()) end
  return setmetatable({ ptr = ffi.gc(ptr, lib.ps_session__free), val = ffi.new("struct ps_value") },
                      Session)
end

-- perfscript.parse(spec) -> { {name =, leader =}, ... } | nil, message, column:
-- the events a string names, without opening anything.
function M.parse(spec)
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

function Regions:start(name)
  M.poll() -- a region boundary is a safe point for overflow handlers
  if lib.ps_region__begin(name) < 0 then region_error(2) end
  return self
end

function Regions:stop(name)
  if lib.ps_region__end(name) < 0 then region_error(2) end
  M.poll()
  return self
end

-- r:read(name) -> { calls = n, [event] = value } | nil, message
local read_calls, read_vals = ffi.new("uint64_t[1]"), ffi.new("uint64_t[16]")
local read_names = ffi.new("const char *[16]")
function Regions:read(name)
  local n = lib.ps_region__read(name, read_calls, read_vals, 16)
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
  local msg = ffi.new("char[512]")
  if lib.ps_regions__init(spec, msg, 512) < 0 then return nil, ffi.string(msg) end
  return regions_obj
end

-- perfscript.region(name, fn, ...) -> fn's results, fn(...) inside region name
function M.region(name, fn, ...)
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
-- boundary. Live counters with a handler are kept in a table with weak
-- keys: one the program drops is closed by the GC.
local Overflow = {}
Overflow.__index = Overflow
local handlers = setmetatable({}, { __mode = "k" })
local take_buf, ov_value = ffi.new("uint64_t[256]"), ffi.new("uint64_t[1]")

local function ov_live(self)
  if self.o == nil then error("attempt to use a closed overflow counter", 3) end
  return self.o
end
local function ov_result(self, rc)
  if rc < 0 then return nil, strerror(rc), -rc end
  return self
end

function Overflow:start() return ov_result(self, lib.ps_overflow__start(ov_live(self))) end
function Overflow:stop() return ov_result(self, lib.ps_overflow__stop(ov_live(self))) end
function Overflow:refresh(n)
  if type(n) ~= "number" or n < 1 then error("bad argument #1 to 'refresh' (refresh wants 1 or more overflows)", 2) end
  return ov_result(self, lib.ps_overflow__refresh(ov_live(self), n))
end
function Overflow:set_period(p)
  if type(p) ~= "number" or p < 1 then error("bad argument #1 to 'set_period' (a period is 1 or more events)", 2) end
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

-- perfscript.overflow(spec [, handler]) -> overflow | nil, message
function M.overflow(spec, handler)
  if handler ~= nil and type(handler) ~= "function" then
    error("bad argument #2 to 'overflow' (function expected)", 2)
  end
  local msg = ffi.new("char[512]")
  local o = lib.ps_overflow__new(spec, nil, nil, msg, 512)
  if o == nil and ffi.errno() == lib.PS_ERR_LIMIT then
    collectgarbage() -- counters the program dropped hold slots
    o = lib.ps_overflow__new(spec, nil, nil, msg, 512)
  end
  if o == nil then return nil, ffi.string(msg) end
  local ov = setmetatable({ o = ffi.gc(o, lib.ps_overflow__free) }, Overflow)
  if handler then handlers[ov] = handler end
  return ov
end

-- perfscript.poll() -> handler calls made: run what the signals queued
function M.poll()
  if next(handlers) == nil then return 0 end -- regions call this often
  local calls = 0
  local pending = {}
  for ov, fn in pairs(handlers) do pending[#pending + 1] = { ov, fn } end
  for _, p in ipairs(pending) do
    local ov, fn = p[1], p[2]
    -- one at a time: after a handler's error the rest stay queued
    while ov.o ~= nil and lib.ps_overflow__take(ov.o, take_buf, 1) == 1 do
      fn(ov, tonumber(take_buf[0]))
      calls = calls + 1
    end
  end
  return calls
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
