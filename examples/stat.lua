-- stat.lua: perf stat, built from tapsets. Counts what `perf stat` counts
-- by default (task-clock, context-switches, cpu-migrations, page-faults,
-- cycles, instructions, branches, branch-misses), or the events of -e, and
-- prints it in perf stat's layout: "/sec" per task-clock second, "CPUs
-- utilized" = task-clock / elapsed, "<not supported>" for events this
-- machine cannot count, and the elapsed, user and sys seconds.
-- --interval MS adds perf stat -I style reports (--csv, --json for -x/-j).
--   perfscript examples/stat.lua -c './app args' [--events EV,EV] [--interval MS [--csv|--json]]
-- (after "--", -e EV,EV works too: perfscript itself owns -e)
local metrics = require "metrics"
local interval = require "interval"

local opts, i = { format = "table" }, 1
while arg[i] do
  local a = arg[i]
  if a == "--interval" and tonumber(arg[i + 1]) then opts.ms = tonumber(arg[i + 1]); i = i + 1
  elseif (a == "-e" or a == "--events") and arg[i + 1] then opts.events = arg[i + 1]; i = i + 1
  elseif a == "--csv" then opts.format = "csv"
  elseif a == "--json" then opts.format = "json"
  else error(("stat.lua: bad argument '%s' (--events EVENTS, --interval MS, --csv, --json)"):format(a), 0)
  end
  i = i + 1
end

-- One metric per -e event: the event with task-clock beside it in its group,
-- so that its "/sec" is per task-clock second as perf stat's.
local function event_metrics(list)
  local names = {}
  for ev in list:gmatch("[^,]+") do
    local name = "stat:" .. ev
    if ev == "task-clock" then name = "cpu-utilization"
    elseif not metrics.defs[name] then
      metrics.define(name, { events = { ev, "task-clock" }, event = ev, unit = "/sec",
        compute = function(v) if v["task-clock"] > 0 then return v[ev] / v["task-clock"] * 1e9 end end })
    end
    names[#names + 1] = name
  end
  return names
end

local set = metrics.open(opts.events and event_metrics(opts.events) or metrics.perf_stat)

if opts.ms then
  -- each row's own event, read from its metric's group
  local counters, seen = {}, {}
  for _, m in ipairs(set.list) do
    local ev = m.def.event
    if m.group and not seen[ev] then
      seen[ev] = true
      counters[#counters + 1] = { name = function() return ev end, read = function()
        local v, enabled, running = m.group:read()
        return v[ev], enabled, running
      end }
    end
  end
  interval.new(counters, { ms = opts.ms, format = opts.format })
end

-- CPU seconds of the reaped children (perf stat's getrusage(RUSAGE_CHILDREN)):
-- cutime and cstime of /proc/self/stat, in clock ticks.
local function children_times()
  local f = io.open("/proc/self/stat")
  if not f then return end
  local s = f:read("a"); f:close()
  local fields = {}
  for w in s:match("%) (.*)"):gmatch("%S+") do fields[#fields + 1] = w end
  local p = io.popen("getconf CLK_TCK")
  local hz = p and tonumber(p:read("a")) or 100
  if p then p:close() end
  -- after "comm)": state is field 3 of stat(5), so cutime (16) is the 14th here
  return tonumber(fields[14]) / hz, tonumber(fields[15]) / hz
end

probe("end", function()
  local _, wall = set:read()
  if target_command() then
    printf("\n Performance counter stats for '%s':\n\n", target_command())
  elseif target_cpus() then
    printf("\n Performance counter stats for 'system wide':\n\n")
  else
    printf("\n Performance counter stats for process id '%d':\n\n", target())
  end
  io.write(set:stat_report())
  printf("\n %17.9f seconds time elapsed\n", wall / 1e9)
  local user, sys = children_times()
  if target_command() and user then
    printf("\n %17.9f seconds user\n %17.9f seconds sys\n", user, sys)
  end
  printf("\n")
end)
