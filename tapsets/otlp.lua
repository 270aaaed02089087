-- otlp.lua: profiles in the OpenTelemetry protocol (OTLP profiles,
-- development version 1), what the OpenTelemetry Collector's OTLP
-- receiver takes at /v1development/profiles, built from the pprof tables
-- the pprof tapset makes (pprof.build, offcpu's profiles). One request
-- holds one profile per table (CPU time and off-CPU time are two), under
-- one resource (the host, or the process), with one dictionary the
-- profiles share: strings, mappings (with their GNU build ids),
-- functions, locations, stacks and attributes, each once.
-- The work is lua/otlp_pprof.c's (otlp.from_pprof of perfscript.otlp).
--   local otlp = require "otlp"
--   assert(otlp.write("cpu.otlp", { cpu_table, offcpu_table }, { service = "web" }))   -- a file
--   q:push(otlp.post("http://collector:4318", { cpu_table }))   -- the push tapset's queue
-- Each pprof sample label becomes a sample attribute under OpenTelemetry's
-- name: pid -> process.pid, tid -> thread.id, comm -> thread.name,
-- container -> container.id; cgroup keeps its name.
local M = {}

M.PATH = "/v1development/profiles"
M.SCOPE = "perfscript"

local function core()
  local ok, mod = pcall(require, "perfscript.otlp")
  if not ok then error("otlp: needs perfscript's perfscript.otlp module (run under perfscript)", 3) end
  return mod
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

-- The request's resource and scope, in its own shape: host.name (the
-- host's unless given), service.name, and opts.resource's attributes.
local function head(opts)
  local attrs = { ["host.name"] = M.host(), ["service.name"] = opts.service }
  for k, v in pairs(opts.resource or {}) do attrs[k] = v end
  local keys, kv = {}, {}
  for k in pairs(attrs) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do
    local v = attrs[k]
    kv[i] = { key = k, value = math.type(v) == "integer" and { int_value = v } or { string_value = tostring(v) } }
  end
  return { resource = { attributes = kv }, scope = { name = M.SCOPE, version = opts.version } }
end

-- otlp.encode(profiles[, opts]) -> the protobuf bytes of one request, or
-- nil and why: profiles a list of pprof tables (pprof.build, p:pprof(),
-- offcpu's profiles); opts: resource (more resource attributes,
-- { ["process.command_line"] = ... }), service (service.name), version
-- (the scope's), gzip (the bytes gzip-compressed).
function M.encode(profs, opts)
  opts = opts or {}
  local ok, bytes = pcall(core().from_pprof, profs, head(opts), opts.gzip == true)
  if ok then return bytes end
  return nil, tostring(bytes)
end

-- otlp.decode(bytes) -> the request as a table shaped like
-- lua/otlp.proto's messages, or nil and why
function M.decode(bytes) return core().decode(bytes) end

-- otlp.write(dest, profiles[, opts]) -> true, or nil and why: dest a path
-- or a file opened for writing (closed here).
function M.write(dest, profs, opts)
  local bytes, err = M.encode(profs, opts)
  if not bytes then return nil, err end
  return require("pprof").save(dest, bytes, opts and opts.name)
end

-- otlp.post(url, profiles[, opts]) -> { url, body, headers } for the push
-- tapset, or nil and why. A URL without a path gets OTLP/HTTP's,
-- /v1development/profiles. The body is gzip-compressed (Content-Encoding:
-- gzip at zlib's fastest level, which OTLP/HTTP receivers take) unless
-- opts.gzip is false.
function M.post(url, profs, opts)
  local gz = not (opts and opts.gzip == false)
  local o = setmetatable({ gzip = gz }, { __index = opts })
  local bytes, err = M.encode(profs, o)
  if not bytes then return nil, err end
  if not url:match("^%a+://[^/]+/.") then url = url:gsub("/*$", "") .. M.PATH end
  local headers = { ["Content-Type"] = "application/x-protobuf" }
  if gz then headers["Content-Encoding"] = "gzip" end
  return { url = url, body = bytes, headers = headers }
end

return M
