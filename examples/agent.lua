-- agent.lua: an always-on, whole-host profiling agent that pprof backends
-- and Prometheus scrape. It samples every CPU at a low rate (19 Hz by
-- default: a prime, so it does not beat with periodic work) with user
-- stacks unwound by DWARF, kernel stacks, and each sample's pid, comm and
-- cgroup (with the container where the group's name has one), and serves,
-- on one listener:
--   /debug/pprof/profile?seconds=N   a gzip pprof of the next N seconds
--                                    (Go's net/http/pprof contract: what
--                                    go tool pprof, Parca and Grafana
--                                    Alloy's pyroscope.scrape fetch)
--   /metrics                         the agent's counters for Prometheus:
--                                    context switches and page faults per
--                                    CPU, the samples it took and lost, its
--                                    own CPU time
-- Samples go only to the profiles being asked for: between scrapes the
-- agent keeps nothing but its counters, so its memory does not grow.
--   perfscript -a examples/agent.lua --listen 127.0.0.1:9464
--   go tool pprof http://127.0.0.1:9464/debug/pprof/profile?seconds=10
-- The page and the profiles show the machine's processes and perfscript
-- runs as root: listen on loopback or behind a firewall, or give it TLS and
-- users (--web.config.file FILE; docs/fleet.md).
local opts = require("args").parse(arg, {
  name = "agent.lua",
  usage = "perfscript -a examples/agent.lua --listen ADDR:PORT [options]",
  summary = "Whole-host profiles over HTTP (/debug/pprof/profile) and counters (/metrics).",
  { "--listen", "ADDR:PORT", "where to serve (port 0: a free one, printed on stdout)" },
  { "--freq", "HZ", "samples per second on each CPU (default 19)", number = true, default = 19 },
  { "--call-graph", "fp|dwarf", "how user stacks are taken (default dwarf)", choices = { "fp", "dwarf" },
    default = "dwarf" },
  { "--max-seconds", "N", "the longest profile a request may ask for (default 300)", number = true,
    default = 300 },
  { "--web.config.file", "FILE", "TLS and basic-auth users, the Prometheus exporters' format", key = "web_config" },
})
local function fail(msg)
  io.stderr:write("agent.lua: ", msg, "\n")
  os.exit(2)
end
if not opts.listen then fail("--listen ADDR:PORT is needed (e.g. --listen 127.0.0.1:9464)") end
local cpus = target_cpus()
if not cpus then fail("profiles the whole host: run it with -a (or -C LIST, or -G CGROUP)") end
if opts.freq < 1 or opts.freq > 10000 then fail("--freq wants 1 to 10000 samples a second") end

local om, profile, pprof = require "openmetrics", require "profile", require "pprof"
local encode = require("perfscript.pprof").encode

-- The sampling counter: every CPU (the target), stacks, the cgroup of each sample.
local spec = ("cpu-clock/freq=%d,call-graph=%s,cgroup/"):format(opts.freq, opts.call_graph)
local sampler = assert(perfmon.counter(spec))

-- Counters for /metrics, one per CPU.
local reg = om.new()
reg:counter(sampler, { event = "cpu-clock" })
for _, ev in ipairs({ "context-switches", "page-faults" }) do
  for _, cpu in ipairs(cpus) do
    local c = perfmon.counter(("%s/cpu=%d/"):format(ev, cpu))
    if c and c:start() then reg:counter(c, { event = ev, cpu = cpu }) end
  end
end

-- The profiles being asked for: each collects from its request on, and is
-- sent when its seconds are up.
local open = {}
local served, refused = 0, 0
reg:family("perfscript_agent_profiles", "counter",
           "Profiles requested over HTTP: served, or refused (a bad seconds, too many at once).",
           function()
             return { { labels = { result = "served" }, value = served },
                      { labels = { result = "refused" }, value = refused } }
           end)
reg:family("perfscript_agent_profiles_in_progress", "gauge",
           "Profiles being taken now, each owed to a request when its seconds are up.",
           function() return { { value = #open } } end)

probe(sampler, function(s)
  for i = 1, #open do open[i].p:add(s) end
end)

local function send_due(now)
  for i = #open, 1, -1 do
    local o = open[i]
    if now >= o.due then
      table.remove(open, i)
      local ok, bytes = pcall(function()
        return encode(pprof.build(o.p, { event = spec, comment = "perfscript agent.lua" }))
      end)
      if ok then
        o.reply:send(bytes, "application/octet-stream")
        served = served + 1
      else
        o.reply:send("cannot build the profile: " .. tostring(bytes) .. "\n", nil, 500)
      end
    end
  end
end
probe("timer.ms(20)", function() if #open > 0 then send_due(gettimeofday_ns()) end end)

local function profile_request(req)
  local secs = tonumber(req.args.seconds or "30") -- Go's default
  if not secs or secs <= 0 or secs > opts.max_seconds then
    refused = refused + 1
    return ("seconds must be a number from 0 to %d\n"):format(opts.max_seconds), nil, 400
  end
  local ok, reply = pcall(req.defer, req)
  if not ok then
    refused = refused + 1
    return "too many profiles are being taken at once: retry later\n", nil, 503
  end
  open[#open + 1] = { reply = reply, due = gettimeofday_ns() + math.floor(secs * 1e9),
                      p = profile.new { pprof = true, labels = { "pid", "comm", "cgroup" } } }
end

local http = require "perfscript.http"
local server, err = http.listen(opts.listen, function(req)
  if req.path == "/debug/pprof/profile" then return profile_request(req) end
  if req.path == "/" then
    return "perfscript agent: /debug/pprof/profile?seconds=N, /metrics\n"
  end
  return reg:handle(req, "/metrics")
end, { web_config = opts.web_config })
if not server then fail(err) end
local host = opts.listen:match("^(.*):%d+$")
printf("listening on %s://%s:%d/ (profiles at /debug/pprof/profile, counters at /metrics)\n",
       server:tls() and "https" or "http", (host == "" or host == nil) and "0.0.0.0" or host,
       server:port())
io.stdout:flush()

probe("end", function()
  printf("served %d profiles and %d scrapes\n", served, reg.scrapes)
end)
