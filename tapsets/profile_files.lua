-- profile_files.lua: a profile's files, and continuous profiles. The files
-- (folded stacks, pprof, a flame graph SVG: any of them) are opened at
-- once, as perf record opens -o: a path that cannot be written fails in
-- milliseconds, not after the run. Continuous (every = SECS, as perf
-- record --switch-output=time): a new profile each window, its files
-- named by the window's start (FILE.YYYYMMDDHHMMSSCC), memory that of one
-- window however long it runs.
--   local files = assert(require("profile_files").open{ pprof = "cpu.pb.gz", svg = "cpu.svg" })
--   probe("end", function() assert(files:write(p)) end)
local M = {}

local KINDS = { "pprof", "folded", "svg", "otlp" }

local Files = {}
Files.__index = Files

-- The suffix of a window's files: its start, to the hundredth of a second.
local function suffix()
  local ns = gettimeofday_ns()
  return os.date(".%Y%m%d%H%M%S", ns // 1000000000) .. ("%02d"):format(ns // 10000000 % 100)
end

-- profile_files.open{ folded, pprof, svg, otlp (paths), every (seconds,
-- for continuous), title (of the flame graph: fn(p) -> text), comment
-- (the pprof's), base_name (the base's file, in a differential graph's
-- title), resource (the OTLP file's resource attributes), who (the
-- script's name, for what it says) } -> files, or nil and why.
function M.open(o)
  local self = setmetatable({ o = o, who = o.who or "profile", files = {}, names = {} }, Files)
  local ok, err = self:reopen()
  if not ok then return nil, err end
  return self
end

-- Open the next window's files: true, or nil and why.
function Files:reopen()
  local sfx = self.o.every and suffix() or ""
  for _, k in ipairs(KINDS) do
    if self.o[k] then
      local name = self.o[k] .. sfx
      local f, err = io.open(name, "wb")
      self.files[k], self.names[k] = f, name
      if not f then return nil, ("--%s %s"):format(k, err) end
    end
  end
  return true
end

-- The first file's name, for what is said about a window.
function Files:name() return self.names.pprof or self.names.folded or self.names.svg or self.names.otlp end

-- Write profile p to the files (closed here): true, or nil and why. With a
-- base (a pprof table: pprof.read), the differential forms: pprof's
-- (go tool pprof -diff_base), "stack base new" lines, a red/blue graph.
-- t: p's pprof table when the caller built it already (p:pprof).
function Files:write(p, base, t)
  local pprof, flame = require "pprof", require "flame"
  t = t or (self.o.pprof or self.o.otlp or base) and p:pprof { comment = self.o.comment }
  local out, why = {}, nil
  if base then
    out.folded = pprof.diff_folded(t, base)
    if self.o.pprof then out.pprof, why = pprof.encode(pprof.diff(t, base)) end
    out.svg = self.o.svg and flame.svg(out.folded, { title = ("%d samples against %d of %s: red grew, blue shrank")
                                                           :format(p.total, pprof.flat_total(base), self.o.base_name) })
  else
    if self.o.pprof then out.pprof, why = pprof.encode(t) end
    out.folded = (self.o.folded or self.o.svg) and p:folded()
    out.svg = self.o.svg and flame.svg(out.folded, { title = self.o.title and self.o.title(p) })
  end
  if self.o.otlp then -- the profile itself, also against a base
    local otlp = require "otlp"
    local err
    out.otlp, err = otlp.encode({ t }, { resource = self.o.resource })
    why = why or err
  end
  for _, k in ipairs(KINDS) do
    if self.o[k] then
      if not self.files[k] then return nil, ("%s: not opened"):format(self.names[k]) end
      if not out[k] then return nil, ("%s: %s"):format(self.names[k], why) end
      local ok, err = pprof.save(self.files[k], out[k], self.names[k])
      self.files[k] = nil
      if not ok then return nil, err end
    end
  end
  return true
end

-- Drop the window's files (one could not be written): closed and removed.
function Files:drop()
  for _, k in ipairs(KINDS) do
    if self.o[k] then
      if self.files[k] then pcall(self.files[k].close, self.files[k]) end
      self.files[k] = nil
      os.remove(self.names[k])
    end
  end
end

local Run = {}
Run.__index = Run

-- profile_files.continuous(files, new) -> run: run.p is the window's
-- profile (new() makes each), written to files every files' every
-- seconds. A window that cannot be written (a full disk) is said, its
-- files removed and counted, and the run goes on: the next may find room.
-- Each second the window's samples are named as they come, as the agent
-- names them: a process that exited is needed for a second, not until
-- its window closes (the symbolizer's budget decides how many it keeps).
-- Between windows the last one's tables go, and the heap they took goes
-- back to the system.
function M.continuous(files, new)
  local run = setmetatable({ files = files, p = new(), windows = 0, lost = 0 }, Run)
  probe("timer.s(1)", function()
    run.p:settle()
    if files.o.pprof or files.o.otlp then require("pprof").prepare(run.p) end
  end)
  probe(("timer.ms(%d)"):format(math.floor(files.o.every * 1000 + 0.5)), function()
    perfmon.drain() -- the window's last samples, still in the rings
    run:write()
    run.p = new()
    perfmon.trim()
    local ok, err = files:reopen()
    if not ok then io.stderr:write(("%s: cannot open %s\n"):format(files.who, err:gsub("^%-%-%a+ ", ""))) end
  end)
  return run
end

-- Write the window's files; a failure is said and counted.
function Run:write()
  self.windows = self.windows + 1
  local ok, why = self.files:write(self.p)
  if ok then
    io.stderr:write(("%s: %d samples in %s\n"):format(self.files.who, self.p.total, self.files:name()))
    return true
  end
  self.lost = self.lost + 1
  self.files:drop()
  io.stderr:write(("%s: cannot write %s: its %d samples are lost (%d of %d windows so far)\n")
                  :format(self.files.who, why, self.p.total, self.lost, self.windows))
end

-- At the end: the last window's files. true, or nil when windows were
-- lost (said).
function Run:finish()
  self:write()
  if self.lost == 0 then return true end
  io.stderr:write(("%s: %d of %d windows could not be written\n"):format(self.files.who, self.lost, self.windows))
  return nil
end

return M
