-- metrics.lua: derived metrics (IPC, miss ratios, rates, CPU utilisation)
-- from the counters they need. Every metric is one entry of metrics.defs:
-- the events it needs and a function of their values; add an entry and
-- metrics.open() knows it. The events of one metric are opened as one perf
-- group, so a ratio divides numbers counted over the same instants (and
-- multiplexed together), and a metric whose events this machine cannot
-- count is reported as not supported instead of ending the session.
--   local metrics = require "metrics"
--   local m = metrics.open({ "ipc", "cpu-utilization" })
--   probe("end", function() io.write(m:report()) end)
local M = {}

-- compute(v, wall_ns) gets the group's values by event name and the wall
-- time the metric was measured over; nil means "no value" (nothing counted).
local function ratio(a, b, scale)
  return function(v) if v[b] and v[b] > 0 then return v[a] / v[b] * (scale or 1) end end
end

M.defs = {
  ipc = { events = { "instructions", "cycles" }, compute = ratio("instructions", "cycles"),
          unit = "insn per cycle", format = "%.2f" },
  cpi = { events = { "cycles", "instructions" }, compute = ratio("cycles", "instructions"),
          unit = "cycles per insn", format = "%.2f" },
  ["cache-miss-ratio"] = { events = { "cache-misses", "cache-references" },
          compute = ratio("cache-misses", "cache-references", 100),
          unit = "% of all cache refs", format = "%.2f" },
  ["branch-miss-ratio"] = { events = { "branch-misses", "branches" },
          compute = ratio("branch-misses", "branches", 100),
          unit = "% of all branches", format = "%.2f" },
  -- per second of CPU time (task-clock), as perf stat's "/sec" column
  ["page-faults-per-sec"] = { events = { "page-faults", "task-clock" },
          compute = ratio("page-faults", "task-clock", 1e9), unit = "/sec", format = "%.3f" },
  ["cpu-utilization"] = { events = { "task-clock" }, event = "task-clock",
          compute = function(v, wall) if wall > 0 then return v["task-clock"] / wall end end,
          unit = "CPUs utilized", format = "%.3f" },
  -- the rest of what perf stat prints by default, one metric per row
  ["context-switch-rate"] = { events = { "context-switches", "task-clock" }, event = "context-switches",
          compute = ratio("context-switches", "task-clock", 1e9), unit = "/sec", format = "%.3f" },
  ["cpu-migration-rate"] = { events = { "cpu-migrations", "task-clock" }, event = "cpu-migrations",
          compute = ratio("cpu-migrations", "task-clock", 1e9), unit = "/sec", format = "%.3f" },
  ["clock-rate"] = { events = { "cycles", "task-clock" }, event = "cycles",
          compute = ratio("cycles", "task-clock"), unit = "GHz", format = "%.3f" },
  ["branch-rate"] = { events = { "branches", "task-clock" }, event = "branches",
          compute = ratio("branches", "task-clock", 1e9), unit = "/sec", format = "%.3f" },
}
M.defs.ipc.event = "instructions"
M.defs["branch-miss-ratio"].event = "branch-misses"
M.defs["page-faults-per-sec"].event = "page-faults"

-- Split "a,b,cpu/event=1,umask=2/,{c,d}" at the commas between events.
function M.split_events(list)
  local out, cur, depth = {}, {}, 0
  for ch in list:gmatch(".") do
    if ch == "/" then depth = depth == 0 and 1 or 0 end
    if ch == "{" then depth = depth + 1 elseif ch == "}" then depth = depth - 1 end
    if ch == "," and depth == 0 then out[#out + 1] = table.concat(cur); cur = {}
    else cur[#cur + 1] = ch end
  end
  if #cur > 0 then out[#out + 1] = table.concat(cur) end
  return out
end

-- Names in a stable order, for listing.
function M.names()
  local out = {}
  for name in pairs(M.defs) do out[#out + 1] = name end
  table.sort(out)
  return out
end

function M.define(name, def)
  if type(def) ~= "table" or type(def.events) ~= "table" or type(def.compute) ~= "function" then
    error("metrics.define: want { events = {...}, compute = function(values, wall_ns) }", 2)
  end
  M.defs[name] = def
  return def
end

local function now_ns()
  if gettimeofday_ns then return gettimeofday_ns() end
  return os.time() * 1e9
end

-- Open one metric: its group, started now, or the reason it cannot be.
-- `opener` stands in for perfmon.group (specs pass a fake).
function M.open_one(name, opener)
  local def = M.defs[name]
  if not def then
    local known = table.concat(M.names(), ", ")
    error(("metrics: unknown metric '%s' (known: %s)"):format(tostring(name), known), 3)
  end
  local m = { name = name, def = def }
  local group, err, code = (opener or perfmon.group)("{" .. table.concat(def.events, ",") .. "}")
  if group then
    local ok, msg, c = group:start()
    if ok then m.group = group else err, code = msg, c; group:close() end
  end
  m.err, m.code = err, code -- code: an errno, or 4096 and up for a parse error
  -- EPERM, EACCES: the machine has the event but may not count it for this
  -- user: "<not counted>" and the reason, never "<not supported>"
  m.denied = code == 1 or code == 13
  return m
end

local Set = {}
Set.__index = Set

-- A set of metrics opened now: metrics.open({"ipc", ...}) or open("ipc").
function M.open(names, opener)
  if type(names) == "string" then names = { names } end
  local set = setmetatable({ list = {}, t0 = now_ns(), clock = now_ns }, Set)
  for _, name in ipairs(names or M.names()) do set.list[#set.list + 1] = M.open_one(name, opener) end
  return set
end

-- Each metric's value, unit and raw event values since the set was opened:
-- { {name=, value=, unit=, text=, values=} or {name=, supported=false, err=} }.
function Set:read()
  local wall = self.clock() - self.t0
  local out, groups, at = {}, {}, {}
  for i, m in ipairs(self.list) do
    if m.group then groups[#groups + 1] = m.group; at[i] = #groups end
  end
  local got = require("interval").read_all(groups) -- at one moment
  for i, m in ipairs(self.list) do
    local r = { name = m.name, unit = m.def.unit }
    if m.group then
      local v = got[at[i]][1]
      r.supported, r.values = true, v
      r.value = m.def.compute(v, wall)
      r.text = r.value and (m.def.format or "%.3f"):format(r.value) or "-"
    else
      r.supported, r.err, r.denied = false, m.err, m.denied
      r.text = m.denied and "not counted" or "not supported"
    end
    out[#out + 1] = r
    out[m.name] = r
  end
  return out, wall
end

-- "      1.23  insn per cycle  ipc" per metric, "not supported" where the
-- machine cannot count it.
function Set:report()
  local lines = {}
  for _, r in ipairs(self:read()) do
    if r.supported then
      lines[#lines + 1] = ("%18s  %-22s %s\n"):format(r.text, r.unit or "", r.name)
    else
      lines[#lines + 1] = ("%18s  %-22s %s\n"):format("<" .. r.text .. ">", "", r.name)
    end
  end
  return table.concat(lines) .. M.denials(self)
end

-- The reason of the first metric this user may not count, as a line to
-- print after a report ("" when every refusal was "not supported").
function M.denials(set)
  for _, m in ipairs(set.list) do
    if m.denied then return ("\n%s\n"):format(m.err) end
  end
  return ""
end

function Set:close()
  for _, m in ipairs(self.list) do
    if m.group then m.group:close(); m.group = nil end
  end
end

return M
