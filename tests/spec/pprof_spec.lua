-- pprof_spec.lua: the pprof tapset and the perfscript.pprof module: fake
-- samples with a fake symbolizer become a profile.proto table with the
-- sample types pprof expects, the bytes decode back to the same table, and
-- differential profiles and two-count folded lines add up.
package.path = "tapsets/?.lua;" .. package.path
local profile = require "profile"
local pprof = require "pprof"
local core = require "perfscript.pprof"

local KADDR = -0x7e0000000000 -- a kernel address: the upper half, negative as a Lua integer

-- hot, main and _start at 0x1000, 0x2000 and 0x3000, 0x100 bytes each
local function symbolize(_, addr, kernel)
  if kernel then return addr == KADDR and "do_syscall_64+0x5" or ("0x%x"):format(addr), "[kernel.kallsyms]" end
  local name = ({ "hot", "main", "_start" })[addr // 0x1000]
  if not name or addr % 0x1000 >= 0x100 then return ("0x%x"):format(addr), "[unknown]" end
  return ("%s+0x%x"):format(name, addr % 0x1000), addr >= 0x3000 and "/lib/libc.so.6" or "/bin/app"
end

local function sample(chain, over)
  local s = { ip = chain[1], pid = 10, tid = 11, comm = "app", period = 1000, user = chain[1] > 0,
              name = "cpu-clock/freq=999,callchain/", callchain = chain, sym = "x" }
  for k, v in pairs(over or {}) do s[k] = v end
  return s
end

local function fed(opts)
  local p = profile.new{ pprof = true, symbolize = symbolize, labels = opts and opts.labels }
  -- callers are return addresses: 0x2100 is just past main, 0x3001 inside _start
  for _ = 1, 3 do p:add(sample({ 0x1000, 0x2100, 0x3001 })) end
  p:add(sample({ KADDR, 0x1004, 0x2100, 0x3001 }))
  p:add(sample({ 0x1000, 0, 0x2100 }, { pid = 12, comm = "sh", tid = 12 }))
  return p
end

describe("pprof", function()
  it("builds cpu-clock profiles with samples/count and cpu/nanoseconds", function()
    local t = fed():pprof()
    assert.same({ { type = "samples", unit = "count" }, { type = "cpu", unit = "nanoseconds" } }, t.sample_type)
    assert.same({ type = "cpu", unit = "nanoseconds" }, t.period_type)
    assert.equals(1001001, t.period) -- freq=999 on a clock: 1e9/999 ns
    assert.equals("cpu", t.default_sample_type)
    assert.equals(5, pprof.flat_total(t))
    assert.equals(5000, pprof.flat_total(t, 2))
  end)

  it("holds profiles taken at once to one shared budget of entries", function()
    local budget = { left = 2 }
    local a = profile.new{ pprof = true, symbolize = symbolize, budget = budget, labels = { "comm" } }
    local b = profile.new{ pprof = true, symbolize = symbolize, budget = budget, labels = { "comm" } }
    a:add(sample({ 0x1000, 0x2100 })) -- a new chain: one entry
    a:add(sample({ 0x1000, 0x2100 })) -- seen: none more
    b:add(sample({ 0x1010, 0x2100 })) -- the last entry
    assert.equals(0, budget.left)
    b:add(sample({ 0x1020, 0x2100 })) -- over: counted, under no stack
    b:add(sample({ 0x1010, 0x2100 })) -- seen: counted where it was
    local t = b:pprof()
    assert.equals(3, pprof.flat_total(t))
    local over = 0
    for _, smp in ipairs(t.sample) do
      if #smp.location_id == 0 then over = over + smp.value[1] end
    end
    assert.equals(1, over)
    a:release()
    assert.equals(1, budget.left)
    b:release()
    assert.equals(2, budget.left)
  end)

  it("names other events and their periods", function()
    local p = profile.new{ pprof = true, symbolize = symbolize }
    p:add(sample({ 0x1000 }, { name = "syscalls:sys_enter_getppid/period=1,callchain/", period = 1 }))
    local t = p:pprof()
    assert.same({ type = "syscalls:sys_enter_getppid", unit = "count" }, t.sample_type[2])
    assert.equals(1, t.period)
  end)

  it("symbolizes callers one byte before their return address, kernel frames in the kernel", function()
    local t = fed():pprof()
    local folded = pprof.folded(t)
    assert.equals(3, folded["_start;main;hot"])
    assert.equals(1, folded["_start;main;hot;do_syscall_64"])
    assert.equals(1, folded["main;hot"]) -- the zero frame is dropped
    assert.equals("/bin/app", t.mapping[1].filename) -- the main binary first
    assert.equals("[kernel.kallsyms]", t.mapping[#t.mapping].filename)
    assert.same({ hot = 4, do_syscall_64 = 1 }, pprof.flat(t))
  end)

  it("gives the same profile when chains were named ahead (pprof.prepare)", function()
    local a, b = fed(), fed()
    pprof.prepare(a)
    for _, p in ipairs { a, b } do p:add(sample({ 0x1004, 0x3001 }, { pid = 13 })) end
    local ta, tb = a:pprof(), b:pprof()
    -- the same stacks, names and files, only numbered in another order
    assert.same(pprof.folded(tb), pprof.folded(ta))
    assert.same(pprof.flat(tb), pprof.flat(ta))
    for _, k in ipairs { "location", "function", "mapping", "sample" } do assert.equals(#tb[k], #ta[k]) end
    assert.equals(tb.mapping[1].filename, ta.mapping[1].filename)
    assert.is_nil(a.table) -- a prepared table serves one build
  end)

  it("adds pid, tid and comm labels only when asked", function()
    local plain = fed():pprof()
    for _, s in ipairs(plain.sample) do assert.same({}, s.label) end
    local t = fed({ labels = { "pid", "comm" } }):pprof()
    local seen = {}
    for _, s in ipairs(t.sample) do
      for _, l in ipairs(s.label) do seen[l.key .. "=" .. (l.str or l.num)] = true end
    end
    assert.is_true(seen["pid=10"] and seen["pid=12"] and seen["comm=app"] and seen["comm=sh"])
    assert.has_error(function() profile.new{ pprof = true, labels = { "cpu" } } end,
                     "profile.new: unknown label 'cpu' (pid, tid, comm, cgroup)")
  end)

  it("encodes to gzip bytes that decode to the same profile", function()
    local t = fed({ labels = { "comm" } }):pprof{ comment = "a test" }
    local bytes = core.encode(t)
    assert.equals("\31\139", bytes:sub(1, 2))
    local back = assert(core.decode(bytes))
    assert.same(t.sample_type, back.sample_type)
    assert.same(pprof.folded(t), pprof.folded(back))
    local kernel = 0
    for _, l in ipairs(back.location) do if l.address == KADDR then kernel = kernel + 1 end end
    assert.equals(1, kernel)
    assert.equals("a test", back.comment[1])
    assert.same(back, assert(core.decode(core.encode(t, false))))
  end)

  it("rejects malformed tables and bytes", function()
    assert.has_error(function() core.encode({ mapping = { { id = "x" } } }) end,
                     "pprof: mapping[1].id: integer expected, got string")
    assert.has_error(function() core.encode({ sample = { { value = { 1 } } } }) end,
                     "pprof: sample[1] has 1 values for 0 sample types")
    local t, err = core.decode("not a profile")
    assert.is_nil(t)
    assert.matches("not a pprof profile", err)
    t, err = core.decode("\31\139broken")
    assert.is_nil(t)
    assert.matches("not a gzip%-compressed profile", err)
  end)

  it("builds differential profiles as go tool pprof -diff_base does", function()
    local base = fed():pprof()
    local p = profile.new{ pprof = true, symbolize = symbolize }
    for _ = 1, 2 do p:add(sample({ 0x1000, 0x2100 })) end
    local new = p:pprof()
    local d = pprof.diff(new, base)
    assert.equals(2 - 5, pprof.flat_total(d))
    local based = 0
    for _, s in ipairs(d.sample) do
      if s.label[1] and s.label[1].key == "pprof::base" then based = based - s.value[1] end
    end
    assert.equals(5, based)
    assert.same({ name = "hot", base = 4, new = 2, delta = -2 }, pprof.changes(new, base, 1)[1])
    local lines = pprof.diff_folded(new, base)
    assert.matches("\n_start;main;hot 3 0\n", "\n" .. lines)
    assert.matches("\nmain;hot 1 2\n", "\n" .. lines)
    local other = profile.new{ pprof = true, symbolize = symbolize }
    other:add(sample({ 0x1000 }, { name = "page-faults/period=1,callchain/" }))
    assert.has_error(function() pprof.diff(other:pprof(), base) end)
  end)

  it("writes and reads files", function()
    local path = os.tmpname()
    assert.is_true(fed():write_pprof(path))
    local t = assert(pprof.read(path))
    assert.equals(5, pprof.flat_total(t))
    os.remove(path)
    local ok, err = pprof.read("/nonexistent/x.pb.gz")
    assert.is_nil(ok)
    assert.matches("No such file", err)
    assert.has_error(function() profile.new():write_pprof(path) end)
  end)

  it("builds a profile from folded stacks (pprof.from_folded)", function()
    local t = pprof.from_folded({
      { stack = "main;read;anon_pipe_read", value = 1000, labels = { { key = "state", str = "S" } } },
      { stack = "main;nanosleep", value = 500 },
    }, { type = "off-cpu", unit = "nanoseconds" })
    assert.same({ { type = "off-cpu", unit = "nanoseconds" } }, t.sample_type)
    assert.equals(4, #t.location) -- main is one location, shared
    local leaf = t.location[t.sample[1].location_id[1]].line[1].function_id
    assert.equals("anon_pipe_read", t["function"][leaf].name) -- leaf first
    assert.equals(t.sample[1].location_id[3], t.sample[2].location_id[2]) -- main
    assert.same({ 1000 }, t.sample[1].value)
    local back = assert(core.decode(core.encode(t)))
    assert.equals(1500, pprof.flat_total(back))
  end)
end)
