-- offcpu.lua: where the target's threads wait. Every interval a thread of
-- the target spends off the CPU, from its switch-out to its next switch-in,
-- is measured in the kernel (perfmon.aggregate with offcpu = true on
-- sched:sched_switch: exact intervals, not samples) and summed by the
-- stacks at which the thread left the CPU and why: S (sleeping: a sleep, a
-- pipe, a lock), D (uninterruptible: disk I/O), R (runnable, waiting in the
-- run queue: preempted, or woken from S or D and not yet running, which
-- is split off the sleep at the wake-up and shown apart).
--   perfscript examples/offcpu.lua -c './server'                  top 10
--   perfscript examples/offcpu.lua -p PID -T 10 --folded off.folded   for flamegraph.pl
--   perfscript examples/offcpu.lua -a -T 5 --pprof off.pb.gz      for go tool pprof
-- A thread is seen from its creation, or from the start for one the
-- target had (-p, -a: its stacks unknown until it switches); a wait still
-- going on at the end is counted up to the end.
-- User stacks are the kernel's frame-pointer walk (--call-graph fp, the
-- default): through a library built without frame pointers (libc) they may
-- stop at its function. --call-graph dwarf copies each thread's registers
-- and 8 KiB of its user stack at the switch-out, and every interval kept
-- comes as a sample whose stack is unwound here with the binaries' DWARF
-- tables, as perf record --call-graph dwarf does on the CPU.
local opts = require("args").parse(arg, {
  name = "offcpu.lua",
  report = true,
  usage = "perfscript examples/offcpu.lua -c 'CMD args' | -p PID | -a | -C CPUS [-T SECONDS] [options]",
  target = true,
  summary = "Time threads spend off the CPU, by the stack where they left it and why (S, D, R).",
  { "--min-us", "N", "intervals shorter than N microseconds count without a stack (default 1)",
    number = true, min = 0, default = 1 },
  { "--top", "N", "stacks to print (default 10)", number = true, integer = true, min = 1, default = 10 },
  { "--folded", "FILE", "write comm;stack microseconds lines to FILE" },
  { "-f", nil, "the report is those folded lines instead of the table (bcc's offcputime -f)", key = "fold" },
  { "--pprof", "FILE", "write a pprof profile (off-cpu, nanoseconds) to FILE" },
  { "--call-graph", "fp|dwarf", "how user stacks are taken (default fp)", choices = { "fp", "dwarf" } },
})
local dwarf = opts.call_graph == "dwarf"

-- what cannot be had (no root, no BPF) is said in a line, not a traceback
local need = require("args").need
local switch = need(perfmon.counter("sched:sched_switch" .. (dwarf and "/call-graph=dwarf/" or "")))
-- the same sums either way: by key in the kernel, or with dwarf from the
-- intervals it forwards, each a sample of its switch-out (s.period ns)
local waits = need(perfmon.aggregate(switch, {
  by = dwarf and { "comm", "args.prev_state" } or { "comm", "args.prev_state", "ustack", "kstack" },
  offcpu = true, min_us = opts.min_us, forward = dwarf }))
local unwound = {}
if dwarf then
  probe(switch, function(s)
    local a = s.args
    local k = (a.prev_comm .. ";" .. a.prev_state .. ";" .. s:folded():match("^[^;]*;?(.*)$")):gsub(";$", "")
    unwound[k] = (unwound[k] or 0) + s.period
  end)
end
local started = gettimeofday_ns()

-- prev_state as the kernel reports it (TASK_REPORT): 0 and the
-- preempted flag (TASK_REPORT_MAX, 256 here) are still runnable
-- (-2: preempted time the scheduler did not count as waiting, steal)
local STATES = { [-2] = "R", [0] = "R", [1] = "S", [2] = "D", [4] = "T", [8] = "t", [128] = "I", [256] = "R" }
local function state_of(v) return STATES[v] or tostring(v) end

local where = require("profile").where

probe("end", function()
  local rows, total, folded = {}, 0, {}
  local sums = waits:read()
  if dwarf then -- the forwarded intervals, and what they leave of each sum (stackless)
    for k, ns in pairs(unwound) do
      local cs = k:match("^([^;]*;%-?%d+)")
      sums[cs] = (sums[cs] or 0) - ns
    end
    for k, ns in pairs(unwound) do sums[k] = (sums[k] or 0) + ns end
  end
  for key, ns in pairs(sums) do
    local comm, state, stack = key:match("^([^;]*);(%-?%d+);?(.*)$")
    if ns > 0 then
      rows[#rows + 1] = { comm = comm, state = state_of(tonumber(state)), stack = stack, ns = ns }
      total = total + ns
      local f = comm .. (stack ~= "" and (";" .. stack) or "")
      folded[f] = (folded[f] or 0) + ns
    end
  end
  table.sort(rows, function(a, b) return a.ns > b.ns end)
  local lines = {}
  for stack, ns in pairs(folded) do lines[#lines + 1] = ("%s %d\n"):format(stack, ns // 1000) end
  table.sort(lines)
  if opts.fold then
    io.write(table.concat(lines))
  else
    printf("%.3f s off the CPU in %d distinct stacks (stacks for intervals of %g us or more)\n",
           total / 1e9, #rows, opts.min_us)
    printf("%12s %6s %s %-16s %s\n", "ms", "%", "S", "COMM", "WHERE")
    local stackless = false
    for i = 1, math.min(opts.top, #rows) do
      local r = rows[i]
      printf("%12.3f %5.1f%% %s %-16s %s\n", r.ns / 1e6, total > 0 and 100 * r.ns / total or 0,
             r.state, r.comm, where(r.stack))
      stackless = stackless or r.stack == ""
    end
    if stackless then
      printf("(-: no stack: intervals under %g us, waits still going on at the end, %s)\n",
             opts.min_us, "threads not seen leaving the CPU")
    end
  end
  local pprof = require("pprof")
  if opts.folded then
    local ok, err = pprof.save(opts.folded, table.concat(lines))
    if not ok then io.stderr:write("offcpu.lua: cannot write ", err, "\n"); return exit(1) end
  end
  if opts.pprof then
    local prows = {}
    for _, r in ipairs(rows) do
      prows[#prows + 1] = { stack = r.comm .. (r.stack ~= "" and (";" .. r.stack) or ""), value = r.ns,
                            labels = { { key = "state", str = r.state } } }
    end
    local ok, err = pprof.write(pprof.from_folded(prows, {
      type = "off-cpu", unit = "nanoseconds", time_nanos = started,
      duration_nanos = gettimeofday_ns() - started, comment = "perfscript offcpu.lua" }), opts.pprof)
    if not ok then io.stderr:write("offcpu.lua: cannot write ", err, "\n"); return exit(1) end
  end
  local dropped, why = waits:dropped()
  if not dropped then io.stderr:write("offcpu.lua: ", tostring(why), "\n")
  elseif dropped > 0 then
    printf("(%d intervals found the map full and are not counted)\n", dropped)
  end
end)
