-- profile.lua: building blocks for sampling profiles. A profile takes
-- samples (the object a perfmon.sample probe gets, or any table with the
-- same fields) and keeps what profilers print: samples per function (or
-- per inlined function, per source line, per DSO), per pid and per command,
-- and folded stacks ("root;caller;callee count", the input of
-- flamegraph.pl and speedscope).
--   local profile = require "profile"
--   local p = profile.new{ stacks = true }
--   probe("perfmon.sample(prof)", function(s) p:add(s) end)
--   probe("end", function() io.write(p:top_text(20)) end)
local M = {}

-- "func+0x1f" -> "func": samples of one function at different offsets
-- count together.
function M.func(sym)
  return (tostring(sym):gsub("%+0x%x+$", ""))
end

-- The frames of a sample, root first: its command, user frames, then
-- kernel frames, each without its offset. The sample's chains are
-- innermost first.
function M.stack(s)
  local frames = {}
  local k, u = s:kstack(), s:ustack()
  local n = 1
  frames[1] = s.comm or "?"
  for i = #u, 1, -1 do n = n + 1; frames[n] = M.func(u[i]) end
  for i = #k, 1, -1 do n = n + 1; frames[n] = M.func(k[i]) end
  return frames
end

function M.folded_key(s)
  return table.concat(M.stack(s), ";")
end

-- A stack (frames root first, ";"-joined, user then kernel) in a few
-- words: the innermost user frame, what the program called, and the
-- innermost kernel function that is not the scheduler's, what it waited
-- in: "read > anon_pipe_read". Either may be missing.
function M.where(stack)
  local user, kernel, in_kernel = nil, nil, false
  for f in stack:gmatch("[^;]+") do
    if f:match("^entry_SYSCALL") or f:match("^asm_") or f:match("^ret_from_fork") then
      in_kernel = true
    elseif in_kernel then
      if not f:match("schedule") and not f:match("^__traceiter") then kernel = f end
    else
      user = f
    end
  end
  if user and kernel then return user .. " > " .. kernel end
  return user or kernel or "-"
end

local Profile = {}
Profile.__index = Profile

local sorts = { sym = true, dso = true, srcline = true }

