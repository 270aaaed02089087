-- otlp.lua: profiles in the OpenTelemetry protocol (OTLP profiles,
-- development version 1), what the OpenTelemetry Collector's OTLP
-- receiver takes at /v1development/profiles, built from the pprof tables
-- the pprof tapset makes (pprof.build, offcpu's profiles). One request
-- holds one profile per table (CPU time and off-CPU time are two), under
-- one resource (the host, or the process), with one dictionary the
-- profiles share: strings, mappings (with their GNU build ids),
-- functions, locations, stacks and attributes, each once.
--   local otlp = require "otlp"
--   local req = otlp.request({ cpu_table, offcpu_table }, { resource = { ["host.name"] = "web1" } })
--   assert(otlp.write("cpu.otlp", req))                   -- a file
--   q:push(otlp.post("http://collector:4318", req))       -- the push tapset's queue
-- Each pprof sample label becomes a sample attribute under OpenTelemetry's
-- name: pid -> process.pid, tid -> thread.id, comm -> thread.name,
-- container -> container.id; cgroup keeps its name.
local M = {}

M.PATH = "/v1development/profiles"
M.SCOPE = "perfscript"

local LABEL_KEYS = { pid = "process.pid", tid = "thread.id", comm = "thread.name", container = "container.id" }

local function core()
  local ok, mod = pcall(require, "perfscript.otlp")
  if not ok then error("otlp: needs perfscript's perfscript.otlp module (run under perfscript)", 3) end
  return mod
end

local Dict = {}
Dict.__index = Dict

-- Every table of the dictionary starts with its zero value (index 0).
local function new_dict()
  local d = setmetatable({ t = { string_table = { "" }, mapping_table = { {} }, location_table = { {} },
                                 function_table = { {} }, stack_table = { {} }, attribute_table = { {} } },
                           index = { s = { [""] = 0 }, a = {}, f = {}, st = {} } }, Dict)
  return d
end

-- Append v to the dictionary's list name, deduplicated by key: its index.
function Dict:add(name, kind, key, v)
  local idx = self.index[kind]
  local i = idx[key]
  if i then return i end
  local list = self.t[name]
  i = #list -- indices count from 0
  list[i + 1] = v
  idx[key] = i
  return i
end

function Dict:str(s)
  if s == nil then return 0 end
  s = tostring(s)
  return self:add("string_table", "s", s, s)
end

-- An attribute: a string, an integer or a boolean, with an optional unit.
function Dict:attr(key, v, unit)
  local kind = math.type(v) == "integer" and "int_value" or type(v) == "boolean" and "bool_value"
               or "string_value"
  if kind == "string_value" then v = tostring(v) end
  return self:add("attribute_table", "a", ("%s\0%s\0%s\0%s"):format(key, kind, tostring(v), unit or ""),
                  { key_strindex = self:str(key), value = { [kind] = v }, unit_strindex = self:str(unit) })
end

function Dict:func(f)
  local key = ("%s\0%s\0%s\0%d"):format(f.name or "", f.system_name or "", f.filename or "", f.start_line or 0)
  return self:add("function_table", "f", key, { name_strindex = self:str(f.name),
    system_name_strindex = self:str(f.system_name), filename_strindex = self:str(f.filename),
    start_line = f.start_line })
end

function Dict:stack(locs)
  return self:add("stack_table", "st", table.concat(locs, ","), { location_indices = locs })
end

-- The pprof table's mappings, functions and locations into the
-- dictionary: location id -> its index.
function Dict:import(prof)
  local maps, funcs, locs = {}, {}, {}
  for _, m in ipairs(prof.mapping or {}) do
    local attrs = {}
    if m.build_id and m.build_id ~= "" then
      attrs[1] = self:attr("process.executable.build_id.gnu", m.build_id)
    end
    local list = self.t.mapping_table
    list[#list + 1] = { memory_start = m.memory_start, memory_limit = m.memory_limit, file_offset = m.file_offset,
                        filename_strindex = self:str(m.filename), attribute_indices = attrs }
    maps[m.id] = #list - 1
  end
  for _, f in ipairs(prof["function"] or {}) do funcs[f.id] = self:func(f) end
  for _, l in ipairs(prof.location or {}) do
    local lines = {}
    for i, ln in ipairs(l.line or {}) do
      lines[i] = { function_index = funcs[ln.function_id] or 0, line = ln.line }
    end
    local list = self.t.location_table
    list[#list + 1] = { mapping_index = maps[l.mapping_id] or 0, address = l.address, lines = lines }
    locs[l.id] = #list - 1
  end
  return locs
end

-- The location ids of a pprof sample: a list, or a packed string of ids.
local function ids_of(s)
  local ids = s.location_id or {}
  if type(ids) ~= "string" then return ids end
  local out, pos = {}, 1
  while pos <= #ids do out[#out + 1], pos = string.unpack("j", ids, pos) end
  return out
end

local function column(prof)
  local want = prof.default_sample_type
  for i, st in ipairs(prof.sample_type or {}) do
    if st.type == want then return i, st end
  end
  return #prof.sample_type, prof.sample_type[#prof.sample_type]
end

-- A profile's 16-byte id: its start and 64 random bits (Lua seeds its
-- generator randomly at start-up).
local function profile_id(t)
  return string.pack("<i8i8", t or 0, math.random(math.mininteger, math.maxinteger))
end

-- One OTLP Profile of a pprof table, of its default sample type.
function Dict:profile(prof)
  local locs = self:import(prof)
  local col, st = column(prof)
  local samples = {}
  for _, s in ipairs(prof.sample or {}) do
    local stack = {}
    for i, id in ipairs(ids_of(s)) do stack[i] = locs[id] end
    local attrs = {}
    for _, l in ipairs(s.label or {}) do
      local v = l.str or l.num
      if v ~= nil then attrs[#attrs + 1] = self:attr(LABEL_KEYS[l.key] or l.key, v) end
    end
    samples[#samples + 1] = { stack_index = self:stack(stack), values = { s.value[col] },
                              attribute_indices = attrs }
  end
  local attrs = {}
  for _, c in ipairs(prof.comment or {}) do attrs[#attrs + 1] = self:attr("pprof.profile.comment", c) end
  local pt = prof.period_type or st
  return { sample_type = { type_strindex = self:str(st.type), unit_strindex = self:str(st.unit) },
           period_type = { type_strindex = self:str(pt.type), unit_strindex = self:str(pt.unit) },
           period = prof.period, time_unix_nano = prof.time_nanos, duration_nano = prof.duration_nanos,
           profile_id = profile_id(prof.time_nanos), samples = samples, attribute_indices = attrs }
end

local function key_values(t)
  local keys, out = {}, {}
  for k in pairs(t or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do
    local v = t[k]
    local kind = math.type(v) == "integer" and "int_value" or "string_value"
    out[i] = { key = k, value = { [kind] = kind == "string_value" and tostring(v) or v } }
  end
  return out
end

-- The host's name (the kernel's), read once.
local host
function M.host()
  if not host then
    local f = io.open("/proc/sys/kernel/hostname")
    host = f and f:read("l") or "localhost"
    if f then f:close() end
  end
  return host
end

-- otlp.request(profiles, opts) -> an ExportProfilesServiceRequest table:
-- profiles a list of pprof tables (pprof.build, offcpu's profile); opts:
-- resource (attributes: { ["process.command_line"] = ..., ... }; host.name
-- is the host's unless given), service (service.name), version (the
-- scope's).
function M.request(profs, opts)
  opts = opts or {}
  local d = new_dict()
  local out = {}
  for i, prof in ipairs(profs) do out[i] = d:profile(prof) end
  local resource = { ["host.name"] = M.host(), ["service.name"] = opts.service }
  for k, v in pairs(opts.resource or {}) do resource[k] = v end
  return { dictionary = d.t, resource_profiles = { {
    resource = { attributes = key_values(resource) },
    scope_profiles = { { scope = { name = M.SCOPE, version = opts.version }, profiles = out } } } } }
end

-- otlp.encode(request) -> protobuf bytes, or nil and why
function M.encode(req)
  local ok, bytes = pcall(core().encode, req)
  if ok then return bytes end
  return nil, tostring(bytes)
end

-- otlp.decode(bytes) -> the request's table, or nil and why
function M.decode(bytes) return core().decode(bytes) end

-- otlp.write(dest, request) -> true, or nil and why: dest a path or a file
-- opened for writing (closed here).
function M.write(dest, req, name)
  local bytes, err = M.encode(req)
  if not bytes then return nil, err end
  return require("pprof").save(dest, bytes, name)
end

-- otlp.post(url, request [, why]) -> { url, body, headers } for the push
-- tapset, or nil and why (request nil: one that could not be made, and
-- why). A URL without a path gets OTLP/HTTP's, /v1development/profiles.
function M.post(url, req, why)
  if not req then return nil, why or "no request" end
  local bytes, err = M.encode(req)
  if not bytes then return nil, err end
  if not url:match("^%a+://[^/]+/.") then url = url:gsub("/*$", "") .. M.PATH end
  return { url = url, body = bytes, headers = { ["Content-Type"] = "application/x-protobuf" } }
end

return M
