-- stat.lua: perf stat, built from tapsets, with perf stat's options and
-- output. Counts what perf stat counts by default (task-clock, or
-- cpu-clock with -a/-C, context-switches, cpu-migrations, page-faults,
-- cycles, instructions, branches, branch-misses), or the events of -e, and
-- reports on stderr (or -o FILE) in perf stat's layout: "/sec" per second
-- of the clock, "CPUs utilized" = clock / elapsed, "<not supported>" for
-- events this machine cannot count and "<not counted>" for those it may
-- not, then the elapsed time and the command's user and sys time (wait4's,
-- to the microsecond). -x SEP and -j give perf's CSV and JSON lines, -I MS
-- interval reports. -r N runs the command N times and prints the means,
-- each with the relative standard deviation of its mean, "( +- X% )": the
-- first run is this session's, the others perfscript runs of this script,
-- one after another, each writing its values to a file (--run-values).
--   perfscript examples/stat.lua -c './app args' [-e EV,EV] [-I MS] [-x SEP | -j] [-r N] [-o FILE]
local metrics = require "metrics"
local interval = require "interval"

local opts = require("args").parse(arg, {
  name = "stat.lua",
  report = true,
  usage = "perfscript examples/stat.lua -c 'CMD args' | -p PID | -a | -C LIST [options]",
  target = true,
  summary = "perf stat, built from tapsets: counts and rates of a command, a process or CPUs.",
  { "-e, --event", "EV[,EV]", "events to count (default: perf stat's)", key = "events", list = true },
  { "-I, --interval-print", "MS", "print the counts every MS milliseconds", key = "ms", number = true,
    integer = true, min = 1 },
  { "-x, --field-separator", "SEP", "CSV lines, fields separated by SEP", key = "sep" },
  { "-j, --json", nil, "JSON lines with perf stat -j's keys", key = "json" },
  { "-r, --repeat", "N", "run the command N times, print means and their variation",
    key = "runs", number = true, integer = true, min = 1 },
  { "--csv", nil, "the same as -x ," },
  { "--interval", "MS", "the same as -I MS", key = "ms", number = true, integer = true, min = 1 },
  { "--run-values", "FILE", "(for -r) write this run's values to FILE, no report" },
})

local fail = require("args").fail

local format = opts.json and "json" or (opts.sep or opts.csv) and "csv" or "table"
local sep = opts.sep or ","
if opts.runs and opts.runs > 1 and not target_command() then
  fail("-r N repeats a command: give it one with -c 'CMD'")
end
if opts.runs and opts.runs > 1 and opts.ms then fail("-r and -I do not go together (as in perf stat)") end
-- The report: standard error, or -o FILE (args.lua opened it already, so
-- a bad path failed before the command ran).
local out = io.stdout

-- One metric per event, in its own group with what its metric divides
-- by, as perf stat prints them: CPUs utilized for the clock, insn per
-- cycle, % of all branches; GHz for cycles, else per second of the clock,
-- from the clock's own row when it is counted (none without, as perf stat:
-- a clock beside every event would double what each interval reads).
local cpus = target_cpus()
local clock = cpus and "cpu-clock" or "task-clock"
-- An event's name without its modifiers ("task-clock" of "task-clock:u"),
-- which says its row's unit and metric; the modifiers go to what the
-- metric divides by ("cycles:u" beside "instructions:u").
local function base_of(ev) return (ev:gsub(":[%a]*$", "")) end
local function def_of(ev)
  local function per(a, b, scale)
    return function(v) if v[b] and v[b] > 0 then return v[a] / v[b] * scale end end
  end
  local base, mod = base_of(ev), ev:match(":[%a]*$") or ""
  if base == "task-clock" or base == "cpu-clock" then
    return { events = { ev }, unit = "CPUs utilized",
             compute = function(v, wall) if wall > 0 then return v[ev] / wall end end }
  elseif base == "instructions" then
    return { events = { ev, "cycles" .. mod }, unit = "insn per cycle",
             compute = per(ev, "cycles" .. mod, 1) }
  elseif base == "branch-misses" then
    return { events = { ev, "branches" .. mod }, unit = "% of all branches",
             compute = per(ev, "branches" .. mod, 100) }
  end
  local scale = base == "cycles" and 1 or 1e9
  return { events = { ev }, unit = base == "cycles" and "GHz" or "/sec",
           compute = function(v, _, clock_ns)
             if clock_ns and clock_ns > 0 then return v[ev] / clock_ns * scale end
           end }
end

