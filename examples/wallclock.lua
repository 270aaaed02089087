-- wallclock.lua: where each thread's wall time went. Every thread of the
-- target has its time in the session split whole, in the kernel, at each
-- of its context switches (perfmon.aggregate with offcpu and oncpu on
-- sched:sched_switch): on the CPU (its task clock, as schedstat and
-- CLOCK_THREAD_CPUTIME_ID count it), runnable (waiting in the run queue:
-- preempted, or woken and not yet running), blocked (sleeping S or
-- uninterruptible D), and steal (holding the CPU while the hypervisor ran
-- something else: on-CPU wall time its task clock does not count). The four
-- add up to the thread's lifetime in the session.
--   perfscript examples/wallclock.lua -c './server'                 per-thread table
--   perfscript examples/wallclock.lua -p PID -T 10 --csv t.csv      for a spreadsheet
--   perfscript examples/wallclock.lua -c CMD --folded wall.folded   one flame graph
--   perfscript examples/wallclock.lua -c CMD --svg wall.svg         ... drawn
-- Off-CPU parts are by the stacks at which the thread left the CPU (taken
-- once per interval of --min-us or more; shorter ones count, stackless);
-- the on-CPU part by cpu-clock samples (--hz), each thread's samples scaled
-- to its exact on-CPU time. --call-graph dwarf unwinds both from copies of
-- the user stack, as offcpu.lua and profile.lua do. A thread's lifetime
-- starts at its creation, or at the start for one the target had (-p,
-- -a), and ends at its exit or at the end (a wait or a slice still going
-- on is counted up to then).
local opts = require("args").parse(arg, {
  name = "wallclock.lua",
  report = true,
  usage = "perfscript examples/wallclock.lua -c 'CMD args' | -p PID | -a | -C CPUS [-T SECONDS] [options]",
  target = true,
  summary = "Each thread's wall time split into on-CPU, runnable, blocked (and steal), by stack.",
  { "--hz", "N", "on-CPU samples per second, for the on-CPU stacks (default 99)",
    number = true, integer = true, min = 1, default = 99 },
  { "--top", "N", "stacks to print (default 10)", number = true, integer = true, min = 1, default = 10 },
  { "--csv", "FILE", "write tid,comm,lifetime_ns,oncpu_ns,runnable_ns,blocked_ns,steal_ns to FILE" },
  { "--folded", "FILE", "write comm;part;stack microseconds lines to FILE (one flame graph)" },
  { "--pprof", "FILE", "write a pprof profile (wall, nanoseconds; a part label) to FILE" },
  { "--svg", "FILE", "write that flame graph (SVG, microseconds) to FILE" },
  { "--min-us", "N", "intervals off the CPU shorter than N microseconds keep no stack (default 1)",
    number = true, min = 0, default = 1 },
  { "--call-graph", "fp|dwarf", "how user stacks are taken (default fp)", choices = { "fp", "dwarf" } },
})
local dwarf = opts.call_graph == "dwarf"

-- what cannot be had (no root, no BPF) is said in a line, not a traceback
local need = require("args").need
local switch = need(perfmon.counter("sched:sched_switch" .. (dwarf and "/call-graph=dwarf/" or "")))
-- the parts of each thread's time, exact in the kernel; the stacks of the
-- intervals off the CPU of --min-us or more: by key there, or with dwarf
-- each such interval forwarded as a sample of its switch-out (s.period
-- ns) and unwound here
local parts = need(perfmon.aggregate(switch, {
  by = dwarf and { "tid", "comm", "args.prev_state" } or { "tid", "comm", "args.prev_state", "ustack", "kstack" },
  offcpu = true, oncpu = true, min_us = opts.min_us, forward = dwarf }))
local clock = need(perfmon.counter(("cpu-clock/freq=%d%s/"):format(opts.hz, dwarf and ",call-graph=dwarf" or "")))
local samples = need(perfmon.aggregate(clock, { by = { "tid", "ustack", "kstack" }, forward = dwarf }))
-- with dwarf: the forwarded intervals { tid, state, stack, n = ns } and
-- samples { tid, stack, n }, each by its fields joined
local unwound = { parts = {}, samples = {} }
local function add(t, e, n)
  local key = e.tid .. ";" .. (e.state or "") .. ";" .. e.stack
  local have = t[key]
  if not have then e.n, have = 0, e; t[key] = e end
  have.n = have.n + n
