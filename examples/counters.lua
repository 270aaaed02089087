-- counters.lua: perf-stat-style counts of a command. Events this machine
-- cannot count (cycles and instructions in a VM without a PMU) print
-- "not supported" instead of ending the session.
--   perfscript examples/counters.lua -c './app args'
local args = require("args")
args.parse(arg, {
  name = "counters.lua",
  report = true,
  usage = "perfscript examples/counters.lua -c 'CMD args' | -p PID | -a",
  target = true,
  summary = "perf-stat-style counts; events this machine cannot count print \"not supported\".",
})
local events = { "task-clock", "context-switches", "cpu-migrations", "page-faults",
                 "cycles", "instructions" }
local counters, t0 = {}, 0

probe("begin", function()
  for i, name in ipairs(events) do
    local c = args.need(perfmon.counter(name))
    local ok, err, code = c:start() -- opens it; nil, message when it cannot
    -- not allowed is not "not supported": perf stat ends there too
    if not ok and args.denied(code) then args.need(nil, err) end
    counters[i] = { name = name, counter = ok and c, err = err }
    if not ok then c:close() end
  end
  t0 = gettimeofday_ns()
end)

probe("end", function()
  local wall = (gettimeofday_ns() - t0) / 1e9
  printf("\n Performance counter stats for '%s':\n\n", target_command() or ("pid " .. target()))
  for _, e in ipairs(counters) do
    if not e.counter then
      printf("%18s      %-20s\n", "not supported", e.name)
    elseif e.name == "task-clock" then
      local ns = e.counter:read()
      printf("%18.2f msec %-20s # %6.3f CPUs utilized\n", ns / 1e6, e.name, ns / 1e9 / wall)
    else
      local v, enabled, running = e.counter:read()
      if not v then -- "not counted": enabled, never running
        printf("%18s      %-20s\n", "<" .. enabled .. ">", e.name)
      else
        local scaled = running < enabled and string.format("  (%.1f%%)", 100 * running / enabled) or ""
        printf("%18d      %-20s%s\n", v, e.name, scaled)
      end
    end
  end
  printf("\n %15.9f seconds time elapsed\n\n", wall)
end)
