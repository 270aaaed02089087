-- metrics_spec.lua: the metrics tapset over fake groups (known values, a
-- group that cannot be opened) and, under perfscript, a real software group.
package.path = "tapsets/?.lua;" .. package.path
local metrics = require "metrics"

-- A perfmon.group stand-in: fixed values by event name, or a failure.
local function fake_opener(values, fail)
  local opened = {}
  return function(spec)
    local names = {}
    for n in spec:gmatch("[^{},]+") do names[#names + 1] = n end
    local g = { spec = spec, closed = false }
    function g.start()
      if fail and spec:find(fail, 1, true) then return nil, "cannot open '" .. fail .. "': not supported" end
      return g
    end
    function g.close() g.closed = true end
    function g.read()
      local v = {}
      for i, n in ipairs(names) do v[i] = values[n]; v[n] = values[n] end
      return v, 100, 100
    end
    opened[#opened + 1] = g
    return g
  end, opened
end

describe("metrics", function()
  it("computes ratios from one group per metric", function()
    local opener, opened = fake_opener({ instructions = 3000, cycles = 1000, ["branch-misses"] = 5,
                                         branches = 200 })
    local set = metrics.open({ "ipc", "cpi", "branch-miss-ratio" }, opener)
    assert.equals(3, #opened)
    assert.equals("{instructions,cycles}", opened[1].spec)
    local r = set:read()
    assert.equals(3, r.ipc.value)
    assert.near(1 / 3, r.cpi.value, 1e-12)
    assert.equals(2.5, r["branch-miss-ratio"].value)
    assert.equals("3.00", r.ipc.text)
  end)

  it("reports a metric it cannot open as not supported and closes its group", function()
    local opener, opened = fake_opener({ ["task-clock"] = 2e9 }, "cycles")
    local set = metrics.open({ "ipc", "cpu-utilization" }, opener)
    set.t0, set.clock = 0, function() return 1e9 end
    local r = set:read()
    assert.is_false(r.ipc.supported)
    assert.matches("not supported", r.ipc.err)
    assert.is_true(opened[1].closed)
    assert.equals(2, r["cpu-utilization"].value)
    local text = set:report()
    assert.matches("<not supported> +ipc", text)
    assert.matches("2.000  CPUs utilized", text, 1, true)
  end)

  it("takes new metrics in its table", function()
    metrics.define("faults-per-switch", { events = { "page-faults", "context-switches" },
      compute = function(v) return v["page-faults"] / v["context-switches"] end })
    local opener = fake_opener({ ["page-faults"] = 10, ["context-switches"] = 4 })
    assert.equals(2.5, metrics.open("faults-per-switch", opener):read()["faults-per-switch"].value)
    metrics.defs["faults-per-switch"] = nil
    assert.has_error(function() metrics.open("no-such-metric") end)
    assert.has_error(function() metrics.define("bad", {}) end)
  end)

  it("opens real software groups under perfscript", function()
    if not perfmon then return pending("needs perfscript's perfmon module") end
    local set = metrics.open({ "page-faults-per-sec", "ipc" })
    local t = {}
    for i = 1, 20000 do t[i] = { i } end
    assert.equals(20000, #t)
    local r = set:read()
    assert.is_true(r["page-faults-per-sec"].supported)
    assert.is_true(r["page-faults-per-sec"].values["task-clock"] > 0)
    set:close()
  end)
end)