local events = {}
for _, list in ipairs(opts.events or {}) do
  for _, ev in ipairs(metrics.split_events(list)) do events[#events + 1] = ev end
end
if #events == 0 then
  events = { clock, "context-switches", "cpu-migrations", "page-faults",
             "cycles", "instructions", "branches", "branch-misses" }
end
-- A group of -e, "{a,b}" or "{a,b}:u", is counted as one group, as perf
-- stat counts it: a row per member (named with the group's modifier),
-- each read from the one group. Any other event is a metric of its own.
-- An event perfscript cannot read is an error, as perf stat's "event
-- syntax error" (exit 129), in the parser's words, before the command runs.
local rows, groups = {}, {}
for _, ev in ipairs(events) do
  local ok, err, code = perfmon.describe(ev)
  -- 4096..4099: malformed, unknown event, unknown term, bad value (4101,
  -- not supported here, is a row's "<not supported>")
  if not ok and code and code >= 4096 and code <= 4099 then
    io.stderr:write(("stat.lua: event syntax error: '%s': %s\n"):format(ev, err))
    exit(129)
    return
  end
  local inside, mod = ev:match("^{(.*)}(.*)$")
  if inside then
    for k, member in ipairs(metrics.split_events(inside)) do
      rows[#rows + 1] = { event = member:find(":", 1, true) and member or member .. mod,
                          group = ev, index = k }
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
  local def = def_of(row.event)
  def.event, def.index = row.event, row.index
  local name = "stat#" .. i .. ":" .. row.event
  metrics.define(name, def)
  set.list[i] = metrics.open_one(name, row.group and group_opener(row.group))
end

-- When nothing at all can be counted (no event this user may count, or
-- this machine has), the session ends before the command runs, with the
-- reason, as perf stat's does.
local counted, first_err = false, nil
for _, m in ipairs(set.list) do
  counted = counted or m.group ~= nil
  first_err = first_err or m.err
end
if not counted then
  io.stderr:write("stat.lua: nothing could be counted: ", tostring(first_err), "\n")
  exit(1)
  return
end
-- elapsed from the command's start, not from this script's
probe("begin", function() set.t0 = set.clock() end)

if opts.ms then
  -- each row's own event, read from its metric's group
  local counters = {}
  for _, m in ipairs(set.list) do
    local ev = m.def.event
    counters[#counters + 1] = { supported = m.group ~= nil, source = m.group,
                                name = function() return ev end, read = function()
      if not m.group then return 0 end
      local v, enabled, running = m.group:read(m.values)
      m.values = v -- filled again next time
      return v[ev] or v[m.def.index], enabled, running
    end }
  end
  interval.new(counters, { ms = opts.ms, format = format, sep = sep,
                           write = function(text) out:write(text) end })
end

-- One run's rows: { wall = ns, rows = { {name, value, unit, runtime, pct,
-- metric, metric_unit, counted, supported} } }, plain data for --run-values.
local function this_run()
  local wall = set.clock() - set.t0
  local run = { wall = wall, rows = {} }
  for i, m in ipairs(set.list) do
    local ev = m.def.event
    local clock_row = base_of(ev) == "task-clock" or base_of(ev) == "cpu-clock"
    local r = { name = ev, unit = clock_row and "msec" or "",
                supported = m.group ~= nil, counted = m.group ~= nil, denied = m.denied }
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

-- Fill the value and metric columns of a run's rows (of means, with -r).
local function finish_rows(run)
  local clock_ns
  for _, r in ipairs(run.rows) do
    if r.unit == "msec" and r.values then clock_ns = clock_ns or r.raw end
  end
  for i, r in ipairs(run.rows) do
    if r.values then
      local m = set.list[i]
      r.value = r.unit == "msec" and r.raw / 1e6 or math.floor(r.raw + 0.5)
      r.metric = m.def.compute(r.values, run.wall, clock_ns)
      r.metric_unit = m.def.unit
      if r.metric and r.metric_unit == "/sec" then r.metric, r.metric_unit = interval.rate(r.metric) end
    end
  end
  return run.rows
end

