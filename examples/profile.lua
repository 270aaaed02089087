-- profile.lua: where a command spends its CPU time, function by function.
-- Samples cpu-clock on every CPU the command runs on, prints the top
-- functions with their share of the samples, and with --folded FILE writes
-- folded stacks ("root;caller;callee count"), the input of flamegraph.pl
-- and speedscope. Built on the profile tapset. --event SPEC samples another
-- event instead (a spec with a period or frequency, e.g.
-- 'syscalls:sys_enter_getppid/period=1/'); --freq is then ignored.
--   perfscript examples/profile.lua -c './app args' [--freq HZ] [--event SPEC] [--top N] [--folded FILE]
local opts = { freq = 999, top = 20 }
local i = 1
while arg[i] do
  local a, v = arg[i], arg[i + 1]
  if a == "--folded" and v then opts.folded = v
  elseif a == "--freq" and tonumber(v) then opts.freq = math.tointeger(tonumber(v))
  elseif a == "--top" and tonumber(v) then opts.top = math.tointeger(tonumber(v))
  elseif a == "--event" and v then opts.event = v
  else error(("profile.lua: bad argument '%s' (--folded FILE, --freq HZ, --event SPEC, --top N)"):format(a), 0)
  end
  i = i + 2
end

local spec = ("cpu-clock/freq=%d%s/"):format(opts.freq, opts.folded and ",callchain" or "")
if opts.event then -- callchain goes into the event's own terms
  spec = not opts.folded and opts.event or opts.event:match("/$") and
         opts.event:gsub("/$", ",callchain/") or opts.event:match("/") and
         opts.event .. ",callchain/" or opts.event .. "/callchain/"
end
local err
prof, err = perfmon_allocate_counter(spec)
if prof == 0 then error(("profile.lua: %s: %s"):format(spec, err), 0) end
local p = require("profile").new{ stacks = opts.folded ~= nil }

probe("perfmon.sample(prof)", function(s) p:add(s) end)

probe("end", function()
  io.write(p:top_text(opts.top, opts.event and ("%d samples of %s\n"):format(p.total, opts.event)
                                 or ("%d samples of cpu-clock at %d Hz\n"):format(p.total, opts.freq)))
  if opts.folded then assert(p:write_folded(opts.folded)) end
end)
