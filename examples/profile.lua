-- profile.lua: where a command spends its CPU time, function by function.
-- Samples cpu-clock on every CPU the command runs on, prints the top
-- functions with their share of the samples, and with --folded FILE writes
-- folded stacks ("root;caller;callee count"), the input of flamegraph.pl
-- and speedscope.
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
local by_func, stacks, total = {}, {}, 0

local function func(sym) return (sym:gsub("%+0x%x+$", "")) end

probe("perfmon.sample(prof)", function(s)
  local f = func(s.sym)
  by_func[f] = (by_func[f] or 0) + 1
  total = total + 1
  if opts.folded then
    local frames = {}
    for _, fr in ipairs(s:kstack()) do frames[#frames + 1] = func(fr) end
    for _, fr in ipairs(s:ustack()) do frames[#frames + 1] = func(fr) end
    frames[#frames + 1] = s.comm
    -- the chain is innermost first; folded stacks go root first
    local a, b = 1, #frames
    while a < b do
      frames[a], frames[b] = frames[b], frames[a]
      a, b = a + 1, b - 1
    end
    local key = table.concat(frames, ";")
    stacks[key] = (stacks[key] or 0) + 1
  end
end)

probe("end", function()
  local rows = {}
  for f, n in pairs(by_func) do rows[#rows + 1] = { f, n } end
  table.sort(rows, function(a, b) return a[2] > b[2] or (a[2] == b[2] and a[1] < b[1]) end)
  printf("%d samples of cpu-clock at %d Hz\n\n%8s %8s  %s\n", total, opts.freq,
         "samples", "percent", "function")
  for r = 1, math.min(opts.top, #rows) do
    printf("%8d %7.2f%%  %s\n", rows[r][2], 100 * rows[r][2] / math.max(total, 1), rows[r][1])
  end
  if opts.folded then
    local out = assert(io.open(opts.folded, "w"))
    for key, n in pairs(stacks) do out:write(key, " ", n, "\n") end
    out:close()
  end
end)
