-- opensnoop.lua: every file the target opens, as bcc's opensnoop prints
-- it: PID COMM FD ERR PATH, one line per open(2), openat(2) or openat2(2)
-- when it returns. The path is read in the kernel at the syscall's entry
-- (the BPF path, chosen for a syscall's string fields), so the files of a
-- process that is gone by the time its samples are read are named too.
--   perfscript examples/opensnoop.lua -c 'cat A B C'    a command
--   perfscript examples/opensnoop.lua -p PID            a running process
--   perfscript examples/opensnoop.lua -a -T 5 -x        failed opens, everywhere, 5 s
local opts = require("args").parse(arg, {
  name = "opensnoop.lua",
  usage = "perfscript examples/opensnoop.lua -c 'CMD args' | -p PID | -a [-T SECONDS] [options]",
  summary = "Files opened, with the process, the descriptor or the error, like bcc's opensnoop.",
  { "-x, --failed", nil, "only the opens that failed" },
  { "-n, --name", "COMM", "only processes whose name contains COMM" },
  { "--timestamp", nil, "a first column of seconds since the start" },
})

io.stdout:setvbuf("line") -- a row as it happens, into a pipe or a file too

-- The open calls this kernel has (open(2) is not on every architecture).
local pending, returned, start, why = {}, {}, nil, nil
local function watch(call)
  local enter, err = perfmon.counter("syscalls:sys_enter_" .. call)
  local exit
  if enter then exit, err = perfmon.counter("syscalls:sys_exit_" .. call) end
  if not exit then
    why = why or err
    return false
  end
  -- An open is printed once both its halves are in. The entry usually
  -- comes first; one whose path was out of memory at the entry is sent at
  -- the syscall's exit, with its entry's time, and may come after.
  local function row(p, ret)
    if opts.failed and ret >= 0 then return end
    if opts.name and not p.comm:find(opts.name, 1, true) then return end
    start = start or p.time
    if opts.timestamp then printf("%-14.6f ", (p.time - start) / 1e9) end
    printf("%-7d %-16s %4d %3d %s\n", p.pid, p.comm, ret >= 0 and ret or -1,
           ret >= 0 and 0 or -ret, p.path or "[unreadable]")
  end
  probe(enter, function(s)
    local p = { path = s.args.filename, comm = s.comm, pid = s.pid, time = s.time }
    local ret = returned[s.tid]
    returned[s.tid] = nil
    if ret and ret.time >= s.time then row(p, ret.value) else pending[s.tid] = p end
  end)
  probe(exit, function(s)
    local p = pending[s.tid]
    pending[s.tid] = nil
    if p then row(p, s.args.ret) else returned[s.tid] = { value = s.args.ret, time = s.time } end
  end)
  return true
end

local any = false
for _, call in ipairs({ "open", "openat", "openat2" }) do
  any = watch(call) or any
end
if not any then
  io.stderr:write("opensnoop.lua: cannot trace open, openat or openat2: ", tostring(why), "\n")
  os.exit(1)
end

probe("begin", function()
  if opts.timestamp then printf("%-14s ", "TIME(s)") end
  printf("%-7s %-16s %4s %3s %s\n", "PID", "COMM", "FD", "ERR", "PATH")
end)
