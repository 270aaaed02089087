-- ffi_decls.lua: checks that the LuaJIT binding's C declarations are the
-- header's. The binding cannot include bindings/perfscript.h (LuaJIT's
-- cdef reads no preprocessor), so its declarations are copies; this makes
-- a copy that drifts from the header fail the build's tests:
--   * every ps_ function the binding declares is declared in the header
--     with the same text (comments, line breaks and spacing aside);
--   * every ps_ struct has the size and field offsets the C compiler gives
--     the header's, and every enum constant the same value (a C program is
--     compiled from the header to say them).
-- Prints one line per difference and exits 1 if any, else "ffi: ok (N
-- functions, M structs, K constants)".
--   luajit tests/ffi_decls.lua BINDING.lua HEADER.h [CC]
local ffi = require "ffi"
local binding, header, cc = arg[1], arg[2], arg[3] or os.getenv("CC") or "cc"
if not header:find("^/") then header = os.getenv("PWD") .. "/" .. header end

local function slurp(path)
  local f = assert(io.open(path))
  local s = f:read("*a")
  f:close()
  return s
end

-- C text without comments and preprocessor lines, spacing made canonical.
local function normalize(c)
  c = c:gsub("/%*.-%*/", " "):gsub("//[^\n]*", " ")
  c = c:gsub("\n%s*#[^\n]*", "\n")
  c = c:gsub("%s+", " ")
  c = c:gsub(" ?([%(%)%[%]{},;%*=]) ?", "%1")
  return (c:gsub('extern "C"{', ""))
end

-- Top-level declarations (split at ';' outside braces).
local function statements(c)
  local out, depth, start = {}, 0, 1
  for i = 1, #c do
    local ch = c:sub(i, i)
    if ch == "{" then depth = depth + 1
    elseif ch == "}" then depth = depth - 1
    elseif ch == ";" and depth == 0 then
      out[#out + 1] = c:sub(start, i):gsub("^%s+", "")
      start = i + 1
    end
  end
  return out
end

-- name -> declaration of every ps_ function prototype.
local function prototypes(c)
  local out = {}
  for _, st in ipairs(statements(c)) do
    if not st:find("^typedef") and not st:find("{") then
      local name = st:match("(ps_[%w_]+)%(")
      if name then out[name] = st end
    end
  end
  return out
end

local cdef = slurp(binding):match("ffi%.cdef%s*%[%[(.-)%]%]")
if not cdef then
  print("ffi: no ffi.cdef [[...]] block in " .. binding)
  os.exit(1)
end
local bad, nfn = 0, 0
local function say(fmt, ...)
  print(("ffi: " .. fmt):format(...))
  bad = bad + 1
end

local mine, theirs = prototypes(normalize(cdef)), prototypes(normalize(slurp(header)))
for name, decl in pairs(mine) do
  nfn = nfn + 1
  if not theirs[name] then
    say("%s is declared in %s but not in %s", name, binding, header)
  elseif theirs[name] ~= decl then
    say("%s differs:\n  binding: %s\n  header:  %s", name, decl, theirs[name])
  end
end

-- Layouts: the binding's view through LuaJIT, the header's through cc.
ffi.cdef(cdef)
local checks, lines = {}, {}
for tag, body in normalize(cdef):gmatch("struct (ps_[%w_]+){(.-)};") do
  checks[#checks + 1] = { kind = "size", struct = tag }
  for field in body:gmatch("[^;]+") do
    -- "uint64_t value,raw", "char token[64]", "char*const*argv": each
    -- declarator's name is its last identifier
    for decl in field:gsub("%[[^%]]*%]", ""):gmatch("[^,]+") do
      checks[#checks + 1] = { kind = "offset", struct = tag, field = decl:match("([%w_]+)$") }
    end
  end
end
for tag, body in normalize(cdef):gmatch("enum (ps_[%w_]+){(.-)}") do
  for name in body:gmatch("([%u_][%u%d_]+)") do
    checks[#checks + 1] = { kind = "enum", enum = tag, name = name }
  end
end
for _, c in ipairs(checks) do
  if c.kind == "size" then
    lines[#lines + 1] = ('printf("%%zu\\n", sizeof(struct %s));'):format(c.struct)
  elseif c.kind == "offset" then
    lines[#lines + 1] = ('printf("%%zu\\n", offsetof(struct %s, %s));'):format(c.struct, c.field)
  else
    lines[#lines + 1] = ('printf("%%lld\\n", (long long)%s);'):format(c.name)
  end
end
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p " .. dir) == 0 or true)
local src = io.open(dir .. "/layout.c", "w")
src:write('#include <stddef.h>\n#include <stdio.h>\n#include "', header, '"\nint main(void)\n{\n',
          table.concat(lines, "\n"), "\nreturn 0;\n}\n")
src:close()
local built = os.execute(("%s -std=c11 -D_GNU_SOURCE -o %s/layout %s/layout.c 2>%s/cc.err"):format(cc, dir, dir, dir))
local out = (built == 0 or built == true) and io.popen(dir .. "/layout"):read("*a")
if not out then
  say("cannot compile the layout check: %s", slurp(dir .. "/cc.err"))
else
  local i, nstruct, nconst = 0, 0, 0
  for v in out:gmatch("[^\n]+") do
    i = i + 1
    local c, want = checks[i], tonumber(v)
    local got
    if c.kind == "size" then
      got, nstruct = ffi.sizeof("struct " .. c.struct), nstruct + 1
    elseif c.kind == "offset" then
      got = ffi.offsetof("struct " .. c.struct, c.field)
    else
      got, nconst = tonumber(ffi.new("enum " .. c.enum, c.name)), nconst + 1
    end
    if got ~= want then
      local what = c.kind == "size" and ("sizeof(struct %s)"):format(c.struct)
                   or c.kind == "offset" and ("offsetof(struct %s, %s)"):format(c.struct, c.field)
                   or c.name
      say("%s is %s in the binding, %s in the header", what, tostring(got), tostring(want))
    end
  end
  if bad == 0 then print(("ffi: ok (%d functions, %d structs, %d constants)"):format(nfn, nstruct, nconst)) end
end
os.execute("rm -rf " .. dir)
os.exit(bad == 0 and 0 or 1)
