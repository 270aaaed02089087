-- runqlat.lua: how long runnable tasks wait for a CPU, from the scheduler's
-- tracepoints, like bpftrace's runqlat.bt: the time from sched_wakeup (or
-- sched_wakeup_new) of a task, or from its being preempted while runnable,
-- to the sched_switch that puts it back on a CPU, as a log2 histogram in
-- microseconds. The tracepoints sample every hit, with their fields in
-- s.args; samples of every CPU reach the handlers in time order, so one
-- table of "runnable since" times is enough.
--
-- A wait involves two tasks: the one that wakes or preempts it and the one
-- that waits, and the tracepoints fire in the first one's context. So they
-- are watched on every CPU (-a), and a command's waits are told apart by
-- the task in the event's fields: with -a -c 'CMD' (or --pid PID) only the
-- waits of the command's (the process's) threads and of what it forks
-- count. On -c or -p alone the kernel would show only the hits in the
-- target's own context, missing every wake-up by another task, so it is
-- refused.
--   perfscript examples/runqlat.lua -a -T 5
--   perfscript examples/runqlat.lua -a -c './app args'
--   perfscript examples/runqlat.lua -a -T 5 --pid 1234
--   perfscript examples/runqlat.lua -a 1 3      (bcc's: a histogram a second, three times)
local args = require "args"
local opts = args.parse(arg, {
  name = "runqlat.lua",
  report = true, args = true,
  usage = "perfscript examples/runqlat.lua -a [-T SECONDS | -c 'CMD args'] [--pid PID] [INTERVAL [COUNT]]",
  summary = "How long runnable tasks wait for a CPU, as a log2 histogram in microseconds.\n" ..
            "Watches every CPU (-a); -a -c 'CMD' or --pid PID: only that command's or process's waits.",
  { "--pid", "PID", "only the waits of this process's threads and of what it forks", number = true,
    integer = true, min = 1 },
  epilog = "INTERVAL [COUNT], as bcc's runqlat: a histogram every INTERVAL seconds (each of its own\n" ..
           "waits), COUNT times, then the end.",
})
local need = args.need
local interval, count = tonumber(opts[1]), tonumber(opts[2])
if opts[1] and not (interval and interval >= 0.001) then
  args.fail("INTERVAL wants seconds, got '" .. opts[1] .. "'")
end
if opts[2] and not (count and count >= 1 and count == math.floor(count)) then
  args.fail("COUNT wants a whole number of histograms, got '" .. opts[2] .. "'")
end
if opts[3] then args.fail("unexpected argument '" .. opts[3] .. "' (INTERVAL [COUNT])") end
local stats = require "stats"

if not target_cpus() then
  io.stderr:write("runqlat.lua: a wait is seen on every CPU, not in the waiting task alone: run it with -a ",
                  "(-a -c 'CMD' for a command's waits, -a --pid PID for a process's)\n")
  exit(2)
  return
end

-- The tasks whose waits count (nil: all): the command's or the process's
-- threads, then every task they fork (sched_process_fork, on every CPU).
local mine
if opts.pid or target() ~= 0 then
  mine = {}
  local pid = opts.pid or target()
  local ls = io.popen("ls /proc/" .. math.tointeger(pid) .. "/task 2>/dev/null")
  for tid in ls:lines() do mine[tonumber(tid)] = true end
  ls:close()
  if not next(mine) then
    io.stderr:write(("runqlat.lua: no process %d\n"):format(pid))
    exit(2)
    return
  end
  fork = need(perfmon.counter("sched:sched_process_fork"))
  probe("perfmon.sample(fork)", function(s)
    if mine[s.args.parent_pid] then mine[s.args.child_pid] = true end
  end)
end

wakeup = need(perfmon.counter("sched:sched_wakeup"))
wakeup_new = need(perfmon.counter("sched:sched_wakeup_new"))
switch = need(perfmon.counter("sched:sched_switch"))
local since, oncpu, lat = {}, {}, stats.new()
local switches, disorder, unseen, total_ns = 0, 0, 0, 0

-- A wake-up of a task already runnable (preempted, or woken twice) does
-- not restart its wait, nor does one of a task still on its CPU.
local function runnable(s)
  local p = s.args.pid
  if (not mine or mine[p]) and not oncpu[p] then since[p] = since[p] or s.time end
end
probe("perfmon.sample(wakeup)", runnable)
probe("perfmon.sample(wakeup_new)", runnable)

probe("perfmon.sample(switch)", function(s)
  local a = s.args
  switches = switches + 1
  local t = since[a.next_pid]
  if t then
    since[a.next_pid] = nil
    if s.time >= t then
      lat:add((s.time - t) // 1000)
      total_ns = total_ns + (s.time - t)
    else
      disorder = disorder + 1
    end
  end
  if a.next_pid ~= 0 then oncpu[a.next_pid] = true end
  -- a task leaving a CPU it was not seen to reach: the kernel did not
  -- report that switch (the switches of some tasks are not traced), so
  -- the end of its wait is unknown and the wait is left out
  if since[a.prev_pid] then since[a.prev_pid], unseen = nil, unseen + 1 end
  oncpu[a.prev_pid] = nil
  -- switched out while still runnable (state R, or R+ when preempted): it
  -- waits from now
  if a.prev_state & 0xff == 0 and a.prev_pid ~= 0 and (not mine or mine[a.prev_pid]) then
    since[a.prev_pid] = s.time
  end
end)

-- The histogram of the waits since the last one; then a fresh start.
local lost_told = 0
local function report()
  printf("run queue latency (us): %d waits over %d context switches, %.3f ms in all\n", lat:count(),
         switches, total_ns / 1e6)
  if disorder > 0 then -- sample times come from each CPU's own clock
    printf("(%d switches stamped before their wakeup on another CPU left out)\n", disorder)
  end
  if unseen > 0 then
    printf("(%d waits whose end the kernel did not report left out)\n", unseen)
  end
  local lost = perfmon.lost(wakeup) + perfmon.lost(wakeup_new) + perfmon.lost(switch) +
               (fork and perfmon.lost(fork) or 0) - lost_told
  lost_told = lost_told + lost
  if lost > 0 then
    printf("(%d events lost: the waits they began or ended are missing; a larger -b keeps them)\n", lost)
  end
  if lat:count() > 0 then
    printf("avg %.1f us, max %d us\n%s", lat:avg(), lat:max(), lat:hist_log())
  end
  lat, switches, disorder, unseen, total_ns = stats.new(), 0, 0, 0, 0
end

local printed = 0
if interval then
  probe(("timer.ms(%d)"):format(math.max(1, math.floor(interval * 1000 + 0.5))), function()
    printf("%s\n", os.date("%H:%M:%S"))
    report()
    printed = printed + 1
    if count and printed >= count then exit() end
  end)
end
-- at the end, what the intervals have not printed yet (all of it without one)
probe("end", function()
  if not (count and printed >= count) then report() end
end)
