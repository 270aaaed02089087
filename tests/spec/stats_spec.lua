-- stats_spec.lua: the stats tapset with known inputs: figures, variance,
-- bucket boundaries (bpftrace's hist() and lhist() ranges), SystemTap's
-- printed layout byte for byte, keyed order and top-N, autoprint.
package.path = "tapsets/?.lua;" .. package.path
local stats = require "stats"
local hist = require "stats_hist"
stats.autoprint(false) -- the specs print nothing at the session's end

local function fill(s, values) for _, v in ipairs(values) do s:add(v) end return s end

describe("stats.new", function()
  it("has count, sum, min, max, avg and the sample variance", function()
    local s = fill(stats.new(), { 2, 4, 4, 4, 5, 5, 7, 9 })
    assert.equals(8, s:count())
    assert.equals(40, s:sum())
    assert.equals(2, s:min())
    assert.equals(9, s:max())
    assert.equals(5, s:avg())
    assert.near(32 / 7, s:variance(), 1e-12)
    assert.near(math.sqrt(32 / 7), s:stddev(), 1e-12)
  end)

  it("is empty before the first value", function()
    local s = stats.new()
    assert.equals(0, s:count())
    assert.equals(0, s:sum())
    assert.is_nil(s:min())
    assert.is_nil(s:avg())
    assert.is_nil(s:variance())
    assert.equals("", s:hist_log())
    assert.equals(0, fill(stats.new(), { 7 }):variance())
  end)

  it("gives the same figures after it leaves exact mode", function()
    local a, b = stats.new{ exact = 4 }, stats.new()
    for i = 1, 1000 do a:add(i * 3 % 101); b:add(i * 3 % 101) end
    assert.equals(b:count(), a:count())
    assert.equals(b:sum(), a:sum())
    assert.equals(b:min(), a:min())
    assert.equals(b:max(), a:max())
    assert.near(b:variance(), a:variance(), 1e-9)
    assert.equals(b:hist_log(), a:hist_log())
  end)

  it("keeps the variance of large close values", function()
    local s = stats.new{ exact = 1 }
    for _, v in ipairs({ 1e12 + 4, 1e12 + 7, 1e12 + 13, 1e12 + 16 }) do s:add(v) end
    assert.near(30, s:variance(), 1e-6)
  end)

  it("refuses what is not a number", function()
    assert.has_error(function() stats.new():add("x") end)
    assert.has_error(function() stats.new():add(0 / 0) end)
    assert.has_error(function() stats.new():add(math.huge) end, "stats add: want a finite number, got inf")
    assert.has_error(function() stats.new():add(-math.huge) end)
  end)

  it("resets", function()
    local s = fill(stats.new{ exact = 2 }, { 1, 2, 3, 4 })
    s:reset()
    assert.equals(0, s:count())
    s:add(5)
    assert.equals(5, s:sum())
  end)
end)

describe("log buckets", function()
  it("have bpftrace hist() ranges: [0], [1], [2, 4), [4, 8), ...", function()
    local cases = { [0] = 0, [1] = 1, [2] = 2, [3] = 2, [4] = 3, [7] = 3, [8] = 4,
                    [1023] = 10, [1024] = 11, [2 ^ 53 - 1] = 53, [2 ^ 53] = 54 }
    for v, k in pairs(cases) do assert.equals(k, hist.log_bucket(v), "bucket of " .. v) end
    assert.equals(63, hist.log_bucket(math.maxinteger))
    assert.equals(-1, hist.log_bucket(-1))
    assert.equals(-2, hist.log_bucket(-3))
    assert.equals(-3, hist.log_bucket(-4))
  end)

  it("are reported as {lo, hi, count} rows", function()
    local rows = fill(stats.new(), { 0, 1, 2, 3, 4, 9 }):buckets_log()
    local got = {}
    for i, r in ipairs(rows) do got[i] = ("%s-%s:%d"):format(r.lo, r.hi, r.count) end
    assert.same({ "0-1:1", "1-2:1", "2-4:2", "4-8:1", "8-16:1" }, got)
  end)
end)

describe("linear buckets", function()
  it("have bpftrace lhist() ranges: (-inf, lo), [lo, lo+step), ..., [hi, inf)", function()
    assert.equals(0, hist.linear_bucket(-1, 0, 100, 10))
    assert.equals(1, hist.linear_bucket(0, 0, 100, 10))
    assert.equals(1, hist.linear_bucket(9, 0, 100, 10))
    assert.equals(2, hist.linear_bucket(10, 0, 100, 10))
    assert.equals(10, hist.linear_bucket(99, 0, 100, 10))
    assert.equals(11, hist.linear_bucket(100, 0, 100, 10))
    local rows = fill(stats.new(), { -5, 0, 15, 100 }):buckets_linear(0, 100, 10)
    assert.equals(-math.huge, rows[1].lo)
    assert.equals(0, rows[1].hi)
    assert.same({ 10, 20, 1 }, { rows[3].lo, rows[3].hi, rows[3].count })
    assert.same({ 100, math.huge, 1 }, { rows[#rows].lo, rows[#rows].hi, rows[#rows].count })
  end)

  it("need their bounds up front once exact mode is left", function()
    local s = stats.new{ exact = 2 }
    fill(s, { 1, 2, 3 })
    assert.has_error(function() s:hist_linear(0, 10, 1) end)
    local d = fill(stats.new{ exact = 2, linear = { 0, 10, 1 } }, { 1, 2, 3 })
    assert.equals(fill(stats.new(), { 1, 2, 3 }):hist_linear(0, 10, 1), d:hist_linear(0, 10, 1))
    assert.equals(d:hist_linear(0, 10, 1), d:hist_linear())
  end)
end)

describe("printed histograms", function()
  it("use SystemTap's layout, with two rows of margin and ~ for elided runs", function()
    local s = fill(stats.new(), { 0, 1, 1, 2, 3, 4, 7, 8, 1000, 1024, 2000 })
    assert.equals(table.concat({
      "value |-------------------------------------------------- count",
      "    0 |@                                                  1",
      "    1 |@@                                                 2",
      "    2 |@@                                                 2",
      "    4 |@@                                                 2",
      "    8 |@                                                  1",
      "   16 |                                                   0",
      "   32 |                                                   0",
      "      ~",
      "  128 |                                                   0",
      "  256 |                                                   0",
      "  512 |@                                                  1",
      " 1024 |@@                                                 2",
      " 2048 |                                                   0",
      " 4096 |                                                   0",
      "", "" }, "\n"), s:hist_log())
  end)

  it("scale bars to 50 columns and right-align counts", function()
    local s = stats.new()
    for _ = 1, 200 do s:add(5) end
    for _ = 1, 3 do s:add(1) end
    local text = s:hist_log()
    assert.matches("\n    4 |" .. ("@"):rep(50) .. " 200\n", text, 1, true)
    assert.matches("\n    1 |                                                     3\n", text, 1, true)
  end)

  it("grow no negative margin without negative values, and mirror negatives", function()
    local s = fill(stats.new(), { -5, -1, 0, 3 })
    assert.equals(table.concat({
      "value |-------------------------------------------------- count",
      "  -16 |                                                   0",
      "   -8 |                                                   0",
      "   -4 |@                                                  1",
      "   -2 |                                                   0",
      "   -1 |@                                                  1",
      "    0 |@                                                  1",
      "    1 |                                                   0",
      "    2 |@                                                  1",
      "    4 |                                                   0",
      "    8 |                                                   0",
      "", "" }, "\n"), s:hist_log())
  end)

  it("label linear under- and overflow and leave them out when empty", function()
    local s = fill(stats.new(), { 0, 1, 5, 9, 15, 250 })
    assert.equals(table.concat({
      "value |-------------------------------------------------- count",
      "    0 |@@@@                                               4",
      "   10 |@                                                  1",
      "   20 |                                                   0",
      "   30 |                                                   0",
      "      ~",
      "   80 |                                                   0",
      "   90 |                                                   0",
      ">=100 |@                                                  1",
      "", "" }, "\n"), s:hist_linear(0, 100, 10))
    local u = fill(stats.new(), { -3, 4 })
    assert.matches("\n   <0 |@ +1\n    0 |@ +1\n   10 |", u:hist_linear(0, 100, 10))
  end)
end)

describe("stats.keyed", function()
  local function sample()
    local k = stats.keyed("k")
    k:add("b", 5); k:add("a", 3); k:add("a", 4); k:add("c", 1); k:add("c", 1); k:add("c", 1)
    return k
  end

  it("keeps one aggregate per key", function()
    local k = sample()
    assert.equals(3, k:len())
    assert.equals(7, k:get("a"):sum())
    assert.equals(3, k:get("c"):count())
    assert.is_nil(k:get("z"))
  end)

  it("iterates sorted by key or by a figure", function()
    local keys = {}
    for key in sample():sorted("key") do keys[#keys + 1] = key end
    assert.same({ "a", "b", "c" }, keys)
    local sums = {}
    for key, _, v in sample():sorted("sum", "asc") do sums[#sums + 1] = key .. "=" .. v end
    assert.same({ "c=3", "b=5", "a=7" }, sums)
  end)

  it("gives the top N, ties broken by key", function()
    local k = sample()
    k:add("d", 1); k:add("d", 1); k:add("d", 1)
    local top = k:top(2)
    assert.equals(2, #top)
    assert.same({ "c", 3 }, { top[1].key, top[1].value })
    assert.same({ "d", 3 }, { top[2].key, top[2].value })
  end)

  it("takes key tuples and counts when no value is given", function()
    local k = stats.keyed()
    k:add({ 42, "sh" }); k:add({ 42, "sh" }); k:add({ 7, "ls" })
    assert.equals(2, k:get({ 42, "sh" }):count())
    local order = {}
    for key in k:sorted("key") do order[#order + 1] = stats.key_string(key) end
    assert.same({ "7,ls", "42,sh" }, order)
  end)

  it("prints SystemTap's autoprint lines", function()
    assert.equals("k[c] @count=3 @min=1 @max=1 @sum=3 @avg=1\n" ..
                  "k[a] @count=2 @min=3 @max=4 @sum=7 @avg=3.500\n" ..
                  "k[b] @count=1 @min=5 @max=5 @sum=5 @avg=5\n", sample():report())
  end)
end)

describe("autoprint", function()
  it("lists aggregates with data that were never printed, in creation order", function()
    local a, b, c = stats.new("a1"), stats.new("b1"), stats.new("c1")
    a:add(1); b:add(2); c:add(3)
    local _ = b:hist_log()
    local names = {}
    for _, agg in ipairs(stats.pending()) do names[#names + 1] = agg._name end
    assert.is_true(table.concat(names, " "):find("a1 c1", 1, true) ~= nil)
    assert.is_nil(table.concat(names, " "):find("b1", 1, true))
    local out = {}
    stats.autoprint(true)
    stats.print_pending(function(s) out[#out + 1] = s end)
    stats.autoprint(false)
    assert.matches("a1 @count=1 @min=1 @max=1 @sum=1 @avg=1\nvalue |", table.concat(out))
    assert.equals(0, stats.print_pending(function() error("printed while off") end))
  end)

  it("skips aggregates created with autoprint = false", function()
    stats.new{ name = "quiet", autoprint = false }:add(1)
    for _, agg in ipairs(stats.pending()) do assert.not_equals("quiet", agg._name) end
  end)
end)

-- Summary mode runs in C under perfscript (perfscript.stats_core) and in
-- Lua elsewhere; stats._pure = true makes new aggregates use the Lua one.
-- Both must agree exactly: same figures with the same integer or float
-- subtype, same rows, same text.
describe("summary mode in C and in Lua", function()
  local function exact(x)
    if type(x) ~= "number" then return tostring(x) end
    return (math.type and math.type(x) or "number") .. " " .. ("%q"):format(x)
  end
  local function pair(opts, values)
    stats._pure = false
    local c = stats.new(opts)
    stats._pure = true
    local l = stats.new(opts)
    stats._pure = false
    for _, v in ipairs(values) do c:add(v); l:add(v) end
    return c, l
  end
  local function rows_text(rows)
    local out = {}
    for i, r in ipairs(rows) do out[i] = exact(r.lo) .. "," .. exact(r.hi) .. "," .. exact(r.count) end
    return table.concat(out, ";")
  end
  local function agree(c, l, linear)
    assert.is_nil(c._f) -- both left exact mode
    assert.is_nil(l._f)
    assert.equals("C", debug.getinfo(c.add, "S").what)
    assert.equals("Lua", debug.getinfo(l.add, "S").what)
    local fc, fl = { c._summary() }, { l._summary() }
    for i = 1, 6 do assert.equals(exact(fl[i]), exact(fc[i]), "figure " .. i) end
    for _, m in ipairs({ "count", "sum", "min", "max", "avg", "variance", "stddev" }) do
      assert.equals(exact(l[m](l)), exact(c[m](c)), m)
    end
    assert.equals(rows_text(l:buckets_log()), rows_text(c:buckets_log()))
    assert.equals(l:hist_log(), c:hist_log())
    assert.equals(l:summary("x"), c:summary("x"))
    if linear then
      assert.equals(rows_text(l:buckets_linear()), rows_text(c:buckets_linear()))
      assert.equals(l:hist_linear(), c:hist_linear())
    end
  end
  local function random_values(n, gen)
    local t = {}
    for i = 1, n do t[i] = gen(i) end
    return t
  end

  before_each(function() math.randomseed(7) end)

  it("is the C one under perfscript", function()
    assert.is_true(stats._core)
    local c = fill(stats.new{ exact = 2 }, { 1, 2, 3 })
    assert.equals("C", debug.getinfo(c.add, "S").what)
  end)

  it("agrees on distinct integers", function()
    agree(pair(nil, random_values(5000, function(i) return i end)))
  end)

  it("agrees on random integers over 1..1e9", function()
    agree(pair(nil, random_values(20000, function() return math.random(1, 1000000000) end)))
  end)

  it("agrees on floats of every sign and magnitude, fractions and zero", function()
    agree(pair({ exact = 16 }, random_values(20000, function(i)
      if i % 97 == 0 then return 0 end
      return (math.random() - 0.5) * 2 ^ math.random(-30, 70)
    end)))
  end)

  it("agrees on powers of two and their neighbours, negatives too", function()
    local v = {}
    for e = 0, 62 do
      local p = 1 << e
      for _, x in ipairs({ p, p - 1, p + 1, -p, 1 - p, -p - 1, 2.0 ^ e, 2.0 ^ -e }) do v[#v + 1] = x end
    end
    agree(pair({ exact = 8 }, v))
  end)

  it("agrees when integers are followed by floats", function()
    local v = random_values(3000, function(i) return i % 1500 + (i > 2000 and 0.25 or 0) end)
    agree(pair({ exact = 100 }, v))
  end)

  it("agrees on large close values, where the shift keeps the variance", function()
    agree(pair({ exact = 3 }, random_values(1000, function() return 1e12 + math.random(0, 99) end)))
  end)

  it("agrees on huge values: sums that wrap, floats past 2^66", function()
    agree(pair({ exact = 2 }, { math.maxinteger, math.maxinteger - 5, 3, math.mininteger + 1, 7 }))
    agree(pair({ exact = 2 }, { 2 ^ 70, 1e300, -1e300, 1, 2 ^ 63, -2 ^ 63 }))
  end)

  it("agrees on the fold of repeated values and on a linear histogram", function()
    local opts = { exact = 50, linear = { -100, 1000, 7 } }
    local c, l = pair(opts, random_values(20000, function() return math.random(-300, 1500) end))
    agree(c, l, true)
    local fopts = { exact = 4, linear = { 0.5, 10, 0.25 } }
    c, l = pair(fopts, random_values(5000, function() return math.random() * 12 - 1 end))
    agree(c, l, true)
  end)

  it("agrees in keyed aggregates", function()
    stats._pure = true
    local l = stats.keyed{ name = "k", exact = 3 }
    stats._pure = false
    local c = stats.keyed{ name = "k", exact = 3 }
    for i = 1, 3000 do
      local key, v = i % 7, math.random(1, 100000)
      c:add(key, v); l:add(key, v)
    end
    assert.equals(l:report(), c:report())
    for key = 0, 6 do agree(c:get(key), l:get(key)) end
  end)

  it("raises in both for a non-number, NaN or infinity, and keeps its figures", function()
    local c, l = pair({ exact = 2 }, { 1, 2, 3 })
    for _, s in ipairs({ c, l }) do
      for _, bad in ipairs({ "x", {}, 0 / 0, math.huge, -math.huge }) do
        assert.has_error(function() s:add(bad) end)
      end
      assert.equals(3, s:count())
    end
    assert.has_error(function() c:add(0 / 0) end, "stats add: want a finite number, got nan")
  end)
end)
