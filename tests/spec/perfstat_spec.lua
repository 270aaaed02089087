-- perfstat_spec.lua: perf stat's metrics per row and the mean of -r runs,
-- on known values.
package.path = "tapsets/?.lua;" .. package.path
local perfstat = require "perfstat"

describe("perfstat", function()
  it("gives each row perf stat's metric, the modifiers carried over", function()
    local ipc = perfstat.metric("instructions:u")
    assert.same({ "instructions:u", "cycles:u" }, ipc.events)
    assert.equals(2, ipc.compute({ ["instructions:u"] = 10, ["cycles:u"] = 5 }))
    assert.equals("CPUs utilized", perfstat.metric("task-clock").unit)
    assert.equals(0.5, perfstat.metric("task-clock").compute({ ["task-clock"] = 50 }, 100))
    local pf = perfstat.metric("page-faults")
    assert.equals("/sec", pf.unit)
    assert.equals(2000, pf.compute({ ["page-faults"] = 2 }, 0, 1e6)) -- per second of the clock
    assert.is_nil(pf.compute({ ["page-faults"] = 2 }, 0, nil))       -- no clock row, no rate
    assert.equals("GHz", perfstat.metric("cycles").unit)
  end)

  it("averages runs and gives each count the deviation of its mean", function()
    local function run(wall, n) return { wall = wall, rows = { { name = "x", raw = n, values = { x = n } } } } end
    local m = perfstat.mean({ run(1e9, 10), run(3e9, 20), run(2e9, 30) })
    assert.equals(2e9, m.wall)
    assert.equals(20, m.rows[1].raw)
    -- sd of the mean: sqrt(((10-20)^2 + 0 + (30-20)^2) / 2 / 3) = 5.7735; 100 * 5.7735 / 20
    assert.near(28.8675, m.rows[1].variance, 1e-3)
    assert.equals(3, #m.runs)
  end)

  it("names what a CPU target counts", function()
    assert.equals("'ls -l'", perfstat.what(nil, "ls -l", 0))
    assert.equals("process id '42'", perfstat.what(nil, nil, 42))
  end)
end)
