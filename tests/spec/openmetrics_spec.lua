-- openmetrics_spec.lua: the openmetrics tapset over fake counters and real
-- stats aggregates: names, units, labels and escaping, both formats,
-- histograms with cumulative buckets, and misuse.
package.path = "tapsets/?.lua;" .. package.path
local om = require "openmetrics"
local stats = require "stats"

local function fake(name, value, enabled, running)
  return { name = function() return name end,
           read = function() return value, enabled, running end }
end

describe("openmetrics", function()
  it("exports counts as _total counters with the event as a label", function()
    local reg = om.new():counter(fake("page-faults", 42, 2000000000, 1000000000), { pid = 7, comm = "app" })
    local page = reg:text(false)
    local labels = '{event="page%-faults",pid="7",comm="app"}'
    assert.matches('\n# TYPE perfscript_events_total counter\nperfscript_events_total' .. labels .. ' 42\n', page)
    assert.matches('perfscript_event_enabled_seconds_total' .. labels .. ' 2%.000000000\n', page)
    assert.matches('perfscript_event_running_seconds_total' .. labels .. ' 1%.000000000\n', page)
    assert.not_matches("# EOF", page)
  end)

  it("exports clocks in seconds, exactly", function()
    local page = om.new():counter(fake("task-clock", 1234567891, 5, 5)):text(true)
    assert.matches('# TYPE perfscript_event_seconds counter\n# UNIT perfscript_event_seconds seconds\n', page)
    assert.matches('perfscript_event_seconds_total{event="task%-clock"} 1%.234567891\n', page)
    assert.matches("\n# EOF\n$", page)
  end)

  it("escapes label values and orders labels event, cpu, pid, comm", function()
    assert.equals('{event="a\\"b\\\\c\\nd",cpu="1",zeta="z"}',
                  om.label_text({ zeta = "z", cpu = 1, event = 'a"b\\c\nd' }))
    assert.equals('{comm="x"}', om.label_text({ comm = function() return "x" end }))
    assert.equals("", om.label_text({}))
  end)

  it("formats numbers and seconds", function()
    assert.equals("0.000000001", om.seconds(1))
    assert.equals("-1.500000000", om.seconds(-1500000000))
    assert.equals("3", om.number(3.0))
    assert.equals("+Inf", om.number(math.huge))
    assert.equals("0.25", om.number(0.25))
  end)

  it("exports a stats aggregate as a histogram", function()
    local s = stats.new{ name = "lat", autoprint = false }
    for _, v in ipairs({ 0, 1, 2, 3, 5, 900 }) do s:add(v) end
    local page = om.new():stats("latency", s, { help = "request latency" }):text(true)
    assert.matches("# TYPE perfscript_latency histogram\n# HELP perfscript_latency request latency\n", page)
    -- integer values: [2, 4) is le="3"
    assert.matches('perfscript_latency_bucket{le="0"} 1\nperfscript_latency_bucket{le="1"} 2\n' ..
                   'perfscript_latency_bucket{le="3"} 4\nperfscript_latency_bucket{le="7"} 5\n', page)
    assert.matches('perfscript_latency_bucket{le="1023"} 6\nperfscript_latency_bucket{le="%+Inf"} 6\n' ..
                   'perfscript_latency_count 6\nperfscript_latency_sum 911\n', page)
  end)

  it("exports a keyed aggregate as one histogram per key, scaled to a unit", function()
    local k = stats.keyed{ name = "by", autoprint = false }
    k:add("read", 2000000000); k:add("write", 500000000)
    local page = om.new():stats("io_seconds", k, { label = "op", unit = "seconds", scale = 1e-9 }):text(true)
    assert.matches("# UNIT perfscript_io_seconds seconds\n", page)
    assert.matches('perfscript_io_seconds_count{op="read"} 1\n', page)
    assert.matches('perfscript_io_seconds_sum{op="write"} 0%.5\n', page)
    assert.matches('perfscript_io_seconds_bucket{op="write",le="%+Inf"} 1\n', page)
  end)

  it("exports families of your own", function()
    local reg = om.new{ prefix = "app" }
    reg:family("app_queue_depth", "gauge", "items waiting",
               function() return { { labels = { q = "in" }, value = 3 } } end)
    reg:family("app_jobs", "counter", "jobs done", function() return { { value = 10 } } end)
    local page = reg:text(false)
    assert.matches('# TYPE app_queue_depth gauge\napp_queue_depth{q="in"} 3\n', page)
    assert.matches('# TYPE app_jobs_total counter\napp_jobs_total 10\n', page)
  end)

  it("answers requests: the page in the asked format, 404 elsewhere", function()
    local reg = om.new():counter(fake("page-faults", 1))
    local body, ctype, status = reg:handle({ path = "/metrics",
                                             accept = "application/openmetrics-text; version=1.0.0" })
    assert.equals(200, status)
    assert.matches("^application/openmetrics%-text", ctype)
    assert.matches("# EOF\n$", body)
    ctype = select(2, reg:handle({ path = "/metrics", accept = "*/*" }))
    assert.matches("^text/plain; version=0%.0%.4", ctype)
    assert.equals(404, select(3, reg:handle({ path = "/x" })))
    assert.equals(2, reg.scrapes)
  end)

  it("labels a remote write's series as external_labels do, a series' own label first", function()
    local reg = om.new():counter(fake("page-faults", 7))
    reg:family("app_jobs", "counter", "jobs done", function() return { { labels = { host = "own" }, value = 1 } } end)
    local req = reg:remote_write("http://127.0.0.1:9/api/v1/write", { host = "web-1" })
    local ok, rw = pcall(require, "perfscript.remote_write")
    if not ok or not req then return pending("needs perfscript.remote_write and libsnappy") end
    local hosts = {}
    for _, ts in ipairs(rw.decode(req.body)) do hosts[ts.name] = ts.labels.host end
    assert.equals("web-1", hosts.perfscript_events_total)
    assert.equals("own", hosts.app_jobs_total)
    assert.is_nil(rw.decode(reg:remote_write("http://127.0.0.1:9/").body)[1].labels.host)
  end)

  it("refuses bad names, labels and objects", function()
    assert.has_error(function() om.new{ prefix = "9x" } end,
                     "openmetrics.new: bad prefix '9x' (letters, digits, _ and :)")
    assert.has_error(function() om.new():counter(42) end)
    assert.has_error(function() om.new():counter(fake("x", 1), { ["bad-label"] = 1 }) end)
    assert.has_error(function() om.new():family("x", "summary", "", function() return {} end) end)
    assert.has_error(function() om.new():stats("lat", stats.new{ autoprint = false }, { unit = "seconds" }) end,
                     "openmetrics: a metric in seconds must end in _seconds (lat)")
  end)
end)
