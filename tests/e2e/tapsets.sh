# tapsets.sh: the tapset library from real scripts: require from anywhere,
# autoprint at the session's end, interval reports on a timer, and
# examples/stat.lua against perf stat counting the very same run.
source "$(dirname "$0")/lib.sh"
EX=$(cd "$(dirname "$0")/../../examples" && pwd)
cd "$TMP" || exit 1 # tapsets come from beside the binary, not the cwd

out=$("$PERFSCRIPT" -e 'local s = require("stats").new("lat")
for _, v in ipairs({1, 2, 3, 900}) do s:add(v) end
probe("end", function() print("script end") end)' 2>&1)
like "$out" $'^script end\nlat @count=4 @min=1 @max=900 @sum=906 @avg=226.500\nvalue \\|-+ count\n' \
	"an aggregate never printed is printed after the script's end probes"
like "$out" $'\n  512 \\|@ +1\n' "autoprint includes its log histogram"
out=$("$PERFSCRIPT" -e 'local stats = require "stats"; stats.autoprint(false)
stats.new("lat"):add(1)' 2>&1)
is "$out" "" "stats.autoprint(false) turns autoprint off"
out=$("$PERFSCRIPT" -e 'local k = require("stats").keyed("calls")
k:add("read", 10); k:add("read", 30); k:add("write", 5)
probe("end", function() for key, s in k:sorted("sum") do print(key, s:sum()) end end)' 2>&1)
is "$out" $'read\t40\nwrite\t5' "a keyed aggregate the script iterated is not printed again"

mkdir -p "$TMP/lib"; echo 'return { hello = function() return "mine" end }' >"$TMP/lib/mytap.lua"
out=$("$PERFSCRIPT" -I "$TMP/lib" -e 'print(require("mytap").hello(), require("stats") ~= nil)')
is "$out" $'mine\ttrue' "-I DIR adds a tapset directory beside the shipped tapsets"

# interval: perf stat -x style CSV lines on a timer, over a command.
out=$("$PERFSCRIPT" "$EX/stat.lua" -c "$WORKLOAD spin 350" --interval 100 --csv 2>&1); ok $? "stat.lua --interval runs"
n=$(grep -cE '^[0-9]+\.[0-9]{9},[0-9.]+,msec,task-clock,[0-9]+,100\.00,[0-9.]+,CPUs utilized$' <<<"$out")
ok $(( n >= 3 ? 0 : 1 )) "--interval 100 --csv: a task-clock CSV line per 100 ms (got $n)"
n=$(grep -cE '^[0-9.]+,[0-9]+,,page-faults,[0-9]+,[0-9.]+,[0-9.]+,/sec$' <<<"$out")
ok $(( n >= 3 ? 0 : 1 )) "--interval 100 --csv: page-faults lines with 8 fields (got $n)"

# stat.lua -c: perf stat's rows for the default events.
out=$("$PERFSCRIPT" "$EX/stat.lua" -c "$WORKLOAD pages 5000" 2>&1); ok $? "stat.lua -c runs"
like "$out" "Performance counter stats for (process id '[0-9]+'|'.*workload.*'):" "stat.lua prints perf stat's title"
like "$out" $'\n +[0-9]+\\.[0-9]{2} msec task-clock +# +[0-9.]+ CPUs utilized\n' "stat.lua: task-clock with CPUs utilized"
for ev in context-switches cpu-migrations; do
	like "$out" $'\n +[0-9]+ +'"$ev"$' +# +[0-9.]+ [KMG]?/sec\n' "stat.lua: $ev with its rate"
done
like "$out" $'\n +[0-9]{4,} +page-faults +# +[0-9.]+ [KMG]?/sec\n' "stat.lua: page-faults with its rate"
for ev in cycles instructions branches branch-misses; do
	like "$out" $'\n +(<not supported>|[0-9]+) +'"$ev"$'( |\n)' "stat.lua: $ev counted or <not supported>"
done
like "$out" $'\n +[0-9]+\\.[0-9]{9} seconds time elapsed' "stat.lua: elapsed time"
like "$out" $'\n +[0-9]+\\.[0-9]{9} seconds user\n +[0-9]+\\.[0-9]{9} seconds sys' "stat.lua -c: the children's user and sys seconds"

# stat.lua --events on an exact workload, beside perf stat on its own run of it:
# the same rows, the exact count, "/sec" per task-clock second.
out=$("$PERFSCRIPT" "$EX/stat.lua" -c "$WORKLOAD getppid 100000" -e syscalls:sys_enter_getppid,page-faults,task-clock 2>&1)
ok $? "stat.lua -e EVENTS runs"
like "$out" $'\n +100000 +syscalls:sys_enter_getppid +# +[0-9.]+ [KMG]?/sec\n' "stat.lua -e: the exact tracepoint count with its rate"
rate=$(sed -nE 's/^ +100000 +syscalls:sys_enter_getppid +# +([0-9.]+ [KMG]?)\/sec$/\1/p' <<<"$out")
ms=$(sed -nE 's/^ +([0-9.]+) msec task-clock .*/\1/p' <<<"$out")
awk -v r="$rate" -v ms="$ms" 'BEGIN { split(r, f, " "); m = f[2] == "K" ? 1e3 : f[2] == "M" ? 1e6 : f[2] == "G" ? 1e9 : 1
	r = f[1] * m; e = 100000 / (ms / 1000); exit !(ms > 0 && (r - e) ^ 2 < (e * 0.01) ^ 2) }'
ok $? "stat.lua -e: /sec is the count per task-clock second (${rate}/sec, task-clock $ms msec)"
runs=$(for _ in $(seq 20); do "$PERFSCRIPT" "$EX/stat.lua" -c "$WORKLOAD getppid 100000" -e syscalls:sys_enter_getppid,page-faults 2>&1 | awk '$2 == "syscalls:sys_enter_getppid" { printf "%s ", $1 }'; done)
is "$runs" "$(printf '100000 %.0s' $(seq 20))" "stat.lua -e: exactly 100000 in 20 runs of 20 (counting starts at exec)"
if ! command -v perf >/dev/null || ! perf stat -e task-clock true >/dev/null 2>&1; then
	skip "perf stat cannot count here" "stat.lua -e has perf stat's rows"
else
	perf stat -e syscalls:sys_enter_getppid,page-faults,task-clock "$WORKLOAD" getppid 100000 2>"$TMP/perf.txt" >/dev/null
	theirs=$(sed -nE 's/^ +([0-9.]+)( msec)? +([a-z_:-]+) .*/\3/p' "$TMP/perf.txt" | tr '\n' ' ')
	mine=$(sed -nE 's/^ +([0-9.]+)( msec)? +([a-z_:-]+) .*/\3/p' <<<"$out" | tr '\n' ' ')
	is "$mine" "$theirs" "stat.lua -e: the rows perf stat prints, in its order"
	pf=$(awk '$2 == "page-faults" { print $1 }' "$TMP/perf.txt"); mf=$(awk '$2 == "page-faults" { print $1 }' <<<"$out")
	ok $(( mf > 0 && mf < 2 * pf + 20 && pf < 2 * mf + 20 ? 0 : 1 )) "stat.lua -e: page-faults near perf stat's ($mf vs $pf)"
	like "$(cat "$TMP/perf.txt")" "seconds user" "perf stat prints the user line stat.lua copies"
fi
out=$("$PERFSCRIPT" -a -T 0.2 "$EX/stat.lua" -e task-clock 2>&1)
like "$out" "Performance counter stats for 'system wide':" "stat.lua -a: perf stat's 'system wide' title"

# stat.lua -r N: the means of N runs with the noise of each, as perf stat -r.
out=$("$PERFSCRIPT" "$EX/stat.lua" -c "$WORKLOAD getppid 10000" -r 5 -e syscalls:sys_enter_getppid,task-clock 2>&1)
ok $? "stat.lua -r 5 runs"
like "$out" "Performance counter stats for '.*workload getppid 10000' \(5 runs\):" "stat.lua -r: perf stat's title with the number of runs"
like "$out" $'\n +10000 +syscalls:sys_enter_getppid +# +[0-9.]+ [KMG]?/sec\n' \
	"stat.lua -r: an exact count has a mean of exactly 10000 and no noise"
like "$out" $'\n +[0-9]+\\.[0-9]{2} msec task-clock +# +[0-9.]+ CPUs utilized +\\( \\+- +[0-9]+\\.[0-9]{2}% \\)\n' \
	"stat.lua -r: task-clock's mean with its '( +- X% )'"
col=$(awk '/msec task-clock/ { print index($0, "( +-") }' <<<"$out")
is "$col" 94 "stat.lua -r: the noise in perf stat's column"
like "$out" $'\n +[0-9]+\\.[0-9]+ \\+- [0-9]+\\.[0-9]+ seconds time elapsed  \\( \\+- +[0-9.]+% \\)' \
	"stat.lua -r: the mean elapsed time +- its deviation"
if command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1; then
	perf stat -r 5 -e syscalls:sys_enter_getppid,task-clock "$WORKLOAD" getppid 10000 2>"$TMP/perf-r.txt" >/dev/null
	theirs=$(grep -E 'stats for|sys_enter_getppid|task-clock|elapsed' "$TMP/perf-r.txt" |
		sed -E 's/[0-9]+\.[0-9]+/N/g; s/ +/ /g; s/# N [KMG]?\/sec/# R/; s/\(N runs\)/(5 runs)/; s/ +$//')
	mine=$(grep -E 'stats for|sys_enter_getppid|task-clock|elapsed' <<<"$out" |
		sed -E 's/[0-9]+\.[0-9]+/N/g; s/ +/ /g; s/# N [KMG]?\/sec/# R/; s/\(N runs\)/(5 runs)/; s/ +$//')
	is "$mine" "$theirs" "stat.lua -r: the lines perf stat -r prints, numbers aside"
else
	skip "perf stat cannot count here" "stat.lua -r: the lines perf stat -r prints"
fi
# A failing command still counts; Ctrl-C ends the repeats with the runs done.
out=$("$PERFSCRIPT" "$EX/stat.lua" -c false -r 3 -e task-clock 2>&1)
like "$out" "stats for 'false' \(3 runs\)" "stat.lua -r: a command that exits 1 is still counted, 3 runs of 3"
"$PERFSCRIPT" "$EX/stat.lua" -c "sleep 0.2" -r 20 -e task-clock >"$TMP/r.out" 2>&1 &
ps_pid=$!
# once the repeats are under way (a run of its own: --run-values), Ctrl-C
for _ in $(seq 500); do pgrep -P $ps_pid -f -- "--run-values" >/dev/null && break; sleep 0.02; done
kill -INT $ps_pid; wait $ps_pid
out=$(cat "$TMP/r.out")
like "$out" "stat.lua: run [0-9]+ of 20 was interrupted; the means are of [1-9][0-9]* runs" "stat.lua -r: Ctrl-C ends the repeats and says so"
like "$out" "stats for 'sleep 0.2' \([1-9][0-9]* runs\)" "stat.lua -r: ... and reports the runs that ended"
like "$out" "seconds time elapsed" "stat.lua -r: ... with the elapsed line"
out=$("$PERFSCRIPT" "$EX/stat.lua" -r 3 -p $$ 2>&1)
like "$out" "stat.lua: -r N repeats a command: give it one with -c 'CMD'" "stat.lua -r without -c says what to add"
# No target is a usage error (it measured perfscript itself, "process id
# NNN"), and perf stat's habit, the command as an argument, gets its -c.
for ex in stat profile offcpu wallclock syscount opensnoop counters; do
	out=$("$PERFSCRIPT" "$EX/$ex.lua" 2>&1); rc=$?
	like "$rc $out" "^2 $ex.lua: no target: give a command \(-c 'CMD args'\), a process \(-p PID\) or all CPUs \(-a\)" \
		"$ex.lua without -c, -p or -a: a usage error, exit 2"
done
out=$("$PERFSCRIPT" "$EX/stat.lua" ./app --flag 2>&1); rc=$?
like "$rc $out" "^2 stat.lua: unexpected argument './app': to measure a command, give it as -c './app --flag'" \
	"stat.lua ./app: answered with the -c that runs it"
out=$("$PERFSCRIPT" "$EX/stat.lua" -c true -r 0 2>&1)
like "$out" "stat.lua: -r wants a whole number of at least 1 \(N\), got '0'" "stat.lua -r 0 is refused"

# The same run, counted by perf stat and stat.lua both attached with -p.
if ! command -v perf >/dev/null; then
	skip "perf is not installed" "stat.lua agrees with perf stat"
elif ! need_root; then
	skip "attaching perf stat and perfscript to one process needs root here" "stat.lua agrees with perf stat"
else
	mkfifo "$TMP/ready"
	"$WORKLOAD" --wait-usr1 pages 20000 >"$TMP/ready" &
	read -r _ wpid <"$TMP/ready"
	perf stat -x, -p "$wpid" -o "$TMP/perf.csv" &
	ppid=$!
	"$PERFSCRIPT" -p "$wpid" "$EX/stat.lua" >"$TMP/stat.out" 2>&1 &
	spid=$!
	sleep 0.5; kill -USR1 "$wpid"
	wait $spid; ok $? "stat.lua -p runs"
	wait $ppid
	theirs() { awk -F, -v e="$1" '$3 == e { print $1 }' "$TMP/perf.csv"; }
	ours() { awk -v e="$1" '$2 == e || $3 == e { print $1 }' "$TMP/stat.out"; }
	for ev in task-clock context-switches cpu-migrations page-faults; do
		a=$(ours "$ev") b=$(theirs "$ev")
		diag "$ev: stat.lua $a, perf stat $b"
		# within 2%, or 1 for the counts that are 0 or 1 on a quiet run
		awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; t = b * 0.02; if (t < 1) t = 1
			exit !(a != "" && b != "" && d <= t) }'
		ok $? "$ev within 2% of perf stat on the same run ($a vs ${b:-none})"
	done
	for ev in cycles instructions; do
		b=$(theirs "$ev"); a=$(grep -E " $ev\$| $ev " "$TMP/stat.out" | head -1)
		if [[ $b == "<not supported>" ]]; then like "$a" "<not supported>" "$ev: <not supported> where perf stat says so"
		else like "$a" "^ +[0-9]+ " "$ev: counted where perf stat counts it"; fi
	done
fi

# The interval CSV beside perf stat -x, -I 100 on the same kind of run, field
# by field (not the timings): count, unit, event, running %, metric unit.
shape='{ u = $8; sub(/^[KMG]/, "", u); n = ($2 ~ /^[0-9]+(\.[0-9]+)?$/ && $5 ~ /^[0-9]+$/ && $7 ~ /^[0-9]+\.[0-9]+$/);
	print NF, $3, $4, $6, u, n }'
