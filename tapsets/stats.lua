-- stats.lua: SystemTap-style statistical aggregates for perfscript scripts.
-- stats.new() is stap's `x <<< v` with @count @sum @min @max @avg
-- @variance @hist_log @hist_linear; stats.keyed() is an array of them
-- indexed by any key or key tuple, with sorted iteration and top-N.
-- Aggregates never printed by the script are printed at session end.
--
-- Why values are kept as a value -> count map: adding is one table update
-- (the fastest thing Lua does), and every figure, including a linear
-- histogram whose bounds are only chosen when it is printed, stays exact.
-- Once an aggregate has seen more than `exact` distinct values it folds
-- the map into running sums and a log2 histogram; from then on a linear
-- histogram needs its bounds up front (stats.new{linear = {lo, hi, step}}),
-- as bpftrace's lhist() always does.
--
-- Summary mode has a C twin, perfscript.stats_core (runtime/lua_stats.c),
-- about three times faster; it is used when it loads, which is under
-- perfscript. The Lua closure below stays for LuaJIT and plain Lua, and
-- both give the same figures to the last bit (tests/spec/stats_spec.lua).
--
-- Written for Lua 5.4 under perfscript and kept to Lua 5.1 syntax so the
-- same file loads under LuaJIT (no //, no bit operators, no <close>).
local hist = require "stats_hist"
-- Only the module perfscript registers itself: never a file that happens to
-- be on the path (under LuaJIT, ./perfscript/stats_core.lua would load).
local core = package.preload["perfscript.stats_core"] and require("perfscript.stats_core")
if not core then core = nil end

local M = {}
M._core = core ~= nil -- whether the C summary mode loaded (for the tests)
M._pure = false       -- aggregates created while true use the Lua one
local floor, huge, type, pairs = math.floor, math.huge, type, pairs

local DEFAULT_EXACT = 1024

-- Autoprint bookkeeping: a weak list, so an aggregate the script dropped is
-- simply forgotten, and an ever-growing id to print in creation order.
local live = setmetatable({}, { __mode = "k" })
local next_id, autoprint_on = 0, true

local function creation_site()
  local info = debug and debug.getinfo and debug.getinfo(4, "Sl")
  if info and info.short_src then return info.short_src:match("[^/]*$") .. ":" .. (info.currentline or 0) end
  return "?"
end

local function register(agg, opts)
  next_id = next_id + 1
  agg._id = next_id
  agg._name = opts.name or ("stats@" .. creation_site())
  if opts.autoprint ~= false then live[agg] = true end
end

local function parse_opts(opts)
  if type(opts) == "string" then return { name = opts } end
  if opts ~= nil and type(opts) ~= "table" then
    error("stats: options must be a name or a table, got " .. type(opts), 3)
  end
  return opts or {}
end

local function check_linear(lo, hi, step, level)
  if type(lo) ~= "number" or type(hi) ~= "number" or type(step) ~= "number" then
    error("hist_linear: want numbers lo, hi, step", level)
  end
  if step <= 0 or hi <= lo then error("hist_linear: want lo < hi and step > 0", level) end
end

---------------------------------------------------------------- aggregates
local Stats = {}
Stats.__index = Stats

-- Summary mode (after too many distinct values): running figures held in
-- upvalues of a closure that replaces the add method, since upvalues cost
-- a fraction of table fields. Sums are of v - shift, shift being the first
-- value, so the variance keeps its digits when values are large and close.
local function summary(shift, lin)
  local n, sd, sd2, mn, mx = 0, 0, 0, huge, -huge
  local h = {}
  for k = -66, 66 do h[k] = 0 end -- no `or 0` on the hot path
  local blo, bhi, bk = 1, 0, 0     -- the last log bucket; empty for now
  local log_bucket, linear_bucket = hist.log_bucket, hist.linear_bucket
  local function bucket(v)
    if v >= blo and v < bhi then return bk end
    if v ~= v or v == huge or v == -huge then
      error("stats add: want a finite number, got " .. (v ~= v and "nan" or tostring(v)), 3)
    end
    -- values come in runs of one magnitude: remember this one's bucket
    local k = log_bucket(v)
    if k > 0 then blo, bhi, bk = 2 ^ (k - 1), 2 ^ k, k end
    if not h[k] then h[k] = 0 end -- floats beyond 2^66
    return k
  end
  local function add(_, v)
    -- the bucket first: a non-number, NaN or inf raises before any change
    local k = bk
    if not (v >= blo and v < bhi) then k = bucket(v) end
    local d = v - shift
    n, sd, sd2 = n + 1, sd + d, sd2 + d * d
    if v < mn then mn = v end
    if v > mx then mx = v end
    h[k] = h[k] + 1
    if lin then
      k = linear_bucket(v, lin.lo, lin.hi, lin.step)
      lin.counts[k] = (lin.counts[k] or 0) + 1
    end
  end
  -- c copies of v at once: how the exact map is folded in
  local function add_many(v, c)
    local d = v - shift
    n, sd, sd2 = n + c, sd + d * c, sd2 + d * d * c
    if v < mn then mn = v end
    if v > mx then mx = v end
    local k = bucket(v)
    h[k] = h[k] + c
    if lin then
      k = linear_bucket(v, lin.lo, lin.hi, lin.step)
      lin.counts[k] = (lin.counts[k] or 0) + c
    end
  end
  local function figures() return n, sd, sd2, mn, mx, shift end
  local function log() return h end
  return add, figures, log, add_many
end

-- Exact mode: the hot path is the first two lines; a new value takes the
-- slow path, which also refuses what cannot be a table key or a number.
function Stats:add(v)
  local f = self._f
  local c = f[v]
  if c then f[v] = c + 1 else self:_new_value(v) end
end

function Stats:_new_value(v)
  if type(v) ~= "number" or v ~= v then
    error("stats add: want a number, got " .. (v ~= v and "nan" or type(v)), 3)
  end
  -- an infinity has no log bucket, and would make the histogram endless
  if v == huge or v == -huge then error("stats add: want a finite number, got " .. tostring(v), 3) end
  self._nd = self._nd + 1
  self._f[v] = 1
  if self._nd > self._exact then self:_spill() end
end

-- Leave exact mode: fold the map into the running figures for good.
function Stats:_spill()
  local f = self._f
  self._f = nil
  local add_many
  local make = core and not self._pure and core.summary or summary
  self.add, self._summary, self._log, add_many = make(next(f), self._lin)
  for v, c in pairs(f) do add_many(v, c) end
end

-- n, sum, min, max of either mode.
function Stats:_figures()
  local f = self._f
  if not f then
    local n, sd, _, mn, mx, shift = self._summary()
    return n, n * shift + sd, mn, mx
  end
  local n, sum, mn, mx = 0, 0, huge, -huge
  for v, c in pairs(f) do
    n, sum = n + c, sum + v * c
    if v < mn then mn = v end
    if v > mx then mx = v end
  end
  if n == 0 then return 0, 0 end
  return n, sum, mn, mx
end

function Stats:count() return (self:_figures()) end
function Stats:sum() local _, s = self:_figures(); return s end
function Stats:min() local _, _, mn = self:_figures(); return mn end
function Stats:max() local _, _, _, mx = self:_figures(); return mx end

function Stats:avg()
  local n, sum = self:_figures()
  if n > 0 then return sum / n end
end

-- The sample variance, S / (n - 1) as SystemTap's @variance defines it; 0
-- for fewer than two values, nil for none.
function Stats:variance()
  local f = self._f
  if not f then
    local n, sd, sd2 = self._summary()
    return (sd2 - sd * sd / n) / (n - 1)
  end
  local n, sum = self:_figures()
  if n == 0 then return nil end
  if n < 2 then return 0 end
  local mean, s = sum / n, 0
  for v, c in pairs(f) do s = s + (v - mean) * (v - mean) * c end
  return s / (n - 1)
end

function Stats:stddev()
  local v = self:variance()
  return v and math.sqrt(v)
end

function Stats:reset()
  self.add = nil
  self._f, self._nd = {}, 0
  self._summary, self._log = nil, nil
  if self._lin then self._lin.counts = {} end
end

-- {lo, hi, count} per power-of-two bucket, the ranges of bpftrace's hist().
function Stats:buckets_log()
  local counts
  if self._f then
    counts = {}
    for v, c in pairs(self._f) do
      local k = hist.log_bucket(v)
      counts[k] = (counts[k] or 0) + c
    end
  else
    counts = self._log()
  end
  return hist.log_rows(counts)
end

function Stats:_linear_counts(lo, hi, step, level)
  local lin = self._lin
  if lo == nil and lin then lo, hi, step = lin.lo, lin.hi, lin.step end
  check_linear(lo, hi, step, level + 1)
  if not self._f then
    if not (lin and lin.lo == lo and lin.hi == hi and lin.step == step) then
      error(("hist_linear(%s, %s, %s): this aggregate has seen more than %d distinct values " ..
             "and kept no such histogram; declare it when creating the aggregate: " ..
             "stats.new{linear = {%s, %s, %s}} (or raise exact =)"):format(lo, hi, step,
             self._exact, lo, hi, step), level)
    end
    return lin.counts, lo, hi, step
  end
  local counts = {}
  for v, c in pairs(self._f) do
    local k = hist.linear_bucket(v, lo, hi, step)
    counts[k] = (counts[k] or 0) + c
  end
  return counts, lo, hi, step
end

-- {lo, hi, count} per bucket of bpftrace's lhist(): (-inf, lo), [lo, lo+step),
-- ..., [hi, inf).
function Stats:buckets_linear(lo, hi, step)
  local counts
  counts, lo, hi, step = self:_linear_counts(lo, hi, step, 3)
  return hist.linear_rows(counts, lo, hi, step)
end

function Stats:hist_log()
  self._printed = true
  return hist.format(self:buckets_log())
end

function Stats:hist_linear(lo, hi, step)
  self._printed = true
  local counts
  counts, lo, hi, step = self:_linear_counts(lo, hi, step, 3)
  return hist.format(hist.linear_rows(counts, lo, hi, step), true)
end

local function num(x)
  if x == floor(x) and x > -2^63 and x < 2^63 then return ("%d"):format(x) end
  return ("%.3f"):format(x)
end

-- The line SystemTap prints for an aggregate it autoprints.
function Stats:summary(name)
  self._printed = true
  local n, sum, mn, mx = self:_figures()
  name = name or self._name
  if n == 0 then return name .. " @count=0" end
  return ("%s @count=%d @min=%s @max=%s @sum=%s @avg=%s"):format(name, n, num(mn),
    num(mx), num(sum), num(sum / n))
end

function Stats:report()
  local text = self:summary() .. "\n"
  if self:count() > 0 then text = text .. self:hist_log() end
  return text
end

Stats.__tostring = function(self) return self:summary() end

local function new_stats(opts, child)
  local s = setmetatable({ _f = {}, _nd = 0, _exact = opts.exact or DEFAULT_EXACT }, Stats)
  if M._pure or opts._pure then s._pure = true end -- the tests' switch to the Lua summary mode
  if opts.linear then
    local l = opts.linear
    check_linear(l[1], l[2], l[3], 4)
    s._lin = { lo = l[1], hi = l[2], step = l[3], counts = {} }
  end
  if not child then register(s, opts) end
  return s
end

function M.new(opts) return new_stats(parse_opts(opts)) end

---------------------------------------------------------------- keyed
local Keyed = {}
Keyed.__index = Keyed

local TUPLE = "\0\0" -- prefix of a key tuple's string form; no sane key starts so

function Keyed:add(key, v)
  local s = self._map[key]
  if s == nil then s = self:_slot(key) end
  s:add(v or 1)
end

function Keyed:_slot(key)
  local tk = type(key)
  if key == nil or key ~= key then error("keyed add: key is " .. tostring(key), 3) end
  local disp = key
  if tk == "table" then
    local parts = {}
    for i = 1, #key do parts[i] = tostring(key[i]) end
    key = TUPLE .. table.concat(parts, "\0")
  end
  local s = self._map[key]
  if s == nil then
    s = new_stats(self._opts, true)
    self._map[key] = s
    self._disp[s] = disp
    self._len = self._len + 1
  end
  return s
end

function Keyed:get(key)
  local s = self._map[key]
  if s == nil and type(key) == "table" then
    local parts = {}
    for i = 1, #key do parts[i] = tostring(key[i]) end
    s = self._map[TUPLE .. table.concat(parts, "\0")]
  end
  return s
end

function Keyed:len() return self._len end

function Keyed:reset()
  self._map, self._disp, self._len = {}, setmetatable({}, { __mode = "k" }), 0
end

-- Order keys of mixed kinds: numbers, then strings, then tuples (element
-- by element); stable and total so sorted output never depends on hashing.
local kind_rank = { number = 1, boolean = 2, string = 3, table = 4 }
local function key_less(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return (kind_rank[ta] or 5) < (kind_rank[tb] or 5) end
  if ta == "number" or ta == "string" then return a < b end
  if ta == "table" then
    for i = 1, math.max(#a, #b) do
      if a[i] == nil then return true end
      if b[i] == nil then return false end
      if a[i] ~= b[i] then return key_less(a[i], b[i]) end
    end
    return false
  end
  return tostring(a) < tostring(b)
end
M.key_less = key_less

local fields = { count = true, sum = true, min = true, max = true, avg = true, variance = true }

-- Rows {key, value, stats} ordered by `by` ("key" or a figure), `order`
-- "asc" or "desc" (default: desc for figures, asc for keys); ties by key.
function Keyed:_rows(by, order)
  by = by or "count"
  if by ~= "key" and not fields[by] then
    error("keyed: cannot sort by '" .. tostring(by) .. "' (key, count, sum, min, max, avg, variance)", 4)
  end
  local desc = order == "desc" or (order == nil and by ~= "key")
  local rows = {}
  for _, s in pairs(self._map) do
    local key = self._disp[s]
    rows[#rows + 1] = { key = key, stats = s, value = by == "key" and key or s[by](s) }
  end
  table.sort(rows, function(a, b)
    if by ~= "key" and a.value ~= b.value then
      if desc then return a.value > b.value end
      return a.value < b.value
    end
    if desc and by == "key" then return key_less(b.key, a.key) end
    return key_less(a.key, b.key)
  end)
  self._printed = true
  return rows
end

-- for key, stats, value in k:sorted("sum") do ... end
function Keyed:sorted(by, order)
  local rows, i = self:_rows(by, order), 0
  return function()
    i = i + 1
    local r = rows[i]
    if r then return r.key, r.stats, r.value end
  end
end

-- The n largest by `by` (default count): an array of {key=, value=, stats=}.
function Keyed:top(n, by)
  local rows = self:_rows(by, "desc")
  for i = #rows, (n or 10) + 1, -1 do rows[i] = nil end
  return rows
end

local function key_string(key)
  if type(key) ~= "table" then return tostring(key) end
  local parts = {}
  for i = 1, #key do parts[i] = tostring(key[i]) end
  return table.concat(parts, ",")
end
M.key_string = key_string

-- SystemTap's autoprint lines, name[key] @count=... one per key, largest
-- count first.
function Keyed:report(by, n)
  local out = {}
  for i, r in ipairs(self:_rows(by, nil)) do
    if n and i > n then break end
    out[#out + 1] = r.stats:summary(("%s[%s]"):format(self._name, key_string(r.key))) .. "\n"
  end
  return table.concat(out)
end

Keyed.__tostring = function(self) return self:report() end

function M.keyed(opts)
  opts = parse_opts(opts)
  local k = setmetatable({ _opts = { exact = opts.exact, linear = opts.linear, _pure = M._pure } }, Keyed)
  if opts.linear then check_linear(opts.linear[1], opts.linear[2], opts.linear[3], 3) end
  k:reset()
  register(k, opts)
  return k
end

---------------------------------------------------------------- autoprint
function M.autoprint(on)
  if on ~= nil then autoprint_on = on and true or false end
  return autoprint_on
end

-- What the end(1000) probe prints: every live aggregate with data that the
-- script never printed, in creation order.
function M.pending()
  local list = {}
  for agg in pairs(live) do
    local has = getmetatable(agg) == Keyed and agg._len > 0 or getmetatable(agg) == Stats and agg:count() > 0
    if not agg._printed and has then list[#list + 1] = agg end
  end
  table.sort(list, function(a, b) return a._id < b._id end)
  return list
end

function M.print_pending(write)
  write = write or io.write
  if not autoprint_on then return 0 end
  local list = M.pending()
  for _, agg in ipairs(list) do write(agg:report()) end
  return #list
end

-- perfscript's probe(): run after the script's own end probes. Elsewhere
-- (plain Lua, LuaJIT) there is no session end, and nothing to register.
if type(probe) == "function" then
  probe("end(1000)", function() M.print_pending() end)
end

return M
