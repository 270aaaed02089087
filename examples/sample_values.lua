-- sample_values.lua: a group leader that samples and reads its members. Every
-- 10 ms of CPU time (cpu-clock, the leader) the sample carries the group's
-- values, so each line shows what the members did in that slice.
--   perfscript examples/sample_values.lua -c './app args'
-- A sampling counter on a task is opened once per CPU and inherited by each
-- new thread and child, and a sample carries the values of the one counter
-- that overflowed, the sampled thread's on that CPU: a slice is the difference
-- from the last sample of the same thread on the same CPU (the values of two
-- CPUs or two threads do not subtract).
require("args").parse(arg, {
  name = "sample_values.lua",
  report = true,
  usage = "perfscript examples/sample_values.lua -c 'CMD args'",
  target = true,
  summary = "Every 10 ms of CPU time, what the group's members counted in that slice.",
})
local g = "{cpu-clock/period=10000000/,page-faults,context-switches}:S"
leader = perfmon_allocate_counter(g)
local last, slices = {}, 0

probe("perfmon.sample(leader)", function(s)
  local key = s.tid .. "/" .. s.cpu
  local v, prev = s.values, last[key]
  if prev then
    printf("cpu %-3d %6.1f ms cpu  %6d page-faults  %3d context-switches\n",
           s.cpu, (v[1] - prev[1]) / 1e6, v[2] - prev[2], v[3] - prev[3])
  end
  last[key] = { v[1], v[2], v[3] }
  slices = slices + 1
end)

probe("end", function() printf("%d slices\n", slices) end)
