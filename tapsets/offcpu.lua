-- offcpu.lua: off-CPU time as scripts use it. The intervals are measured
-- in the kernel (perfmon.aggregate with offcpu = true on
-- sched:sched_switch); this tapset opens that aggregate keyed by command,
-- why the thread left the CPU and its stacks (with call-graph dwarf, one
-- that forwards each interval of min_us or more, unwound here), and turns
-- its sums into rows, folded lines and pprof profiles.
--   local offcpu = require "offcpu"
--   local w = assert(offcpu.open{ min_us = 10 })
--   probe("end", function()
--     for _, r in ipairs(offcpu.rows(w:read())) do print(r.ns, r.state, r.comm, r.stack) end
--   end)
local M = {}

-- args.prev_state as the kernel reports it (TASK_REPORT): S sleeping, D
-- uninterruptible, R runnable (0, 256: preempted; -2: the part of a
-- preempted wait the scheduler did not count, steal), T and t stopped, I
-- idle.
M.STATES = { [-2] = "R", [0] = "R", [1] = "S", [2] = "D", [4] = "T", [8] = "t", [128] = "I", [256] = "R" }

function M.state(v) return M.STATES[v] or tostring(v) end

local Waits = {}
Waits.__index = Waits

-- offcpu.open{ min_us = N, dwarf = bool } -> waits, or nil and why (no
-- root, no BPF). Intervals under min_us count without a stack.
function M.open(opts)
  opts = opts or {}
  local dwarf = opts.dwarf and true or false
  local sw, err = perfmon.counter("sched:sched_switch" .. (dwarf and "/call-graph=dwarf/" or ""))
  if not sw then return nil, err end
  local agg
  agg, err = perfmon.aggregate(sw, {
    by = dwarf and { "comm", "args.prev_state" } or { "comm", "args.prev_state", "ustack", "kstack" },
    offcpu = true, min_us = opts.min_us, forward = dwarf })
  if not agg then return nil, err end
  local w = setmetatable({ counter = sw, agg = agg, dwarf = dwarf, unwound = {}, windows = {} }, Waits)
  if dwarf then
    probe(sw, function(s)
      local a = s.args
      M.add(w.unwound, a.prev_comm, a.prev_state, s:folded():match("^[^;]*;?(.*)$"), s.period)
    end)
  end
  return w
end

-- M.add(sums, comm, state, stack, ns): ns more for the wait, its entry
-- in sums made (keyed by its fields joined, a key nothing parses back).
function M.add(sums, comm, state, stack, ns)
  local key = comm .. ";" .. state .. ";" .. stack
  local e = sums[key]
  if not e then
    e = { comm = comm, state = state, stack = stack, ns = 0 }
    sums[key] = e
  end
  e.ns = e.ns + ns
end

-- offcpu.stack(row) -> an aggregate row's stacks as one folded line: the
-- user stack root first, then the kernel's ("" for none).
function M.stack(r)
  if not r.ustack then return "" end
  return (r.ustack ~= "" and r.kstack ~= "") and r.ustack .. ";" .. r.kstack or r.ustack .. r.kstack
end

-- The aggregate's rows as sums. With dwarf, the forwarded intervals by
-- their unwound stacks, and what they leave of each command's and state's
-- sum (the intervals under min_us) without one.
function Waits:sums(rows)
  local sums = {}
  for _, r in ipairs(rows or {}) do
    M.add(sums, r.comm, r["args.prev_state"], M.stack(r), r.count)
  end
  if not self.dwarf then return sums end
  for _, u in pairs(self.unwound) do
    M.add(sums, u.comm, u.state, "", -u.ns)
    M.add(sums, u.comm, u.state, u.stack, u.ns)
  end
  for k, e in pairs(sums) do
    if e.ns <= 0 then sums[k] = nil end
  end
  return sums
end

-- w:read() -> sums so far; w:take() -> sums since the last take (nothing
-- before the counter opens).
function Waits:read() return self:sums(self.agg:read { rows = true }) end

