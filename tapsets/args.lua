-- args.lua: a script's own command-line options, parsed as users of perf
-- and of GNU tools expect. What follows a script's name on perfscript's
-- command line is the script's (only -c, -p, -a, -C, -G and -T are taken by
-- perfscript), so every script answers --help (usage on stdout, exit 0)
-- and names an option it does not know, with the valid ones (on stderr,
-- exit 2), instead of dropping it or dying with a traceback.
--   local opts = require("args").parse(arg, {
--     name = "top.lua", usage = "perfscript top.lua -c CMD [options]",
--     summary = "What it does, in a line or two.",
--     { "--freq", "HZ", "samples per second (default 999)", number = true, integer = true, min = 1 },
--     { "-e, --event", "SPEC", "the event to sample", event = true },
--     { "--inline", nil, "count inlined functions as their own rows" },
--     { "--sort", "KEY", "rows per sym or dso", choices = { "sym", "dso" } },
--   })
--   -- opts.freq (a number), opts.event, opts.inline (true), opts.sort;
--   -- opts[1..n]: arguments that are not options, when spec.args allows
-- A number option may say integer = true, min and max; event = true checks
-- the value is an event string perfscript parses. A value out of bounds is
-- a usage error that says what is wanted.
-- Values come as "--freq 99", "--freq=99" or, for one-letter options,
-- "-e SPEC" and "-eSPEC". "--" ends the options. An option given twice
-- keeps its last value, or, with list = true, every value in order.
-- spec.target = true: the script measures a command, a process or CPUs,
-- never perfscript itself: without -c, -p, -a or -C it is a usage error,
-- and a bare argument ("stat.lua ./app", perf stat's habit) is answered
-- with the -c that runs it.
-- After parse, args.need(v, err) ends the script on a failure its user must
-- fix outside it (a permission, a missing tracefs): "NAME: err" on
-- stderr, exit 1, no traceback; args.denied(code) says whether a failed
-- perfmon call's code means permission.
-- spec.report = true: what the script prints is a report, and it goes
-- where perf's reports go: to standard error, or to FILE with -o FILE
-- (an option added for it, opts.output); standard output stays the
-- command's. perfscript's own -o FILE, before the script, counts as one.
local M = {}

local REPORT_OPTION = { "-o, --output", "FILE",
                        "write the report to FILE (default: standard error; -: standard output)" }
local REPORT_NOTE = "The report goes to standard error, as perf's do (-o FILE: to FILE); " ..
                    "standard output is the command's.\n"

-- The spec's options, with -o when it makes a report.
local function entries(spec)
  local list = {}
  for _, e in ipairs(spec) do list[#list + 1] = e end
  if spec.report then list[#list + 1] = REPORT_OPTION end
  return list
end

-- The names of an entry ("-e, --event" -> {"-e", "--event"}) and its key:
-- the long name without dashes ("event"; "call-graph" -> "call_graph").
local function names_of(entry)
  local names = {}
  for n in entry[1]:gmatch("[^,%s]+") do names[#names + 1] = n end
  local key = names[#names]:gsub("^%-+", ""):gsub("%-", "_")
  return names, entry.key or key
end

-- The usage text: the usage line, the summary, one line per option.
function M.help(spec)
  local rows, width = {}, 0
  for _, e in ipairs(entries(spec)) do
    local left = e[1] .. (e[2] and (" " .. e[2]) or "")
    rows[#rows + 1] = { left, e[3] or "" }
    if #left > width then width = #left end
  end
  rows[#rows + 1] = { "-h, --help", "this text" }
  if width < 10 then width = 10 end
  local out = { ("usage: %s\n"):format(spec.usage or ("perfscript " .. spec.name .. " [options]")) }
  if spec.summary then out[#out + 1] = spec.summary:gsub("\n*$", "\n") end
  if spec.report then out[#out + 1] = REPORT_NOTE end
  out[#out + 1] = "\noptions:\n"
  for _, r in ipairs(rows) do
    out[#out + 1] = ("  %-" .. width .. "s  %s\n"):format(r[1], r[2])
  end
  if spec.epilog then out[#out + 1] = "\n" .. spec.epilog:gsub("\n*$", "\n") end
  return table.concat(out)
end

local function valid_list(spec)
  local all = {}
  for _, e in ipairs(entries(spec)) do all[#all + 1] = (names_of(e))[#names_of(e)] end
  all[#all + 1] = "--help"
  return table.concat(all, ", ")
end

-- A usage error: the message on stderr, exit status 2, nothing else run.
local function fail(spec, msg)
  io.stderr:write(("%s: %s\n(%s --help lists the options)\n"):format(spec.name, msg, spec.name))
  io.stderr:flush()
  os.exit(2)
end

-- Check and convert the value v of option entry e, named as the user did.
-- What a number option wants, in words: "a whole number from 1 to 100".
local function number_words(e)
  local w = e.integer and "a whole number" or "a number"
  if e.min and e.max then return ("%s from %s to %s"):format(w, e.min, e.max) end
  if e.min then return ("%s of at least %s"):format(w, e.min) end
  if e.max then return ("%s of at most %s"):format(w, e.max) end
  return w
end

-- An event string's mistakes (syntax, no such event, term or value: the
-- PS_ERR_* codes 4096-4099) are the user's; what the machine refuses
-- (permission, a missing PMU) is left to the open, which says it.
local function event_error(v)
  local perfmon = rawget(_G, "perfmon")
  if not perfmon then return nil end
  local ok, err, code = perfmon.describe(v)
  if not ok and code and code >= 4096 and code <= 4099 then return err end
end

local function value_of(spec, e, given, v)
  if e.number then
    local n = tonumber(v)
    local int = n and math.tointeger(n)
    if not n or n ~= n or (e.integer and not int) or (e.min and n < e.min) or (e.max and n > e.max) then
      fail(spec, ("%s wants %s (%s), got '%s'"):format(given, number_words(e), e[2], v))
    end
    return int or n
  end
  if e.event then
    local err = event_error(v)
    if err then fail(spec, ("%s %s: %s"):format(given, v, err)) end
  end
  if e.choices then
    for _, c in ipairs(e.choices) do if c == v then return v end end
    fail(spec, ("%s wants %s, got '%s'"):format(given, table.concat(e.choices, " or "), v))
  end
  return v
end

-- Parse argv (a script's arg table) by spec: the options' values by key,
-- and the other arguments as opts[1..n]. --help prints M.help(spec) to
-- stdout and exits 0; any usage error exits 2 with a message.
function M.parse(argv, spec)
  assert(spec and spec.name, "args.parse: spec.name (the script's name) is required")
  M.name, M.spec = spec.name, spec
  local byname = {}
  for _, e in ipairs(entries(spec)) do
    local names, key = names_of(e)
    for _, n in ipairs(names) do byname[n] = { entry = e, key = key } end
  end
  local opts, i, rest = {}, 1, false
  for _, e in ipairs(spec) do
    if e.default ~= nil then opts[(select(2, names_of(e)))] = e.default end
  end
  local function set(o, given, v)
    local e = o.entry
    if not e[2] then
      if v then fail(spec, ("%s takes no value, got '%s'"):format(given, v)) end
      opts[o.key] = true
      return
    end
    v = value_of(spec, e, given, v)
    if e.list then
      local l = type(opts[o.key]) == "table" and opts[o.key] or {}
      l[#l + 1] = v
      opts[o.key] = l
    else
      opts[o.key] = v
    end
  end
  while argv[i] ~= nil do
    local a = argv[i]
    if rest or a == "-" or a:sub(1, 1) ~= "-" then
      if not spec.args and spec.target then
        fail(spec, ("unexpected argument '%s': to measure a command, give it as -c '%s'")
                   :format(a, table.concat(argv, " ", i)))
      end
      if not spec.args then fail(spec, ("unexpected argument '%s'"):format(a)) end
      opts[#opts + 1] = a
    elseif a == "--" then
      rest = true
    elseif a == "-h" or a == "--help" then
      io.write(M.help(spec))
      io.stdout:flush()
      os.exit(0)
    else
      local name, inline = a:match("^(%-%-[^=]+)=(.*)$")
      if not name and not a:match("^%-%-") and #a > 2 then name, inline = a:sub(1, 2), a:sub(3) end
      name = name or a
      local o = byname[name]
      if not o then fail(spec, ("unknown option '%s' (valid: %s)"):format(a, valid_list(spec))) end
      if o.entry[2] and not inline then
        i = i + 1
        inline = argv[i]
        if inline == nil then fail(spec, ("%s wants %s"):format(name, o.entry[2])) end
      end
      set(o, name, inline)
    end
    i = i + 1
  end
  local target, cpus = rawget(_G, "target"), rawget(_G, "target_cpus")
  if spec.target and target and target() == pid() and not (cpus and cpus()) then
    fail(spec, "no target: give a command (-c 'CMD args'), a process (-p PID) or all CPUs (-a); " ..
               "it would measure perfscript itself")
  end
  if spec.report then M.report_to(spec.name, opts.output) end
  return opts
end

-- Send the script's output (print, printf, io.write) where a report goes:
-- to FILE, or to standard error unless perfscript's own -o chose a file.
-- A file that cannot be made ends the script (exit 1) before it counts.
function M.report_to(name, file)
  local perfmon = rawget(_G, "perfmon")
  if not perfmon then return end
  local ok, err = true, nil
  if file == "-" then
    return
  elseif file then
    ok, err = perfmon.output(file)
  elseif perfmon.output() == "standard output" then
    ok, err = perfmon.output(io.stderr)
  end
  if not ok then
    io.stderr:write(("%s: -o %s\n"):format(name, err))
    io.stderr:flush()
    os.exit(1)
  end
end

-- A usage error found after parsing (two options that do not go together):
-- msg as args.parse says its own, the --help hint, exit 2.
function M.fail(msg)
  io.stdout:flush()
  fail(M.spec or { name = M.name or "perfscript" }, msg)
end

-- v and the rest when v is true; else err said as the script's own line
-- (exit 1), as perf says what it cannot do: perfmon's messages already
-- name the problem and the fix.
function M.need(v, err, ...)
  if v then return v, err, ... end
  io.stdout:flush()
  io.stderr:write(("%s: %s\n"):format(M.name or "perfscript", tostring(err or "failed")))
  io.stderr:flush()
  os.exit(1)
end

-- Serve handler on --listen's addr (perfscript.http's listen, opts passed
-- on: web_config, max_connections, idle_timeout_ms), or end the script: a
-- bad address is the user's (exit 2), a port in use the machine's (exit
-- 1). Says "listening on SCHEME://HOST:PORT" and opts.after (default "/")
-- on standard output, the line a supervisor or a test waits for; returns
-- the server.
function M.listen(addr, handler, opts)
  opts = opts or {}
  local server, err, code = require("perfscript.http").listen(addr, handler, opts)
  if not server and code == 22 and err:match("^bad listen address") then M.fail(err) end
  M.need(server, err)
  local host = addr:match("^(.*):%d+$")
  printf("listening on %s://%s:%d%s\n", server:tls() and "https" or "http",
         (host == "" or host == nil) and "0.0.0.0" or host, server:port(), opts.after or "/")
  io.stdout:flush()
  return server
end

-- Whether the code of a failed perfmon call (its third value) means the
-- user may not: EPERM or EACCES, never "this machine cannot count it".
function M.denied(code)
  return code == 1 or code == 13
end

return M