evs=task-clock,page-faults,syscalls:sys_enter_getppid
mine=$("$PERFSCRIPT" "$EX/stat.lua" -c "$WORKLOAD getppid 300000" --interval 100 --csv -e $evs 2>&1 | head -3 | awk -F, "$shape")
like "$mine" $'^8 msec task-clock 100.00 CPUs utilized 1\n8  page-faults 100.00 /sec 1\n8  syscalls:sys_enter_getppid 100.00 /sec 1$' \
	"interval CSV: perf stat -x, -I's 8 fields, units and 100.00% running"
if ! command -v perf >/dev/null || ! perf stat -e task-clock true >/dev/null 2>&1; then
	skip "perf stat cannot count here" "interval CSV matches perf stat -x, -I field by field"
else
	theirs=$(perf stat -x, -I 100 -e $evs "$WORKLOAD" getppid 300000 2>&1 >/dev/null | head -3 | sed 's/^ *//' | awk -F, "$shape")
	is "$mine" "$theirs" "interval CSV matches perf stat -x, -I field by field"
fi

# The profile tapset's spec, and docs/tapsets.md's profile_files example
# as written: its folded file holds the samples it counted.
out=$("$PERFSCRIPT" -e 'local profile = require "profile"
print(profile.spec { freq = 999, stacks = true })
print(profile.spec { event = "page-faults", freq = 7, max_stack = 9, cgroup = true })
print(profile.spec { event = "syscalls:sys_enter_read", g = true })
print(profile.spec { event = "cpu-clock/call-graph=fp/", call_graph = "dwarf" })' 2>&1)
is "$out" "cpu-clock/freq=999,call-graph=fp/
page-faults/freq=7,max-stack=9,cgroup/
syscalls:sys_enter_read/call-graph=fp/
nil	--call-graph dwarf contradicts the event's call-graph=fp: give one of them" \
	"profile.spec: freq for counting events only, stacks, max-stack and cgroup terms, a contradiction refused"
DOCS=$EX/../docs
awk '/^## profile_files/ { w = 1 } w && /^```lua$/ { f = 1; next } f && /^```$/ { exit } f' "$DOCS/tapsets.md" \
	| sed "s|/tmp/cpu\\.|$TMP/cpu.|g" >"$TMP/files.lua"
out=$("$PERFSCRIPT" "$TMP/files.lua" -c "$WORKLOAD spin 300" 2>&1)
n=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/cpu.folded" 2>/dev/null)
like "$out:$n:$(head -c 5 "$TMP/cpu.svg" 2>/dev/null)" "^true:[1-9][0-9]*:<\?xml" \
	"docs/tapsets.md's profile_files example: folded stacks of its samples ($n) and a flame graph"

awk '/^## perfstat/ { w = 1 } w && /^```lua$/ { f = 1; next } f && /^```$/ { exit } f' "$DOCS/tapsets.md" >"$TMP/st.lua"
out=$("$PERFSCRIPT" "$TMP/st.lua" -c "$WORKLOAD spin 100" 2>&1)
like "$out" "Performance counter stats for 'example':.* msec task-clock +# +[0-9.]+ CPUs utilized.* page-faults .*seconds time elapsed" \
	"docs/tapsets.md's perfstat example: perf stat's report of its two rows"

done_testing

