-- interval.lua: perf stat -I style periodic reports of any counters. Every
-- interval it prints, per counter, what was counted in that interval, the
-- rate, and how much of the interval the counter really ran (below 100%
-- when the kernel multiplexed it and the value is scaled). Three formats:
-- an aligned table like perf stat -I, perf stat -x CSV, and JSON lines with
-- perf stat -j's keys. It registers its own timer probe.
--   local interval = require "interval"
--   interval.new({ perfmon.counter("page-faults") }, { ms = 1000, format = "csv" })
--
-- A "counter" is anything with :read() returning value[, enabled, running]
-- (a perfmon counter or group, or a fake one in a spec); :name() or the
-- key of the table it was passed in names it.
local M = {}

local Report = {}
Report.__index = Report

local TIME_EVENTS = { ["task-clock"] = true, ["cpu-clock"] = true }

local function now_ns()
  if gettimeofday_ns then return gettimeofday_ns() end
  return os.time() * 1e9
end

local function num(x)
  if x == math.floor(x) and x > -2 ^ 63 and x < 2 ^ 63 then return ("%d"):format(x) end
  return ("%.2f"):format(x)
end

-- Flatten counters into {name, obj, member}: a group is one entry per member.
local function entries(counters)
  local list, keys = {}, {}
  for k in pairs(counters) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) == type(b) then return a < b end
    return type(a) == "number"
  end)
  for _, k in ipairs(keys) do
    local c = counters[k]
    if type(c) ~= "table" and type(c) ~= "userdata" or not c.read then
      error(("interval: counter '%s' has no :read() method"):format(tostring(k)), 3)
    end
    local names = c.names and c:names()
    if names then
      for i, n in ipairs(names) do list[#list + 1] = { name = n, obj = c, member = i } end
    else
      local name = type(k) == "string" and k or (c.name and c:name()) or ("counter" .. k)
      list[#list + 1] = { name = name, obj = c }
    end
  end
  return list
end

-- Current value, enabled and running of every entry (a group read once).
local function snapshot(list)
  local cache, out = {}, {}
  for i, e in ipairs(list) do
    local r = cache[e.obj]
    if not r then
      r = { e.obj:read() }
      cache[e.obj] = r
    end
    local v = r[1]
    if e.member then v = v[e.member] end
    out[i] = { value = v or 0, enabled = r[2], running = r[3] }
  end
  return out
end

-- interval.new(counters, opts): opts.ms (default 1000), opts.format
-- ("table", "csv", "json"), opts.sep (CSV separator, default ","),
-- opts.write (default io.write), opts.clock (ns), opts.register (false: no
-- probes; call :tick() yourself).
function M.new(counters, opts)
  opts = opts or {}
  local format = opts.format or "table"
  if format ~= "table" and format ~= "csv" and format ~= "json" then
    error("interval: format must be table, csv or json, not '" .. tostring(format) .. "'", 2)
  end
  local self = setmetatable({
    list = entries(counters), ms = opts.ms or 1000, format = format, sep = opts.sep or ",",
    write = opts.write or io.write, clock = opts.clock or now_ns,
  }, Report)
  self:restart()
  if opts.register ~= false and type(probe) == "function" then
    -- counters opened by the implicit context start after begin: take the
    -- baseline then, and print the last partial interval at the end
    probe("begin(1000)", function() self:restart() end)
    probe(("timer.ms(%d)"):format(self.ms), function() self:tick() end)
    probe("end(-1)", function()
      if self.clock() - self.last_t >= 1e6 then self:tick() end
    end)
  end
  return self
end

function Report:restart()
  self.t0 = self.clock()
  self.last_t, self.last = self.t0, snapshot(self.list)
end

-- A rate in perf stat's metric units: K/sec, M/sec, G/sec by magnitude.
local function rate(x)
  for _, p in ipairs({ { 1e9, "G" }, { 1e6, "M" }, { 1e3, "K" } }) do
    if x >= p[1] then return x / p[1], p[2] .. "/sec" end
  end
  return x, "/sec"
end

-- Rows of the interval that ends now: {time, name, value, unit, runtime,
-- pct, metric, metric_unit, counted}.
function Report:rows()
  local t, snap = self.clock(), snapshot(self.list)
  local dt = t - self.last_t
  local rows = {}
  -- perf stat's "/sec" is per second of task-clock when it is counted, of
  -- wall time otherwise
  local per = dt
  for i, e in ipairs(self.list) do
    if TIME_EVENTS[e.name] then per = snap[i].value - self.last[i].value; break end
  end
  for i, e in ipairs(self.list) do
    local a, b = self.last[i], snap[i]
    local dv = b.value - a.value
    local r = { time = (t - self.t0) / 1e9, name = e.name, raw = dv, counted = true }
    if b.enabled then
      local de, dr = b.enabled - a.enabled, b.running - a.running
      r.runtime, r.pct = dr, de > 0 and 100 * dr / de or 0
      r.counted = de > 0 and dr > 0
    else
      r.runtime, r.pct = dt, 100 -- a counter that cannot say: always ran
    end
    if TIME_EVENTS[e.name] then
      r.value, r.unit = dv / 1e6, "msec"
      r.metric, r.metric_unit = dt > 0 and dv / dt or 0, "CPUs utilized"
    else
      r.value, r.unit = dv, ""
      r.metric, r.metric_unit = rate(per > 0 and dv / (per / 1e9) or 0)
    end
    rows[#rows + 1] = r
  end
  self.last_t, self.last = t, snap
  return rows
end

local function value_text(r)
  if not r.counted then return "<not counted>" end
  return r.unit == "msec" and ("%.2f"):format(r.value) or num(r.value)
end

local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c) return ("\\u%04x"):format(c:byte()) end) .. '"'
end

-- The text of one interval in the report's format.
function Report:format_rows(rows)
  local out = {}
  if self.format == "table" and not self.header_done then
    out[1] = "#           time             counts unit events\n"
    self.header_done = true
  end
  for _, r in ipairs(rows) do
    if self.format == "csv" then
      out[#out + 1] = table.concat({ ("%.9f"):format(r.time), value_text(r), r.unit, r.name,
        ("%d"):format(r.runtime), ("%.2f"):format(r.pct), ("%.3f"):format(r.metric), r.metric_unit },
        self.sep) .. "\n"
    elseif self.format == "json" then
      out[#out + 1] = ('{"interval": %.9f, "counter-value": %s, "unit": %s, "event": %s, ' ..
        '"event-runtime": %d, "pcnt-running": %.2f, "metric-value": %.6f, "metric-unit": %s}\n')
        :format(r.time, json_string(r.counted and ("%f"):format(r.value) or value_text(r)),
                json_string(r.unit), json_string(r.name),
                r.runtime, r.pct, r.metric, json_string(r.metric_unit))
    else
      local line = ("%15.9f %18s %-4s %-32s # %8.3f %-14s"):format(r.time, value_text(r), r.unit,
        r.name, r.metric, r.metric_unit)
      if r.pct < 100 then line = line .. ("  (%.2f%%)"):format(r.pct) end
      out[#out + 1] = line:gsub("%s+$", "") .. "\n"
    end
  end
  return table.concat(out)
end

-- Read, print and return the interval that ends now (the timer probe's job).
function Report:tick()
  local rows = self:rows()
  local text = self:format_rows(rows)
  self.write(text)
  return text, rows
end

return M
