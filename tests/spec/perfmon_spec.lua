-- perfmon_spec.lua: the perfmon module and the seed globals, against the
-- real kernel. perfscript measures itself here (the self target), so the
-- counts come from this very process.

local is_root
do
  local p = io.popen("id -u")
  is_root = p:read("l") == "0"
  p:close()
end

-- n open/close pairs: each is exactly one openat and one close syscall.
-- The counts below use openat: a garbage collection may close a stray file
-- at any time, but nothing opens one behind the script's back.
local function open_close(n)
  for _ = 1, n do
    local f = assert(io.open("/proc/self/stat", "r"))
    f:close()
  end
end

describe("perfmon.counter", function()
  it("counts task-clock for this process", function()
    local c <close> = assert(perfmon.counter("task-clock"))
    assert.truthy(c:start())
    local x = 0
    for i = 1, 200000 do x = x + i end
    local v, enabled, running, raw = c:read()
    assert.is_true(v > 0)
    assert.is_true(running <= enabled)
    assert.equals(raw, v) -- software events are never multiplexed
  end)

  it("counts a syscall tracepoint exactly", function()
    if not is_root then return pending("needs root for syscall tracepoints") end
    local c <close> = assert(perfmon.counter("syscalls:sys_enter_openat"))
    c:start()
    open_close(500)
    c:stop()
    assert.equals(500, (c:read()))
  end)

  it("stops and resets", function()
    if not is_root then return pending("needs root for syscall tracepoints") end
    local c <close> = assert(perfmon.counter("syscalls:sys_enter_openat"))
    c:start()
    open_close(10)
    c:stop()
    open_close(10) -- not counted
    assert.equals(10, (c:read()))
    c:reset()
    assert.equals(0, (c:read()))
  end)

  it("returns nil and a message with column and suggestion for a bad string", function()
    local c, msg, code = perfmon.counter("task-clock,cycels:u")
    assert.is_nil(c)
    assert.matches("cycels", msg)
    assert.matches("column 12", msg)
    assert.matches("did you mean 'cycles'", msg)
    assert.is_number(code)
  end)

  it("explains an event this machine cannot count", function()
    local c <close> = assert(perfmon.counter("instructions:u"))
    local ok, msg = c:start()
    if ok then return pending("this machine has a hardware PMU") end
    assert.matches("instructions:u", msg)
    assert.matches("not supported", msg)
  end)

  it("has a name, a spec and a tostring", function()
    local c <close> = assert(perfmon.counter("page-faults/name=pf/u"))
    assert.equals("pf", c:name())
    assert.equals("page-faults/name=pf/u", c:spec())
    assert.matches("^perfscript.counter 'pf': %d+$", tostring(c))
    assert.is_true(c:handle() ~= 0)
  end)

  it("closes exactly once and then refuses use", function()
    local c = assert(perfmon.counter("task-clock"))
    local h = c:handle()
    c:close()
    c:close() -- a second close is harmless
    assert.matches("closed counter", select(2, pcall(c.read, c)))
    assert.has_error(function() perfmon_get_counter(h) end)
    assert.matches("closed", tostring(c))
  end)

  it("frees its handle when collected", function()
    local h = assert(perfmon.counter("task-clock")):handle()
    collectgarbage(); collectgarbage()
    assert.has_error(function() perfmon_get_counter(h) end)
  end)

  it("gives one counter per event of a list", function()
    local a, b = perfmon.counter("task-clock,page-faults")
    assert.equals("task-clock", a:name())
    assert.equals("page-faults", b:name())
    a:close(); b:close()
  end)

  it("raises on misuse", function()
    assert.has_error(function() perfmon.counter() end)
    assert.has_error(function() perfmon.counter("task-clock").read(42) end)
  end)
end)

