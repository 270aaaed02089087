-- syscount.lua: system calls by name and by process, like strace -c or
-- bpftrace's syscount: every raw_syscalls:sys_enter hit of the target is a
-- sample (a tracepoint without period= samples each hit), keyed by its
-- s.args.id, named from the kernel headers' __NR_ table.
--   perfscript examples/syscount.lua -c './app args'   the command and its children
--   perfscript examples/syscount.lua -a -T 5           every process for 5 s
--   perfscript examples/syscount.lua -p PID --top 20    the top 20 lines
local opts = require("args").parse(arg, {
  name = "syscount.lua",
  report = true,
  usage = "perfscript examples/syscount.lua -c 'CMD args' | -p PID | -a [-T SECONDS] [--top N]",
  target = true,
  summary = "System calls by name and by process, like strace -c.",
  { "--top", "N", "lines per table (default 10; bcc's -T N: -T is perfscript's session length)",
    number = true, integer = true, min = 1, default = 10 },
  { "-L, --latency", nil, "also the time spent in each system call, in microseconds (bcc's -L)" },
})
local top = opts.top
local need = require("args").need

-- __NR_read 0 ... from the installed kernel headers (linux-libc-dev)
local names = {}
for _, dir in ipairs({ "/usr/include/" .. (io.popen("gcc -print-multiarch 2>/dev/null"):read("l") or ""),
                       "/usr/include" }) do
  for _, file in ipairs({ "/asm/unistd_64.h", "/asm/unistd.h" }) do
    local f = io.open(dir .. file)
    if f then
      for line in f:lines() do
        local name, nr = line:match("^#define __NR_([%w_]+)%s+(%d+)")
        if name then names[tonumber(nr)] = name end
      end
      f:close()
    end
  end
end
local function name_of(id) return names[id] or ("syscall_" .. id) end

enter = need(perfmon.counter("raw_syscalls:sys_enter"))
local by_call, by_proc, total = {}, {}, 0
local self = pid() -- with -a, perfscript's own calls (reading the rings) are not counted

-- -L: a thread's entry time until its exit; samples arrive in time order
local entered, spent = {}, {}
if opts.latency then
  leave = need(perfmon.counter("raw_syscalls:sys_exit"))
  probe("perfmon.sample(leave)", function(s)
    local t = entered[s.tid]
    if t and s.pid ~= self then
      spent[s.args.id] = (spent[s.args.id] or 0) + (s.time - t)
      entered[s.tid] = nil
    end
  end)
end

probe("perfmon.sample(enter)", function(s)
  if s.pid == self then return end
  if opts.latency then entered[s.tid] = s.time end
  local id = s.args.id
  by_call[id] = (by_call[id] or 0) + 1
  -- by the name at the sample: a process that exec'd counts under each name
  local key = s.pid .. " " .. s.comm
  local p = by_proc[key]
  if not p then
    p = { pid = s.pid, comm = s.comm, n = 0 }
    by_proc[key] = p
  end
  p.n = p.n + 1
  total = total + 1
end)

local function sorted(t, key)
  local rows = {}
  for k, v in pairs(t) do rows[#rows + 1] = { k = k, v = v } end
  table.sort(rows, function(a, b)
    local x, y = key(a.v), key(b.v)
    if x ~= y then return x > y end
    return a.k < b.k
  end)
  return rows
end

probe("end", function()
  printf("%-22s %10s%s\n", "SYSCALL", "COUNT", opts.latency and ("  %14s"):format("TIME (us)") or "")
  for i, r in ipairs(sorted(by_call, function(v) return v end)) do
    if i > top then break end
    printf("%-22s %10d%s\n", name_of(r.k), r.v,
           opts.latency and ("  %14.3f"):format((spent[r.k] or 0) / 1000) or "")
  end
  printf("\n%-8s %-16s %10s\n", "PID", "COMM", "COUNT")
  for i, r in ipairs(sorted(by_proc, function(v) return v.n end)) do
    if i > top then break end
    printf("%-8d %-16s %10d\n", r.v.pid, r.v.comm, r.v.n)
  end
  printf("\n%d system calls\n", total)
end)