-- profile.new{ stacks = true } also keeps folded stacks (they need the
-- callchain or call-graph term on the sampling counter). inline = true
-- counts a sample under the innermost function inlined at its address
-- ("name (inlined)") and puts inlined frames into folded stacks; sort =
-- "dso" counts per file (the library or executable), sort = "srcline" per
-- source line ("file.c:42"); the default, "sym", per function.
-- profile.new{ python = true } counts a sample of a CPython process (its
-- counter's probe has python = true) under its innermost Python frame,
-- "py::FUNC:FILE" (with sort = "srcline", the line of the script it was
-- at), and the others under their ip as usual.
-- profile.new{ budget = b } shares b ({ left = N }) with other profiles: a
-- new call chain or address takes one entry of it, and once none is left
-- a sample counts under an "[over budget]" entry instead, so that however
-- many profiles are taken at once (the agent's requests) they hold at most
-- N distinct entries in all; p:release() gives its entries back.
-- profile.new{ pprof = true } keeps raw call chains for p:write_pprof
-- (tapsets/pprof.lua), with opts.labels ({"pid", "tid", "comm", "cgroup"},
-- any of them) as pprof labels; cgroup (the sampling counter needs the
-- cgroup term) adds a container label where the group's path names one.
function M.new(opts)
  opts = opts or {}
  local sort = opts.sort or "sym"
  if not sorts[sort] then
    error(("profile.new: sort must be sym, dso or srcline, not '%s'"):format(tostring(sort)), 2)
  end
  local p = setmetatable({ total = 0, by_func = {}, by_pid = {}, by_comm = {}, stacks = {},
                           by_addr = {}, where = {}, keep_stacks = opts.stacks and true or false,
                           raw_stacks = {},
                           sort = sort, inline = opts.inline and true or false,
                           python = opts.python and true or false,
                           fold_opts = { inline = opts.inline and true or false },
                           budget = opts.budget, taken = 0 }, Profile)
  if opts.pprof then
    p.chains, p.periods, p.chain_period, p.pprof_labels, p.symbolize = {}, {}, 0, {}, opts.symbolize
    for _, l in ipairs(opts.labels or {}) do
      if l ~= "pid" and l ~= "tid" and l ~= "comm" and l ~= "cgroup" then
        error(("profile.new: unknown label '%s' (pid, tid, comm, cgroup)"):format(tostring(l)), 2)
      end
      p.pprof_labels[l] = true
    end
    p.started_ns = gettimeofday_ns and gettimeofday_ns() or os.time() * 1000000000
  end
  return p
end

local function bump(t, k) t[k] = (t[k] or 0) + 1 end

-- Live samples under perfscript are counted by address and named once, at
-- report time, through perfmon.symbolize, as perf record leaves symbols to
-- perf report: the hot path is a table update, and the kernel's symbol
-- table is not loaded while the target runs. Sample tables (tests, LuaJIT)
-- are counted by their sym.
local symbolize = rawget(_G, "perfmon") and perfmon.symbolize
local frames = rawget(_G, "perfmon") and perfmon.frames

-- Count one sample. Reads only ip/user (or sym), pid and comm, and the
-- chains with stacks, since each field of a live sample is decoded on demand.
function Profile:add(s)
  self.total = self.total + 1
  if symbolize and type(s) == "userdata" then
    -- with python, a sample counts under its innermost Python frame
    local ip = self.python and s.pyip
    -- kernel addresses are the same in every process (-1); a process's
    -- are named by its mappings of the sample's epoch (a library may be
    -- dlclose'd and another loaded at its address before the end)
    local at = -1
    if s.user and not ip then at = s.pid << 32 | s.epoch elseif ip then at = s.pid << 32 end
    local t = self.by_addr[at]
    if not t then t = {}; self.by_addr[at] = t end
    ip = ip or s.ip
    if not t[ip] and not self:take() then ip = 0 end -- over the budget: one entry
    t[ip] = (t[ip] or 0) + 1
  elseif self.sort == "dso" then
    bump(self.by_func, tostring(s.dso or "?"):match("[^/]*$"))
  else
    bump(self.by_func, self.sort == "srcline" and s.srcline or M.func(s.sym))
  end
  bump(self.by_pid, s.pid)
  bump(self.by_comm, s.comm or "?")
  if self.keep_stacks and type(s) == "userdata" then
    -- its addresses, named at the end with the rest (a JIT's map may come
    -- later, a library may be replaced): the thread, the epoch, the chain
    local key = string.pack("=jjs1", s.pid, s.epoch, s.comm or "?") .. s:packed()
    self.raw_stacks[key] = (self.raw_stacks[key] or 0) + 1
  elseif self.keep_stacks then
    bump(self.stacks, M.folded_key(s))
  end
  if self.chains then require("pprof").capture(self, s) end
end

-- One entry of the shared budget, if the profile has one: false when none is left.
function Profile:take()
  local b = self.budget
  if not b then return true end
  if b.left <= 0 then return false end
  b.left, self.taken = b.left - 1, self.taken + 1
  return true
end

-- Give the profile's entries back to its budget (it is done, or dropped).
function Profile:release()
  if self.budget then self.budget.left, self.taken = self.budget.left + self.taken, 0 end
end

-- The key one address counts under, as the profile's sort asks.
local function key_of(self, pid, ip, kernel, epoch)
  if self.sort == "sym" and not self.inline then
    local _, _, func = symbolize(pid, ip, kernel, epoch)
    return func
  end
  if self.sort == "dso" then
    local _, dso, func = symbolize(pid, ip, kernel, epoch)
    return dso ~= "" and dso:match("[^/]*$") or func
  end
  local f = frames(pid, ip, kernel, epoch)
  local inner = f[1]
  if self.sort == "srcline" then return inner.srcline or f[#f].func end
  return inner.inlined and inner.func .. " (inlined)" or inner.func
end

-- Name the addresses counted so far and fold them into by_func.
-- Each key remembers whether kernel (2) or user (1) addresses counted
-- under it, for the top list's [k] and [.] marks.
function Profile:settle()
  local where = self.where
  for at, t in pairs(self.by_addr) do
    local kernel = at < 0
    local side = kernel and 2 or 1
    local pid, epoch = kernel and 0 or at >> 32, not kernel and at & 0xffffffff or nil
    for ip, c in pairs(t) do
      local f = key_of(self, pid, ip, kernel, epoch)
      self.by_func[f] = (self.by_func[f] or 0) + c
      where[f] = (where[f] == nil or where[f] == side) and side or 3
    end
  end
  self.by_addr = {}
end

-- Rows {key, count, pct} of one breakdown, most samples first, ties by key.
local function rows(t, total, n)
  local out = {}
  for k, c in pairs(t) do out[#out + 1] = { key = k, count = c } end
  table.sort(out, function(a, b)
    if a.count ~= b.count then return a.count > b.count end
    if type(a.key) == type(b.key) then return a.key < b.key end
    return tostring(a.key) < tostring(b.key)
  end)
  for i = #out, (n or #out) + 1, -1 do out[i] = nil end
  for _, r in ipairs(out) do r.pct = 100 * r.count / math.max(total, 1) end
  return out
end

-- Rows of the main breakdown; a row of live samples also says whether it
-- is kernel code (kernel = true) or user code (false).
function Profile:top(n)
  self:settle()
  local out = rows(self.by_func, self.total, n)
  for _, r in ipairs(out) do
    local w = self.where[r.key]
    if w then r.kernel = w == 2 end
  end
  return out
end
function Profile:pids(n) return rows(self.by_pid, self.total, n) end
function Profile:comms(n) return rows(self.by_comm, self.total, n) end

local headings = { sym = "function", dso = "dso", srcline = "source line" }

-- The table examples/profile.lua prints: a header line, then one
-- "samples percent function" row per function (dso, source line). Rows
-- of functions and source lines of live samples are marked as perf
-- report marks them: "[k]" kernel, "[.]" user.
function Profile:top_text(n, header)
  local top = self:top(n)
  local marked = self.sort ~= "dso" and next(self.where) ~= nil
  local out = { header or ("%d samples\n"):format(self.total),
                ("\n%8s %8s  %s%s\n"):format("samples", "percent", marked and "    " or "", headings[self.sort]) }
  for _, r in ipairs(top) do
    local mark = marked and (r.kernel and "[k] " or "[.] ") or ""
    out[#out + 1] = ("%8d %7.2f%%  %s%s\n"):format(r.count, r.pct, mark, r.key)
  end
  return table.concat(out)
end

-- One frame's names for a folded stack, root first: its function, then
-- what was inlined into it, outermost first. The address is
-- sample:packed()'s: a caller's already inside its call.
local function fold_frame(names, self, pid, epoch, at, cache)
  local kernel = at < 0
  local key = kernel and at or ("%d:%d:%d"):format(pid, epoch, at)
  local got = cache[key]
  if not got then
    if self.inline and not kernel then
      local f = frames(pid, at, false, epoch)
      got = { f[#f].func }
      for i = #f - 1, 1, -1 do got[#got + 1] = f[i].func .. " (inlined)" end
    else
      local _, _, func = symbolize(kernel and 0 or pid, at, kernel, not kernel and epoch or nil)
      got = { func }
    end
    cache[key] = got
  end
  for _, n in ipairs(got) do names[#names + 1] = n end
end

-- Name the stacks counted so far, all at once (kernel.c, JIT maps and
-- the mappings of each sample's epoch as they are now): folded lines into
-- self.stacks. A chain's addresses are innermost first, kernel before user.
function Profile:settle_stacks()
  local cache = {}
  for key, n in pairs(self.raw_stacks) do
    local pid, epoch, comm, at = string.unpack("=jjs1", key)
    local chain = {}
    for i = at, #key, 8 do chain[#chain + 1] = string.unpack("=j", key, i) end
    local names = { comm }
    if chain[#chain] == 0 then names[2] = "[truncated]"; chain[#chain] = nil end
    for pass = 1, 2 do -- user frames root first, then kernel ones
      for i = #chain, 1, -1 do
        if (chain[i] < 0) == (pass == 2) then
          fold_frame(names, self, pid, epoch, chain[i], cache)
        end
      end
    end
    local line = table.concat(names, ";")
    self.stacks[line] = (self.stacks[line] or 0) + n
  end
  self.raw_stacks = {}
end

-- Folded stacks, one "frame;frame;... count" line each, sorted so the
-- output is the same for the same samples.
function Profile:folded()
  self:settle_stacks()
  local keys, out = {}, {}
  for k in pairs(self.stacks) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do out[i] = k .. " " .. self.stacks[k] .. "\n" end
  return table.concat(out)
end

-- To path, or to a file opened for writing (closed here): true, or nil and
-- a message (a full disk included).
function Profile:write_folded(path, name)
  return require("pprof").save(path, self:folded(), name)
end

-- pprof (tapsets/pprof.lua), for a profile made with { pprof = true }:
-- the profile.proto table, and the gzip-compressed file.
function Profile:pprof(opts)
  if not self.chains then error("profile: p:pprof() needs profile.new{ pprof = true }", 2) end
  return require("pprof").build(self, opts)
end

function Profile:write_pprof(path, opts)
  if not self.chains then error("profile: p:write_pprof() needs profile.new{ pprof = true }", 2) end
  return require("pprof").write(self, path, opts)
end

-- The sampling counter's spec of a profile, from what the user asked:
-- o.event (a spec of their own, default cpu-clock at o.freq), o.freq, o.g
-- or o.stacks (stacks wanted: frame pointers unless told), o.call_graph
-- ("fp" | "dwarf"), o.python (needs DWARF), o.max_stack, o.cgroup (each
-- sample's cgroup). The event's own terms win: its call-graph= (or
-- stack-size=, which only DWARF stacks use) is how its stacks are taken.
-- An event with neither period= nor freq= samples at o.freq, as perf
-- record's -F applies to it; a tracepoint or probe samples every hit.
-- -> spec, or nil and a usage error (options that contradict each other)
local COUNTS = { [0] = true, [1] = true, [3] = true, [4] = true } -- hardware, software, cache, raw
local function with_term(ev, t) -- ev/a=1/ -> ev/a=1,T/; ev:u -> ev/T/u; ev -> ev/T/
  if not t then return ev end
  if ev:match("/$") then return (ev:gsub("/$", "," .. t .. "/")) end
  local name, mods = ev:match("^([^/]-):([ukhHGpPSDWIe]+)$")
  if name then return ("%s/%s/%s"):format(name, t, mods) end
  return ev .. "/" .. t .. "/"
end
function M.spec(o)
  local ev = o.event
  local own = ev and (ev:match("[/,]call%-graph=(%a+)") or ev:match("[/,]stack%-size=") and "dwarf")
  if own and o.call_graph and own ~= o.call_graph then
    return nil, ("--call-graph %s contradicts the event's call-graph=%s: give one of them"):format(o.call_graph, own)
  end
  if own and o.python and own ~= "dwarf" then
    return nil, ("--python needs DWARF stacks, and the event says call-graph=%s"):format(own)
  end
  local call_graph = own or o.call_graph or (o.python and "dwarf") or ((o.g or o.stacks) and "fp")
  local terms = {}
  if call_graph and not own then terms[#terms + 1] = "call-graph=" .. call_graph end
  -- a user side as deep as asked; the kernel's stays its own
  if o.max_stack and not (ev and ev:match("[/,]max%-stack=")) then
    terms[#terms + 1] = ("max-stack=%d"):format(o.max_stack)
  end
  if o.cgroup then terms[#terms + 1] = "cgroup" end
  local attr = ev and perfmon.describe(ev)
  attr = attr and #attr == 1 and attr[1]
  if not ev or (attr and COUNTS[attr.type] and not attr.sample_period and not attr.freq) then
    table.insert(terms, 1, ("freq=%d"):format(o.freq or 99))
  end
  return with_term(ev or "cpu-clock", #terms > 0 and table.concat(terms, ",") or nil)
end

-- Whether the target (the -c command, or the -p process) is a python3:
-- a Python profile of the eval loop alone names nothing the user wrote.
function M.python_target()
  local cmd = target_command and target_command()
  local exe = cmd and cmd:match("^%s*(%S+)")
  if not exe and (target() or 0) > 0 then
    local f = io.open(("/proc/%d/comm"):format(target()))
    exe = f and f:read("l")
    if f then f:close() end
  end
  return exe ~= nil and exe:match("[^/]*$"):match("^python3[%d.]*$") ~= nil
end

return M
