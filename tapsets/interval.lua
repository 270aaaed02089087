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
-- key of the table it was passed in names it. A table whose value comes
-- from a perfmon counter or group names it as its field source, and its
-- read(got) is given the source's reading, got = { value, enabled, running }
-- (the source is read with the others at one moment: perfmon.read_many).
-- One with supported = false,
-- or whose read() gives nil, "not supported", is a row "<not supported>"
-- in every interval, as perf stat -I prints; nil, "not counted" a row
-- "<not counted>".
local M = {}

local Report = {}
Report.__index = Report

local TIME_EVENTS = { ["task-clock"] = true, ["cpu-clock"] = true }

local function now_ns()
  if gettimeofday_ns then return gettimeofday_ns() end
  return os.time() * 1e9
end

local function num(x)
  local i = math.tointeger(x) -- tostring, not ("%d"):format: a row's hottest call
  if i and i ~= math.mininteger then return tostring(i) end
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

-- interval.read_all(objs[, into]) -> into: every object read at one
-- moment, into[i] = { objs[i]:read() } (perfmon.read_many under
-- perfscript: counters on CPUs read each from its CPU, as perf stat
-- reads; elsewhere, a spec's stand-ins, each read in turn).
function M.read_all(objs, into)
  local pm = rawget(_G, "perfmon")
  if pm and pm.read_many then return pm.read_many(objs, into) end
  into = into or {}
  for i, o in ipairs(objs) do
    local r = into[i] or {}
    r[1], r[2], r[3] = o:read()
    into[i] = r
  end
  return into
end

-- What list reads: each entry's source (or itself), once, and the index
-- of each entry's in that list.
local function sources_of(list)
  local objs, at = {}, {}
  for i, e in ipairs(list) do
    local o = type(e.obj) == "table" and e.obj.source or e.obj
    if not at[o] then objs[#objs + 1] = o; at[o] = #objs end
    list[i].at = at[o]
  end
  return objs
end

-- Current value, enabled and running of every entry, into out's entry
-- tables (reused: a report reads every interval) or new ones, all read at
-- one moment; a group is read once for its members.
local function snapshot(self, out)
  out = out or {}
  self.got = M.read_all(self.sources, self.got)
  for i, e in ipairs(self.list) do
    local got = self.got[e.at]
    local v, en, run = got[1], got[2], got[3]
    if type(e.obj) == "table" and e.obj.source then v, en, run = e.obj:read(got) end
    local o = out[i] or {}
    out[i] = o
    if v == nil then -- nil, "not supported" or "not counted": no value
      o.value, o.enabled, o.running, o.failed = 0, nil, nil, en
    else
      if e.member then v = v[e.member] end
      o.value, o.enabled, o.running, o.failed = v or 0, en, run, nil
    end
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
  self.sources = sources_of(self.list)
  self:restart()
  if opts.register ~= false and type(probe) == "function" then
    -- counters opened by the implicit context start after begin: take the
    -- baseline then, and print the last partial interval at the end
    probe("begin(1000)", function() self:restart() end)
    probe(("timer.ms(%d)"):format(self.ms), function() self:report() end)
    probe("end(-1)", function()
      if self.clock() - self.last_t >= 1e6 then self:report() end
    end)
  end
  return self
end

function Report:restart()
  self.t0 = self.clock()
  self.last_t, self.last = self.t0, snapshot(self)
end

-- A rate in perf stat's metric units: K/sec, M/sec, G/sec by magnitude.
local function rate(x)
  if x >= 1e9 then return x / 1e9, "G/sec" end
  if x >= 1e6 then return x / 1e6, "M/sec" end
  if x >= 1e3 then return x / 1e3, "K/sec" end
  return x, "/sec"
end
M.rate = rate

-- Rows of the interval that ends now: {time, name, value, unit, runtime,
-- pct, metric, metric_unit, counted}; into rows' tables when given (the
-- timer probe's reports reuse theirs: a new table per row and interval
-- was a fifth of a 100-counter report's Lua time).
function Report:rows(rows)
  local t, snap = self.clock(), snapshot(self, self.spare)
  local dt = t - self.last_t
  rows = rows or {}
  -- perf stat's "/sec" is per second of task-clock when it is counted, of
  -- wall time otherwise
  local per = dt
  for i, e in ipairs(self.list) do
    if TIME_EVENTS[e.name] then per = snap[i].value - self.last[i].value; break end
  end
  local time = (t - self.t0) / 1e9
  for i, e in ipairs(self.list) do
    local a, b = self.last[i], snap[i]
    local dv, is_time = b.value - a.value, TIME_EVENTS[e.name]
    local supported, counted, unit, runtime, pct, value, metric, metric_unit = nil, true, nil, nil, nil, nil, nil, nil
    if e.obj.supported == false or b.failed == "not supported" then
      supported, counted, unit = false, false, is_time and "msec" or ""
    elseif b.failed then
      counted, runtime, pct, unit = false, 0, 0, is_time and "msec" or ""
    elseif b.enabled then
      local de, dr = b.enabled - a.enabled, b.running - a.running
      runtime, pct = dr, de > 0 and 100 * dr / de or 0
      counted = de > 0 and dr > 0
    else
      runtime, pct = dt, 100 -- a counter that cannot say: always ran
    end
    if supported ~= false and is_time then
      value, unit = dv / 1e6, "msec"
      metric, metric_unit = dt > 0 and dv / dt or 0, "CPUs utilized"
    elseif supported ~= false then
      value, unit = dv, ""
      metric, metric_unit = rate(per > 0 and dv / (per / 1e9) or 0)
    end
    local r = rows[i]
    if r then
      r.time, r.name, r.raw, r.counted, r.supported, r.unit = time, e.name, dv, counted, supported, unit
      r.runtime, r.pct, r.value, r.metric, r.metric_unit = runtime, pct, value, metric, metric_unit
    else -- one constructor: the table is made at its size, not grown field by field
      rows[i] = { time = time, name = e.name, raw = dv, counted = counted, supported = supported,
                  unit = unit, runtime = runtime, pct = pct, value = value, metric = metric,
                  metric_unit = metric_unit }
    end
  end
  -- the last interval's entries are filled anew next time
  self.last_t, self.last, self.spare = t, snap, self.last
  return rows
end

-- s without its trailing white space. line:gsub("%s+$", "") is quadratic in
-- the padding (each blank retries the match): 3.6 of 5.2 us a row.
function M.rtrim(s)
  local n = #s
  local b = s:byte(n)
  while b == 32 or b and b >= 9 and b <= 13 do
    n = n - 1
    b = s:byte(n)
  end
  return n == #s and s or s:sub(1, n)
end

-- The count column: "<not supported>", "<not counted>", msec with two
-- decimals, or a whole number.
local function value_text(r)
  if r.supported == false then return "<not supported>" end
  if not r.counted then return "<not counted>" end
  return r.unit == "msec" and ("%.2f"):format(r.value) or num(r.value)
end

-- A JSON string: valid UTF-8 whatever the bytes (perfmon.valid_utf8), its
-- controls, quotes and backslashes escaped.
local function json_string(s)
  return '"' .. perfmon.valid_utf8(s):gsub('[%c"\\]', function(c) return ("\\u%04x"):format(c:byte()) end) .. '"'
end

-- A rate in perf stat's metric units, as the table shows it.
local function metric_text(r)
  if not r.metric or r.supported == false or not r.counted then return "" end
  return ("%8.3f %s"):format(r.metric, r.metric_unit or "")
end

-- Blanks to pad with, by count (string.format's "%18s" and "%-32s" are a
-- C sprintf each: padding by concatenation halves a row's cost).
local BLANKS = setmetatable({}, { __index = function(t, n)
  if n <= 0 then return "" end
  local s = (" "):rep(n)
  if n <= 64 then t[n] = s end
  return s
end })

-- Event names padded to the name column, kept (at most 1024 at a time: a
-- report has one per counter, a caller might format any names).
local padded, npadded = {}, 0
local function name_column(name)
  local s = padded[name]
  if s then return s end
  if npadded >= 1024 then padded, npadded = {}, 0 end
  s = name .. BLANKS[32 - #name]
  padded[name], npadded = s, npadded + 1
  return s
end

-- An interval's time column, formatted once for its rows.
local last_time, last_time_text
local function time_text(t)
  if t ~= last_time then last_time, last_time_text = t, ("%15.9f "):format(t) end
  return last_time_text
end

-- One row in perf stat's formats, with its newline. r: {name, value,
-- unit ("msec" or ""), runtime (ns the counter ran), pct (of the time it
-- was enabled), metric, metric_unit, counted, supported (false: the
-- machine cannot count it), time (seconds, in interval reports), variance
-- (percent, of -r means)}. format is "table", "csv" (sep, default ",") or
-- "json", as perf stat prints them without -x/-j, with -x and with -j.
function M.format_row(r, format, sep)
  local ok = r.supported ~= false and r.counted
  if format == "table" and ok and r.metric and r.metric_unit and r.metric_unit ~= "" and not r.variance
    and r.pct >= 100 then
    -- the common row, padded by concatenation: the same text as the
    -- general case below
    local v, unit = value_text(r), r.unit or ""
    return (r.time and time_text(r.time) or "") .. BLANKS[18 - #v] .. v .. " " .. unit ..
      BLANKS[4 - #unit] .. " " .. name_column(r.name) .. " # " .. ("%8.3f"):format(r.metric) ..
      " " .. r.metric_unit .. "\n"
  end
  local runtime, pct = ok and math.floor(r.runtime + 0.5) or 0, ok and r.pct or 100
  if format == "csv" then
    local f = {}
    if r.time then f[#f + 1] = ("%.9f"):format(r.time) end
    f[#f + 1], f[#f + 2], f[#f + 3] = value_text(r), r.unit or "", r.name
    if r.variance then f[#f + 1] = ("%.2f%%"):format(r.variance) end
    f[#f + 1], f[#f + 2] = ("%d"):format(runtime), ("%.2f"):format(pct)
    f[#f + 1] = ok and r.metric and ("%.3f"):format(r.metric) or ""
    f[#f + 1] = ok and r.metric and r.metric_unit or ""
    return table.concat(f, sep or ",") .. "\n"
  elseif format == "json" then
    local f = {}
    if r.time then f[#f + 1] = ('"interval" : %.9f'):format(r.time) end
    f[#f + 1] = '"counter-value" : ' .. json_string(ok and ("%f"):format(r.value) or value_text(r))
    f[#f + 1] = '"unit" : ' .. json_string(r.unit or "")
    f[#f + 1] = '"event" : ' .. json_string(r.name)
    if r.variance then f[#f + 1] = ('"variance" : %.2f'):format(r.variance) end
    f[#f + 1] = ('"event-runtime" : %d'):format(runtime)
    f[#f + 1] = ('"pcnt-running" : %.2f'):format(pct)
    f[#f + 1] = ('"metric-value" : %f'):format(ok and r.metric or 0)
    f[#f + 1] = '"metric-unit" : ' .. json_string(ok and r.metric and r.metric_unit or "")
    return "{" .. table.concat(f, ", ") .. "}\n"
  end
  local line = ("%18s %-4s %-32s"):format(value_text(r), r.unit or "", r.name)
  if r.time then line = time_text(r.time) .. line end
  local metric = metric_text(r)
  if metric ~= "" then line = line .. " # " .. metric end
  if r.variance and r.variance ~= 0 and ok then line = ("%-93s( +-%6.2f%% )"):format(line, r.variance)
  elseif ok and r.pct < 100 then line = line .. ("  (%.2f%%)"):format(r.pct) end
  return M.rtrim(line) .. "\n"
end

-- The text of one interval in the report's format.
function Report:format_rows(rows)
  local out = {}
  if self.format == "table" and not self.header_done then
    out[1] = "#           time             counts unit events\n"
    self.header_done = true
  end
  for _, r in ipairs(rows) do out[#out + 1] = M.format_row(r, self.format, self.sep) end
  return table.concat(out)
end

-- Read, print and return the interval that ends now.
function Report:tick()
  local rows = self:rows()
  local text = self:format_rows(rows)
  self.write(text)
  return text, rows
end

-- The same, keeping nothing for the caller: the timer probe's job.
function Report:report()
  self.kept = self:rows(self.kept)
  self.write(self:format_rows(self.kept))
end

return M
