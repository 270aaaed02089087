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
--   perfscript examples/offcpu.lua -c './server' --svg off.svg      a flame graph
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
  { "--svg", "FILE", "write a flame graph of the waits (SVG, microseconds) to FILE" },
  { "--call-graph", "fp|dwarf", "how user stacks are taken (default fp)", choices = { "fp", "dwarf" } },
})
-- what cannot be had (no root, no BPF) is said in a line, not a traceback;
-- the sums are the same either way: by key in the kernel, or with dwarf
-- from the intervals it forwards, unwound here (the tapset offcpu.lua)
local offcpu = require("offcpu")
local waits = require("args").need(offcpu.open { min_us = opts.min_us, dwarf = opts.call_graph == "dwarf" })
local started = gettimeofday_ns()
local where = require("profile").where

probe("end", function()
  local rows, total = offcpu.rows(waits:read())
  if opts.fold then
    io.write(offcpu.folded(rows))
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
    local p = waits:places()
    if p and p.used + p.checked + p.walked > 0 then
      local other = p.unstable == 0 and "all the same"
                    or ("%d place%s had other stacks"):format(p.unstable, p.unstable > 1 and "s" or "")
      printf("(stacks of %d intervals: %d remembered from an earlier wait at the same place, %s (%s), %d walked)\n",
             p.used + p.checked + p.walked, p.used, p.checked .. " checked by walking again", other, p.walked)
    end
  end
  local pprof = require("pprof")
  local function saved(ok, err)
    if not ok then io.stderr:write("offcpu.lua: cannot write ", err, "\n"); exit(1) end
    return ok
  end
  if opts.folded and not saved(pprof.save(opts.folded, offcpu.folded(rows))) then return end
  if opts.svg and not saved(pprof.save(opts.svg, require("flame").svg(offcpu.folded(rows), {
      title = ("Off-CPU time: %.3f s"):format(total / 1e9), unit = "us" }))) then return end
  if opts.pprof and not saved(pprof.write(offcpu.profile(rows, {
      time_nanos = started, duration_nanos = gettimeofday_ns() - started,
      comment = "perfscript offcpu.lua" }), opts.pprof)) then return end
  local dropped, why = waits:dropped()
  if not dropped then io.stderr:write("offcpu.lua: ", tostring(why), "\n")
  elseif dropped > 0 then
    printf("(%d intervals found the map full and are not counted)\n", dropped)
  end
end)
