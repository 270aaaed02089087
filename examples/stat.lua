-- stat.lua: perf stat, built from tapsets, with perf stat's options and
-- output. Counts what perf stat counts by default (task-clock, or
-- cpu-clock with -a/-C, context-switches, cpu-migrations, page-faults,
-- cycles, instructions, branches, branch-misses), or the events of -e, and
-- reports on stderr (or -o FILE) in perf stat's layout: "/sec" per second
-- of the clock, "CPUs utilized" = clock / elapsed, "<not supported>" for
-- events this machine cannot count and "<not counted>" for those it may
-- not, then the elapsed time and the command's user and sys time (wait4's,
-- to the microsecond). -x SEP and -j give perf's CSV and JSON lines, -I MS
-- interval reports. -r N runs the command N times and prints the means,
-- each with the relative standard deviation of its mean, "( +- X% )".
-- Built on the perfstat tapset.
--   perfscript examples/stat.lua -c './app args' [-e EV,EV] [-I MS] [-x SEP | -j] [-r N] [-o FILE]
local args, metrics, perfstat = require "args", require "metrics", require "perfstat"

local opts = args.parse(arg, {
  name = "stat.lua",
  report = true,
  usage = "perfscript examples/stat.lua -c 'CMD args' | -p PID | -a | -C LIST [options]",
  target = true,
  summary = "perf stat, built from tapsets: counts and rates of a command, a process or CPUs.",
  { "-e, --event", "EV[,EV]", "events to count (default: perf stat's)", key = "events", list = true },
  { "-I, --interval-print", "MS", "print the counts every MS milliseconds", key = "ms", number = true,
    integer = true, min = 1 },
  { "-x, --field-separator", "SEP", "CSV lines, fields separated by SEP", key = "sep" },
  { "-j, --json", nil, "JSON lines with perf stat -j's keys", key = "json" },
  { "-r, --repeat", "N", "run the command N times, print means and their variation",
    key = "runs", number = true, integer = true, min = 1 },
  { "--csv", nil, "the same as -x ," },
  { "--interval", "MS", "the same as -I MS", key = "ms", number = true, integer = true, min = 1 },
  { "--run-values", "FILE", "(for -r) write this run's values to FILE, no report" },
})

local format = opts.json and "json" or (opts.sep or opts.csv) and "csv" or "table"
if opts.runs and opts.runs > 1 and not target_command() then
  args.fail("-r N repeats a command: give it one with -c 'CMD'")
end
if opts.runs and opts.runs > 1 and opts.ms then args.fail("-r and -I do not go together (as in perf stat)") end

local events = {}
for _, list in ipairs(opts.events or {}) do
  for _, ev in ipairs(metrics.split_events(list)) do events[#events + 1] = ev end
end
local cpus = target_cpus()
if #events == 0 then events = perfstat.defaults(cpus) end
-- An event perfscript cannot read, or nothing at all to count, ends the
-- session before the command runs, with the reason, as perf stat's does.
local st, err, code = perfstat.open(events)
if not st then
  io.stderr:write("stat.lua: ", err, "\n")
  exit(code)
  return
end
probe("begin", function() st:begin() end) -- elapsed from the command's start, not this script's

-- The report goes to standard error, or -o FILE (args.lua opened it, so a
-- bad path failed before the command ran); a failed write is perfscript's
-- exit 1, with the reason.
local out = io.stdout
if opts.ms then
  require("interval").new(st:counters(), { ms = opts.ms, format = format, sep = opts.sep or ",",
                                          write = function(text) out:write(text) end })
end
local what = perfstat.what(cpus, target_command(), target())

probe("end", function()
  if opts.run_values then -- a run of -r: its values, no report
    assert(perfstat.save_run(opts.run_values, st:run()))
    return
  end
  if opts.ms then return end
  local run = st:run()
  if opts.runs and opts.runs > 1 then
    run = perfstat.mean(perfstat.more_runs({ run }, { runs = opts.runs, script = arg[0], events = events,
                                                      command = target_command(), who = "stat.lua" }))
  end
  local user, sys = target_times()
  out:write(st:report(run, { format = format, sep = opts.sep or ",", what = what,
                             times = user and not cpus and { user, sys } })) -- perf prints none for CPUs
end)
