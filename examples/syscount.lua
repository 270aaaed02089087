-- syscount.lua: system calls by name and by process, like strace -c or
-- bpftrace's syscount: every raw_syscalls:sys_enter hit of the target is a
-- sample (a tracepoint without period= samples each hit), keyed by its
-- s.args.id, named from the kernel headers' __NR_ table.
--   perfscript examples/syscount.lua -c './app args'   the command and its children
--   perfscript examples/syscount.lua -a -T 5           every process for 5 s
--   perfscript examples/syscount.lua -p PID --top 20    the top 20 lines
local top = require("args").parse(arg, {
  name = "syscount.lua",
  report = true,
  usage = "perfscript examples/syscount.lua -c 'CMD args' | -p PID | -a [-T SECONDS] [--top N]",
  target = true,
  summary = "System calls by name and by process, like strace -c.",
  { "--top", "N", "lines per table (default 10)", number = true, integer = true, min = 1, default = 10 },
}).top
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

probe("perfmon.sample(enter)", function(s)
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
  printf("%-22s %10s\n", "SYSCALL", "COUNT")
  for i, r in ipairs(sorted(by_call, function(v) return v end)) do
    if i > top then break end
    printf("%-22s %10d\n", name_of(r.k), r.v)
  end
  printf("\n%-8s %-16s %10s\n", "PID", "COMM", "COUNT")
  for i, r in ipairs(sorted(by_proc, function(v) return v.n end)) do
    if i > top then break end
    printf("%-8d %-16s %10d\n", r.v.pid, r.v.comm, r.v.n)
  end
  printf("\n%d system calls\n", total)
end)
