-- pprof_http.lua: profiles served over HTTP as Go's net/http/pprof serves
-- them: a request for /debug/pprof/profile?seconds=N is owed a gzip pprof
-- of the next N seconds (a whole number, default 30), sampled from the
-- request on and sent when its seconds are up; a client that hangs up
-- first stops its profile, as Go's handler does. Samples go only to the
-- profiles being asked for (and to windows a script opens, e.g. to push
-- them): between them nothing is kept. Their stacks are named as they
-- come, once a second, so that little is left to do when one is due.
--   local served = require("pprof_http").new{ event = spec, labels = { "pid", "comm" } }
--   probe(sampler, function(s) served:add(s) end)
--   http.listen(addr, function(req)
--     if req.path == "/debug/pprof/profile" then return served:profile(req) end
--   end)
local M = {}

local profile, pprof = require "profile", require "pprof"

local Served = {}
Served.__index = Served

-- pprof_http.new{ event, labels, max_seconds (default 300), budget_mib
-- (default 64: what the requests' profiles hold in all; past it their new
-- stacks count as over budget), comment } -> served
function M.new(opts)
  local self = setmetatable({ event = opts.event, labels = opts.labels, comment = opts.comment,
                              max_seconds = opts.max_seconds or 300, open = {},
                              -- distinct stacks and addresses, about 320 bytes each, named
                              budget = { left = math.floor((opts.budget_mib or 64) * 1048576 / 320) },
                              served = 0, refused = 0, gone = 0, owing = 0 }, Served)
  probe("timer.s(1)", function()
    for p in pairs(self.open) do pprof.prepare(p) end
  end)
  return self
end

-- Count a sample in every profile being taken.
function Served:add(s)
  for p in pairs(self.open) do p:add(s) end
end

-- served:window([budget]) -> a profile fed by add() until served:close(p).
function Served:window(budget)
  local p = profile.new { pprof = true, labels = self.labels, budget = budget }
  self.open[p] = true
  return p
end

-- served:close(p) -> p's gzip pprof bytes, or nil and why; p is emptied.
-- The rings are drained first: p's last samples may wait there.
function Served:close(p)
  return self:built(p, pprof.encode)
end

-- served:table(p) -> p's pprof table (pprof.build), or nil and why; p is emptied.
function Served:table(p)
  return self:built(p, function(t) return t end)
end

-- Close p and make something of its pprof table: make(t) -> bytes, or nil
-- and why. Its tables go then; the heap they took goes back to the system
-- once the reply is sent (Served:owe, perfmon.trim), so that what a
-- request held does not stay resident.
function Served:built(p, make)
  perfmon.drain()
  self.open[p] = nil
  local ok, bytes, why = pcall(function()
    return make(pprof.build(p, { event = self.event, comment = self.comment }))
  end)
  p:release()
  if not ok then return nil, tostring(bytes) end
  return bytes, why
end

-- The profiles' families on an openmetrics registry: PREFIX_profiles
-- {result = served, refused, gone} and PREFIX_profiles_in_progress.
function Served:families(reg, prefix)
  prefix = prefix or "perfscript_agent"
  reg:family(prefix .. "_profiles", "counter",
             "Profiles requested over HTTP: served, refused (a bad seconds, too many at once), "
             .. "or stopped when their client hung up (gone).",
             function()
               return { { labels = { result = "served" }, value = self.served },
                        { labels = { result = "refused" }, value = self.refused },
                        { labels = { result = "gone" }, value = self.gone } }
             end)
  reg:family(prefix .. "_profiles_in_progress", "gauge",
             "Profiles being taken now, each owed to a request when its seconds are up.",
             function()
               return { { value = self.owing } }
             end)
end

-- Owe req what is gathered over its ?seconds (default o.default): o.start()
-- begins it and returns its state; when the seconds are up o.finish(state,
-- secs) makes the reply (bytes, or nil and why: a 500), sent as o.ctype; a
-- client that hangs up first has o.stop(state) called instead. Returns
-- what a handler returns: nothing (the reply is deferred), or the body,
-- nil and 400 (a bad seconds) or 503 (too many requests at once).
function Served:owe(req, o)
  local arg = req.args.seconds or o.default or "30"
  local secs = arg:match("^%d+$") and tonumber(arg)
  if not secs or secs < 1 or secs > self.max_seconds then
    self.refused = self.refused + 1
    return ("seconds must be a whole number from 1 to %d\n"):format(self.max_seconds), nil, 400
  end
  local state, gone
  local ok, reply = pcall(req.defer, req, function()
    gone = true
    self.gone, self.owing = self.gone + 1, self.owing - 1
    o.stop(state) -- its memory goes now, not when its seconds are up
  end)
  if not ok then
    self.refused = self.refused + 1
    return "too many profiles are being taken at once: retry later\n", nil, 503
  end
  state, self.owing = o.start(), self.owing + 1
  perfmon.after(secs * 1000, function()
    if gone then return end
    self.owing = self.owing - 1
    local bytes, why = o.finish(state, secs)
    if bytes then
      reply:send(bytes, o.ctype)
      self.served = self.served + 1
    else
      reply:send("cannot build the profile: " .. why .. "\n", nil, 500)
    end
    perfmon.trim() -- what building it took goes back, after the reply
  end)
end

-- A request's profile of the samples of its seconds, built by build(p,
-- secs) -> bytes or nil and why, sent as ctype.
function Served:sampled(req, default, ctype, build)
  return self:owe(req, { default = default, ctype = ctype,
    start = function() return self:window(self.budget) end,
    stop = function(p) self.open[p] = nil; p:release() end,
    finish = build })
end

-- /debug/pprof/profile?seconds=N: a gzip pprof of the next N seconds.
function Served:profile(req)
  return self:sampled(req, "30", "application/octet-stream", function(p) return self:close(p) end)
end

-- A page of the next ?seconds (default 5): its flame graph and top
-- functions (flame.page). opts: name (of what is profiled: the title,
-- "perfscript: NAME", and the heading, "NAME: the last N s"), links
-- ({ {href, text}, ... } after one to the same page again).
function Served:page(req, opts)
  return self:sampled(req, "5", "text/html; charset=utf-8", function(p, secs)
    local links = { { ("%s?seconds=%d"):format(req.path, secs), "again" } }
    for _, l in ipairs(opts.links or {}) do links[#links + 1] = l end
    local graph = ("%d samples in %d s"):format(p.total, secs)
    return self:built(p, function(t)
      return require("flame").page(t, { title = "perfscript: " .. opts.name, links = links,
                                        heading = ("%s: the last %d s"):format(opts.name, secs), graph = graph })
    end)
  end)
end

-- /debug/pprof/offcpu?seconds=N: a gzip pprof of the time the threads of
-- waits (an offcpu tapset's) spend off the CPU in the next N seconds.
function Served:offcpu(req, waits, comment)
  return self:owe(req, { default = "30", ctype = "application/octet-stream",
    start = function() return waits:window() end,
    stop = function(w) w:drop() end,
    finish = function(w) return w:pprof(comment) end })
end

return M
