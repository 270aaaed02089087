-- stat.lua: perf stat, built from tapsets. Counts what `perf stat` counts
-- by default (task-clock, context-switches, cpu-migrations, page-faults,
-- cycles, instructions, branches, branch-misses) and prints it in perf
-- stat's layout, "<not supported>" for events this machine cannot count.
-- --interval MS adds perf stat -I style reports (--csv, --json for -x/-j).
--   perfscript examples/stat.lua -c './app args' [--interval MS [--csv|--json]]
local metrics = require "metrics"
local interval = require "interval"

local opts, i = { format = "table" }, 1
while arg[i] do
  local a = arg[i]
  if a == "--interval" and tonumber(arg[i + 1]) then opts.ms = tonumber(arg[i + 1]); i = i + 1
  elseif a == "--csv" then opts.format = "csv"
  elseif a == "--json" then opts.format = "json"
  else error(("stat.lua: bad argument '%s' (--interval MS, --csv, --json)"):format(a), 0)
  end
  i = i + 1
end

local set = metrics.open(metrics.perf_stat)

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

probe("end", function()
  local _, wall = set:read()
  if target_command() then
    printf("\n Performance counter stats for '%s':\n\n", target_command())
  else
    printf("\n Performance counter stats for process id '%d':\n\n", target())
  end
  io.write(set:stat_report())
  printf("\n %17.9f seconds time elapsed\n\n", wall / 1e9)
end)
