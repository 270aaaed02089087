-- pprof.lua: sampling profiles in pprof's format (profile.proto,
-- gzip-compressed), the format go tool pprof, Grafana Pyroscope and Parca
-- read, and differential profiles against a base read back from one. A
-- profile of the profile tapset that keeps call chains
-- (profile.new{ pprof = true }) counts each distinct chain of raw addresses
-- while the target runs; build() symbolizes every address once, at the end,
-- into pprof's Mappings, Functions and Locations (a backend cannot
-- symbolize a host's binaries later), and the C module perfscript.pprof
-- (protobuf-c, zlib) turns the table into bytes.
--   local p = require("profile").new{ pprof = true }
--   probe("perfmon.sample(prof)", function(s) p:add(s) end)
--   probe("end", function() assert(p:write_pprof("cpu.pb.gz")) end)
local M = {}

local function core()
  local ok, mod = pcall(require, "perfscript.pprof")
  if not ok then error("pprof: needs perfscript's perfscript.pprof module (run under perfscript)", 3) end
  return mod
end

-- Kernel addresses sit in the upper half of the 64-bit address space on
-- the architectures perfscript runs on (x86-64, arm64): negative as Lua
-- integers. A chain mixes both, innermost (leaf) first.
local function is_kernel(addr) return addr < 0 end

-- The event of a counter's spec: "cpu-clock/freq=999,callchain/" -> "cpu-clock".
function M.event_name(spec)
  return (tostring(spec or "samples"):gsub("/.*$", ""))
end

local function is_clock(event)
  local base = event:gsub(":.*$", "")
  return base == "cpu-clock" or base == "task-clock"
end

-- The chain of a sample table, leaf first, zeros (ends of broken frame
-- chains) left out, as sample:packed() gives a live one's: a caller's
-- return address stepped back into its call; the sampled ip alone
-- without a callchain.
local function chain_of(s)
  local c = s.callchain
  if not c or #c == 0 then return { s.ip } end
  local out, n = {}, 0
  for i = 1, #c do
    if c[i] ~= 0 then n = n + 1; out[n] = n > 1 and c[i] - 1 or c[i] end
  end
  if n == 0 then out[1] = s.ip end
  return out
end

