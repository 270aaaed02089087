-- agent.lua: an always-on, whole-host profiling agent that pprof backends
-- and Prometheus scrape (docs/fleet.md). It samples every CPU at 19 Hz (a
-- prime: it does not beat with periodic work) with DWARF user stacks,
-- kernel stacks, pid, comm and cgroup, and serves on one listener:
--   /debug/pprof/profile?seconds=N  a gzip pprof of the next N seconds (Go's net/http/pprof)
--   /debug/pprof/offcpu?seconds=N   with --offcpu: where threads waited off the CPU
--   /?seconds=N                     the next N seconds as a flame graph and top functions
--   /metrics                        context switches and page faults per CPU, the samples
--                                   taken and lost, the agent's own CPU time and state
-- and pushes every --push-interval seconds (for hosts nobody scrapes) the
-- counters by Prometheus remote write (--remote-write URL) and each
-- window's profile to Pyroscope's ingest API (--push URL) or over OTLP
-- (--otlp URL), from queues with a backoff that never holds up sampling.
--   perfscript -a examples/agent.lua --listen 127.0.0.1:9464
--   go tool pprof http://127.0.0.1:9464/debug/pprof/profile?seconds=10
-- The pages show the machine's processes: listen on loopback or behind a
-- firewall, or give it TLS and users (--web.config.file FILE).
local args = require "args"
local opts = args.parse(arg, {
  name = "agent.lua",
  report = true,
  usage = "perfscript -a examples/agent.lua --listen ADDR:PORT [options]",
  summary = "Whole-host profiles over HTTP (/debug/pprof/profile) and counters (/metrics).",
  { "--listen", "ADDR:PORT", "where to serve (port 0: a free one, said in the 'listening on' line)" },
  { "--freq", "HZ", "samples per second on each CPU (default 19)", number = true, integer = true,
    min = 1, max = 10000, default = 19 },
  { "--call-graph", "fp|dwarf", "how user stacks are taken (default dwarf)", choices = { "fp", "dwarf" },
    default = "dwarf" },
  { "--max-seconds", "N", "the longest profile a request may ask for (default 300)", number = true, min = 1,
    default = 300 },
  { "--profiles-budget", "MIB", "what the profiles being taken for requests may hold in all, in MiB "
                              .. "(default 64): past it their new stacks count as over budget",
    number = true, min = 1, default = 64, key = "profiles_budget" },
  { "--web.config.file", "FILE", "TLS and basic-auth users, the Prometheus exporters' format", key = "web_config" },
  { "--remote-write", "URL", "push the counters by Prometheus remote write to URL" },
  { "--push", "URL", "push each window's profile to Pyroscope's ingest API at URL" },
  { "--otlp", "URL", "push each window's profiles over OTLP/HTTP to URL (an OpenTelemetry Collector)" },
  { "--app", "NAME", "the application name of pushed profiles (default host)", default = "host" },
  { "--flush-ms", "MS", "at the end, wait up to MS for the last pushes (default 5000)", number = true,
    min = 0, max = 600000, default = 5000 },
  { "--push-interval", "S", "seconds between pushes: the profile window (default 10)", number = true,
    min = 0.1, max = 3600, default = 10 },
  { "--offcpu", nil, "also time threads off the CPU (BPF): /debug/pprof/offcpu, and pushed" },
  { "--offcpu-min-us", "N", "off-CPU intervals shorter than N microseconds count without a stack (default 10)",
    number = true, min = 0, default = 10 },
  { "--symbols-budget", "MIB", "what the symbolizer may hold, in MiB (default 18)", number = true,
    min = 1, default = 18, key = "symbols_budget" },
  { "--lines", nil, "source lines and inline frames from DWARF (costs libc's 9 MB and more)" },
})
if not opts.listen then args.fail("--listen ADDR:PORT is needed (e.g. --listen 127.0.0.1:9464)") end
local cpus = target_cpus()
if not cpus then args.fail("profiles the whole host: run it with -a (or -C LIST, or -G CGROUP)") end
local host = require("otlp").host()

-- Rings sized to the rate (unless -b says): a DWARF sample is about 8.5
-- KiB, and a ring holds four drains' worth (the default, 8 MiB a CPU,
-- would all become resident, written round and round at 19 Hz).
if not select(2, perfmon.ring_pages()) then
  local pages = 64
  while pages < opts.freq * 0.85 do pages = pages * 2 end
  perfmon.ring_pages(pages)
end
-- Records wait in the rings up to 100 ms: the agent wakes 10 times a
-- second, not 200, and drains when a profile is due.
perfmon.drain_interval(100)

