-- push.lua: bodies sent to HTTP destinations from the session's loop, one
-- at a time per destination and in order, never holding up sampling. A
-- failure (no reply, 429, 5xx) is retried after a backoff that doubles
-- from 1 s to 30 s; any other 4xx, or a redirect loop, will never be taken
-- and counts as refused; a full queue (16 bodies) drops its oldest body
-- waiting (not the one being sent, which may yet arrive).
--   local push = require "push"
--   local out = push.new()
--   local q = out:queue("remote_write")
--   q:push{ url = URL, body = bytes, headers = { ["Content-Type"] = "..." } }
--   out:families(registry) -- sent, retried, dropped, refused; bodies waiting
--   probe("end", function() out:flush(5000, "agent") end)
local M = {}

local http = require "perfscript.http"

M.QUEUE_MAX = 16
local REDIRECT_LOOP = -40 -- -ELOOP: more than 10 redirects
local RESULTS = { "sent", "retried", "dropped", "refused" }

local function now_ns() return gettimeofday_ns() end

local Queue = {}
Queue.__index = Queue

-- Add a body { url, body, headers }; the oldest goes when the queue is full.
-- Given nil and why (a request that could not be made: its library is
-- missing), it counts as dropped and says why once on stderr.
function Queue:push(item, why)
  if not item then
    self.dropped = self.dropped + 1
    if not self.told then
      io.stderr:write(("push: %s: %s\n"):format(self.kind, tostring(why)))
      self.told = true
    end
    return
  end
  if #self.items >= self.max then
    -- the oldest body waiting goes, not the one being sent (it may yet
    -- arrive: it would count as dropped and sent); with none waiting, item
    self.dropped = self.dropped + 1
    if self.busy and #self.items < 2 then return end
    table.remove(self.items, self.busy and 2 or 1)
  end
  self.items[#self.items + 1] = item
  self:pump()
end

-- Send the first body, unless one is under way or the backoff runs.
function Queue:pump()
  if self.busy or #self.items == 0 or now_ns() < self.wait_until then return end
  local item = self.items[1]
  local function done(status)
    self.busy = false
    if status >= 200 and status < 300 then
      table.remove(self.items, 1) -- item: a full queue drops the body after it
      self.sent, self.backoff = self.sent + 1, 1
    elseif (status >= 400 and status < 500 and status ~= 429) or status == REDIRECT_LOOP then
      table.remove(self.items, 1)
      self.refused = self.refused + 1
    else
      self.retried = self.retried + 1
      self.wait_until = now_ns() + self.backoff * 1e9
      self.backoff = math.min(self.backoff * 2, 30)
    end
    self:pump()
  end
  self.busy = true
  if not http.post(item.url, item.body, { headers = item.headers, timeout_ms = self.timeout_ms }, done) then
    done(-1)
  end
end

local Pusher = {}
Pusher.__index = Pusher

-- push.new{ max = 16, timeout_ms = 10000, pump_ms = 200 } -> pusher: its
-- queues are pumped every pump_ms (a backoff's end is seen then).
function M.new(opts)
  opts = opts or {}
  local self = setmetatable({ queues = {}, kinds = {}, max = opts.max or M.QUEUE_MAX,
                              timeout_ms = opts.timeout_ms or 10000 }, Pusher)
  probe(("timer.ms(%d)"):format(opts.pump_ms or 200), function() self:pump() end)
  return self
end

-- The queue of one destination, by kind (a label on /metrics).
function Pusher:queue(kind)
  local q = setmetatable({ kind = kind, items = {}, busy = false, wait_until = 0, backoff = 1,
                           max = self.max, timeout_ms = self.timeout_ms,
                           sent = 0, retried = 0, dropped = 0, refused = 0 }, Queue)
  self.queues[kind] = q
  self.kinds[#self.kinds + 1] = kind
  return q
end

function Pusher:pump()
  for _, kind in ipairs(self.kinds) do self.queues[kind]:pump() end
end

-- The pushes' families on an openmetrics registry: PREFIX_pushes{kind,
-- result} and PREFIX_push_queue{kind} (prefix: "perfscript_agent").
function Pusher:families(reg, prefix)
  prefix = prefix or "perfscript_agent"
  reg:family(prefix .. "_pushes", "counter",
             "Pushes by destination: sent, retried after a failure, dropped from a full queue, refused (4xx).",
             function()
               local rows = {}
               for _, kind in ipairs(self.kinds) do
                 for _, r in ipairs(RESULTS) do
                   rows[#rows + 1] = { labels = { kind = kind, result = r }, value = self.queues[kind][r] }
                 end
               end
               return rows
             end)
  reg:family(prefix .. "_push_queue", "gauge", "Bodies waiting to be pushed, by destination.",
             function()
               local rows = {}
               for _, kind in ipairs(self.kinds) do
                 rows[#rows + 1] = { labels = { kind = kind }, value = #self.queues[kind].items }
               end
               return rows
             end)
end

-- At the end: what the queues hold is sent now, backoffs cut short, for up
-- to ms milliseconds (a second Ctrl-C stops the wait), said on stderr as
-- who ("agent"), with what was not sent and why. Returns how many bodies
-- were not sent.
function Pusher:flush(ms, who)
  who = who or "push"
  local waiting = 0
  for _, kind in ipairs(self.kinds) do
    local q = self.queues[kind]
    q.wait_until = 0
    q:pump()
    waiting = waiting + #q.items
  end
  if waiting == 0 then
    self:tell(who)
    return 0
  end
  io.stderr:write(("%s: sending the last %d pushes (up to %d ms; Ctrl-C again to stop)\n"):format(who, waiting, ms))
  local t0 = now_ns()
  http.flush(ms)
  local waited, left = (now_ns() - t0) // 1000000, 0
  for _, kind in ipairs(self.kinds) do
    local q = self.queues[kind]
    if #q.items > 0 then
      left = left + #q.items
      io.stderr:write(("%s: %d %s pushes not sent: %s\n"):format(who, #q.items, kind,
        q.busy and ("no answer within %d ms"):format(waited)
        or ("the destination refused or failed the last try (%d retried, %d refused; %d ms spent)")
           :format(q.retried, q.refused, waited)))
    end
  end
  self:tell(who)
  return left
end

-- Each queue's counts, a line each on stderr as who ("agent: otlp pushes:
-- 45 sent, 3 retried, 14 dropped, 0 refused"): what perf's end-of-record
-- lines are to a file, for a session whose output went elsewhere.
function Pusher:tell(who)
  for _, kind in ipairs(self.kinds) do
    local q = self.queues[kind]
    io.stderr:write(("%s: %s pushes: %d sent, %d retried, %d dropped, %d refused\n")
                    :format(who or "push", kind, q.sent, q.retried, q.dropped, q.refused))
  end
end

return M
