-- bench/encode.lua (bench/encode.sh): a profile of the target, then its
-- pprof table encoded as pprof and as OTLP, five times each, the fastest
-- kept. Prints "samples pprof_ms pprof_bytes otlp_ms otlp_bytes".
local pprof, otlp = require "pprof", require "otlp"
local prof = assert(perfmon.counter("cpu-clock/freq=2999,call-graph=fp/"))
local p = require("profile").new { pprof = true, labels = { "pid", "tid", "comm" } }
probe(prof, function(s) p:add(s) end)
probe("end", function()
  local t = p:pprof()
  local function fastest(f)
    local best, out = math.huge, nil
    for _ = 1, 5 do
      local t0 = os.clock()
      out = assert(f())
      best = math.min(best, os.clock() - t0)
    end
    return best * 1e3, #out
  end
  local pm, pb = fastest(function() return pprof.encode(t) end)
  local om, ob = fastest(function() return otlp.encode({ t }, { gzip = true }) end) -- as otlp.post sends it
  printf("%d %.2f %d %.2f %d\n", #t.sample, pm, pb, om, ob)
end)
