-- tapsets.lua: how fast the stats tapset takes values from a Lua loop, the
-- cost a script pays per s:add(v) and k:add(key, v). Prints one
-- "name=rate" line per case, in millions of values per second of CPU
-- (os.clock), the figure read back included. Run by bench/run.
--   perfscript bench/tapsets.lua [N]
local stats = require "stats"
stats.autoprint(false)
local N = math.tointeger(tonumber(arg and arg[1]) or 0) or 0
if N <= 0 then N = 10000000 end

local function rate(name, fn)
  local t0 = os.clock()
  t0 = fn() or t0 -- a case may start the clock after its setup
  print(("%s=%.2f"):format(name, N / (os.clock() - t0) / 1e6))
end

-- values a counter delta or latency in us would give: few distinct values
rate("stats_add_mvps", function()
  local s = stats.new()
  for i = 1, N do s:add(i % 1000) end
  assert(s:count() == N)
end)
-- every value distinct: the aggregate leaves exact mode for running sums
rate("stats_add_distinct_mvps", function()
  local s = stats.new()
  for i = 1, N do s:add(i) end
  assert(s:count() == N)
end)
-- random values over 1..1e9: summary mode, and the magnitude changes from
-- one value to the next (drawn beforehand, so math.random is not timed)
rate("stats_add_random_mvps", function()
  local r = {}
  math.randomseed(42)
  for j = 1, 65536 do r[j] = math.random(1, 1000000000) end
  local s = stats.new()
  local t0 = os.clock()
  for i = 1, N do s:add(r[i % 65536 + 1]) end
  assert(s:count() == N)
  return t0
end)
rate("keyed_add_mvps", function()
  local k = stats.keyed()
  for i = 1, N do k:add(i % 100, i % 1000) end
  assert(k:len() == 100)
end)
