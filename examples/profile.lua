-- profile.lua: where a command spends its CPU time, function by function
-- (perf record + perf report, built on the profile tapset). Samples
-- cpu-clock (or --event) on every CPU the command runs on and prints the
-- top functions with their share of the samples; --folded, --pprof and
-- --svg write folded stacks (flamegraph.pl, speedscope), a pprof profile
-- (go tool pprof, Pyroscope, Parca; --labels adds pid, tid, comm, cgroup)
-- and an interactive flame graph with nothing to fetch; --otlp writes an
-- OTLP profiles request (the OpenTelemetry Collector). --diff-base
-- OLD.pb.gz compares with an earlier profile (the changes, then the
-- differential forms of each file); --switch-output SECS writes a profile
-- a window (a continuous profile, files named by each window's start);
-- --python puts CPython's frames in the stacks (on by itself for a
-- python3 target). docs/guide.md ("profile.lua's options") says each.
--   perfscript examples/profile.lua -c './app args' [--freq HZ] [--event SPEC] [--top N]
--       [--folded FILE] [--svg FILE] [--pprof FILE [--labels LIST]] [--otlp FILE] [--diff-base OLD.pb.gz]
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
  { "--otlp", "FILE", "write the profile as an OTLP profiles request to FILE (OpenTelemetry)" },
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
local args = require "args"
local profile, pprof = require "profile", require "pprof"
if opts.lines then opts.sort = "srcline" end
-- a python3 target gets its Python frames without being asked
if not opts.python and not opts.no_python and not opts.event and opts.call_graph ~= "fp" then
  opts.python = profile.python_target()
end
local labels = opts.labels and {}
for l in (opts.labels or ""):gmatch("[^,]+") do labels[#labels + 1] = l end

if opts.switch and not (opts.pprof or opts.folded or opts.svg or opts.otlp) then
  args.fail("--switch-output writes --pprof, --otlp, --folded or --svg files: give one")
end
if opts.switch and opts.base then args.fail("--switch-output and --diff-base do not go together") end
if opts.dwarf_lines and opts.no_dwarf_lines then args.fail("--dwarf-lines and --no-dwarf-lines: give one") end
if opts.no_dwarf_lines and (opts.lines or opts.inline) then
  args.fail(("--%s needs DWARF lines: drop --no-dwarf-lines"):format(opts.lines and "lines" or "inline"))
end
-- A continuous profile runs for days: what the symbolizer holds is bounded
-- by about what one host's working set needs, and functions are named
-- without DWARF's source lines (libc's: 9 MB; a pprof Mapping's build id
-- lets the backend add lines), unless rows need lines.
local budget = opts.symbols_budget or (opts.switch and 32)
if budget then perfmon.symbols(math.floor(budget * 1048576)) end
if not (opts.dwarf_lines or opts.lines or opts.inline or not (opts.switch or opts.no_dwarf_lines)) then
  perfmon.symbols { lines = false }
end

-- The base is read first, and the output files opened: a missing base or
-- a path that cannot be written ends here, not after the run.
local base
if opts.base then
  local berr
  base, berr = pprof.read(opts.base)
  if not base then args.need(nil, "--diff-base " .. berr) end
end
local what = opts.event or ("cpu-clock at %d Hz"):format(opts.freq)
local cmd = target_command()
local files = (opts.pprof or opts.folded or opts.svg or opts.otlp) and args.need(require("profile_files").open {
  pprof = opts.pprof, folded = opts.folded, svg = opts.svg, otlp = opts.otlp, every = opts.switch, who = "profile.lua",
  resource = { ["process.command_line"] = cmd },
  comment = cmd and ("perfscript: " .. cmd), base_name = opts.base,
  title = function(p) return ("%s: %d samples of %s"):format(cmd or "perfscript", p.total, what) end })

local spec, err = profile.spec { event = opts.event, freq = opts.freq, g = opts.g, call_graph = opts.call_graph,
  stacks = (opts.folded or opts.svg or opts.pprof or opts.otlp or opts.base) ~= nil, python = opts.python,
  max_stack = opts.max_stack, cgroup = labels and table.concat(labels, ","):match("cgroup") ~= nil }
if not spec then args.fail(err) end
prof, err = perfmon_allocate_counter(spec)
if prof == 0 then args.fail(("%s: %s"):format(spec, err)) end
local function new_profile()
  return profile.new { stacks = (opts.folded or opts.svg) ~= nil and not base,
                       pprof = (opts.pprof or opts.otlp or base) and true, labels = labels,
                       inline = opts.inline, sort = opts.sort, python = opts.python }
end
local run = opts.switch and require("profile_files").continuous(files, new_profile) or { p = new_profile() }
probe("perfmon.sample(prof)", function(s) run.p:add(s) end, opts.python and { python = true } or nil)

-- At the end: the top functions (the last window's, when continuous), the
-- change against the base, and the files. A result that cannot be written
-- (a full disk) is said, and the session exits 1.
probe("end", function()
  local p = run.p
  io.write(p:top_text(opts.top, ("%d samples of %s\n"):format(p.total, what)))
  if opts.switch then
    if not run:finish() then exit(1) end
    return
  end
  local t
  if base then
    printf("\nChange against %s (%d samples there, %d here):\n\n%8s %8s %8s  %s\n", opts.base,
           pprof.flat_total(base), p.total, "base", "new", "delta", "function")
    t = p:pprof { comment = cmd and ("perfscript: " .. cmd) }
    for _, r in ipairs(pprof.changes(t, base, opts.top)) do
      printf("%8d %8d %+8d  %s\n", r.base, r.new, r.delta, r.name)
    end
  end
  local ok, why = true, nil
  if files then ok, why = files:write(p, base, t) end
  if not ok then
    io.stderr:write("profile.lua: cannot write ", why, "\n")
    exit(1)
  end
end)
