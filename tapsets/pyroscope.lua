-- pyroscope.lua: Grafana Pyroscope's ingest API, as a request for the push
-- tapset. A window's gzip pprof goes to URL/ingest?name=APP{k=v,..}&from=
-- &until=&format=pprof&sampleRate=HZ, in a multipart form (field
-- "profile"), from and until in seconds since the epoch.
--   local q = require("push").new():queue("pyroscope")
--   q:push(require("pyroscope").request("http://pyroscope:4040", profile,
--          { app = "host", labels = { host = "web1" }, from = t0, ["until"] = t1, rate = 19 }))
local M = {}

local function urlencode(s)
  return (s:gsub("[^%w%-%._~]", function(c) return ("%%%02X"):format(c:byte()) end))
end

-- "app{a=1,b=2}", the labels sorted by name.
local function series_name(app, labels)
  local keys, parts = {}, {}
  for k in pairs(labels or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do parts[i] = ("%s=%s"):format(k, labels[k]) end
  return ("%s{%s}"):format(app, table.concat(parts, ","))
end

-- pyroscope.request(base_url, profile, { app, labels, from, until, rate })
-- -> { url, body, headers }, or nil and why; profile a pprof table
-- (pprof.build) or its gzip bytes, nil when it could not be built; from
-- and until in nanoseconds.
function M.request(base, bytes, o)
  if bytes == nil then return nil, "no profile" end
  if type(bytes) == "table" then
    local err
    bytes, err = require("pprof").encode(bytes)
    if not bytes then return nil, err end
  end
  local boundary = ("perfscript%x"):format(o["until"])
  local body = table.concat {
    "--", boundary, "\r\n",
    'Content-Disposition: form-data; name="profile"; filename="profile.pb.gz"\r\n',
    "Content-Type: application/octet-stream\r\n\r\n", bytes, "\r\n--", boundary, "--\r\n" }
  local url = ("%s/ingest?name=%s&from=%d&until=%d&format=pprof&sampleRate=%d")
              :format(base:gsub("/+$", ""), urlencode(series_name(o.app, o.labels)), o.from // 1000000000,
                      o["until"] // 1000000000, o.rate)
  return { url = url, body = body, headers = { ["Content-Type"] = "multipart/form-data; boundary=" .. boundary } }
end

return M
