-- exporter.lua: an always-on Prometheus exporter of perf counters. Counts
-- the standard software events (and the hardware ones where this machine's
-- PMU has them) per CPU with -a or -C, or for one process with -p PID or
-- -c CMD, and serves them at http://ADDR:PORT/metrics in OpenMetrics (or
-- Prometheus' text format) from perfscript's event loop: a scrape reads the
-- counters then, and costs nothing in between. Built on the openmetrics
-- tapset; docs/fleet.md shows a Prometheus configuration that scrapes it.
--   perfscript examples/exporter.lua --listen 127.0.0.1:9100 -a
--   perfscript examples/exporter.lua --listen :9100 -p PID --events page-faults,context-switches
-- Port 0 picks a free port; the line "listening on http://HOST:PORT/metrics"
-- on stderr (or in -o FILE) says which. The page shows the pids, commands and counts of
-- what it watches and perfscript runs as root: listen on loopback or behind
-- a firewall, or give it a web configuration file with TLS and users
-- (--web.config.file FILE, the Prometheus exporters' format; docs/fleet.md).
local om = require "openmetrics"

local args = require "args"
local usage = {
  name = "exporter.lua",
  report = true,
  usage = "perfscript examples/exporter.lua --listen ADDR:PORT -a | -C LIST | -p PID | -c 'CMD' [options]",
  summary = "An always-on Prometheus exporter of perf counters, at http://ADDR:PORT/metrics.",
  { "--listen", "ADDR:PORT", "where to serve (port 0: a free one, said in the 'listening on' line)" },
  { "--events", "LIST", "the events to count (default: the standard software events, and hardware "
                        .. "ones where they count)", event = true },
  { "--web.config.file", "FILE", "TLS and basic-auth users, the Prometheus exporters' format", key = "web_config" },
}
local opts = args.parse(arg, usage)
if not opts.listen then args.fail("--listen ADDR:PORT is needed (e.g. --listen 127.0.0.1:9100)") end

local cpus = target_cpus()
local SOFTWARE = { cpus and "cpu-clock" or "task-clock", "context-switches", "cpu-migrations",
                   "page-faults", "minor-faults", "major-faults" }
local HARDWARE = { "cycles", "instructions", "branches", "branch-misses", "cache-references", "cache-misses" }

local split_events = require("metrics").split_events

-- The spec counting on one CPU: a cpu= term among the event's terms.
local function on_cpu(spec, cpu)
  local name, terms, mods = spec:match("^(.-)/(.*)/(%a*)$")
  if name then return ("%s/%s%scpu=%d/%s"):format(name, terms, terms ~= "" and "," or "", cpu, mods) end
  local base, m = spec:match("^(.-):([ukhHGpPSDWIe]+)$")
  if base then return ("%s/cpu=%d/%s"):format(base, cpu, m) end
  return ("%s/cpu=%d/"):format(spec, cpu)
end

local reg = om.new()
local pid = target()
local function comm()
  local f = io.open("/proc/" .. pid .. "/comm")
  local c = f and f:read("l") or "?"
  if f then f:close() end
  return c
end

-- Open each event now (before a -c command starts); an event this machine
-- cannot count is reported once and left out, unless it was asked for.
local asked = opts.events and split_events(opts.events)
local events = asked or SOFTWARE
if not asked then for _, e in ipairs(HARDWARE) do events[#events + 1] = e end end
local skipped = {}
for _, ev in ipairs(events) do
  for _, cpu in ipairs(cpus or { false }) do
    local spec = cpu and on_cpu(ev, cpu) or ev
    local c, err, code = perfmon.counter(spec)
    local ok = c
    if c then ok, err, code = c:start() end
    if not ok then
      -- not allowed is said and ends it: a target up with no series would hide it
      if args.denied(code) then args.need(nil, err) end
      if asked then args.need(nil, ("%s: %s"):format(ev, err or "cannot be counted")) end
      skipped[#skipped + 1] = ev
      if c then c:close() end
      break
    end
    reg:counter(c, cpu and { event = ev, cpu = cpu } or { event = ev, pid = pid, comm = comm })
  end
end

args.listen(opts.listen, function(req) return reg:handle(req) end, { web_config = opts.web_config, after = "/metrics" })
if #skipped > 0 then
  io.stderr:write(("exporter.lua: not counted here (no PMU support): %s\n"):format(table.concat(skipped, ", ")))
end

probe("end", function()
  printf("served %d scrapes\n", reg.scrapes)
end)
