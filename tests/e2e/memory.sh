# memory.sh: a session's memory stays bounded however many processes come
# and go. A profile-like script (sampling task-clock, naming each sample's
# command) watches 4000 and then 14000 short-lived processes; the second
# session's peak RSS may not exceed the first's by more than 1.5 MB (it grew
# by about 0.45 KB per process before: 4.4 MB for the 10000 more).
source "$(dirname "$0")/lib.sh"

script='c = perfmon.counter("task-clock/freq=499/")
local names = 0
probe("perfmon.sample(c)", function(s) if s.comm ~= "" then names = names + 1 end end)
probe("end", function()
  for l in io.lines("/proc/self/status") do
    local kb = l:match("^VmHWM:%s+(%d+)")
    if kb then print(kb) end
  end
end)'
peak() { "$PERFSCRIPT" -e "$script" -c "$WORKLOAD forks $1" 2>"$TMP/err"; }
small=$(peak 4000)
big=$(peak 14000)
[[ $small =~ ^[0-9]+$ && $big =~ ^[0-9]+$ ]]
ok $? "both sessions report their peak RSS ($small KB, $big KB; $(head -c 200 "$TMP/err"))"
(( big <= small + 1536 ))
ok $? "10000 more processes grow the peak RSS by at most 1.5 MB (by $(( big - small )) KB)"

# perfmon.symbols{exited =, exited_sampled =}: that many exited processes
# keep their mappings, the rest go; the default keeps thousands.
kept='c = perfmon.counter("task-clock/freq=999/")
if arg[1] == "few" then perfmon.symbols { exited = 20, exited_sampled = 10 } end
probe("perfmon.sample(c)", function(s) local _ = s.sym end)
probe("end", function() perfmon.symbolize(0, 0); print(perfmon.symbols().exited) end)'
few=$("$PERFSCRIPT" -e "$kept" -c "$WORKLOAD forks 2000" -- few 2>"$TMP/err")
all=$("$PERFSCRIPT" -e "$kept" -c "$WORKLOAD forks 2000" -- all 2>>"$TMP/err")
ok $(( !(${few:-99} <= 30 && ${all:-0} >= 1000) )) "perfmon.symbols{exited = 20, exited_sampled = 10}: at most 30 of 2000 exited processes kept ($few; $all by default)"
out=$("$PERFSCRIPT" -e 'print(pcall(perfmon.symbols, { exited = 0 })); print(pcall(perfmon.symbols, { budget = 10 }))' 2>&1)
like "$out" "perfmon.symbols: exited wants at least 1 process" "perfmon.symbols{exited = 0}: refused, saying what it wants"
like "$out" "perfmon.symbols: budget wants at least 1 MiB" "perfmon.symbols{budget = 10}: refused, saying what it wants"
done_testing