local function serialize(x)
  if type(x) == "table" then
    local parts = {}
    for k, v in pairs(x) do parts[#parts + 1] = ("[%s] = %s"):format(serialize(k), serialize(v)) end
    return "{ " .. table.concat(parts, ", ") .. " }"
  end
  return type(x) == "string" and ("%q"):format(x) or tostring(x)
end

local function shell_quote(s) return "'" .. s:gsub("'", [['\'']]) .. "'" end

-- Runs 2..N, each a perfscript run of this script writing its values to
-- a file; the command's output goes where this one's does. Its exit status
-- does not matter, as with perf stat -r; a run that a signal ended
-- (perfscript passes a Ctrl-C on to the run under way, which then exits
-- 128+N) is left out and ends the repeats, as is one that wrote no values.
local function more_runs(runs)
  local link = io.popen("readlink /proc/" .. pid() .. "/exe") -- this very binary
  local exe = link:read("l")
  link:close()
  local tmp = os.tmpname()
  local evs = {}
  for _, ev in ipairs(events) do evs[#evs + 1] = "-e " .. shell_quote(ev) end
  local cmd = ("%s %s -c %s %s --run-values %s"):format(shell_quote(exe), shell_quote(arg[0]),
    shell_quote(target_command()), table.concat(evs, " "), shell_quote(tmp))
  for _ = 2, opts.runs do
    io.stdout:flush()
    local _, how, code = os.execute(cmd)
    local f = io.open(tmp)
    local chunk = f and f:read("a")
    if f then f:close() end
    local run = chunk and chunk:match("^return ") and load(chunk, "=run", "t", {})
    local signalled = how == "signal" or code == 128 + 2 or code == 128 + 15
    if signalled or not run then
      io.stderr:write(("stat.lua: run %d of %d %s; the means are of %d runs\n"):format(#runs + 1,
        opts.runs, signalled and "was interrupted" or "failed", #runs))
      break
    end
    runs[#runs + 1] = run()
  end
  os.remove(tmp)
end

-- Mean and the standard deviation of the mean (perf's "noise") of f(run).
local function mean_sd(runs, f)
  local n, sum, sq = #runs, 0, 0
  for _, r in ipairs(runs) do sum = sum + f(r) end
  local mean = sum / n
  for _, r in ipairs(runs) do sq = sq + (f(r) - mean) ^ 2 end
  return mean, n > 1 and math.sqrt(sq / (n - 1) / n) or 0
end

-- The mean run of several: each value and the run time averaged, with
-- the variation of each row's count.
local function mean_run(runs)
  local mean = { wall = (mean_sd(runs, function(r) return r.wall end)), rows = {} }
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

-- How many CPUs a list like "0-3,5" names.
local function count_cpus(list)
  local n = 0
  for a, b in (list or ""):gmatch("(%d+)%-?(%d*)") do n = n + (b ~= "" and b - a + 1 or 1) end
  return n
end

-- " Performance counter stats for 'CMD' (N runs):", as perf stat heads it.
local function heading(nruns)
  local what
  if cpus then -- with a command too (-a -c CMD): what is counted is the CPUs
    local f = io.open("/sys/devices/system/cpu/online")
    local online = f and f:read("l")
    if f then f:close() end
    what = #cpus == count_cpus(online) and "'system wide'" or ("'CPU(s) %s'"):format(table.concat(cpus, ","))
  elseif target_command() then
    what = ("'%s'"):format(target_command())
  else
    what = ("process id '%d'"):format(target())
  end
  return ("\n Performance counter stats for %s%s:\n\n"):format(what, nruns and (" (%d runs)"):format(nruns) or "")
end

local function write_report(run, nruns)
  local text = {}
  if format == "table" then text[1] = heading(nruns) end
  for _, r in ipairs(finish_rows(run)) do text[#text + 1] = interval.format_row(r, format, sep) end
  if format == "table" then
    text[#text + 1] = metrics.denials(set)
    if nruns then
      local mean, sd = mean_sd(run.runs, function(r) return r.wall / 1e9 end)
      local digits = sd > 0 and math.max(0, 2 - math.floor(math.log(sd, 10))) or 9
      local noise = mean ~= 0 and sd ~= 0 and ("  ( +-%6.2f%% )"):format(100 * sd / mean) or ""
      text[#text + 1] = ("\n %%17.%df +- %%.%df seconds time elapsed%%s\n\n"):format(digits, digits)
                        :format(mean, sd, noise)
    else
      text[#text + 1] = ("\n %17.9f seconds time elapsed\n"):format(run.wall / 1e9)
      local user, sys = target_times()
      if user and not cpus then -- the command's times; perf prints none for CPUs
        text[#text + 1] = ("\n %17.9f seconds user\n %17.9f seconds sys\n"):format(user, sys)
      end
      text[#text + 1] = "\n\n"
    end
  end
  out:write(table.concat(text)) -- a failed write is perfscript's exit 1, with the reason
end

probe("end", function()
  if opts.run_values then
    local f = assert(io.open(opts.run_values, "w"))
    assert(f:write("return " .. serialize(this_run())))
    assert(f:close())
    return
  end
  if opts.ms then return end
  if opts.runs and opts.runs > 1 then
    local runs = { this_run() }
    more_runs(runs)
    local mean = mean_run(runs)
    mean.runs = runs
    write_report(mean, #runs)
    return
  end
  write_report(this_run())
end)
