-- profile_spec.lua: the profile tapset over fake sample tables: offsets
-- dropped, top-N order, pid and comm breakdowns, folded stacks.
package.path = "tapsets/?.lua;" .. package.path
local profile = require "profile"

local function sample(sym, pid, comm, ustack, kstack)
  return { sym = sym, pid = pid, comm = comm,
           ustack = function() return ustack or { sym } end,
           kstack = function() return kstack or {} end }
end

local function fed(opts)
  local p = profile.new(opts)
  for _ = 1, 5 do p:add(sample("hot+0x10", 10, "app", { "hot+0x10", "main+0x4", "_start+0x1" })) end
  for _ = 1, 3 do p:add(sample("hot+0x24", 10, "app", { "hot+0x24", "main+0x8", "_start+0x1" })) end
  p:add(sample("warm+0x2", 11, "app2", { "warm+0x2", "main+0x4" }, { "do_syscall_64+0x5" }))
  p:add(sample("cold+0x2", 12, "sh"))
  return p
end

describe("profile", function()
  it("says where a stack waits: the user frame and the kernel function", function()
    assert.equals("read > anon_pipe_read", profile.where(
      "start_thread;run;read;entry_SYSCALL_64_after_hwframe;do_syscall_64;vfs_read;anon_pipe_read;" ..
      "schedule;__schedule;__traceiter_sched_switch"))
    assert.equals("spin", profile.where("main;spin"))
    assert.equals("worker_thread", profile.where("ret_from_fork;kthread;worker_thread;schedule"))
    assert.equals("-", profile.where(""))
  end)

  it("strips offsets from symbols", function()
    assert.equals("hot", profile.func("hot+0x1f"))
    assert.equals("0x7fff1234", profile.func("0x7fff1234"))
  end)

  it("ranks functions, most samples first, ties by name", function()
    local top = fed():top(3)
    assert.same({ "hot", 8, 80 }, { top[1].key, top[1].count, top[1].pct })
    assert.same({ "cold", "warm" }, { top[2].key, top[3].key })
    assert.equals(2, #fed():top(2))
  end)

  it("breaks samples down by pid and by command", function()
    local p = fed()
    assert.same({ 10, 8 }, { p:pids()[1].key, p:pids()[1].count })
    assert.same({ "app", "app2", "sh" }, { p:comms()[1].key, p:comms()[2].key, p:comms()[3].key })
  end)

  it("prints the top table examples/profile.lua prints", function()
    assert.equals("10 samples\n\n samples  percent  function\n" ..
                  "       8   80.00%  hot\n       1   10.00%  cold\n", fed():top_text(2))
  end)

  it("folds stacks root first, user then kernel frames", function()
    assert.same({ "app2", "main", "warm", "do_syscall_64" },
                profile.stack(sample("warm", 11, "app2", { "warm+0x2", "main+0x4" }, { "do_syscall_64+0x5" })))
    assert.equals("app2;main;warm;do_syscall_64 1\napp;_start;main;hot 8\nsh;cold 1\n", fed{ stacks = true }:folded())
    assert.equals("", fed():folded())
  end)

  it("writes folded stacks to a file", function()
    local path = os.tmpname()
    assert.is_true(fed{ stacks = true }:write_folded(path))
    local f = assert(io.open(path))
    assert.matches("^app2;", f:read("a"))
    f:close()
    os.remove(path)
    assert.is_nil((fed():write_folded("/nonexistent/dir/x")))
  end)
end)
