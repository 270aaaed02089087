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
--   /debug/pprof/offcpu?seconds=N    with --offcpu: where the host's threads
--                                    waited off the CPU in the next N
--                                    seconds (nanoseconds, by stack, comm
--                                    and why: S, D, R), measured in the
--                                    kernel as examples/offcpu.lua does
--   /?seconds=N                      a page: the next N seconds (default 5)
--                                    as a flame graph and the top
--                                    functions, nothing fetched elsewhere
--   /metrics                         the agent's counters for Prometheus:
--                                    context switches and page faults per
--                                    CPU, the samples it took and lost, its
--                                    own CPU time
-- and, for hosts nobody scrapes, pushes every --push-interval seconds:
--   --remote-write URL   the counters, by Prometheus remote write 1.0
--                        (a snappy-compressed protobuf WriteRequest)
--   --push URL           the window's profile, to Grafana Pyroscope's
--                        ingest API (URL/ingest?name=APP{host=..}&from=&until=
--                        &format=pprof, the profile in a multipart form)
-- Pushes go out from the loop, one at a time per destination, and never
-- hold up sampling; a failed one is retried with a backoff from 1 s to
-- 30 s; a queue of 16 per destination drops its oldest when full. What was
-- sent, retried, dropped or refused is on /metrics.
-- Functions are named by the binaries' symbol tables; each Mapping carries
-- its file's build id, by which Parca and Pyroscope add source lines from
-- debuginfo. --lines names inline frames and source lines here, from DWARF
-- (libc's alone holds 9 MB and more of it: give --symbols-budget room).
-- Samples go only to the profiles being asked for (and the push window's):
-- between them the agent keeps nothing but its counters. Records may wait
-- in the rings up to 100 ms (perfmon.drain_interval): the agent wakes about
-- 10 times a second, and drains when a window closes.
--   perfscript -a examples/agent.lua --listen 127.0.0.1:9464
--   go tool pprof http://127.0.0.1:9464/debug/pprof/profile?seconds=10
--   perfscript -a examples/agent.lua --listen 127.0.0.1:9464 \
--       --remote-write http://prometheus:9090/api/v1/write --push http://pyroscope:4040
-- The page and the profiles show the machine's processes and perfscript
-- runs as root: listen on loopback or behind a firewall, or give it TLS and
-- users (--web.config.file FILE; docs/fleet.md).
local opts = require("args").parse(arg, {
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
  { "--app", "NAME", "the application name of pushed profiles (default host)", default = "host" },
  { "--flush-ms", "MS", "at the end, wait up to MS for the last pushes (default 5000)", number = true,
    min = 0, max = 600000,
    default = 5000 },
  { "--push-interval", "S", "seconds between pushes: the profile window (default 10)", number = true,
    min = 0.1, max = 3600,
    default = 10 },
  { "--offcpu", nil, "also time threads off the CPU (BPF): /debug/pprof/offcpu, and pushed" },
  { "--offcpu-min-us", "N", "off-CPU intervals shorter than N microseconds count without a stack (default 10)",
    number = true, min = 0, default = 10 },
  { "--symbols-budget", "MIB", "what the symbolizer may hold, in MiB (default 18)", number = true,
    min = 1, default = 18, key = "symbols_budget" },
  { "--lines", nil, "source lines and inline frames from DWARF (costs libc's 9 MB and more)" },
})
local need, fail = require("args").need, require("args").fail
if not opts.listen then fail("--listen ADDR:PORT is needed (e.g. --listen 127.0.0.1:9464)") end
local cpus = target_cpus()
if not cpus then fail("profiles the whole host: run it with -a (or -C LIST, or -G CGROUP)") end

local om, profile, pprof = require "openmetrics", require "profile", require "pprof"
local encode = require("perfscript.pprof").encode

-- Rings sized to the rate (unless -b says): a DWARF sample is about 8.5
-- KiB, and a ring holds four drains' worth. The default for user stacks,
-- 8 MiB a CPU, is written round and round at 19 Hz until every page of it
-- is resident: 16 MB more RSS after a few minutes on 2 CPUs.
if not select(2, perfmon.ring_pages()) then
  local pages = 64
  while pages < opts.freq * 0.85 do pages = pages * 2 end
  perfmon.ring_pages(pages)
end

-- The sampling counter: every CPU (the target), stacks, the cgroup of each sample.
local spec = ("cpu-clock/freq=%d,call-graph=%s,cgroup/"):format(opts.freq, opts.call_graph)
local sampler = need(perfmon.counter(spec))

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
local served, refused, gone = 0, 0, 0
reg:family("perfscript_agent_profiles", "counter",
           "Profiles requested over HTTP: served, refused (a bad seconds, too many at once), "
           .. "or stopped when their client hung up (gone).",
           function()
             return { { labels = { result = "served" }, value = served },
                      { labels = { result = "refused" }, value = refused },
                      { labels = { result = "gone" }, value = gone } }
           end)
reg:family("perfscript_agent_profiles_in_progress", "gauge",
           "Profiles being taken now, each owed to a request when its seconds are up.",
           function() return { { value = #open } } end)

-- A profile being taken, and its gzip pprof bytes when it is done (or
-- nil and why).
local function new_profile(budget)
  return profile.new { pprof = true, labels = { "pid", "comm", "cgroup" }, budget = budget }
end
-- However many are asked for at once, the requests' profiles share one
-- budget of distinct stacks and addresses (about 320 bytes each, named).
local requests_budget = { left = math.floor(opts.profiles_budget * 1048576 / 320) }
local function pprof_bytes(p)
  local ok, bytes = pcall(function()
    return encode(pprof.build(p, { event = spec, comment = "perfscript agent.lua" }))
  end)
  if ok then return bytes end
  return nil, tostring(bytes)
end

-- The push window's profile, when profiles are pushed.
local window = opts.push and { p = new_profile(), from = gettimeofday_ns() }

probe(sampler, function(s)
  for i = 1, #open do open[i].p:add(s) end
  if window then window.p:add(s) end
end)

-- A profile is sent when its window closes: the rings drained then (the
-- agent lets records wait up to 100 ms otherwise, so that it wakes 10
-- times a second, not 200), then built.
perfmon.drain_interval(100)
-- Off-CPU time (--offcpu): every interval a thread of the host spends off
-- the CPU, summed in the kernel by the stacks where it left and why
-- (the offcpu tapset's, as examples/offcpu.lua), taken each second, and when an
-- off-CPU profile starts or ends, into those being asked for and the push
-- window's. Its program runs at every context switch of the host: it costs
-- the switching tasks, so it is asked for, not on by default.
local offcpu
if opts.offcpu then
  local waits, err = require("offcpu").open { min_us = opts.offcpu_min_us }
  if not waits then need(nil, "--offcpu: " .. tostring(err)) end
  offcpu = { waits = waits, open = {}, window = opts.push and { acc = {}, from = gettimeofday_ns() } }
end
local function offcpu_take()
  local t = offcpu.waits:take()
  local accs = {}
  for i = 1, #offcpu.open do accs[#accs + 1] = offcpu.open[i].acc end
  if offcpu.window then accs[#accs + 1] = offcpu.window.acc end
  for key, ns in pairs(t) do
    for i = 1, #accs do accs[i][key] = (accs[i][key] or 0) + ns end
  end
end
local function offcpu_bytes(acc, from)
  local rows = require("offcpu").rows(acc)
  local ok, bytes = pcall(function()
    return encode(require("offcpu").profile(rows, { time_nanos = from,
      duration_nanos = gettimeofday_ns() - from, comment = "perfscript agent.lua --offcpu" }))
  end)
  if ok then return bytes end
  return nil, tostring(bytes)
end

-- The open profiles' stacks are named as they come, once a second, so
-- that little is left to do when a window closes.
probe("timer.s(1)", function()
  for i = 1, #open do pprof.prepare(open[i].p) end
  if offcpu then offcpu_take() end
end)
-- Every 2 s the pages of the binaries that unwinding and naming read once
-- (CFI, symbol tables) go back to the page cache; those read again since
-- the last time stay (the top of a busy library's CFI table, its hot
-- functions' entries): RSS follows what is in use, within a megabyte,
-- instead of a sawtooth of some 2.5 MB. Every 10 s Lua's garbage and the
-- heap's free pages go too.
local trims = 0
probe("timer.s(2)", function()
  trims = trims + 1
  perfmon.trim(trims % 5 == 0 and "all" or "pages")
end)
-- A profile owed to a request, sent when its window closes: taken out of
-- the list of those open, built, and its bytes (or why not, 500) replied.
local function send_owed(list, o, ctype, bytes, why)
  for i = #list, 1, -1 do
    if list[i] == o then table.remove(list, i) end
  end
  if bytes then
    o.reply:send(bytes, ctype)
    served = served + 1
  else
    o.reply:send("cannot build the profile: " .. why .. "\n", nil, 500)
  end
end

-- A request for a profile of the next `seconds`, a whole number as Go's
-- net/http/pprof takes it (default 30): its deferred reply and the
-- seconds, or nil and the answer now (400, 503).
-- A client that hangs up before its profile is done stops it, as Go's
-- handler does: its request o is taken out of the list it is in.
local function owe(req, list, o, default)
  local arg = req.args.seconds or default or "30"
  local secs = arg:match("^%d+$") and tonumber(arg)
  if not secs or secs < 1 or secs > opts.max_seconds then
    refused = refused + 1
    return nil, ("seconds must be a whole number from 1 to %d\n"):format(opts.max_seconds), 400
  end
  local ok, reply = pcall(req.defer, req, function()
    o.gone = true
    gone = gone + 1
    if o.p then o.p:release(); o.p = nil end -- its memory goes now, not when its seconds are up
    for i = #list, 1, -1 do
      if list[i] == o then table.remove(list, i) end
    end
  end)
  if not ok then
    refused = refused + 1
    return nil, "too many profiles are being taken at once: retry later\n", 503
  end
  o.reply = reply
  return reply, secs
end

-- The samples of the next seconds (default: default), owed to req: when
-- they are up, build(p, secs) makes the reply (bytes, or nil and why),
-- sent as ctype.
local function sampled_request(req, default, build, ctype)
  local o = {}
  local reply, secs, code = owe(req, open, o, default)
  if not reply then return secs, nil, code end
  o.p = new_profile(requests_budget)
  open[#open + 1] = o
  perfmon.after(secs * 1000, function()
    if o.gone then return end
    perfmon.drain()
    send_owed(open, o, ctype, build(o.p, secs))
    o.p:release()
  end)
end
local function profile_request(req)
  return sampled_request(req, "30", pprof_bytes, "application/octet-stream")
end

local function hostname()
  local f = io.open("/proc/sys/kernel/hostname")
  local h = f and f:read("l") or "localhost"
  if f then f:close() end
  return h
end
local HOST = hostname()

-- The page at /: the next ?seconds (default 5) of the host as a flame
-- graph and its top functions, one HTML page with nothing to fetch from
-- anywhere (the flame tapset's SVG inline), behind the listener's TLS and
-- auth as the rest. Every name in it is escaped.
local flame = require "flame"
local function page(p, secs)
  local t = pprof.build(p, { event = spec })
  local lines, top, total = {}, {}, 0
  for k, v in pairs(pprof.folded(t)) do lines[#lines + 1] = ("%s %d\n"):format(k, v) end
  table.sort(lines)
  for name, n in pairs(pprof.flat(t)) do top[#top + 1] = { name = name, n = n }; total = total + n end
  table.sort(top, function(a, b) return a.n > b.n or a.n == b.n and a.name < b.name end)
  local rows = {}
  for i = 1, math.min(20, #top) do
    rows[i] = ("<tr><td>%d</td><td>%.2f%%</td><td>%s</td></tr>"):format(top[i].n, 100 * top[i].n / total,
                                                                        flame.escape(top[i].name))
  end
  local host = flame.escape(HOST)
  local svg = flame.svg(table.concat(lines), { title = ("%d samples in %d s"):format(total, secs) })
  return ([[<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>perfscript agent: %s</title>
<style>body { font-family: sans-serif; margin: 1em; } td { padding: 0 1em 0 0; font-family: monospace; }</style>
</head><body><h1>%s: the last %d s</h1>
<p><a href="/?seconds=%d">again</a> · <a href="/debug/pprof/profile?seconds=30">/debug/pprof/profile</a>%s
· <a href="/metrics">/metrics</a></p>
%s
<h2>Top functions</h2>
<table><tr><th>samples</th><th>%%</th><th>function</th></tr>
%s
</table></body></html>
]]):format(host, host, secs, secs,
           offcpu and ' · <a href="/debug/pprof/offcpu?seconds=30">/debug/pprof/offcpu</a>' or "",
           (svg:gsub("^<%?xml[^\n]*\n", "")), table.concat(rows, "\n"))
end
local function page_request(req)
  return sampled_request(req, "5", function(p, secs)
    local ok, html = pcall(page, p, secs)
    if ok then return html end
    return nil, tostring(html)
  end, "text/html; charset=utf-8")
end

-- An off-CPU profile: from a take (so it starts clean) to the take at its end.
local function offcpu_request(req)
  local o = {}
  local reply, secs, code = owe(req, offcpu.open, o)
  if not reply then return secs, nil, code end
  -- its start is stamped before the take, whose flush books every wait up
  -- to a moment after it: stamped after, a slow take (a host's worth of
  -- stacks, under load) made the window shorter than the waits booked in
  -- it (a sleeper had 2.13 s in a 2.02 s window)
  o.acc, o.from = {}, gettimeofday_ns()
  offcpu_take()
  offcpu.open[#offcpu.open + 1] = o
  perfmon.after(secs * 1000, function()
    if o.gone then return end
    offcpu_take()
    send_owed(offcpu.open, o, "application/octet-stream", offcpu_bytes(o.acc, o.from))
  end)
end

local http = require "perfscript.http"

-- A destination's queue: bodies sent one at a time, in order. A failure
-- (no reply, 429, 5xx) is retried after a backoff that doubles from 1 s to
-- 30 s; another 4xx will never be taken and is counted as refused; a full
-- queue drops its oldest body.
local QUEUE_MAX = 16
local REDIRECT_LOOP = -40 -- -ELOOP: more than 10 redirects, a destination that will never take it
local function queue(kind)
  local q = { kind = kind, items = {}, busy = false, wait_until = 0, backoff = 1,
              sent = 0, retried = 0, dropped = 0, refused = 0 }
  function q:push(item)
    if #self.items >= QUEUE_MAX then
      table.remove(self.items, 1)
      self.dropped = self.dropped + 1
    end
    self.items[#self.items + 1] = item
    self:pump()
  end
  function q:pump()
    if self.busy or #self.items == 0 or gettimeofday_ns() < self.wait_until then return end
    local item = self.items[1]
    local function done(status)
      self.busy = false
      local first = self.items[1] == item -- not dropped meanwhile
      if status >= 200 and status < 300 then
        if first then table.remove(self.items, 1) end
        self.sent, self.backoff = self.sent + 1, 1
      elseif (status >= 400 and status < 500 and status ~= 429) or status == REDIRECT_LOOP then
        if first then table.remove(self.items, 1) end
        self.refused = self.refused + 1
      else
        self.retried = self.retried + 1
        self.wait_until = gettimeofday_ns() + self.backoff * 1e9
        self.backoff = math.min(self.backoff * 2, 30)
      end
      self:pump()
    end
    self.busy = true
    local ok = http.post(item.url, item.body, { headers = item.headers, timeout_ms = 10000 }, done)
    if not ok then done(-1) end
  end
  return q
end

local queues = {}
if opts.remote_write then queues.remote_write = queue("remote_write") end
if opts.push then queues.pyroscope = queue("pyroscope") end
reg:family("perfscript_agent_pushes", "counter",
           "Pushes by destination: sent, retried after a failure, dropped from a full queue, refused (4xx).",
           function()
             local rows = {}
             for kind, q in pairs(queues) do
               for _, r in ipairs({ "sent", "retried", "dropped", "refused" }) do
                 rows[#rows + 1] = { labels = { kind = kind, result = r }, value = q[r] }
               end
             end
             return rows
           end)
reg:family("perfscript_agent_push_queue", "gauge", "Bodies waiting to be pushed, by destination.",
           function()
             local rows = {}
             for kind, q in pairs(queues) do rows[#rows + 1] = { labels = { kind = kind }, value = #q.items } end
             return rows
           end)

local function urlencode(s)
  return (s:gsub("[^%w%-%._~]", function(c) return ("%%%02X"):format(c:byte()) end))
end

-- A window's profile to Pyroscope's ingest API, in a multipart form.
local function push_profile(bytes, app, from, now)
  if not bytes then return end
  local boundary = ("perfscript%x"):format(now)
  local body = table.concat {
    "--", boundary, "\r\n",
    'Content-Disposition: form-data; name="profile"; filename="profile.pb.gz"\r\n',
    "Content-Type: application/octet-stream\r\n\r\n", bytes, "\r\n--", boundary, "--\r\n" }
  local name = ("%s{host=%s}"):format(app, HOST)
  queues.pyroscope:push { url = ("%s/ingest?name=%s&from=%d&until=%d&format=pprof&sampleRate=%d")
                              :format(opts.push:gsub("/+$", ""), urlencode(name), from // 1000000000,
                                      now // 1000000000, opts.freq),
    body = body, headers = { ["Content-Type"] = "multipart/form-data; boundary=" .. boundary } }
end

-- One push window: the counters as remote write, the profiles to Pyroscope.
local rw = opts.remote_write and require("perfscript.remote_write")
local function push_window()
  local now = gettimeofday_ns()
  if queues.remote_write then
    queues.remote_write:push { url = opts.remote_write, body = rw.encode(reg:series()),
      headers = { ["Content-Encoding"] = "snappy", ["Content-Type"] = "application/x-protobuf",
                  ["X-Prometheus-Remote-Write-Version"] = "0.1.0" } }
  end
  if window then
    perfmon.drain() -- the window's last samples, still in the rings
    local p, from = window.p, window.from
    window = { p = new_profile(), from = now }
    push_profile(pprof_bytes(p), opts.app, from, now)
  end
  if offcpu and offcpu.window then
    offcpu_take()
    local w = offcpu.window
    offcpu.window = { acc = {}, from = now }
    push_profile(offcpu_bytes(w.acc, w.from), opts.app .. ".offcpu", w.from, now)
  end
end
if next(queues) then
  probe(("timer.ms(%d)"):format(math.floor(opts.push_interval * 1000 + 0.5)), push_window)
  probe("timer.ms(200)", function() for _, q in pairs(queues) do q:pump() end end)
end

-- The counters open now: a failure (no permission) is said before the
-- port is announced, not after.
need(perfmon.open())

local server, err, code = http.listen(opts.listen, function(req)
  if req.path == "/debug/pprof/profile" then return profile_request(req) end
  if req.path == "/debug/pprof/offcpu" and offcpu then return offcpu_request(req) end
  if req.path == "/" then return page_request(req) end
  return reg:handle(req, "/metrics")
end, { web_config = opts.web_config })
-- a bad address is the user's (EINVAL: exit 2), a port in use the machine's
if not server and code == 22 and err:match("^bad listen address") then fail(err) end
need(server, err)
local host = opts.listen:match("^(.*):%d+$")
printf("listening on %s://%s:%d/ (profiles at /debug/pprof/profile, counters at /metrics)\n",
       server:tls() and "https" or "http", (host == "" or host == nil) and "0.0.0.0" or host,
       server:port())
io.stdout:flush()

-- The kernel's symbols (/proc/kallsyms, a tenth of a second) are read now,
-- not when the first profile is owed.
probe("begin", function() perfmon.symbolize(0, 0, true) end)

-- Profiles are named as they go (pprof.prepare, each second), so an
-- exited process is needed for a few seconds, not until 20480 more have
-- exited: 100 execs a second grew the agent by 6 MB in its first 30 s.
-- 1024 + 256 (0.6 KB each): 1024 is ten seconds of that churn, and the
-- sampled ones beyond those kept 1024 filled over minutes, growing the
-- RSS by 0.6 MB after the first (19 Hz on two CPUs sampled about five
-- short processes a second here: 256 is most of a minute of them).
-- The budget bounds the RSS: about 20 MB besides the symbolizer's (with
-- 32 MiB, a compiler run beside it took the agent to 53 MB, 64 at peak).
perfmon.symbols { exited = 1024, exited_sampled = 256, budget = math.floor(opts.symbols_budget * 1048576),
                  lines = opts.lines == true }
reg:family("perfscript_agent_symbolizer", "gauge",
           "What the symbolizer holds: bytes (of its budget), files read, processes known and exited, "
             .. "unwinders; files given back so far.",
           function()
             local st = perfmon.symbols()
             return { { labels = { what = "bytes" }, value = st.bytes },
                      { labels = { what = "budget_bytes" }, value = st.budget },
                      { labels = { what = "files" }, value = st.files_open },
                      { labels = { what = "processes" }, value = st.processes },
                      { labels = { what = "exited" }, value = st.exited },
                      { labels = { what = "unwinders" }, value = st.unwinders },
                      { labels = { what = "evictions" }, value = st.evictions } }
           end)

-- At the end: the last, partial window is pushed too, and what the queues
-- hold is sent for up to --flush-ms (a second Ctrl-C stops the wait).
probe("end", function()
  if next(queues) then
    push_window()
    local waiting = 0
    for _, q in pairs(queues) do q.wait_until = 0; q:pump(); waiting = waiting + #q.items end
    local t0 = gettimeofday_ns()
    if waiting > 0 then
      io.stderr:write(("agent: sending the last %d pushes (up to %d ms; Ctrl-C again to stop)\n")
                      :format(waiting, opts.flush_ms))
      http.flush(opts.flush_ms)
    end
    local waited = (gettimeofday_ns() - t0) // 1000000
    for kind, q in pairs(queues) do
      if #q.items > 0 then
        io.stderr:write(("agent: %d %s pushes not sent: %s\n"):format(#q.items, kind,
          q.busy and ("no answer within %d ms"):format(waited)
          or ("the destination refused or failed the last try (%d retried, %d refused; %d ms spent)")
             :format(q.retried, q.refused, waited)))
      end
    end
  end
  printf("served %d profiles and %d scrapes\n", served, reg.scrapes)
end)