-- Count one sample by its chain (and its labels, when the profile keeps
-- them). Called by the profile tapset's p:add. A chain is counted under
-- one string, its labels and addresses packed in binary (a live sample
-- packs its own chain in C, s:packed()): no table per chain, about 150
-- bytes per distinct chain of 8 frames.
function M.capture(p, s)
  local want = p.pprof_labels
  local tid = want.tid and s.tid or -1
  local comm = want.comm and (s.comm or "?") or ""
  local cgroup = want.cgroup and (s.cgroup or "?") or ""
  local container = want.cgroup and s.container or ""
  local chain
  if type(s) == "userdata" then
    chain = s:packed()
  else
    local c = chain_of(s)
    chain = string.pack("=" .. ("j"):rep(#c), table.unpack(c))
  end
  -- the epoch of the process's mappings names the chain's user addresses
  -- as they were mapped at the sample
  local epoch = type(s) == "userdata" and s.epoch or 0
  local key = string.pack("=jjjs1s2s1", s.pid, epoch, tid, comm, cgroup, container) .. chain
  local counts, periods = p.chains, p.periods
  if not counts[key] and p.take and not p:take() then
    key = string.pack("=jjjs1s2s1", 0, 0, -1, "[over the profiles' budget]", "", "") -- no frames
  end
  counts[key] = (counts[key] or 0) + 1
  periods[key] = (periods[key] or 0) + (s.period or 0)
  p.chain_period = p.chain_period + (s.period or 0)
  if not p.event then p.event = s.name end
end

-- A key of M.capture back to pid, tid (or nil), comm (or nil), cgroup and
-- container (or nil), the chain's addresses, leaf first, and the epoch.
local function unpack_key(key)
  local pid, epoch, tid, comm, cgroup, container, at = string.unpack("=jjjs1s2s1", key)
  local chain, n = {}, 0
  for i = at, #key, 8 do
    n = n + 1
    chain[n] = string.unpack("=j", key, i)
  end
  return pid, tid >= 0 and tid or nil, comm ~= "" and comm or nil, cgroup ~= "" and cgroup or nil,
         container ~= "" and container or nil, chain, epoch
end

-- A period term of the spec, or what a frequency means for a clock (ns).
local function period_of(spec, total_n, total_period)
  spec = tostring(spec or "")
  local period = spec:match("[/,]period=(%d+)")
  if period then return math.tointeger(tonumber(period)) end
  local freq = spec:match("[/,]freq=(%d+)")
  if freq and is_clock(M.event_name(spec)) then return math.floor(1e9 / tonumber(freq) + 0.5) end
  return total_n > 0 and math.floor(total_period / total_n + 0.5) or 0
end

-- The symbol side of a profile: Mappings, Functions, Locations. Under
-- perfscript each user address is looked up with perfmon.mapping and
-- perfmon.frames, so a Mapping is one mapped range of a file (its runtime
-- start and limit, file offset and build id), a Location keeps the runtime
-- address with one Line per inlined function, innermost first, and a
-- Function has DWARF's name and the symbol table's (system_name): what
-- Parca and Pyroscope need to symbolize the profile again by build id.
-- Kernel frames, and every frame when opts.symbolize names them instead
-- (pid, addr, kernel -> sym, file [, func]), get a Mapping per file and one
-- Line naming the function.
local Table = {}
Table.__index = Table

local function new_table(resolve, detail)
  return setmetatable({ resolve = resolve, detail = detail, mapping = {}, ["function"] = {},
                        location = {}, maps = {}, funcs = {}, locs = {}, map_samples = {} }, Table)
end

-- The Mapping of a file named by a symbolizer, or of the range m of
-- perfmon.mapping.
function Table:mapping_id(file, kernel, m)
  local key = m and ("%s\0%d\0%d"):format(file, m.start, m.offset) or file
  local id = self.maps[key]
  if id and m and m.has_lines and not self.mapping[id].has_line_numbers then
    -- what the file has, not what its first address had (a PLT stub has
    -- no line, the functions around it do)
    local mp = self.mapping[id]
    mp.has_functions, mp.has_filenames, mp.has_line_numbers, mp.has_inline_frames = true, true, true, true
  end
  if not id then
    id = #self.mapping + 1
    local lines = m and m.has_lines or false
    self.mapping[id] = { id = id, filename = file, kernel = kernel,
                         memory_start = m and m.start, memory_limit = m and m.limit,
                         file_offset = m and m.offset, build_id = m and m.build_id,
                         has_functions = not m or m.has_functions or lines,
                         has_filenames = lines, has_line_numbers = lines, has_inline_frames = lines }
    self.maps[key] = id
  end
  return id
end

function Table:function_id(name, file, system_name)
  system_name = system_name or name
  local key = name .. "\0" .. (file or "") .. "\0" .. system_name
  local id = self.funcs[key]
  if not id then
    id = #self["function"] + 1
    self["function"][id] = { id = id, name = name, system_name = system_name, filename = file }
    self.funcs[key] = id
  end
  return id
end

-- The Lines of a user address of a mapped file: perfmon.frames' frames,
-- the last (the function holding the others) under DWARF's name and the
-- symbol table's.
function Table:lines_of(pid, addr, m, epoch)
  local frames = self.detail.frames(pid, addr, false, epoch)
  local lines = {}
  for i, f in ipairs(frames) do
    local name, system = f.func, nil
    if i == #frames then name, system = m.dwarf_name or f.func, m.symbol end
    lines[i] = { function_id = self:function_id(name, f.file, system), line = f.line }
  end
  return lines
end

-- The Location of one frame. A caller's address is inside its call (a
-- return address stepped back one byte, by sample:packed() or chain_of),
-- so it is symbolized and recorded there, as perf report names it and
-- pprof allows.
function Table:location_id(pid, addr, leaf, epoch)
  if addr == 0 and not leaf then -- sample:packed()'s root of a stack cut short
    local id = self.locs.truncated
    if not id then
      id = #self.location + 1
      self.location[id] = { id = id, mapping_id = self:mapping_id("[unknown]", false), address = 0,
                            line = { { function_id = self:function_id("[truncated]") } } }
      self.locs.truncated = id
    end
    return id
  end
  local kernel = is_kernel(addr)
  local key = kernel and "k:" .. addr or ("%d:%d:%d"):format(pid, epoch or 0, addr)
  local id = self.locs[key]
  if id then return id end
  local m = self.detail and not kernel and self.detail.mapping(pid, addr, epoch)
  -- one Location for an address of one mapping, whatever epochs saw it
  local same = m and ("%d:%d:%s:%d"):format(pid, addr, m.file, m.start)
  id = same and self.locs[same]
  if id then self.locs[key] = id; return id end
  local map, lines
  local py = not m and not kernel and self.detail and self.detail.frames(pid, addr)[1]
  if m and m.file ~= "" then
    map, lines = self:mapping_id(m.file, false, m), self:lines_of(pid, addr, m, epoch)
  elseif py and py.func:match("^py::") then -- a Python frame: its file and line
    map = self:mapping_id("[python]", false)
    lines = { { function_id = self:function_id(py.func, py.file), line = py.line } }
  else
    local sym, file, func = self.resolve(kernel and 0 or pid, addr, kernel, not kernel and epoch or nil)
    file = (file and file ~= "") and file or (kernel and "[kernel.kallsyms]" or "[unknown]")
    -- perfmon.symbolize's third result keeps an unnamed "lib.so+0xOFF" whole
    local name = func or tostring(sym):gsub("%+0x%x+$", "")
    map, lines = self:mapping_id(file, kernel), { { function_id = self:function_id(name) } }
  end
  id = #self.location + 1
  self.location[id] = { id = id, mapping_id = map, address = addr, line = lines }
  self.locs[key] = id
  if same then self.locs[same] = id end
  return id
end

-- Mapping 1 is the main binary for pprof: of the user-space files, an
-- executable before shared libraries, then the one in the most frames;
-- the kernel and unknown files go last. Ids are renumbered.
function Table:order_mappings()
  local order = {}
  for i, m in ipairs(self.mapping) do order[i] = m end
  local function rank(m)
    if m.kernel or m.filename:sub(1, 1) == "[" then return 2 end
    return m.filename:match("%.so[%.%d]*$") and 1 or 0
  end
  table.sort(order, function(a, b)
    local ra, rb = rank(a), rank(b)
    if ra ~= rb then return ra < rb end
    local na, nb = self.map_samples[a.id] or 0, self.map_samples[b.id] or 0
    if na ~= nb then return na > nb end
    return a.filename < b.filename
  end)
  local new = {}
  for i, m in ipairs(order) do new[m.id] = i end
  for i, m in ipairs(order) do m.id = i; m.kernel = nil end
  for _, l in ipairs(self.location) do l.mapping_id = new[l.mapping_id] end
  self.mapping = order
end

local function now_ns()
  if gettimeofday_ns then return gettimeofday_ns() end
  return os.time() * 1000000000
end

-- The profile p as a table shaped like profile.proto's Profile (what
-- perfscript.pprof encodes). opts: event (name of the sampled event),
-- unit (of its values, default "count"), period, comment, symbolize
-- (pid, addr, kernel -> sym, file; default perfmon.symbolize).
local function symbolizer(p, opts)
  local pm, custom = rawget(_G, "perfmon"), opts.symbolize or p.symbolize
  local resolve = custom or (pm and pm.symbolize)
  if not resolve then error("pprof.build: no symbolizer (pass opts.symbolize)", 3) end
  return resolve, not custom and pm and pm.mapping and pm or nil
