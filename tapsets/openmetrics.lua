-- openmetrics.lua: counters and stats aggregates as a Prometheus /metrics
-- page, served over HTTP from perfscript's event loop. A registry holds
-- what to export; every scrape reads the counters and formats the page
-- then, in OpenMetrics 1.0 for a scraper that asks for it (Prometheus
-- does) and in Prometheus' text format 0.0.4 otherwise (curl, promtool).
--   local om = require "openmetrics"
--   local reg = om.new()
--   reg:counter(assert(perfmon.counter("page-faults")), { pid = target() })
--   assert(reg:serve("127.0.0.1:9100"))
-- Names follow Prometheus' conventions: a prefix (default "perfscript"),
-- counters end in _total, time is in seconds (clock events, enabled and
-- running times), and the event is a label, so one family holds every
-- event: perfscript_events_total{event="page-faults",cpu="0"}.
local M = {}

local OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"
local PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8"

local CLOCKS = { ["cpu-clock"] = true, ["task-clock"] = true }

local Registry = {}
Registry.__index = Registry

-- openmetrics.new{ prefix = "perfscript" } -> registry
function M.new(opts)
  opts = opts or {}
  local prefix = opts.prefix or "perfscript"
  if not prefix:match("^[%a_:][%w_:]*$") then
    error(("openmetrics.new: bad prefix '%s' (letters, digits, _ and :)"):format(prefix), 2)
  end
  return setmetatable({ prefix = prefix, counters = {}, families = {}, scrapes = 0 }, Registry)
end

-- A label value as the formats escape it, valid UTF-8 whatever its bytes
-- (a process or cgroup name): Prometheus refuses a page with one that is not.
local function escape(v)
  return (perfmon.valid_utf8(tostring(v)):gsub('[\\"\n]', { ["\\"] = "\\\\", ['"'] = '\\"', ["\n"] = "\\n" }))
end

