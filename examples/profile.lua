-- profile.lua: where a command spends its CPU time, function by function.
-- Samples cpu-clock on every CPU the command runs on, prints the top
-- functions with their share of the samples, and with --folded FILE writes
-- folded stacks ("root;caller;callee count"), the input of flamegraph.pl
-- and speedscope. --pprof FILE writes the profile in pprof's format
-- (gzip-compressed profile.proto) for go tool pprof, Pyroscope or Parca,
-- symbolized here; --labels pid,tid,comm,cgroup adds those as pprof labels
-- (cgroup: the sample's cgroup v2 path, and container where it names one).
-- --diff-base OLD.pb.gz compares with an earlier pprof profile: it prints
-- the functions that changed most, --pprof then writes the differential
-- profile (what go tool pprof -diff_base OLD NEW shows) and --folded the
-- two-count lines of FlameGraph's difffolded.pl ("stack old new").
-- --svg FILE draws the flame graph itself (the flame tapset): one SVG
-- file, interactive (hover, click to zoom, search), with nothing to fetch;
-- with --diff-base, a differential one (red grew, blue shrank).
-- Built on the profile tapset.
--   --max-stack N          frames a stack keeps, up to 1024 (default 127): a
--                          DWARF stack is unwound that deep (with a stack copy
--                          that holds it: stack-size= in --event); a kernel
--                          frame-pointer walk stops at kernel.perf_event_max_stack;
--                          a stack cut there has "[truncated]" for a root
--   --call-graph fp|dwarf  how stacks are taken (default fp when stacks are
--                          needed): fp walks frame pointers in the kernel;
--                          dwarf unwinds each sample's stack copy with the
--                          binaries' DWARF, for code without frame pointers;
--                          an --event's own call-graph= or stack-size= wins
--   --inline               count inlined functions as their own rows, and
--                          put inlined frames into folded stacks
--   --lines                rows per source line instead of per function
--   --sort sym|dso         rows per function (default) or per file
--   --python               CPython processes' (3.10 to 3.13) Python frames in
--                          the stacks, py::FUNCTION:FILE in place of the
--                          interpreter's eval loop (read in the kernel at
--                          each sample; implies --call-graph dwarf); the top
--                          rows are then the innermost Python functions
--                          (with --lines, the script's lines). On by itself
--                          when the target is a python3 command (-c) or
--                          process (-p), unless --no-python or --call-graph
--                          fp or --event say otherwise
--   --switch-output SECS   (with --pprof or --folded) a profile every SECS
--                          seconds, as perf record --switch-output=time
--                          does: FILE.YYYYMMDDHHMMSSCC per window (its start),
--                          and memory stays that of one window however long
--                          it runs; the top printed at the end is the last
--                          window's
--   --symbols-budget MIB   what the symbolizer may keep (default 128 MiB, 32
--                          with --switch-output; perfmon.symbols), for runs
--                          that see many binaries
--   --no-dwarf-lines       name functions from the binaries' symbol tables
--                          only: no source lines or inline frames from
--                          DWARF, far less memory (the default with
--                          --switch-output: a pprof Mapping's build id lets
--                          the backend add lines); --dwarf-lines reads them
--   --event SPEC           sample another event (a spec with a period or
--                          frequency, e.g. 'syscalls:sys_enter_getppid/period=1/');
--                          --freq is then ignored
--   perfscript examples/profile.lua -c './app args' [--freq HZ] [--event SPEC] [--top N]
--       [--folded FILE] [--svg FILE] [--pprof FILE [--labels LIST]] [--diff-base OLD.pb.gz]
--       [--call-graph fp|dwarf] [--python] [--inline] [--lines] [--sort sym|dso]
local opts = require("args").parse(arg, {
  name = "profile.lua",
  report = true,
  usage = "perfscript examples/profile.lua -c 'CMD args' | -p PID | -a [options]",
  target = true,
  summary = "Where a command spends its CPU time: the functions with the most cpu-clock samples.",
  { "-F, --freq", "HZ", "samples per second (default 999; perf record's -F)", number = true, integer = true, min = 1,
    default = 999 },
  { "-e, --event", "SPEC", "sample this event instead, e.g. 'syscalls:sys_enter_getppid/period=1/'",
    event = true },
  { "--top", "N", "rows to print (default 20)", number = true, integer = true, min = 1, default = 20 },
  { "--folded", "FILE", "write folded stacks to FILE (flamegraph.pl, speedscope)" },
  { "--svg", "FILE", "write a flame graph to FILE (one SVG file, interactive, offline)" },
  { "--pprof", "FILE", "write the profile in pprof's format to FILE" },
  { "--labels", "LIST", "pprof labels of each sample: pid, tid, comm, cgroup (comma-separated)" },
  { "--diff-base", "OLD.pb.gz", "compare with an earlier pprof profile", key = "base" },
  { "--switch-output", "SECS", "a new --pprof/--folded file every SECS seconds (FILE.YYYYMMDDHHMMSSCC)",
    number = true, min = 0.1, max = 86400, key = "switch" },
  { "--symbols-budget", "MIB", "what the symbolizer may hold, in MiB (default 128; 32 with --switch-output)",
    number = true, min = 1, key = "symbols_budget" },
  { "--call-graph", "fp|dwarf", "how stacks are taken (an --event's call-graph= wins)", choices = { "fp", "dwarf" } },
  { "-g", nil, "take stacks (frame pointers), as perf record -g", key = "g" },
  { "--max-stack", "N", "frames a stack keeps, up to 1024 (default 127; deeper with DWARF only)", number = true,
    integer = true, min = 1, max = 1024 },
  { "--python", nil, "Python frames of CPython processes in the stacks" },
  { "--no-python", nil, "no Python frames, even for a python3 target", key = "no_python" },
  { "--dwarf-lines", nil, "source lines and inline frames from DWARF (the default without --switch-output)",
    key = "dwarf_lines" },
  { "--no-dwarf-lines", nil, "function names from symbol tables only (the default with --switch-output)",
    key = "no_dwarf_lines" },
  { "--inline", nil, "count inlined functions as their own rows" },
  { "--lines", nil, "rows per source line" },
  { "--sort", "sym|dso", "rows per function (default) or per file", choices = { "sym", "dso" },
    default = "sym" },
})
local fail, need = require("args").fail, require("args").need
if opts.lines then opts.sort = "srcline" end

-- A python3 target (the -c command, or the -p process) gets its Python
-- frames without being asked: a Python profile of the eval loop alone
-- names nothing the user wrote.
local function target_is_python()
  local cmd = target_command and target_command()
  local exe = cmd and cmd:match("^%s*(%S+)")
  if not exe and (target() or 0) > 0 then
    local f = io.open(("/proc/%d/comm"):format(target()))
    exe = f and f:read("l")
    if f then f:close() end
  end
  return exe ~= nil and exe:match("[^/]*$"):match("^python3[%d.]*$") ~= nil
end
if not opts.python and not opts.no_python and not opts.event and opts.call_graph ~= "fp" then
  opts.python = target_is_python()
end
local cgroup_term = false
if opts.labels then
  local list = {}
  for l in opts.labels:gmatch("[^,]+") do
    list[#list + 1] = l
    cgroup_term = cgroup_term or l == "cgroup"
  end
  opts.labels = list
end

-- The base is read first: a missing or broken file ends here, not after the run.
if opts.switch and not (opts.pprof or opts.folded or opts.svg) then
  fail("--switch-output writes --pprof, --folded or --svg files: give one")
end
if opts.switch and opts.base then fail("--switch-output and --diff-base do not go together") end
-- A continuous profile runs for days: what it holds is bounded by
-- default, by about what one host's working set needs.
if opts.switch and not opts.symbols_budget then opts.symbols_budget = 32 end
-- Source lines and inline frames cost the libraries' DWARF line tables
-- (libc's: 9 MB); a continuous profile names functions only, unless rows
-- need lines, as the agent does.
if opts.dwarf_lines and opts.no_dwarf_lines then
  fail("--dwarf-lines and --no-dwarf-lines: give one")
end
if opts.no_dwarf_lines and (opts.lines or opts.inline) then
  fail(("--%s needs DWARF lines: drop --no-dwarf-lines"):format(opts.lines and "lines" or "inline"))
end
local dwarf_lines = opts.dwarf_lines or opts.lines or opts.inline or not (opts.switch or opts.no_dwarf_lines)
if opts.symbols_budget then
  perfmon.symbols(math.floor(opts.symbols_budget * 1024 * 1024))
end
if not dwarf_lines then perfmon.symbols { lines = false } end

local pprof, base = require "pprof", nil
if opts.base then
  local err
  base, err = pprof.read(opts.base)
  if not base then need(nil, "--diff-base " .. err) end
end

-- The output files are opened now, as perf record opens -o: a path that
-- cannot be written fails in milliseconds, not after the whole run. With
-- --switch-output, each window's as it starts, named by its start.
local outputs, names = {}, {}
local windows, lost = 0, 0 -- --switch-output's windows, and those not written
local function open_outputs(later)
  local ns = gettimeofday_ns() -- perf's names: the time to the hundredth of a second
  local suffix = opts.switch and os.date(".%Y%m%d%H%M%S", ns // 1000000000) .. ("%02d"):format(ns // 10000000 % 100)
                 or ""
  for _, k in ipairs { "folded", "pprof", "svg" } do
    if opts[k] then
      local name = opts[k] .. suffix
      local f, oerr = io.open(name, "wb")
      if not f and not later then need(nil, ("--%s %s"):format(k, oerr)) end
      if not f then io.stderr:write("profile.lua: cannot open ", oerr, "\n") end
      outputs[k], names[k] = f, name
    end
  end
end
open_outputs()

-- Stacks when asked for, or when folded or pprof output needs them. The
-- event's own terms win: its call-graph= (or stack-size=, which only
-- DWARF stacks use) is how its stacks are taken, and nothing is added.
local own = opts.event and (opts.event:match("[/,]call%-graph=(%a+)") or
                            opts.event:match("[/,]stack%-size=") and "dwarf")
if own and opts.call_graph and own ~= opts.call_graph then
  fail(("--call-graph %s contradicts the event's call-graph=%s: give one of them")
        :format(opts.call_graph, own))
end
if own and opts.python and own ~= "dwarf" then
  fail(("--python needs DWARF stacks, and the event says call-graph=%s"):format(own))
end
local call_graph = own or opts.call_graph or (opts.python and "dwarf") or
                   ((opts.g or opts.folded or opts.svg or opts.pprof or opts.base) and "fp")
local term = call_graph and not own and ("call-graph=" .. call_graph)
if opts.max_stack then -- a user side as deep as asked; the kernel's stays its own
  if not (opts.event and opts.event:match("[/,]max%-stack=")) then
    term = (term and term .. "," or "") .. ("max-stack=%d"):format(opts.max_stack)
  end
end
if cgroup_term then term = term and term .. ",cgroup" or "cgroup" end -- s.cgroup
-- An event with neither period= nor freq= samples at --freq, as perf
-- record's -F applies to it; a tracepoint or probe samples every hit.
local COUNTS = { [0] = true, [1] = true, [3] = true, [4] = true } -- hardware, software, cache, raw
local attr = opts.event and perfmon.describe(opts.event)
attr = attr and #attr == 1 and attr[1]
if attr and COUNTS[attr.type] and not attr.sample_period and not attr.freq then
  term = ("freq=%d"):format(opts.freq) .. (term and "," .. term or "")
end
-- ev/a=1/ -> ev/a=1,TERM/; ev:u -> ev/TERM/u; ev -> ev/TERM/
local function with_term(ev, t)
  if not t then return ev end
  if ev:match("/$") then return (ev:gsub("/$", "," .. t .. "/")) end
  local name, mods = ev:match("^([^/]-):([ukhHGpPSDWIe]+)$")
  if name then return ("%s/%s/%s"):format(name, t, mods) end
  return ev .. "/" .. t .. "/"
end
local spec = opts.event and with_term(opts.event, term) or
             ("cpu-clock/freq=%d%s/"):format(opts.freq, term and "," .. term or "")
local err
prof, err = perfmon_allocate_counter(spec)
if prof == 0 then fail(("%s: %s"):format(spec, err)) end
local function new_profile()
  return require("profile").new{ stacks = (opts.folded or opts.svg) ~= nil and not base,
                                 pprof = (opts.pprof or base) and true, labels = opts.labels,
                                 inline = opts.inline, sort = opts.sort, python = opts.python }
end
local p = new_profile()

probe("perfmon.sample(prof)", function(s) p:add(s) end, opts.python and { python = true } or nil)

-- A result that cannot be written (a full disk) is reported and the
-- session exits 1.
local function saved(ok, why)
  if not ok then
    io.stderr:write("profile.lua: cannot write ", why, "\n")
    exit(1)
  end
end

-- The flame graph of profile q (its folded stacks).
local function flame_of(q)
  local what = opts.event or ("cpu-clock at %d Hz"):format(opts.freq)
  return require("flame").svg(q:folded(), { title = ("%s: %d samples of %s"):format(
    target_command() or "perfscript", q.total, what) })
end

-- The window's files (the last one's at the end), then a new window. One
-- that cannot be written (a full disk) is said, removed and counted, and
-- the run goes on: the next window may find room.
local function write_window()
  local cmd = target_command()
  local t = opts.pprof and p:pprof{ comment = cmd and ("perfscript: " .. cmd) }
  local ok, why = true, nil
  windows = windows + 1
  for _, k in ipairs { "pprof", "folded", "svg" } do
    if opts[k] and ok then
      if not outputs[k] then
        ok, why = false, ("%s: not opened"):format(names[k])
      elseif k == "pprof" then
        ok, why = pprof.write(t, outputs.pprof, { name = names.pprof })
      elseif k == "svg" then
        ok, why = pprof.save(outputs.svg, flame_of(p), names.svg)
      else
        ok, why = p:write_folded(outputs.folded, names.folded)
      end
    end
  end
  if ok then
    io.stderr:write(("profile.lua: %d samples in %s\n"):format(p.total, names.pprof or names.folded or names.svg))
    return
  end
  lost = lost + 1
  for _, k in ipairs { "pprof", "folded", "svg" } do
    if opts[k] then
      if outputs[k] then pcall(outputs[k].close, outputs[k]) end
      os.remove(names[k])
    end
  end
  io.stderr:write(("profile.lua: cannot write %s: its %d samples are lost (%d of %d windows so far)\n")
                  :format(why, p.total, lost, windows))
end
if opts.switch then
  -- A continuous profile names its samples as they come, each second, as
  -- the agent does: a process that exited is needed for a second, not
  -- until its window closes, so the symbolizer keeps 1024 + 1024 exited
  -- processes rather than 4096 + 16384 (0.8 KB each: at 140 exits a
  -- second, RSS grew by 1 MB a window, 37 -> 49 MB in 90 s; 1024 exits
  -- within a second would be needed to lose a name).
  perfmon.symbols { exited = 1024, exited_sampled = 1024 }
  -- Every 2 s, as the agent does, the binaries' pages unwinding and naming
  -- read once go back to the page cache (those read again stay): RSS
  -- holds what is in use rather than what the window happened to read.
  local seconds = 0
  probe("timer.s(1)", function()
    p:settle()
    if opts.pprof then pprof.prepare(p) end
    seconds = seconds + 1
    if seconds % 2 == 0 then perfmon.trim("pages") end
  end)
  probe(("timer.ms(%d)"):format(math.floor(opts.switch * 1000 + 0.5)), function()
    perfmon.drain() -- the window's last samples, still in the rings
    write_window()
    p = new_profile()
    perfmon.trim() -- the last window's tables go now, and the heap they took back to the system
    open_outputs(true)
  end)
end

probe("end", function()
  io.write(p:top_text(opts.top, opts.event and ("%d samples of %s\n"):format(p.total, opts.event)
                                 or ("%d samples of cpu-clock at %d Hz\n"):format(p.total, opts.freq)))
  if opts.switch then
    write_window()
    if lost > 0 then
      io.stderr:write(("profile.lua: %d of %d windows could not be written\n"):format(lost, windows))
      exit(1)
    end
    return
  end
  local cmd = target_command()
  local t = (opts.pprof or base) and p:pprof{ comment = cmd and ("perfscript: " .. cmd) }
  if base then
    printf("\nChange against %s (%d samples there, %d here):\n\n%8s %8s %8s  %s\n", opts.base,
           pprof.flat_total(base), p.total, "base", "new", "delta", "function")
    for _, r in ipairs(pprof.changes(t, base, opts.top)) do
      printf("%8d %8d %+8d  %s\n", r.base, r.new, r.delta, r.name)
    end
    if opts.pprof then saved(pprof.write(pprof.diff(t, base), outputs.pprof, { name = opts.pprof })) end
    if opts.folded then saved(pprof.save(outputs.folded, pprof.diff_folded(t, base), opts.folded)) end
    if opts.svg then
      saved(pprof.save(outputs.svg, require("flame").svg(pprof.diff_folded(t, base), {
        title = ("%d samples against %d of %s: red grew, blue shrank"):format(p.total, pprof.flat_total(base),
                                                                             opts.base) }), opts.svg))
    end
  else
    if opts.pprof then saved(pprof.write(t, outputs.pprof, { name = opts.pprof })) end
    if opts.folded then saved(p:write_folded(outputs.folded, opts.folded)) end
    if opts.svg then saved(pprof.save(outputs.svg, flame_of(p), opts.svg)) end
  end
end)
