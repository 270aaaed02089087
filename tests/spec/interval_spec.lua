-- interval_spec.lua: the interval tapset driven by synthetic counters and a
-- fake clock: deltas, rates, scaling percentage, and the three formats.
package.path = "tapsets/?.lua;" .. package.path
local interval = require "interval"

-- A counter whose value, enabled and running times the test sets.
local function fake(name, state)
  return { name = function() return name end,
           read = function() return state.value, state.enabled, state.running end }
end

local function setup(format)
  local now = 0
  local a = { value = 100, enabled = 0, running = 0 }
  local b = { value = 0, enabled = 0, running = 0 }
  local out = {}
  local r = interval.new({ fake("page-faults", a), fake("task-clock", b) },
    { register = false, format = format, clock = function() return now end,
      write = function(s) out[#out + 1] = s end })
  local function step(dt, da, db, run_frac)
    now = now + dt
    a.value, a.enabled, a.running = a.value + da, a.enabled + dt, a.running + dt * (run_frac or 1)
    b.value, b.enabled, b.running = b.value + db, b.enabled + dt, b.running + dt
  end
  return r, step, out
end

describe("interval", function()
  it("reports deltas, rates and the running share per interval", function()
    local r, step = setup()
    step(1e9, 50, 5e8)
    local rows = r:rows()
    assert.equals(50, rows[1].value)
    assert.equals(100, rows[1].metric) -- per task-clock second: 50 in 0.5 s
    assert.equals("/sec", rows[1].metric_unit)
    assert.equals(100, rows[1].pct)
    assert.equals(500, rows[2].value)
    assert.equals("msec", rows[2].unit)
    assert.equals(0.5, rows[2].metric)
    step(5e8, 10, 0, 0.25)
    rows = r:rows()
    assert.equals(10, rows[1].value)
    assert.equals(0, rows[1].metric) -- no task-clock in this interval
    assert.equals(25, rows[1].pct)
    assert.equals(1.5, rows[1].time)
  end)

  it("fills the given row tables as it would make new ones (the timer's reports reuse theirs)", function()
    local r, step, out = setup("table")
    local r2, step2 = setup("table")
    step(1e9, 50, 5e8, 0.5); step2(1e9, 50, 5e8, 0.5)
    r:report()
    local kept = r.kept[1]
    r2:rows()
    step(1e9, 7, 0); step2(1e9, 7, 0)
    r:report()
    assert.equals(kept, r.kept[1]) -- the same table, filled again
    local fresh = r2:rows()
    for i = 1, 2 do
      for _, k in ipairs({ "time", "name", "raw", "counted", "supported", "unit", "runtime", "pct",
                           "value", "metric", "metric_unit" }) do
        assert.equals(fresh[i][k], r.kept[i][k], k)
      end
    end
    assert.equals(7, r.kept[1].value)
    assert.equals(2, select(2, table.concat(out):gsub("page%-faults", "")))
  end)

  it("pads the common row as string.format would", function()
    for _, name in ipairs({ "x", ("a"):rep(32), ("b"):rep(40) }) do
      for _, v in ipairs({ 0, 12, 2 ^ 53, -5, 1 / 3 }) do
        for _, unit in ipairs({ "", "msec" }) do
          local r = { time = 1.5, name = name, counted = true, unit = unit, runtime = 1, pct = 100,
                      value = v, metric = 1234.5678, metric_unit = "K/sec" }
          local count = unit == "msec" and ("%.2f"):format(v)
            or v == math.floor(v) and ("%d"):format(v) or ("%.2f"):format(v)
          assert.equals(("%15.9f %18s %-4s %-32s # %8.3f %s\n"):format(1.5, count, unit, name, 1234.5678, "K/sec"),
            interval.format_row(r, "table"))
        end
      end
    end
  end)

  it("prints perf stat -I's aligned table with the header once", function()
    local r, step, out = setup("table")
    step(1e9, 50, 5e8, 0.5)
    r:tick()
    step(1e9, 0, 0)
    r:tick()
    local text = table.concat(out)
    assert.equals(1, select(2, text:gsub("#           time", "")))
    assert.matches("\n    1.000000000                 50      page%-faults +#  100.000 /sec +%(50.00%%%)\n", text)
    assert.matches("\n    1.000000000             500.00 msec task%-clock +#    0.500 CPUs utilized\n", text)
  end)

  it("prints perf stat -x CSV: time, value, unit, event, runtime, pct, metric, unit", function()
    local r, step, out = setup("csv")
    step(1e9, 50, 5e8, 0.5)
    r:tick()
    assert.equals("1.000000000,50,,page-faults,500000000,50.00,100.000,/sec\n" ..
                  "1.000000000,500.00,msec,task-clock,1000000000,100.00,0.500,CPUs utilized\n",
                  table.concat(out))
  end)

  it("prints JSON lines with perf stat -j's keys", function()
    local r, step, out = setup("json")
    step(1e9, 50, 5e8)
    r:tick()
    local first = out[1]:match("^[^\n]*")
    assert.equals('{"interval" : 1.000000000, "counter-value" : "50.000000", "unit" : "", ' ..
      '"event" : "page-faults", "event-runtime" : 1000000000, "pcnt-running" : 100.00, ' ..
      '"metric-value" : 100.000000, "metric-unit" : "/sec"}', first)
    assert.equals(2, select(2, out[1]:gsub("\n", "")))
  end)

  it("says <not counted> for an interval a counter did not run", function()
    local r, step = setup("csv")
    step(1e9, 0, 0, 0)
    -- as perf stat -x prints it: no run time, 100.00, no metric
    assert.matches("^1.000000000,<not counted>,,page%-faults,0,100.00,,\n", r:format_rows(r:rows()))
  end)

  it("accepts named counters, groups and counters that only return a value", function()
    local v = 0
    local group = { names = function() return { "x", "y" } end,
                    read = function() return { v, 2 * v }, 10, 10 end }
    local r = interval.new({ plain = { read = function() return v end }, g = group },
                           { register = false, clock = function() return v * 1e9 end })
    v = 3
    local rows = r:rows()
    assert.same({ "x", "y", "plain" }, { rows[1].name, rows[2].name, rows[3].name })
    assert.same({ 3, 6, 3 }, { rows[1].value, rows[2].value, rows[3].value })
    assert.equals(100, rows[3].pct)
    assert.has_error(function() interval.new({ 42 }, { register = false }) end)
    assert.has_error(function() interval.new({}, { register = false, format = "xml" }) end)
  end)
end)
