-- sample_values.lua: a group leader that samples and reads its members. Every
-- 10 ms of CPU time (cpu-clock, the leader) the sample carries the group's
-- values, so each line shows what the members did in that slice.
--   perfscript examples/sample_values.lua -c './app args'
local g = "{cpu-clock/period=10000000/,page-faults,context-switches}:S"
leader = perfmon_allocate_counter(g)
local last, slices = nil, 0

probe("perfmon.sample(leader)", function(s)
  local v = s.values
  if last then
    printf("%6.1f ms cpu  %6d page-faults  %3d context-switches\n",
           (v[1] - last[1]) / 1e6, v[2] - last[2], v[3] - last[3])
  end
  last = { v[1], v[2], v[3] }
  slices = slices + 1
end)

probe("end", function() printf("%d slices\n", slices) end)