end
if dwarf then
  local function stack(s) return s:folded():match("^[^;]*;?(.*)$") end -- without its comm
  probe(switch, function(s)
    add(unwound.parts, { tid = s.tid, state = s.args.prev_state, stack = stack(s) }, s.period)
  end)
  probe(clock, function(s) add(unwound.samples, { tid = s.tid, stack = stack(s) }, 1) end)
end
local stack_of = require("offcpu").stack -- a row's user and kernel stacks as one folded line
local started = gettimeofday_ns()
local where = require("profile").where

-- args.prev_state as the kernel reports it (TASK_REPORT), and the two
-- states of the on-CPU slices
local PART = { [-1] = "on-cpu", [-2] = "steal", [0] = "runnable", [256] = "runnable" }
local function part_of(state) return PART[state] or "blocked" end

-- The threads and the stacks of each part.
local function collect()
  local threads, rows = {}, {}
  local function thread(tid)
    local t = threads[tid]
    if not t then
      t = { tid = tid, comms = {}, ["on-cpu"] = 0, runnable = 0, blocked = 0, steal = 0 }
      threads[tid] = t
    end
    return t
  end
  local stackless = {} -- with dwarf: { tid, state, stack = "", n = ns } the forwarded intervals leave
  for _, r in ipairs(parts:read { rows = true } or {}) do
    local state = r["args.prev_state"]
    local t, part = thread(r.tid), part_of(state)
    t[part] = t[part] + r.count
    t.comms[r.comm] = (t.comms[r.comm] or 0) + r.count
    if part ~= "on-cpu" and dwarf then
      add(stackless, { tid = r.tid, state = state, stack = "" }, r.count)
    elseif part ~= "on-cpu" then
      rows[#rows + 1] = { tid = r.tid, part = part, stack = stack_of(r), ns = r.count }
    end
  end
  for _, u in pairs(unwound.parts) do -- the unwound intervals, and what is left
    rows[#rows + 1] = { tid = u.tid, part = part_of(u.state), stack = u.stack, ns = u.n }
    add(stackless, { tid = u.tid, state = u.state, stack = "" }, -u.n)
  end
  for _, e in pairs(stackless) do
    if e.n > 0 and threads[e.tid] then
      rows[#rows + 1] = { tid = e.tid, part = part_of(e.state), stack = "", ns = e.n }
    end
  end
  -- on-CPU by stack: the samples of each thread, scaled to its time
  local sampled, count = {}, {}
  local function sample(tid, stack, n)
    sampled[#sampled + 1] = { tid = tid, stack = stack, n = n }
    count[tid] = (count[tid] or 0) + n
  end
  if dwarf then
    for _, u in pairs(unwound.samples) do sample(u.tid, u.stack, u.n) end
  else
    for _, r in ipairs(samples:read { rows = true } or {}) do sample(r.tid, stack_of(r), r.count) end
  end
  local placed = {}
  for _, s in ipairs(sampled) do
    local t = threads[s.tid]
    if t then
      local ns = t["on-cpu"] * s.n // count[s.tid]
      rows[#rows + 1] = { tid = s.tid, part = "on-cpu", stack = s.stack, ns = ns }
      placed[s.tid] = (placed[s.tid] or 0) + ns
    end
  end
  for tid, t in pairs(threads) do -- what no sample landed in
    local rest = t["on-cpu"] - (placed[tid] or 0)
    if rest > 0 then rows[#rows + 1] = { tid = tid, part = "on-cpu", stack = "", ns = rest } end
    local best = 0
    for comm, ns in pairs(t.comms) do
      if ns > best then t.comm, best = comm, ns end
    end
    t.lifetime = t["on-cpu"] + t.runnable + t.blocked + t.steal
  end
  for _, r in ipairs(rows) do r.comm = threads[r.tid].comm end
  return threads, rows
end

local function saved(ok, err)
  if not ok then
    io.stderr:write("wallclock.lua: cannot write ", tostring(err), "\n")
    exit(1)
  end
  return ok
end

local function pct(part, whole) return whole > 0 and 100 * part / whole or 0 end

probe("end", function()
  local threads, rows = collect()
  local list, total = {}, { lifetime = 0, ["on-cpu"] = 0, runnable = 0, blocked = 0, steal = 0 }
  for _, t in pairs(threads) do
    list[#list + 1] = t
    for k in pairs(total) do total[k] = total[k] + t[k] end
  end
  table.sort(list, function(a, b) return a.lifetime > b.lifetime or
                                         a.lifetime == b.lifetime and a.tid < b.tid end)
  printf("%d threads, %.3f s of wall time: on-CPU %.1f%%, runnable %.1f%%, blocked %.1f%%, steal %.1f%%\n",
         #list, total.lifetime / 1e9, pct(total["on-cpu"], total.lifetime),
         pct(total.runnable, total.lifetime), pct(total.blocked, total.lifetime),
         pct(total.steal, total.lifetime))
  printf("%8s %-16s %12s %12s %12s %12s %10s\n", "TID", "COMM", "LIFETIME ms", "ON-CPU ms",
         "RUNNABLE ms", "BLOCKED ms", "STEAL ms")
  for _, t in ipairs(list) do
    printf("%8d %-16s %12.3f %12.3f %12.3f %12.3f %10.3f\n", t.tid, t.comm, t.lifetime / 1e6,
           t["on-cpu"] / 1e6, t.runnable / 1e6, t.blocked / 1e6, t.steal / 1e6)
  end
  table.sort(rows, function(a, b) return a.ns > b.ns end)
  printf("\n%12s %6s %-8s %-16s %s\n", "ms", "%", "PART", "COMM", "WHERE")
  for i = 1, math.min(opts.top, #rows) do
    local r = rows[i]
    printf("%12.3f %5.1f%% %-8s %-16s %s\n", r.ns / 1e6, pct(r.ns, total.lifetime), r.part, r.comm,
           where(r.stack))
  end
  local pprof = require("pprof")
  if opts.csv then
    local lines = { "tid,comm,lifetime_ns,oncpu_ns,runnable_ns,blocked_ns,steal_ns\n" }
    for _, t in ipairs(list) do
      lines[#lines + 1] = ("%d,%s,%d,%d,%d,%d,%d\n"):format(t.tid, t.comm:gsub(",", "_"), t.lifetime,
        t["on-cpu"], t.runnable, t.blocked, t.steal)
    end
    if not saved(pprof.save(opts.csv, table.concat(lines))) then return end
  end
  local function path(r) return r.comm .. ";" .. r.part .. (r.stack ~= "" and (";" .. r.stack) or "") end
  if opts.folded or opts.svg then
    local folded, lines = {}, {}
    for _, r in ipairs(rows) do folded[path(r)] = (folded[path(r)] or 0) + r.ns end
    for stack, ns in pairs(folded) do lines[#lines + 1] = ("%s %d\n"):format(stack, ns // 1000) end
    table.sort(lines)
    local text = table.concat(lines)
    if opts.folded and not saved(pprof.save(opts.folded, text)) then return end
    if opts.svg and not saved(pprof.save(opts.svg, require("flame").svg(text, {
        title = ("Wall time: %d threads, %.3f s"):format(#list, total.lifetime / 1e9), unit = "us" }))) then
      return
    end
  end
  if opts.pprof then
    local prows = {}
    for _, r in ipairs(rows) do
      prows[#prows + 1] = { stack = path(r), value = r.ns, labels = {
        { key = "part", str = r.part }, { key = "tid", num = r.tid } } }
    end
    if not saved(pprof.write(pprof.from_folded(prows, {
      type = "wall", unit = "nanoseconds", time_nanos = started,
      duration_nanos = gettimeofday_ns() - started, comment = "perfscript wallclock.lua" }),
      opts.pprof)) then return end
  end
  local lost = 0
  for _, a in ipairs { parts, samples } do
    local n, why = a:dropped()
    if not n then io.stderr:write("wallclock.lua: ", tostring(why), "\n") else lost = lost + n end
  end
  if lost > 0 then
    printf("(%d switches or samples could not be recorded: the figures above miss them)\n", lost)
  end
end)
