-- runqlat.lua: how long runnable tasks wait for a CPU, from the scheduler's
-- tracepoints, like bpftrace's runqlat.bt: the time from sched_wakeup (or
-- sched_wakeup_new) of a task, or from its being preempted while runnable,
-- to the sched_switch that puts it back on a CPU, as a log2 histogram in
-- microseconds. The tracepoints sample every hit, with their fields in
-- s.args; samples of every CPU reach the handlers in time order, so one
-- table of "runnable since" times is enough.
--   perfscript examples/runqlat.lua -a -T 5
require("args").parse(arg, {
  name = "runqlat.lua",
  usage = "perfscript examples/runqlat.lua -a -T SECONDS | -c 'CMD args'",
  summary = "How long runnable tasks wait for a CPU, as a log2 histogram in microseconds.",
})
local stats = require "stats"

wakeup = assert(perfmon.counter("sched:sched_wakeup"))
wakeup_new = assert(perfmon.counter("sched:sched_wakeup_new"))
switch = assert(perfmon.counter("sched:sched_switch"))
local since, lat, switches, disorder = {}, stats.new(), 0, 0

local function runnable(s) since[s.args.pid] = s.time end
probe("perfmon.sample(wakeup)", runnable)
probe("perfmon.sample(wakeup_new)", runnable)

probe("perfmon.sample(switch)", function(s)
  local a = s.args
  switches = switches + 1
  local t = since[a.next_pid]
  if t then
    since[a.next_pid] = nil
    if s.time >= t then lat:add((s.time - t) // 1000) else disorder = disorder + 1 end
  end
  -- switched out while still runnable (state R, or R+ when preempted): it waits from now
  if a.prev_state & 0xff == 0 and a.prev_pid ~= 0 then since[a.prev_pid] = s.time end
end)

probe("end", function()
  printf("run queue latency (us): %d waits over %d context switches\n", lat:count(), switches)
  if disorder > 0 then -- sample times come from each CPU's own clock
    printf("(%d switches stamped before their wakeup on another CPU left out)\n", disorder)
  end
  if lat:count() > 0 then
    printf("avg %.1f us, max %d us\n%s", lat:avg(), lat:max(), lat:hist_log())
  end
end)
