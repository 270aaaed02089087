-- top.lua: perf top: the functions where the CPU is now, refreshed every
-- second. Samples cpu-clock on every CPU the target runs on and shows each
-- function's share of the last second's samples and of all of them so
-- far, [k] for the kernel's and [.] for user space's, as perf top marks
-- them, with the file it is in. On a terminal it fills the screen: q
-- quits, k hides or shows the kernel's functions, f freezes the view (and
-- thaws it; counting goes on). Elsewhere (a pipe, a file) it prints the
-- same table as text each second. It draws where reports go (standard
-- error, or -o FILE): a command's own output stays its own.
--   perfscript -a examples/top.lua            the whole host
--   perfscript examples/top.lua -p PID        one process (or -c 'CMD args')
local args = require "args"
local opts = args.parse(arg, {
  name = "top.lua",
  report = true,
  usage = "perfscript -a examples/top.lua | perfscript examples/top.lua -p PID | -c 'CMD args' [options]",
  target = true,
  summary = "The functions where the CPU is now, refreshed every second (perf top).",
  { "-F, --freq", "HZ", "samples per second on each CPU (default 999)", number = true, integer = true, min = 1,
    max = 100000, default = 999 },
  { "-d, --delay", "S", "seconds between refreshes (default 1)", number = true, min = 0.1, max = 3600, default = 1 },
  { "--rows", "N", "functions shown (default: what the screen holds, 20 in text)", number = true, integer = true,
    min = 1 },
})
local tty = require "perfscript.tty"

local sampler = args.need(perfmon.counter(("cpu-clock/freq=%d/"):format(opts.freq)))
-- Samples are counted by address (a kernel's under pid -1) and named at
-- each refresh, each address once: the names of a second's new addresses
-- cost what the second's samples did not.
-- Records wait in the rings up to 100 ms: the loop wakes 10 times a
-- second for a table drawn once a second.
perfmon.drain_interval(100)
local now, names, named = {}, {}, 0
local total, last_total = 0, 0
probe(sampler, function(s)
  local ip = s.ip
  local pid = ip < 0 and -1 or s.pid -- a kernel address is negative as a Lua integer
  local t = now[pid]
  if not t then t = {}; now[pid] = t end
  t[ip] = (t[ip] or 0) + 1
end)

local function name_of(pid, ip)
  local key = pid .. ":" .. ip
  local n = names[key]
  if not n then
    local sym, dso, func = perfmon.symbolize(pid < 0 and 0 or pid, ip, pid < 0)
    n = { func = func or tostring(sym):gsub("%+0x%x+$", ""), kernel = pid < 0,
          dso = pid < 0 and "[kernel]" or tostring(dso or "?"):match("[^/]*$") }
    names[key], named = n, named + 1
  end
  return n
end

-- The second's counts into rows by function: last (this second), all.
local rows, by_name = {}, {}
local function settle()
  local last = {}
  last_total = 0
  for pid, t in pairs(now) do
    for ip, c in pairs(t) do
      local n = name_of(pid, ip)
      local key = (n.kernel and "k " or ". ") .. n.func .. "\0" .. n.dso
      local r = by_name[key]
      if not r then
        r = { func = n.func, kernel = n.kernel, dso = n.dso, all = 0 }
        by_name[key] = r
        rows[#rows + 1] = r
      end
      last[r] = (last[r] or 0) + c
      r.all = r.all + c
      last_total = last_total + c
    end
  end
  now = {}
  total = total + last_total
  for _, r in ipairs(rows) do r.last = last[r] or 0 end
  table.sort(rows, function(a, b)
    if a.last ~= b.last then return a.last > b.last end
    if a.all ~= b.all then return a.all > b.all end
    return a.func < b.func
  end)
  if named > 100000 then names, named = {}, 0 end -- a host's churn: named again as needed
end

local function pct(n, d) return d > 0 and ("%6.2f%%"):format(100 * n / d) or "     - " end
local show_kernel, frozen = true, false
local function table_lines(max)
  local out = { ("%s  %d samples in the last %.3g s, %d in all%s%s"):format(os.date("%H:%M:%S"), last_total,
                  opts.delay, total, show_kernel and "" or ", kernel hidden", frozen and ", frozen" or ""),
                "    last      all        function  (file)" }
  for _, r in ipairs(rows) do
    if #out >= max + 2 then break end
    if show_kernel or not r.kernel then
      out[#out + 1] = ("%s  %s  [%s] %s  (%s)"):format(pct(r.last, last_total), pct(r.all, total),
                                                      r.kernel and "k" or ".", r.func, r.dso)
    end
  end
  return out
end

-- The report's stream (standard error, as perf's reports; -o FILE): the
-- full screen when it and standard input are a terminal.
local where = perfmon.output()
local screen = (where == "standard error" and io.stderr) or (where == "standard output" and io.stdout)
local on_screen = screen and tty.isatty(screen == io.stderr and 2 or 1) and tty.isatty(0)
local keys
local function draw()
  if not on_screen then
    io.write("-- ", table.concat(table_lines(opts.rows or 20), "\n"), "\n")
    io.output():flush()
    return
  end
  local h, w = tty.size()
  local out = {}
  for i, l in ipairs(table_lines(opts.rows or math.max(1, (h or 24) - 3))) do
    out[i] = l:sub(1, w or 80) .. "\27[K"
  end
  screen:write("\27[H", table.concat(out, "\n"), "\n\27[J", "q quit   k kernel functions   f freeze")
  screen:flush()
end

probe(("timer.ms(%d)"):format(math.floor(opts.delay * 1000 + 0.5)), function()
  settle()
  if not frozen then draw() end
end)
-- as text, the samples since the last table too (a short command's all)
probe("end", function()
  if not on_screen and next(now) then settle(); draw() end
end)
if on_screen then
  probe("begin", function()
    keys = assert(tty.keys(function(k)
      if k == "q" or k == "Q" then exit()
      elseif k == "k" or k == "K" then show_kernel = not show_kernel; draw()
      elseif k == "f" or k == "F" then frozen = not frozen; draw() end
    end, { screen = screen }))
    screen:write("\27[Hsampling ...")
    screen:flush()
  end)
  probe("end", function() if keys then keys:close() end end)
end