describe("perfmon.group", function()
  it("reads members coherently, by index and by name", function()
    if not is_root then return pending("needs root for syscall tracepoints") end
    local g <close> = assert(perfmon.group("{syscalls:sys_enter_openat,syscalls:sys_enter_close}"))
    assert.equals(2, #g)
    assert.same({ "syscalls:sys_enter_openat", "syscalls:sys_enter_close" }, g:names())
    assert.truthy(g:start())
    open_close(100)
    g:stop()
    local v, enabled, running = g:read()
    assert.equals(100, v[1])
    assert.is_true(v[2] >= 100) -- a collection may close more
    assert.equals(100, v["syscalls:sys_enter_openat"])
    assert.is_true(running <= enabled)
  end)

  it("rejects a string that is not one group", function()
    assert.has_error(function() perfmon.group("task-clock,page-faults") end)
  end)
end)

describe("perfmon.describe", function()
  it("lists the attr fields of each event", function()
    local d = assert(perfmon.describe("{task-clock,page-faults}:u"))
    assert.equals(2, #d)
    assert.equals(1, d[1].type) -- PERF_TYPE_SOFTWARE
    assert.equals(1, d[1].config) -- PERF_COUNT_SW_TASK_CLOCK
    assert.equals(2, d[2].config)
    assert.equals(1, d[1].exclude_kernel)
    assert.equals(1, d[2].leader)
    assert.equals(1, d[1].disabled)
    assert.is_nil(d[2].disabled)
  end)

  it("describes sampling terms", function()
    local d = assert(perfmon.describe("cpu-clock/period=100000/"))
    assert.equals(100000, d[1].sample_period)
    d = assert(perfmon.describe("cpu-clock/freq=999/"))
    assert.equals(999, d[1].sample_freq)
    assert.equals(1, d[1].freq)
  end)

  it("returns nil and the parse error", function()
    local d, msg = perfmon.describe("task-clock:q")
    assert.is_nil(d)
    assert.matches("modifier", msg)
  end)

  it("gives the code perfmon.counter gives for the same bad string", function()
    for _, spec in ipairs({ "task-clock:q", "cycels", "cpu-clock/perod=1/", "{a", "a\0b" }) do
      local d, dmsg, dcode = perfmon.describe(spec)
      local c, cmsg, ccode = perfmon.counter(spec)
      assert.is_nil(d)
      assert.is_nil(c)
      assert.equals(cmsg, dmsg)
      assert.is_true(ccode > 0)
      assert.equals(ccode, dcode)
    end
  end)
end)

describe("seed globals", function()
  it("follow the proposal's return conventions", function()
    local h = perfmon_allocate_counter("task-clock")
    assert.is_true(math.type(h) == "integer" and h > 0) -- positive, whatever the session tag
    assert.equals("task-clock", perfmon_handle_to_string(h))
    assert.equals(0, perfmon_create_context())
    local x = 0
    for i = 1, 100000 do x = x + i end
    local v1 = perfmon_get_counter(h)
    assert.is_true(v1 > 0)
    local stopped = perfmon_stop_counter(h)
    assert.is_true(stopped >= v1)
    assert.equals(stopped, perfmon_get_counter(h))
    assert.is_true(perfmon_start_counter(h) >= stopped)
    assert.equals(h, perfmon_free_counter(h))
  end)

  it("returns 0 and a message for a bad string", function()
    local h, msg = perfmon_allocate_counter("nosuchevent")
    assert.equals(0, h)
    assert.matches("unknown event 'nosuchevent'", msg)
  end)

  it("rejects freed, stale and made-up handles without crashing", function()
    local h = perfmon_allocate_counter("task-clock")
    assert.equals(h, perfmon_free_counter(h))
    assert.equals(0, (perfmon_free_counter(h)))
    for _, bad in ipairs({ h, 1, 0, -1, 0x7fffffffffffffff, h + 1 }) do
      local ok, err = pcall(perfmon_get_counter, bad)
      assert.is_false(ok)
      assert.matches("bad handle", err)
      assert.has_error(function() perfmon_handle_to_string(bad) end)
      assert.has_error(function() perfmon_start_counter(bad) end)
    end
  end)

  it("returns one handle per event of a group", function()
    local a, b = perfmon_allocate_counter("{task-clock,page-faults}")
    assert.is_true(a ~= 0 and b ~= 0 and a ~= b)
    perfmon_free_counter(a) -- the leader takes its group with it
    assert.has_error(function() perfmon_get_counter(b) end)
  end)
end)