-- {key = value} (values may be functions, called at each scrape) as
-- '{a="1",b="x"}' in a fixed order: event, cpu, pid, comm, the rest
-- sorted, and a histogram's le last.
local ORDER = { event = 1, cpu = 2, pid = 3, comm = 4, le = 100 }
local function label_text(labels)
  local keys = {}
  for k in pairs(labels) do
    if not tostring(k):match("^[%a_][%w_]*$") or tostring(k):match("^__") then
      error(("openmetrics: bad label name '%s'"):format(tostring(k)), 3)
    end
    keys[#keys + 1] = k
  end
  table.sort(keys, function(a, b)
    local oa, ob = ORDER[a] or 99, ORDER[b] or 99
    if oa ~= ob then return oa < ob end
    return a < b
  end)
  local out = {}
  for i, k in ipairs(keys) do
    local v = labels[k]
    if type(v) == "function" then v = v() end
    out[i] = ('%s="%s"'):format(k, escape(v))
  end
  return #out > 0 and "{" .. table.concat(out, ",") .. "}" or ""
end
M.label_text = label_text

-- Nanoseconds as exact decimal seconds.
local function seconds(ns)
  ns = math.tointeger(ns) or math.floor(ns + 0.5)
  local neg = ns < 0 and "-" or ""
  ns = math.abs(ns)
  return ("%s%d.%09d"):format(neg, ns // 1000000000, ns % 1000000000)
end
M.seconds = seconds

local function number(v)
  if math.type(v) == "integer" then return ("%d"):format(v) end
  if v ~= v then return "NaN" end
  if v == math.huge then return "+Inf" elseif v == -math.huge then return "-Inf" end
  if v == math.floor(v) and math.abs(v) < 2 ^ 63 then return ("%d"):format(v) end
  for digits = 15, 17 do -- the shortest text that reads back as v
    local text = ("%." .. digits .. "g"):format(v)
    if tonumber(text) == v then return text end
  end
  return ("%.17g"):format(v)
end
M.number = number

-- Export a counter: anything with :read() -> value, enabled, running (a
-- perfmon counter) and a name (labels.event, or its :name()). labels adds
-- cpu, pid, comm or any other label; a label whose value is a function is
-- asked at each scrape (once per scrape however many counters share it).
-- A counter that samples also exports its delivered and lost samples
-- (perfmon.stats).
function Registry:counter(c, labels)
  if type(c) ~= "userdata" and type(c) ~= "table" or not c.read then
    error("openmetrics: counter expected (an object with :read())", 2)
  end
  local l, dynamic = {}, false
  for k, v in pairs(labels or {}) do
    l[k] = v
    dynamic = dynamic or type(v) == "function"
  end
  l.event = l.event or (c.name and c:name()) or "?"
  local text = label_text(l) -- checks the names now, not at the first scrape
  local h = c.handle and c:handle()
  local spec = h and rawget(_G, "perfmon_handle_to_string") and perfmon_handle_to_string(h) or ""
  self.counters[#self.counters + 1] = {
    c = c, labels = l, text = not dynamic and text or nil, handle = h,
    sampling = (spec:match("[/,]period=") or spec:match("[/,]freq=")) and true or false,
    clock = CLOCKS[tostring(l.event):gsub("[:/].*$", "")] }
  return self
end

-- Export a family of your own: type "counter", "gauge" (or "unknown"),
-- fn() -> { {labels = {...}, value = n}, ... } at each scrape; a counter's
-- name gets _total. opts.unit ("seconds", "bytes", ...) must end the name.
function Registry:family(name, ftype, help, fn, opts)
  opts = opts or {}
  if not name:match("^[%a_:][%w_:]*$") then error(("openmetrics: bad metric name '%s'"):format(name), 2) end
  if ftype ~= "counter" and ftype ~= "gauge" and ftype ~= "unknown" then
    error(("openmetrics: family type must be counter, gauge or unknown, not '%s'"):format(tostring(ftype)), 2)
  end
  if opts.unit and not name:match("_" .. opts.unit .. "$") then
    error(("openmetrics: a metric in %s must end in _%s (%s)"):format(opts.unit, opts.unit, name), 2)
  end
  self.families[#self.families + 1] = { name = name, type = ftype, help = help, unit = opts.unit,
                                        rows = function()
                                          local out = {}
                                          for i, r in ipairs(fn()) do
                                            out[i] = { ftype == "counter" and "_total" or "",
                                                       label_text(r.labels or {}), number(r.value) }
                                          end
                                          return out
                                        end }
  return self
end

-- Histogram rows of one stats aggregate: cumulative log2 buckets. A
-- bucket [lo, hi) holds values below hi; for integer values that is
-- le = hi - 1 exactly, for fractional ones le = hi (a value of exactly hi
-- is counted one bucket late). Negative buckets (lo, hi] are exact.
local function hist_rows(agg, labels, scale)
  local rows, cum = {}, 0
  local n = agg:count()
  local int = math.type(agg:sum()) == "integer" and scale == 1
  if n > 0 then
    for _, b in ipairs(agg:buckets_log()) do
      cum = cum + b.count
      local le = b.hi
      if int and b.lo >= 0 then le = le - 1 end
      local l = {}
      for k, v in pairs(labels) do l[k] = v end
      l.le = number(le * scale)
      rows[#rows + 1] = { "_bucket", label_text(l), number(cum) }
    end
  end
  local l = {}
  for k, v in pairs(labels) do l[k] = v end
  l.le = "+Inf"
  rows[#rows + 1] = { "_bucket", label_text(l), number(n) }
  rows[#rows + 1] = { "_count", label_text(labels), number(n) }
  rows[#rows + 1] = { "_sum", label_text(labels), number(n > 0 and agg:sum() * scale or 0) }
  return rows
end

-- Export a stats aggregate (stats.new) as a histogram, or a keyed one
-- (stats.keyed) as one histogram per key with the key as label opts.label
-- (default "key"). opts.help; opts.unit with opts.scale (e.g. "seconds",
-- 1e-9 for values in ns) converts the values.
function Registry:stats(name, agg, opts)
  opts = opts or {}
  local full = self.prefix .. "_" .. name
  if not full:match("^[%a_:][%w_:]*$") then error(("openmetrics: bad metric name '%s'"):format(full), 2) end
  if opts.unit and not name:match("_" .. opts.unit .. "$") then
    error(("openmetrics: a metric in %s must end in _%s (%s)"):format(opts.unit, opts.unit, name), 2)
  end
  local scale, label = opts.scale or 1, opts.label or "key"
  local stats = require "stats"
  self.families[#self.families + 1] = {
    name = full, type = "histogram", unit = opts.unit,
    help = opts.help or ("perfscript stats aggregate " .. name),
    rows = function()
      if not agg.sorted then return hist_rows(agg, {}, scale) end
      local rows = {}
      for key, s in agg:sorted("key") do
        for _, r in ipairs(hist_rows(s, { [label] = stats.key_string(key) }, scale)) do rows[#rows + 1] = r end
      end
      return rows
    end }
  return self
end

-- This process's resident memory in bytes (VmRSS of /proc/self/status),
-- for process_resident_memory_bytes, as Prometheus' clients name it.
local function self_rss_bytes()
  local f = io.open("/proc/self/status")
  if not f then return 0 end
  local st = f:read("a")
  f:close()
  return (math.tointeger(tonumber(st:match("VmRSS:%s*(%d+)"))) or 0) * 1024
end

-- This process's CPU time in ns (utime + stime of /proc/self/stat), for
-- process_cpu_seconds_total: what the exporter itself costs.
local function self_cpu_ns()
  local f = io.open("/proc/self/stat")
  if not f then return 0 end
  local stat = f:read("a")
  f:close()
  local rest = stat:match("%) (.*)$") or ""
  local fields = {}
  for w in rest:gmatch("%S+") do fields[#fields + 1] = w end
  -- after ") ": state is field 3 of the kernel's numbering; utime 14, stime 15
  local ticks = (math.tointeger(tonumber(fields[12])) or 0) + (math.tointeger(tonumber(fields[13])) or 0)
  return ticks * 10000000 -- ns: USER_HZ is 100 on every Linux ABI
end

-- The counter families: rows per family name, read once per counter.
function Registry:counter_families()
  local p = self.prefix
  local fam = {
    { name = p .. "_events", type = "counter",
      help = "Events counted by perf_event counters, scaled when the kernel multiplexed them.", rows = {} },
    { name = p .. "_event_seconds", type = "counter", unit = "seconds",
      help = "Time counted by clock events (cpu-clock, task-clock).", rows = {} },
    { name = p .. "_event_enabled_seconds", type = "counter", unit = "seconds",
      help = "Time each counter was enabled.", rows = {} },
    { name = p .. "_event_running_seconds", type = "counter", unit = "seconds",
      help = "Time each counter was running on the PMU; below enabled when multiplexed.", rows = {} },
    { name = p .. "_samples", type = "counter",
      help = "Samples of sampling counters delivered to their handlers.", rows = {} },
    { name = p .. "_lost_samples", type = "counter",
      help = "Samples of sampling counters the kernel lost (ring buffer full).", rows = {} },
  }
  local stats = rawget(_G, "perfmon") and perfmon.stats
  local asked = {} -- function label values of this scrape
  local function resolve(labels)
    local l = {}
    for k, v in pairs(labels) do
      if type(v) == "function" then
        if asked[v] == nil then asked[v] = v() end
        v = asked[v]
      end
      l[k] = v
    end
    return label_text(l)
  end
  -- the counters of the scrape read at one moment, each CPU's from it
  local objs = {}
  for i, e in ipairs(self.counters) do objs[i] = e.c end
  local got = require("interval").read_all(objs)
  for i, e in ipairs(self.counters) do
    local v, enabled, running = got[i][1], got[i][2], got[i][3]
    local labels = e.text or resolve(e.labels)
    if v == nil then goto next end -- not supported, not counted: no sample, not a 0
    if type(v) ~= "number" then v = 0 end
    if e.clock then
      fam[2].rows[#fam[2].rows + 1] = { "_total", labels, seconds(v) }
    else
      fam[1].rows[#fam[1].rows + 1] = { "_total", labels, number(math.tointeger(v) or v) }
    end
    if enabled then
      fam[3].rows[#fam[3].rows + 1] = { "_total", labels, seconds(enabled) }
      fam[4].rows[#fam[4].rows + 1] = { "_total", labels, seconds(running) }
    end
    if e.sampling and stats then
      local st = stats(e.handle)
      fam[5].rows[#fam[5].rows + 1] = { "_total", labels, number(st.samples) }
      fam[6].rows[#fam[6].rows + 1] = { "_total", labels, number(st.lost) }
    end
    ::next::
  end
  return fam
end

-- One family's text: metadata, then its rows.
local function family_text(out, f, rows, om)
  if #rows == 0 then return end
  local meta = f.name
  if not om and f.type == "counter" then meta = f.name .. "_total" end
  if om then
    out[#out + 1] = ("# TYPE %s %s\n"):format(f.name, f.type)
    if f.unit then out[#out + 1] = ("# UNIT %s %s\n"):format(f.name, f.unit) end
    out[#out + 1] = ("# HELP %s %s\n"):format(f.name, (f.help:gsub("[\\\n]", { ["\\"] = "\\\\", ["\n"] = "\\n" })))
  else
    out[#out + 1] = ("# HELP %s %s\n"):format(meta, (f.help:gsub("[\\\n]", { ["\\"] = "\\\\", ["\n"] = "\\n" })))
    out[#out + 1] = ("# TYPE %s %s\n"):format(meta, f.type == "unknown" and "untyped" or f.type)
  end
  for _, r in ipairs(rows) do out[#out + 1] = ("%s%s%s %s\n"):format(f.name, r[1], r[2], r[3]) end
end

-- The page: OpenMetrics 1.0 when openmetrics is true (ends in # EOF),
-- Prometheus text 0.0.4 otherwise.
function Registry:text(openmetrics)
  local out = {}
  for _, f in ipairs(self:counter_families()) do family_text(out, f, f.rows, openmetrics) end
  for _, f in ipairs(self.families) do family_text(out, f, f.rows(), openmetrics) end
  family_text(out, { name = "process_cpu_seconds", type = "counter", unit = "seconds",
                     help = "CPU time of this perfscript process (user and system)." },
              { { "_total", "", seconds(self_cpu_ns()) } }, openmetrics)
  family_text(out, { name = "process_resident_memory_bytes", type = "gauge", unit = "bytes",
                     help = "Resident memory of this perfscript process (VmRSS)." },
              { { "", "", self_rss_bytes() } }, openmetrics)
  if openmetrics then out[#out + 1] = "# EOF\n" end
  return table.concat(out)
end

-- A label set's text ('{a="1",b="x\"y"}') back to a table.
local UNESCAPE = { ["\\"] = "\\", ['"'] = '"', n = "\n" }
local function labels_of(text)
  local out, i = {}, 2
  while i < #text do
    local name, at = text:match('^([%a_][%w_]*)="()', i)
    if not name then break end
    local v, j = {}, at
    while j <= #text do
      local c = text:sub(j, j)
      if c == "\\" then
        v[#v + 1] = UNESCAPE[text:sub(j + 1, j + 1)] or text:sub(j + 1, j + 1)
        j = j + 2
      elseif c == '"' then
        break
      else
        v[#v + 1] = c
        j = j + 1
      end
    end
    out[name] = table.concat(v)
    i = j + 2 -- past '",'
  end
  return out
end

-- Every sample of the page, as Prometheus remote write sends them
-- (perfscript.remote_write): { {name =, labels = {...}, value =}, ... },
-- the names as the text format spells them (counters end in _total).
function Registry:series()
  local out = {}
  for line in self:text(false):gmatch("[^\n]+") do
    if line:sub(1, 1) ~= "#" then
      local name, rest = line:match("^([%a_:][%w_:]*)(.*)$")
      local labels, value = rest:match("^(%b{}) (%S+)$")
      if not labels then labels, value = "{}", rest:match("^ (%S+)$") end
      out[#out + 1] = { name = name, labels = labels_of(labels), value = tonumber(value) or
                        (value == "+Inf" and math.huge or value == "-Inf" and -math.huge or 0 / 0) }
    end
  end
  return out
end

-- The symbolizer's state as a gauge family (default PREFIX_symbolizer):
-- {what = bytes, budget_bytes, files, processes, exited, unwinders,
-- evictions}, read from perfmon.symbols() at each scrape.
local SYMBOLIZER = { { "bytes", "bytes" }, { "budget_bytes", "budget" }, { "files", "files_open" },
                     { "processes", "processes" }, { "exited", "exited" }, { "unwinders", "unwinders" },
                     { "evictions", "evictions" } }
function Registry:symbolizer(name)
  self:family(name or self.prefix .. "_symbolizer", "gauge",
              "What the symbolizer holds: bytes (of its budget), files read, processes known and exited, "
                .. "unwinders; files given back so far.",
              function()
                local st, rows = perfmon.symbols(), {}
                for i, w in ipairs(SYMBOLIZER) do rows[i] = { labels = { what = w[1] }, value = st[w[2]] } end
                return rows
              end)
end

-- The page as one Prometheus remote write 1.0 request to url (a
-- snappy-compressed protobuf WriteRequest), for the push tapset:
-- { url, body, headers }, or nil and why (no libsnappy). labels, as
-- Prometheus' external_labels, go on every series that has none of that
-- name ({ host = NAME }: whose series these are, where nobody scrapes).
function Registry:remote_write(url, labels)
  local series = self:series()
  for _, s in ipairs(labels and series or {}) do
    for k, v in pairs(labels) do
      if s.labels[k] == nil then s.labels[k] = tostring(v) end
    end
  end
  local body, err = require("perfscript.remote_write").encode(series)
  if not body then return nil, err end
  return { url = url, body = body,
           headers = { ["Content-Encoding"] = "snappy", ["Content-Type"] = "application/x-protobuf",
                       ["X-Prometheus-Remote-Write-Version"] = "0.1.0" } }
end

-- The reply to one request {method, path, accept}: body, content type, status.
function Registry:handle(req, path)
  if req.path == (path or "/metrics") then
    self.scrapes = self.scrapes + 1
    local om = (req.accept or ""):find("application/openmetrics-text", 1, true) ~= nil
    return self:text(om), om and OPENMETRICS or PROMETHEUS, 200
  elseif req.path == "/" then
    return ("perfscript exporter: metrics at %s\n"):format(path or "/metrics"), "text/plain; charset=utf-8", 200
  end
  return "not found\n", "text/plain; charset=utf-8", 404
end

-- Serve the page at opts.path (default /metrics) on addr ("127.0.0.1:9100",
-- ":9100" for every address, port 0 for any free one): the server
-- (server:port(), server:close()), or nil and a message.
function Registry:serve(addr, opts)
  opts = opts or {}
  local http = require "perfscript.http"
  return http.listen(addr, function(req) return self:handle(req, opts.path) end,
                     { web_config = opts.web_config, max_connections = opts.max_connections,
                       idle_timeout_ms = opts.idle_timeout_ms })
end

return M
