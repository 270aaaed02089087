-- perfstat.lua: perf stat, from the metrics and interval tapsets: a row
-- per event (a group of -e, "{a,b}", counted as one group), each with the
-- metric perf stat prints beside it, a run's values, the mean of several
-- runs with each row's variation, and the report in perf stat's layout
-- (table, CSV or JSON lines). examples/stat.lua is built on it.
--   local perfstat = require "perfstat"
--   local st = assert(perfstat.open { "task-clock", "page-faults" })
--   probe("begin", function() st:begin() end)
--   probe("end", function() io.stderr:write(st:report(st:run())) end)
local M = {}

local metrics, interval = require "metrics", require "interval"

-- What perf stat counts without -e: the clock (cpu-clock for CPUs,
-- task-clock for a task), software events and the hardware ones.
function M.defaults(cpus)
  return { cpus and "cpu-clock" or "task-clock", "context-switches", "cpu-migrations", "page-faults",
           "cycles", "instructions", "branches", "branch-misses" }
end

-- An event's name without its modifiers ("task-clock" of "task-clock:u"),
-- which says its row's unit and metric; the modifiers go to what the
-- metric divides by ("cycles:u" beside "instructions:u").
local function base_of(ev) return (ev:gsub(":[%a]*$", "")) end
local function is_clock(ev) return base_of(ev) == "task-clock" or base_of(ev) == "cpu-clock" end

-- The metric of event ev's row, as perf stat prints it, in its own group
-- with what it divides by: CPUs utilized for the clock, insn per cycle, %
-- of all branches; GHz for cycles, else per second of the clock, from the
-- clock's own row when it is counted (none without, as perf stat: a clock
-- beside every event would double what each interval reads).
function M.metric(ev)
  local function per(a, b, scale)
    return function(v) if v[b] and v[b] > 0 then return v[a] / v[b] * scale end end
  end
  local base, mod = base_of(ev), ev:match(":[%a]*$") or ""
  if is_clock(ev) then
    return { events = { ev }, unit = "CPUs utilized",
             compute = function(v, wall) if wall > 0 then return v[ev] / wall end end }
  elseif base == "instructions" then
    return { events = { ev, "cycles" .. mod }, unit = "insn per cycle", compute = per(ev, "cycles" .. mod, 1) }
  elseif base == "branch-misses" then
    return { events = { ev, "branches" .. mod }, unit = "% of all branches", compute = per(ev, "branches" .. mod, 100) }
  end
  local scale = base == "cycles" and 1 or 1e9
  return { events = { ev }, unit = base == "cycles" and "GHz" or "/sec",
           compute = function(v, _, clock_ns)
             if clock_ns and clock_ns > 0 then return v[ev] / clock_ns * scale end
           end }
end

local Stat = {}
Stat.__index = Stat