function Waits:take()
  local sums = self:sums(self.agg:take { rows = true })
  self.unwound = {}
  return sums
end

-- w:dropped() -> intervals the kernel could not count, or nil and why
function Waits:dropped() return self.agg:dropped() end

-- w:places() -> { used, checked, unstable, walked }: how the kernel took
-- the stacks (aggregate:places), or nil and why
function Waits:places() return self.agg:places() end

-- Windows: sums of the waits from one moment to another, several at once
-- (a request's profile, a push window). w:window() opens one; the sums
-- taken since (w:pump(), each second or so, and at every open and close)
-- go into every open window.
local Window = {}
Window.__index = Window

function Waits:pump()
  local sums = self:take()
  for win in pairs(self.windows) do
    for _, e in pairs(sums) do M.add(win.sums, e.comm, e.state, e.stack, e.ns) end
  end
end

-- w:window() -> window, from now. Its start is stamped before the take
-- that begins it, whose flush books every wait up to a moment after:
-- stamped after, a slow take (a host's worth of stacks, under load) made
-- the window shorter than the waits booked in it.
function Waits:window()
  local win = setmetatable({ waits = self, sums = {}, from = gettimeofday_ns() }, Window)
  self:pump()
  self.windows[win] = true
  return win
end

-- win:close() -> sums, from_ns, until_ns: the waits of the window, which
-- takes no more; win:drop(): closed with nothing taken.
function Window:close()
  self.waits:pump()
  self.waits.windows[self] = nil
  return self.sums, self.from, gettimeofday_ns()
end

function Window:drop() self.waits.windows[self] = nil end

-- win:profile(comment) -> the window's pprof table (closed)
function Window:profile(comment)
  local sums, from, to = self:close()
  return M.profile(M.rows(sums), { time_nanos = from, duration_nanos = to - from, comment = comment })
end

-- win:pprof(comment) -> the window's gzip pprof bytes (closed), or nil and why
function Window:pprof(comment)
  return require("pprof").encode(self:profile(comment))
end

-- offcpu.rows(sums) -> rows, total_ns: { comm, state (a letter), stack, ns },
-- the longest first.
function M.rows(sums)
  local rows, total = {}, 0
  for _, e in pairs(sums) do
    if e.ns > 0 then
      rows[#rows + 1] = { comm = e.comm, state = M.state(e.state), stack = e.stack, ns = e.ns }
      total = total + e.ns
    end
  end
  table.sort(rows, function(a, b)
    if a.ns ~= b.ns then return a.ns > b.ns end
    return a.comm .. a.stack < b.comm .. b.stack
  end)
  return rows, total
end

-- offcpu.folded(rows) -> text: "comm;stack microseconds" lines, sorted
-- (flamegraph.pl's input, as bcc's offcputime -f writes it).
function M.folded(rows)
  local sums, lines = {}, {}
  for _, r in ipairs(rows) do
    local f = r.comm .. (r.stack ~= "" and (";" .. r.stack) or "")
    sums[f] = (sums[f] or 0) + r.ns
  end
  for stack, ns in pairs(sums) do lines[#lines + 1] = ("%s %d\n"):format(stack, ns // 1000) end
  table.sort(lines)
  return table.concat(lines)
end

-- offcpu.profile(rows, opts) -> a pprof table (type off-cpu, nanoseconds,
-- a state label on each sample); opts go to pprof.from_folded (time_nanos,
-- duration_nanos, comment).
function M.profile(rows, opts)
  local prows = {}
  for _, r in ipairs(rows) do
    prows[#prows + 1] = { stack = r.comm .. (r.stack ~= "" and (";" .. r.stack) or ""), value = r.ns,
                          labels = { { key = "state", str = r.state } } }
  end
  local o = { type = "off-cpu", unit = "nanoseconds" }
  for k, v in pairs(opts or {}) do o[k] = v end
  return require("pprof").from_folded(prows, o)
end

return M
