-- profile.lua: where a command spends its CPU time, function by function.
-- Samples cpu-clock on every CPU the command runs on, prints the top
-- functions with their share of the samples, and with --folded FILE writes
-- folded stacks ("root;caller;callee count"), the input of flamegraph.pl
-- and speedscope. Built on the profile tapset.
--   perfscript examples/profile.lua -c './app args' [--freq HZ] [--top N] [--folded FILE]
local opts = { freq = 999, top = 20 }
local i = 1
while arg[i] do
  local a, v = arg[i], arg[i + 1]
  if a == "--folded" and v then opts.folded = v
  elseif a == "--freq" and tonumber(v) then opts.freq = math.tointeger(tonumber(v))
  elseif a == "--top" and tonumber(v) then opts.top = math.tointeger(tonumber(v))
  else error(("profile.lua: bad argument '%s' (--folded FILE, --freq HZ, --top N)"):format(a), 0)
  end
  i = i + 2
end

prof = perfmon_allocate_counter(("cpu-clock/freq=%d%s/"):format(opts.freq,
                                opts.folded and ",callchain" or ""))
local p = require("profile").new{ stacks = opts.folded ~= nil }

probe("perfmon.sample(prof)", function(s) p:add(s) end)

probe("end", function()
  io.write(p:top_text(opts.top, ("%d samples of cpu-clock at %d Hz\n"):format(p.total, opts.freq)))
  if opts.folded then assert(p:write_folded(opts.folded)) end
end)