-- perfstat.open(events) -> stat, or nil, why and the exit code perf stat
-- gives: 129 for an event perfscript cannot read ("event syntax error",
-- in the parser's words), 1 when nothing at all can be counted (no event
-- this user may count, or this machine has). An event the machine does
-- not have is a row "<not supported>"; one this user may not count,
-- "<not counted>".
function M.open(events)
  local rows, groups = {}, {}
  for _, ev in ipairs(events) do
    local ok, err, code = perfmon.describe(ev)
    -- 4096..4099: malformed, unknown event, unknown term, bad value (4101,
    -- not supported here, is a row's "<not supported>")
    if not ok and code and code >= 4096 and code <= 4099 then
      return nil, ("event syntax error: '%s': %s"):format(ev, err), 129
    end
    local inside, mod = ev:match("^{(.*)}(.*)$")
    if inside then -- a row per member, named with the group's modifier, each read from the one group
      for k, member in ipairs(metrics.split_events(inside)) do
        rows[#rows + 1] = { event = member:find(":", 1, true) and member or member .. mod, group = ev, index = k }
      end
    else
      rows[#rows + 1] = { event = ev }
    end
  end
  local function group_opener(spec)
    return function()
      groups[spec] = groups[spec] or table.pack(perfmon.group(spec))
      return table.unpack(groups[spec], 1, 3)
    end
  end
  local set = metrics.open({})
  for i, row in ipairs(rows) do
    local def = M.metric(row.event)
    def.event, def.index = row.event, row.index
    local name = "stat#" .. i .. ":" .. row.event
    metrics.define(name, def)
    set.list[i] = metrics.open_one(name, row.group and group_opener(row.group))
  end
  local counted, first_err = false, nil
  for _, m in ipairs(set.list) do
    counted = counted or m.group ~= nil
    first_err = first_err or m.err
  end
  if not counted then return nil, "nothing could be counted: " .. tostring(first_err), 1 end
  return setmetatable({ set = set, events = events }, Stat)
end

-- Elapsed time counts from now (the command's start: a begin probe).
function Stat:begin() self.set.t0 = self.set.clock() end

-- The rows as counters of the interval tapset (stat -I): each row's own
-- event, from its metric's group's reading.
function Stat:counters()
  local counters = {}
  for _, m in ipairs(self.set.list) do
    local ev = m.def.event
    counters[#counters + 1] = { supported = m.group ~= nil, source = m.group, name = function() return ev end,
      read = function(_, got) -- its group's reading
        if not got or not got[1] then return 0 end
        return got[1][ev] or got[1][m.def.index], got[2], got[3]
      end }
  end
  return counters
end

-- This run's values: { wall = ns, rows = { {name, raw, values, runtime,
-- pct, unit, counted, supported, denied} } }, plain data (a run of
-- stat -r writes it to a file).
function Stat:run()
  local wall = self.set.clock() - self.set.t0
  local run = { wall = wall, rows = {} }
  for i, m in ipairs(self.set.list) do
    local ev = m.def.event
    local r = { name = ev, unit = is_clock(ev) and "msec" or "", supported = m.group ~= nil,
                counted = m.group ~= nil, denied = m.denied }
    if m.group then
      local v, enabled, running = m.group:read()
      r.raw, r.runtime = v[ev] or v[m.def.index], running or wall
      r.pct = enabled and enabled > 0 and 100 * running / enabled or 100
      r.counted = not enabled or running > 0
      r.values = {}
      for k, x in pairs(v) do if type(k) == "string" then r.values[k] = x end end
    elseif m.denied then
      r.supported = nil -- "<not counted>": the machine has it, this user may not count it
    end
    run.rows[i] = r
  end
  return run
end

-- Mean and the standard deviation of the mean (perf's "noise") of f(run).
local function mean_sd(runs, f)
  local n, sum, sq = #runs, 0, 0
  for _, r in ipairs(runs) do sum = sum + f(r) end
  local mean = sum / n
  for _, r in ipairs(runs) do sq = sq + (f(r) - mean) ^ 2 end
  return mean, n > 1 and math.sqrt(sq / (n - 1) / n) or 0
end

-- perfstat.mean(runs) -> the mean run: each value and the run time
-- averaged, with the variation of each row's count (and .runs).
function M.mean(runs)
  local mean = { wall = (mean_sd(runs, function(r) return r.wall end)), rows = {}, runs = runs }
  for i, first in ipairs(runs[1].rows) do
    local r = {}
    for k, v in pairs(first) do r[k] = v end
    if first.values then
      local function of(key) return function(run) return run.rows[i].values and run.rows[i].values[key] or 0 end end
      r.values = {}
      for k in pairs(first.values) do r.values[k] = mean_sd(runs, of(k)) end
      local m, sd = mean_sd(runs, of(first.name))
      r.raw, r.variance = m, m ~= 0 and 100 * sd / m or 0
      r.runtime = mean_sd(runs, function(run) return run.rows[i].runtime or 0 end)
    else
      r.variance = 0
    end
    mean.rows[i] = r
  end
  return mean
end

-- Fill the value and metric columns of a run's rows (of means, with -r).
function Stat:finish_rows(run)
  local clock_ns
  for _, r in ipairs(run.rows) do
    if r.unit == "msec" and r.values then clock_ns = clock_ns or r.raw end
  end
  for i, r in ipairs(run.rows) do
    if r.values then
      local def = self.set.list[i].def
      r.value = r.unit == "msec" and r.raw / 1e6 or math.floor(r.raw + 0.5)
      r.metric, r.metric_unit = def.compute(r.values, run.wall, clock_ns), def.unit
      if r.metric and r.metric_unit == "/sec" then r.metric, r.metric_unit = interval.rate(r.metric) end
    end
  end
  return run.rows
end

-- The report of a run (or of a mean run, with run.runs) in perf stat's
-- layout. o: format ("table", "csv", "json"), sep, what (the heading's
-- "'CMD'", "'system wide'"...), times (user and sys seconds of a command,
-- printed after the elapsed time).
function Stat:report(run, o)
  o = o or {}
  local format, text = o.format or "table", {}
  local nruns = run.runs and #run.runs
  if format == "table" then
    text[1] = ("\n Performance counter stats for %s%s:\n\n"):format(o.what or "'perfscript'",
                                                                   nruns and (" (%d runs)"):format(nruns) or "")
  end
  for _, r in ipairs(self:finish_rows(run)) do text[#text + 1] = interval.format_row(r, format, o.sep or ",") end
  if format ~= "table" then return table.concat(text) end
  text[#text + 1] = metrics.denials(self.set)
  if nruns then
    local mean, sd = mean_sd(run.runs, function(r) return r.wall / 1e9 end)
    local digits = sd > 0 and math.max(0, 2 - math.floor(math.log(sd, 10))) or 9
    local noise = mean ~= 0 and sd ~= 0 and ("  ( +-%6.2f%% )"):format(100 * sd / mean) or ""
    text[#text + 1] = ("\n %%17.%df +- %%.%df seconds time elapsed%%s\n\n"):format(digits, digits)
                      :format(mean, sd, noise)
  else
    text[#text + 1] = ("\n %17.9f seconds time elapsed\n"):format(run.wall / 1e9)
    if o.times then
      text[#text + 1] = ("\n %17.9f seconds user\n %17.9f seconds sys\n"):format(o.times[1], o.times[2])
    end
    text[#text + 1] = "\n\n"
  end
  return table.concat(text)
end

-- What perf stat's heading names: "'system wide'" or "'CPU(s) 0,1'" for
-- CPUs (with a command too: what is counted is the CPUs), "'CMD'", or
-- "process id 'PID'".
function M.what(cpus, command, pid)
  if cpus then
    local f = io.open("/sys/devices/system/cpu/online")
    local online, n = f and f:read("l") or "", 0
    if f then f:close() end
    for a, b in online:gmatch("(%d+)%-?(%d*)") do n = n + (b ~= "" and b - a + 1 or 1) end
    return #cpus == n and "'system wide'" or ("'CPU(s) %s'"):format(table.concat(cpus, ","))
  end
  return command and ("'%s'"):format(command) or ("process id '%d'"):format(pid)
end

-- A run's values to path (for stat -r's other runs): true, or nil and why.
local function serialize(x)
  if type(x) == "table" then
    local parts = {}
    for k, v in pairs(x) do parts[#parts + 1] = ("[%s] = %s"):format(serialize(k), serialize(v)) end
    return "{ " .. table.concat(parts, ", ") .. " }"
  end
  return type(x) == "string" and ("%q"):format(x) or tostring(x)
end
function M.save_run(path, run)
  local f, err = io.open(path, "w")
  if not f then return nil, err end
  local ok, werr = f:write("return " .. serialize(run))
  local closed, cerr = f:close()
  if not ok or not closed then return nil, werr or cerr end
  return true
end

local function shell_quote(s) return "'" .. s:gsub("'", [['\'']]) .. "'" end

-- Runs 2..o.runs of o.command, appended to runs: each a perfscript run of
-- o.script (this one) with -e for each of o.events and --run-values FILE,
-- one after another; the command's output goes where this one's does. Its
-- exit status does not matter, as with perf stat -r; a run that a signal
-- ended (perfscript passes a Ctrl-C on to the run under way, which then
-- exits 128+N) is left out and ends the repeats, as is one that wrote no
-- values. Says so on stderr as o.who.
function M.more_runs(runs, o)
  local link = io.popen("readlink /proc/" .. pid() .. "/exe") -- this very binary
  local exe = link:read("l")
  link:close()
  local tmp = os.tmpname()
  local evs = {}
  for _, ev in ipairs(o.events) do evs[#evs + 1] = "-e " .. shell_quote(ev) end
  local cmd = ("%s %s -c %s %s --run-values %s"):format(shell_quote(exe), shell_quote(o.script),
    shell_quote(o.command), table.concat(evs, " "), shell_quote(tmp))
  for _ = 2, o.runs do
    io.stdout:flush()
    local _, how, code = os.execute(cmd)
    local f = io.open(tmp)
    local chunk = f and f:read("a")
    if f then f:close() end
    local run = chunk and chunk:match("^return ") and load(chunk, "=run", "t", {})
    local signalled = how == "signal" or code == 128 + 2 or code == 128 + 15
    if signalled or not run then
      io.stderr:write(("%s: run %d of %d %s; the means are of %d runs\n"):format(o.who or "perfstat", #runs + 1,
        o.runs, signalled and "was interrupted" or "failed", #runs))
      break
    end
    runs[#runs + 1] = run()
  end
  os.remove(tmp)
  return runs
end

return M
