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
  report = true,
  usage = "perfscript examples/opensnoop.lua -c 'CMD args' | -p PID | -a [-T SECONDS] [options]",
  target = true,
  summary = "Files opened, with the process, the descriptor or the error, like bcc's opensnoop.",
  { "-x, --failed", nil, "only the opens that failed" },
  { "-n, --name", "COMM", "only processes whose name contains COMM" },
  { "--timestamp", nil, "a first column of seconds since the start (bcc's -T: -T is perfscript's)" },
  { "-d, --duration", "SECONDS", "trace for SECONDS, then end (bcc's -d; the same as -T)", number = true,
    min = 0.001 },
})
if opts.duration then
  probe(("timer.ms(%d)"):format(math.ceil(opts.duration * 1000)), function() exit() end)
end
local self = pid() -- perfscript's own opens (debug files, /proc) are not the target's

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
  -- An open is printed once both its halves are in. Each thread's entries
  -- come in order, and so do its exits, but the two streams may interleave
  -- out of order (an entry whose path was out of memory is sent at the
  -- syscall's exit, with its entry's time; a writer held up past the
  -- ordering window comes late). So a thread's unmatched halves wait in
  -- two queues, and the oldest entry pairs with the oldest exit after it;
  -- an exit older than every entry is of a call begun before the session.
  local function row(p, ret)
    if (opts.failed and ret >= 0) or p.pid == self then return end
    if opts.name and not p.comm:find(opts.name, 1, true) then return end
    start = start or p.time
    if opts.timestamp then printf("%-14.6f ", (p.time - start) / 1e9) end
    printf("%-7d %-16s %4d %3d %s\n", p.pid, p.comm, ret >= 0 and ret or -1,
           ret >= 0 and 0 or -ret, p.path or "[unreadable]")
  end
  local function queue(t, tid)
    local q = t[tid]
    if not q then
      q = {}
      t[tid] = q
    end
    return q
  end
  local function pair(tid)
    local e, x = pending[tid], returned[tid]
    while e and x and e[1] and x[1] do
      if x[1].time < e[1].time then
        table.remove(x, 1) -- its entry was before the session
      else
        row(table.remove(e, 1), table.remove(x, 1).value)
      end
    end
    if e and not e[1] then pending[tid] = nil end
    if x and not x[1] then returned[tid] = nil end
  end
  probe(enter, function(s)
    local q = queue(pending, s.tid)
    q[#q + 1] = { path = s.args.filename, comm = s.comm, pid = s.pid, time = s.time }
    pair(s.tid)
  end)
  probe(exit, function(s)
    local q = queue(returned, s.tid)
    q[#q + 1] = { value = s.args.ret, time = s.time }
    pair(s.tid)
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