end

-- Name the chains p counted so far (their Locations, Functions and
-- Mappings), ahead of M.build, which then names only the newer ones: a
-- profile that must be ready soon after its window closes is prepared
-- as it goes (and names short-lived processes while they are there).
function M.prepare(p, opts)
  opts = opts or {}
  if not p.table then
    p.table, p.prepared = new_table(symbolizer(p, opts)), {}
  end
  local t, done, new = p.table, p.prepared, {}
  for k in pairs(p.chains) do
    if not done[k] then new[#new + 1] = k end
  end
  table.sort(new) -- in the same order each run
  for _, k in ipairs(new) do
    done[k] = true
    local pid, _, _, _, _, chain, epoch = unpack_key(k)
    for i, addr in ipairs(chain) do t:location_id(pid, addr, i == 1, epoch) end
  end
end

function M.build(p, opts)
  opts = opts or {}
  local spec = opts.event or p.event or "samples"
  local event = M.event_name(spec)
  local clock = is_clock(event)
  local t = p.table or new_table(symbolizer(p, opts))
  p.table, p.prepared = nil, nil -- a prepared table serves one build
  local out = {
    sample_type = { { type = "samples", unit = "count" },
                    clock and { type = "cpu", unit = "nanoseconds" } or { type = event, unit = opts.unit or "count" } },
    period_type = clock and { type = "cpu", unit = "nanoseconds" } or { type = event, unit = opts.unit or "count" },
    period = opts.period or period_of(spec, p.total, p.chain_period),
    time_nanos = p.started_ns, duration_nanos = now_ns() - (p.started_ns or now_ns()),
    comment = { opts.comment }, sample = {},
  }
  out.default_sample_type = out.sample_type[2].type
  local keys = {}
  for k in pairs(p.chains) do keys[#keys + 1] = k end
  table.sort(keys) -- the same samples give the same bytes
  local want = p.pprof_labels
  for _, k in ipairs(keys) do
    local n, pid, tid, comm, cgroup, container, chain, epoch = p.chains[k], unpack_key(k)
    local ids = {}
    for i, addr in ipairs(chain) do
      ids[i] = t:location_id(pid, addr, i == 1, epoch)
      local m = t.location[ids[i]].mapping_id
      t.map_samples[m] = (t.map_samples[m] or 0) + n
    end
    local labels = {}
    if want.pid then labels[#labels + 1] = { key = "pid", num = pid, num_unit = "pid" } end
    if tid then labels[#labels + 1] = { key = "tid", num = tid, num_unit = "tid" } end
    if comm then labels[#labels + 1] = { key = "comm", str = comm } end
    if cgroup then labels[#labels + 1] = { key = "cgroup", str = cgroup } end
    if container then labels[#labels + 1] = { key = "container", str = container } end
    out.sample[#out.sample + 1] = { location_id = ids, value = { n, p.periods[k] }, label = labels }
  end
  t:order_mappings()
  out.mapping, out.location, out["function"] = t.mapping, t.location, t["function"]
  return out
end

-- A profile from folded stacks, as an aggregate's read() gives them
-- ("root;...;leaf" of names the kernel and the symbolizer already made):
-- rows = { {stack =, value = [, labels = {...}]}, ... }. One Function and
-- one Location per distinct name (no addresses, no mappings: nothing is
-- left to symbolize). opts: type and unit of the one sample type
-- ("off-cpu", "nanoseconds"), comment.
function M.from_folded(rows, opts)
  local st = { type = opts.type, unit = opts.unit or "count" }
  local out = { sample_type = { st }, period_type = st, period = 1, default_sample_type = st.type,
                comment = { opts.comment }, sample = {}, location = {}, ["function"] = {},
                time_nanos = opts.time_nanos, duration_nanos = opts.duration_nanos }
  local id_of = {}
  for _, r in ipairs(rows) do
    local frames, ids = {}, {}
    for name in r.stack:gmatch("[^;]+") do frames[#frames + 1] = name end
    for i = #frames, 1, -1 do -- leaf first
      local name = frames[i]
      local id = id_of[name]
      if not id then
        id = #out.location + 1
        id_of[name] = id
        out["function"][id] = { id = id, name = name }
        out.location[id] = { id = id, line = { { function_id = id } } }
      end
      ids[#ids + 1] = id
    end
    out.sample[#out.sample + 1] = { location_id = ids, value = { r.value }, label = r.labels or {} }
  end
  return out
end

-- pprof.encode(t) -> gzip profile.proto bytes of a table from build,
-- diff or from_folded, or nil and why
function M.encode(t)
  local ok, bytes = pcall(core().encode, t)
  if ok then return bytes end
  return nil, tostring(bytes)
end

-- Write bytes to dest, a path or a file opened for writing (closed here):
-- true, or nil and a message naming the file. A failed flush at close (a
-- full disk, /dev/full) is an error like a failed write.
function M.save(dest, bytes, name)
  local f = dest
  if io.type(dest) ~= "file" then
    local err
    name = name or dest
    f, err = io.open(dest, "wb")
    if not f then return nil, err end
  end
  local ok, werr = f:write(bytes)
  local closed, cerr = f:close()
  if not ok or not closed then return nil, ("%s: %s"):format(name or "output", werr or cerr) end
  return true
end

-- Write a profile table (or a profile of the tapset, built with opts) to
-- path (or an open file), gzip-compressed. true, or nil and a message.
function M.write(prof, path, opts)
  if not prof.sample_type then prof = M.build(prof, opts) end
  return M.save(path, core().encode(prof), opts and opts.name)
end

local MAX_BYTES = 64 * 1024 * 1024

-- Read a pprof profile (gzip-compressed or not) of at most max_bytes (64
-- MiB), compressed or inflated: its table, or nil and a message.
function M.read(path, max_bytes)
  max_bytes = max_bytes or MAX_BYTES
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local size = f:seek("end")
  if size and size > max_bytes then
    f:close()
    return nil, ("%s: larger than %d MiB"):format(path, max_bytes // (1024 * 1024))
  end
  f:seek("set")
  local bytes, rerr = f:read(max_bytes + 1)
  f:close()
  if not bytes then return nil, ("%s: %s"):format(path, rerr or "empty file") end
  local t, derr = core().decode(bytes, max_bytes)
  if not t then return nil, ("%s: %s"):format(path, derr) end
  return t
end

local function types_text(t)
  local out = {}
  for i, st in ipairs(t.sample_type) do out[i] = st.type .. "/" .. st.unit end
  return table.concat(out, ",")
end

-- A differential profile, as go tool pprof -diff_base builds one: the
-- base's samples negated and labelled pprof::base=true, merged into the
-- profile. pprof then reports the change and takes percentages of the
-- base. Raises when the sample types differ.
function M.diff(new, base)
  if types_text(new) ~= types_text(base) then
    error(("pprof.diff: the base profile has samples of %s, this one %s"):format(
      types_text(base), types_text(new)), 2)
  end
  local out = {}
  for k, v in pairs(new) do out[k] = v end
  local nm, nf, nl = #new.mapping, #new["function"], #new.location
  out.mapping, out["function"], out.location, out.sample = {}, {}, {}, {}
  local function append(list, src, fix)
    for _, x in ipairs(src) do
      local c = {}
      for k, v in pairs(x) do c[k] = v end
      if fix then fix(c) end
      list[#list + 1] = c
    end
  end
  append(out.mapping, new.mapping)
  append(out.mapping, base.mapping, function(m) m.id = m.id + nm end)
  append(out["function"], new["function"])
  append(out["function"], base["function"], function(f) f.id = f.id + nf end)
  append(out.location, new.location)
  append(out.location, base.location, function(l)
    l.id = l.id + nl
    if l.mapping_id ~= 0 then l.mapping_id = l.mapping_id + nm end
    local lines = {}
    for i, ln in ipairs(l.line or {}) do lines[i] = { function_id = ln.function_id + nf, line = ln.line } end
    l.line = lines
  end)
  append(out.sample, new.sample)
  append(out.sample, base.sample, function(s)
    local ids, vals, labels = {}, {}, { { key = "pprof::base", str = "true" } }
    for i, id in ipairs(s.location_id) do ids[i] = id + nl end
    for i, v in ipairs(s.value) do vals[i] = -v end
    for _, l in ipairs(s.label or {}) do labels[#labels + 1] = l end
    s.location_id, s.value, s.label = ids, vals, labels
  end)
  return out
end

-- Folded stacks of a profile table: { ["root;...;leaf"] = samples }. Inline
-- frames unfold into their callers; a sample with a comm label starts with
-- it, as the profile tapset's folded stacks do.
function M.folded(t, value)
  local funcs, locs, out = {}, {}, {}
  for _, f in ipairs(t["function"]) do funcs[f.id] = f.name or "?" end
  for _, l in ipairs(t.location) do
    local names = {}
    for i = #(l.line or {}), 1, -1 do names[#names + 1] = funcs[l.line[i].function_id] or "?" end
    if #names == 0 then names[1] = ("0x%x"):format(l.address or 0) end
    locs[l.id] = table.concat(names, ";")
  end
  for _, s in ipairs(t.sample) do
    local frames = {}
    for _, l in ipairs(s.label or {}) do
      if l.key == "comm" and l.str then frames[1] = l.str end
    end
    for i = #s.location_id, 1, -1 do frames[#frames + 1] = locs[s.location_id[i]] or "?" end
    local k = table.concat(frames, ";")
    out[k] = (out[k] or 0) + s.value[value or 1]
  end
  return out
end

-- Two-count folded lines, "stack base new", sorted: the input of
-- FlameGraph's difffolded.pl output format, for flamegraph.pl.
function M.diff_folded(new, base)
  local a, b, keys = M.folded(base), M.folded(new), {}
  for k in pairs(a) do keys[#keys + 1] = k end
  for k in pairs(b) do if not a[k] then keys[#keys + 1] = k end end
  table.sort(keys)
  local out = {}
  for i, k in ipairs(keys) do out[i] = ("%s %d %d\n"):format(k, a[k] or 0, b[k] or 0) end
  return table.concat(out)
end

-- Samples per leaf function of a profile table: { [name] = samples }.
function M.flat(t, value)
  local funcs, leaf, out = {}, {}, {}
  for _, f in ipairs(t["function"]) do funcs[f.id] = f.name or "?" end
  for _, l in ipairs(t.location) do leaf[l.id] = l.line and l.line[1] and funcs[l.line[1].function_id] end
  for _, s in ipairs(t.sample) do
    local name = leaf[s.location_id[1]] or "?"
    out[name] = (out[name] or 0) + s.value[value or 1]
  end
  return out
end

-- The samples of a profile table (sum of its first value).
function M.flat_total(t, value)
  local n = 0
  for _, s in ipairs(t.sample) do n = n + s.value[value or 1] end
  return n
end

-- The functions whose leaf samples changed most between base and new:
-- rows {name, base, new, delta}, largest change first (ties by name).
function M.changes(new, base, n)
  local a, b, rows = M.flat(base), M.flat(new), {}
  for k, v in pairs(b) do rows[#rows + 1] = { name = k, base = a[k] or 0, new = v } end
  for k, v in pairs(a) do if not b[k] then rows[#rows + 1] = { name = k, base = v, new = 0 } end end
  for _, r in ipairs(rows) do r.delta = r.new - r.base end
  table.sort(rows, function(x, y)
    if math.abs(x.delta) ~= math.abs(y.delta) then return math.abs(x.delta) > math.abs(y.delta) end
    return x.name < y.name
  end)
  for i = #rows, (n or #rows) + 1, -1 do rows[i] = nil end
  return rows
end

return M
