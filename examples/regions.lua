-- regions.lua: bracket code regions and get a per-region table, as LIKWID's
-- marker API does. The events come from the command line, else from
-- $PERFSCRIPT_EVENTS, else task-clock; the table comes out at exit, on
-- stderr ($PERFSCRIPT_REPORT=csv or json for the other formats):
--   perfscript examples/regions.lua 'task-clock,page-faults'
local opts = require("args").parse(arg, {
  name = "regions.lua", args = true, report = true,
  usage = "perfscript examples/regions.lua [EVENTS]",
  summary = "Bracket code regions and get a per-region table, as LIKWID's marker API does.",
})
local r = assert(perfmon.regions(opts[1]))

local function fill(n)              -- n table slots: page faults, CPU time
  local t = {}
  for i = 1, n do t[i] = i end
  return t
end

local function sum(t)
  local s = 0
  for i = 1, #t do s = s + t[i] end
  return s
end

local t0 = perfmon.time()
r:start("total")
local t = perfmon.region("fill", fill, 1000000)
for _ = 1, 3 do perfmon.region("sum", sum, t) end
r:stop("total")
printf("%d ms on %s\n", (perfmon.time() - t0) // 1000000, (perfmon.time_source()))
-- page faults only where they were counted (the default events are task-clock)
local faults = r:read("fill")["page-faults"]
if faults then print(("fill: %d page faults"):format(faults)) end