local spec = ("cpu-clock/freq=%d,call-graph=%s,cgroup/"):format(opts.freq, opts.call_graph)
local sampler = args.need(perfmon.counter(spec))
local served = require("pprof_http").new { event = spec, labels = { "pid", "comm", "cgroup" },
  max_seconds = opts.max_seconds, budget_mib = opts.profiles_budget, comment = "perfscript agent.lua" }
probe(sampler, function(s) served:add(s) end)

-- /metrics: the sampler, context switches and page faults per CPU, what
-- the agent served, pushed and holds.
local reg = require("openmetrics").new()
reg:counter(sampler, { event = "cpu-clock" })
for _, ev in ipairs({ "context-switches", "page-faults" }) do
  for _, cpu in ipairs(cpus) do
    local c = perfmon.counter(("%s/cpu=%d/"):format(ev, cpu))
    if c and c:start() then reg:counter(c, { event = ev, cpu = cpu }) end
  end
end
served:families(reg)
reg:symbolizer("perfscript_agent_symbolizer")

-- Off-CPU time (--offcpu): every interval a thread spends off the CPU,
-- summed in the kernel by stack, comm and why (the offcpu tapset). Its
-- program runs at every context switch of the host, so it is asked for.
local waits, OFFCPU = nil, "perfscript agent.lua --offcpu"
if opts.offcpu then
  local err
  waits, err = require("offcpu").open { min_us = opts.offcpu_min_us }
  if not waits then args.need(nil, "--offcpu: " .. tostring(err)) end
  probe("timer.s(1)", function() waits:pump() end)
end

-- Pushes: each window's counters and profiles, from the push tapset's queues.
local pusher
if opts.remote_write or opts.push or opts.otlp then
  pusher = require("push").new()
  pusher:families(reg)
  local rw = opts.remote_write and pusher:queue("remote_write")
  local py, ot = opts.push and pusher:queue("pyroscope"), opts.otlp and pusher:queue("otlp")
  local window = (py or ot) and { p = served:window(), w = waits and waits:window(), from = gettimeofday_ns() }
  local function push_window()
    local now = gettimeofday_ns()
    if rw then rw:push(reg:remote_write(opts.remote_write, { host = host })) end
    if not window then return end
    local last = window
    window = { p = served:window(), w = waits and waits:window(), from = now }
    local cpu, why = served:table(last.p)
    local off = last.w and last.w:profile(OFFCPU)
    local function pyroscope(t, app) -- a series each: APP and APP.offcpu
      py:push(require("pyroscope").request(opts.push, t, { app = app, labels = { host = host }, from = last.from,
                                                           ["until"] = now, rate = opts.freq }))
    end
    if py then pyroscope(cpu, opts.app) end
    if py and off then pyroscope(off, opts.app .. ".offcpu") end
    if ot and not cpu then ot:push(nil, why) end -- else one request: CPU time, then off-CPU time
    if ot and cpu then ot:push(require("otlp").post(opts.otlp, { cpu, off }, { service = opts.app })) end
    perfmon.trim()
  end
  probe(("timer.ms(%d)"):format(math.floor(opts.push_interval * 1000 + 0.5)), push_window)
  -- at the end, the last, partial window too, and up to --flush-ms for the queues
  probe("end", function() push_window(); pusher:flush(opts.flush_ms, "agent") end)
end

-- The counters open now: a failure (no permission) is said before the
-- port is announced, not after.
args.need(perfmon.open())
local links = { { "/debug/pprof/profile?seconds=30", "/debug/pprof/profile" }, { "/metrics", "/metrics" } }
if waits then table.insert(links, 2, { "/debug/pprof/offcpu?seconds=30", "/debug/pprof/offcpu" }) end
args.listen(opts.listen, function(req)
  if req.path == "/debug/pprof/profile" then return served:profile(req) end
  if req.path == "/debug/pprof/offcpu" and waits then return served:offcpu(req, waits, OFFCPU) end
  if req.path == "/" then return served:page(req, { name = host, links = links }) end
  return reg:handle(req, "/metrics")
end, { web_config = opts.web_config, after = "/ (profiles at /debug/pprof/profile, counters at /metrics)" })

-- The kernel's symbols (/proc/kallsyms, a tenth of a second) are read now,
-- not when the first profile is owed. Functions are named by symbol tables
-- (the backends add lines by build id) unless --lines; the symbolizer
-- keeps to its budget, and the processes that exited since the last
-- second's naming are needed no longer than that.
probe("begin", function() perfmon.symbolize(0, 0, true) end)
perfmon.symbols { budget = math.floor(opts.symbols_budget * 1048576),
                  lines = opts.lines == true }
probe("end", function() printf("served %d profiles and %d scrapes\n", served.served, reg.scrapes) end)
