-- syscalls.lua: exact counts of a few system calls a command makes, from the
-- syscalls tracepoints (needs root, or tracefs access and a low
-- perf_event_paranoid).
--   perfscript examples/syscalls.lua -c './app args'
local opts = require("args").parse(arg, {
  name = "syscalls.lua", args = true,
  report = true,
  usage = "perfscript examples/syscalls.lua -c 'CMD args' [SYSCALL...]",
  target = true,
  summary = "Exact counts of a few system calls (default read write openat close mmap getppid).",
})
local need = require("args").need
local names = opts[1] and { table.unpack(opts) } or
              { "read", "write", "openat", "close", "mmap", "getppid" }
local counters = {}

for _, name in ipairs(names) do
  counters[name] = need(perfmon.counter("syscalls:sys_enter_" .. name))
end

probe("end", function()
  printf("%-12s %10s\n", "syscall", "calls")
  for _, name in ipairs(names) do
    printf("%-12s %10d\n", name, counters[name]:read())
  end
end)
