-- stat.lua: perf stat, built from tapsets. Counts what `perf stat` counts
-- by default (task-clock, context-switches, cpu-migrations, page-faults,
-- cycles, instructions, branches, branch-misses), or the events of -e, and
-- prints it in perf stat's layout: "/sec" per task-clock second, "CPUs
-- utilized" = task-clock / elapsed, "<not supported>" for events this
-- machine cannot count, and the elapsed, user and sys seconds.
-- --interval MS adds perf stat -I style reports (--csv, --json for -x/-j).
-- -r N runs the command N times and prints the means, each with the
-- relative standard deviation of its mean, "( +- X% )", as perf stat -r:
-- the first run is this session's, the others are perfscript runs of this
-- script with --raw (one run's values as a Lua table), one after another.
--   perfscript examples/stat.lua -c './app args' [--events EV,EV] [--interval MS [--csv|--json]] [-r N]
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
  elseif (a == "-r" or a == "--repeat") and math.tointeger(tonumber(arg[i + 1])) then
    opts.runs = math.tointeger(tonumber(arg[i + 1])); i = i + 1
    if opts.runs < 1 then error("stat.lua: -r wants 1 or more runs", 0) end
  elseif a == "--raw" then opts.raw = true
  else error(("stat.lua: bad argument '%s' (--events EVENTS, --interval MS, --csv, --json, -r N)"):format(a), 0)
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

if opts.runs and opts.runs > 1 and not target_command() then
  error("stat.lua: -r N repeats a command: give it one with -c 'CMD'", 0)
end

local set = metrics.open(opts.events and event_metrics(opts.events) or metrics.perf_stat)
-- elapsed from the command's start, not from this script's
probe("begin", function() set.t0 = set.clock() end)

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

-- One run's values: { wall = ns, rows = { [metric] = { [event] = value }
-- or false } }, as --raw prints it for -r to load.
local function this_run()
  local rows, wall = set:read()
  local run = { wall = wall, rows = {} }
  for _, r in ipairs(rows) do
    local v = false
    if r.supported then
      v = {}
      for k, x in pairs(r.values) do if type(k) == "string" then v[k] = x end end
    end
    run.rows[r.name] = v
  end
  return run
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

-- Runs 2..N, each a perfscript run of this script with --raw. The
-- command's exit status does not matter, as with perf stat -r; a run that
-- a signal ended (perfscript passes a Ctrl-C on to the run under way, which
-- then exits 128+N) is left out and ends the repeats, as is one that
-- printed no values.
local function more_runs(runs)
  local link = io.popen("readlink /proc/" .. pid() .. "/exe") -- this very binary
  local exe = link:read("l")
  link:close()
  local tmp = os.tmpname()
  local cmd = ("%s %s -c %s -- --raw%s > %s"):format(shell_quote(exe), shell_quote(arg[0]),
    shell_quote(target_command()), opts.events and (" --events " .. shell_quote(opts.events)) or "",
    shell_quote(tmp))
  for _ = 2, opts.runs do
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

local function noise(sd, mean)
  return mean ~= 0 and sd ~= 0 and ("( +-%6.2f%% )"):format(100 * sd / mean) or ""
end

local function repeated_report(runs)
  local lines = {}
  local wall = mean_sd(runs, function(r) return r.wall end)
  for _, m in ipairs(set.list) do
    local ev = m.def.event
    if runs[1].rows[m.name] then
      local values = {}
      for e in pairs(runs[1].rows[m.name]) do
        values[e] = mean_sd(runs, function(r) return r.rows[m.name] and r.rows[m.name][e] or 0 end)
      end
      local mean, sd = mean_sd(runs, function(r) return r.rows[m.name] and r.rows[m.name][ev] or 0 end)
      local row = metrics.stat_row(ev, mean, m.def.compute(values, wall), m.def.unit)
      local tail = noise(sd, mean)
      lines[#lines + 1] = (tail ~= "" and ("%-93s%s"):format(row, tail) or row) .. "\n"
    else
      lines[#lines + 1] = ("%18s      %s\n"):format(m.denied and "<not counted>" or "<not supported>", ev)
    end
  end
  io.write(table.concat(lines), metrics.denials(set))
  local mean, sd = mean_sd(runs, function(r) return r.wall / 1e9 end)
  local digits = sd > 0 and math.max(0, 2 - math.floor(math.log(sd, 10))) or 9
  printf(("\n %%17.%df +- %%.%df seconds time elapsed  %%s\n\n"):format(digits, digits), mean, sd, noise(sd, mean))
end

probe("end", function()
  if opts.raw then print("return " .. serialize(this_run())); return end
  if opts.runs and opts.runs > 1 then
    local runs = { this_run() }
    more_runs(runs)
    printf("\n Performance counter stats for '%s' (%d runs):\n\n", target_command(), #runs)
    repeated_report(runs)
    return
  end
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
