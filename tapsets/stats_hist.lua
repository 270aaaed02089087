-- stats_hist.lua: the histogram half of the stats tapset: which bucket a
-- value falls in, and the text SystemTap prints for a histogram.
--
-- Buckets have bpftrace's boundaries. Log buckets: [0], [1], [2, 4), [4, 8),
-- ...; negative values mirror them as SystemTap does: -1, (-4, -2], ...
-- (bpftrace lumps them all into one bucket; keeping their magnitude is
-- more useful and costs nothing). Linear buckets for (lo, hi, step):
-- (-inf, lo), [lo, lo+step), ..., [hi, inf), as lhist(v, lo, hi, step).
--
-- The text is SystemTap's layout: a "value |----- count" header, one row
-- per bucket with a bar of @ scaled to 50 columns, two empty buckets of
-- margin around the data, and runs of empty buckets elided behind a "~".
local M = {}
local floor, log, max = math.floor, math.log, math.max
local LN2 = log(2)
-- integral bounds as integers where the Lua has them (5.3+), so rows
-- print as 4 rather than 4.0
local toint = math.tointeger or function(x) return x end
local function pow2(k) return toint(2 ^ k) or 2 ^ k end

local WIDTH = 50  -- columns of the widest bar
local MARGIN = 2  -- empty buckets shown around data, and kept beside a "~"

-- Bucket index of v: 0 for [0, 1) and (-1, 0], k for [2^(k-1), 2^k),
-- -k for (-2^k, -2^(k-1)]. log() only guesses k; the comparisons with
-- exact powers of two settle it, also for integers beyond 2^53.
local function magnitude(v)
  local k = floor(log(v) / LN2)
  if 2 ^ k > v then k = k - 1 elseif 2 ^ (k + 1) <= v then k = k + 1 end
  return k + 1
end

function M.log_bucket(v)
  if v >= 1 then return magnitude(v) end
  if v <= -1 then return -magnitude(-v) end
  return 0
end

-- The value SystemTap prints for log bucket k: its bound nearest zero.
function M.log_value(k)
  if k == 0 then return 0 end
  if k > 0 then return pow2(k - 1) end
  return -pow2(-k - 1)
end

-- Linear bucket index: 0 underflow, 1..n the steps, n+1 overflow (n steps
-- cover [lo, hi); a last partial step ends at hi).
function M.linear_nsteps(lo, hi, step)
  return math.ceil((hi - lo) / step)
end

function M.linear_bucket(v, lo, hi, step)
  if v < lo then return 0 end
  if v >= hi then return M.linear_nsteps(lo, hi, step) + 1 end
  return floor((v - lo) / step) + 1
end

local function range(counts)
  local first, last
  for k, c in pairs(counts) do
    if c > 0 then
      if not first or k < first then first = k end
      if not last or k > last then last = k end
    end
  end
  return first, last
end

-- Rows {lo, hi, count, label} from the first to the last non-empty bucket.
-- For k >= 0 a row is [lo, hi); for negative buckets it is (lo, hi].
function M.log_rows(counts)
  local rows, first, last = {}, range(counts)
  if not first then return rows end
  for k = first, last do
    local lo, hi
    if k == 0 then lo, hi = 0, 1
    elseif k > 0 then lo, hi = pow2(k - 1), pow2(k)
    else lo, hi = -pow2(-k), -pow2(-k - 1) end
    rows[#rows + 1] = { lo = lo, hi = hi, count = counts[k] or 0, label = M.num(M.log_value(k)), index = k }
  end
  rows.first_index, rows.last_index = -65, 65
  return rows
end

function M.linear_rows(counts, lo, hi, step)
  local n = M.linear_nsteps(lo, hi, step)
  local rows, first, last = {}, range(counts)
  if not first then return rows end
  for k = first, last do
    local r = { count = counts[k] or 0, index = k }
    if k == 0 then r.lo, r.hi, r.label = -math.huge, lo, "<" .. M.num(lo)
    elseif k == n + 1 then r.lo, r.hi, r.label = hi, math.huge, ">=" .. M.num(hi)
    else
      r.lo = lo + (k - 1) * step
      r.hi = math.min(lo + k * step, hi)
      r.label = M.num(r.lo)
    end
    rows[#rows + 1] = r
  end
  rows.first_index, rows.last_index = 0, n + 1
  rows.lo, rows.hi, rows.step = lo, hi, step
  return rows
end

function M.num(x)
  if x == floor(x) and x > -2 ^ 63 and x < 2 ^ 63 then return ("%d"):format(x) end
  return ("%g"):format(x)
end

-- The printable histogram. `linear` says how margin rows are labelled and
-- that empty under/overflow rows are left out, as SystemTap does.
function M.format(rows, linear)
  if #rows == 0 then return "" end
  local byindex, labels = {}, {}
  for _, r in ipairs(rows) do byindex[r.index] = r end
  local first, last = rows[1].index, rows[#rows].index
  local low, high = first, last
  for _ = 1, MARGIN do
    -- a log histogram grows no negative margin unless it holds negatives
    if low > rows.first_index and (linear or low ~= 0) then low = low - 1 end
    if high < rows.last_index then high = high + 1 end
  end
  if linear then
    if low == rows.first_index and not byindex[low] then low = low + 1 end
    if high == rows.last_index and not byindex[high] then high = high - 1 end
  end
  local valmax, vwidth = 0, 5 -- 5: #"value"
  for k = low, high do
    local r = byindex[k]
    if r and r.count > valmax then valmax = r.count end
    local label
    if r then label = r.label
    elseif linear then
      local lo, step = rows.lo, rows.step
      label = (k == rows.first_index) and "<" .. M.num(lo)
        or (k == rows.last_index) and ">=" .. M.num(rows.hi) or M.num(lo + (k - 1) * step)
    else label = M.num(M.log_value(k)) end
    labels[k] = label
    vwidth = max(vwidth, #label)
  end
  local scale = valmax <= WIDTH and 1 or math.ceil(valmax / WIDTH)
  local cwidth = #M.num(valmax)
  local count = function(k) local r = byindex[k]; return r and r.count or 0 end
  local out = { ("%" .. vwidth .. "s |%s count\n"):format("value", ("-"):rep(WIDTH)) }
  local eliding = false
  for k = low, high do
    -- an empty bucket is elided when every bucket within MARGIN of it is too
    local elide = count(k) == 0
    for j = max(low, k - MARGIN), math.min(high, k + MARGIN) do
      if not elide then break end
      if count(j) ~= 0 then elide = false end
    end
    if elide then
      eliding = true
    else
      if eliding then out[#out + 1] = (" "):rep(vwidth) .. " ~\n" end
      eliding = false
      local c = count(k)
      local bar = floor(c / scale)
      out[#out + 1] = ("%" .. vwidth .. "s |%s%" .. (WIDTH - bar + 1 + cwidth) .. "s\n")
        :format(labels[k], ("@"):rep(bar), M.num(c))
    end
  end
  out[#out + 1] = "\n"
  return table.concat(out)
end

return M
