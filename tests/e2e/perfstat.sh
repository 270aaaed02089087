# perfstat.sh: examples/stat.lua is perf stat for a perf user's habits. The
# same commands go through perf stat and stat.lua with the same options
# (the table, -x, and -j; -I; -r; a command that prints, one that fails;
# -a; -o), and every line of the two reports is compared with its numbers
# taken out; the command's own output and exit status must be the same too.
source "$(dirname "$0")/lib.sh"
EX=$(cd "$(dirname "$0")/../../examples" && pwd)

if ! command -v perf >/dev/null || ! perf stat -e task-clock true >/dev/null 2>&1; then
	skip_all "perf stat cannot count here (Debian's linux-perf)" "stat.lua against perf stat"
fi

# A report with its numbers, and whether a -r row shows its noise (which
# depends on the numbers), taken out; the distinct lines, sorted (-I
# reports may differ in how many intervals fit). A <not counted> row is
# left out too: whether an interval found the command running at all is
# the scheduler's call, on either tool (the row itself: unprivileged.sh).
norm() {
	sed -E 's/ *\( \+- *[0-9.]+% \)//; s/[0-9]+(\.[0-9]+)?/N/g; s/[KMG]\/sec/\/sec/g; s/ +/ /g; s/^ //; s/ $//' |
		grep -v '<not counted>' | sort -u
}
# same LABEL 'PERF OPTIONS' 'COMMAND': both tools, then the comparisons
same() {
	local label=$1 opts=$2 cmd=$3
	# shellcheck disable=SC2086 # the options are words
	perf stat $opts -- $cmd >"$TMP/perf.out" 2>"$TMP/perf.err"; local prc=$?
	# shellcheck disable=SC2086
	"$PERFSCRIPT" "$EX/stat.lua" -c "$cmd" $opts >"$TMP/ps.out" 2>"$TMP/ps.err"; local src=$?
	is "$(norm <"$TMP/ps.err")" "$(norm <"$TMP/perf.err")" "$label: the report's lines are perf stat's, numbers aside"
	is "$(cat "$TMP/ps.out")" "$(cat "$TMP/perf.out")" "$label: the command's output is untouched"
	# perf stat's status is the command's; perf 6.1 itself sometimes says 0
	# for a command that failed at once (false), so the command's own is
	# the reference when the two differ
	# shellcheck disable=SC2086
	$cmd >/dev/null 2>&1; local crc=$?
	[[ $prc == "$crc" ]] || diag "perf stat said $prc for a command that exits $crc"
	is "$src" "$crc" "$label: the exit status is the command's, as perf stat's ($crc)"
}

same "default events" "" "$WORKLOAD spin 50"
same "-x," "-x," "$WORKLOAD spin 50"
same "-x';'" "-x;" "$WORKLOAD spin 50"
same "-j" "-j" "$WORKLOAD spin 50"
same "-e" "-e task-clock,page-faults,cycles -e context-switches" "$WORKLOAD spin 50"
# without the clock perf stat gives no rate: a rate row needs the clock's
same "-e, no clock" "-e page-faults,context-switches" "$WORKLOAD spin 50"
same "-e, no clock, -x," "-x, -e page-faults,context-switches" "$WORKLOAD spin 50"
same "-I 100" "-I 100 -e task-clock,page-faults,cycles" "$WORKLOAD spin 250"
same "-I 100 -x," "-I 100 -x, -e task-clock,page-faults,cycles" "$WORKLOAD spin 250"
same "-I 100 -j" "-I 100 -j -e task-clock,page-faults,cycles" "$WORKLOAD spin 250"
same "-r 3, a command that prints" "-r 3" "echo hi"
same "-r 3 -x," "-r 3 -x, -e task-clock,page-faults,cycles" "echo hi"
same "-r 3 -j" "-r 3 -j -e task-clock,cycles" "echo hi"
same "a command that fails" "" "false"
printf 'exit 3\n' >"$TMP/exit3.sh"
same "a command that exits 3" "-x, -e task-clock" "sh $TMP/exit3.sh"

# -a: system-wide rows count cpu-clock, as perf names them.
perf stat -a -e cpu-clock,page-faults -- sleep 0.1 2>"$TMP/perf.err" >/dev/null
"$PERFSCRIPT" -a -T 0.1 "$EX/stat.lua" 2>"$TMP/ps.err" >/dev/null
like "$(cat "$TMP/ps.err")" $'stats for \'system wide\':\n\n +[0-9.]+ msec cpu-clock +# +[0-9.]+ CPUs utilized' \
	"-a: the first row is cpu-clock, as perf stat -a's"
is "$(norm <"$TMP/ps.err" | grep -E 'cpu-clock|page-faults|system wide')" \
	"$(norm <"$TMP/perf.err" | grep -E 'cpu-clock|page-faults|system wide')" "-a: its lines are perf stat -a's"

# The report goes to stderr, or to -o FILE; stdout is the command's.
"$PERFSCRIPT" "$EX/stat.lua" -c "echo out" -e task-clock -o "$TMP/report" >"$TMP/o.out" 2>"$TMP/o.err"
is "$(cat "$TMP/o.out")/$(cat "$TMP/o.err")" "out/" "-o FILE: the command's output on stdout, nothing on stderr"
like "$(cat "$TMP/report")" "msec task-clock" "-o FILE: the report is in FILE"
out=$("$PERFSCRIPT" "$EX/stat.lua" -c "touch $TMP/ran" -o /nonexistent/dir/r 2>&1); rc=$?
ok $([[ $rc -ne 0 && ! -e $TMP/ran ]]; echo $?) "-o into a missing directory fails before the command runs ($rc)"
like "$out" "stat.lua: -o /nonexistent/dir/r: No such file or directory" "and says why"
# gzip's output stays a gzip file: the report is not mixed into it
"$PERFSCRIPT" "$EX/stat.lua" -c "gzip -c $EX/stat.lua" -e task-clock >"$TMP/s.gz" 2>/dev/null
gzip -dc "$TMP/s.gz" | cmp -s - "$EX/stat.lua"; ok $? "a command writing binary to stdout: its output stays whole"

# User and sys seconds from wait4, to the microsecond (not 10 ms ticks).
"$PERFSCRIPT" "$EX/stat.lua" -c "$WORKLOAD spin 50" -e task-clock 2>"$TMP/t.err" >/dev/null
us=$(awk '/seconds (user|sys)/ { s += $1 } END { printf "%d", s * 1e6 + 0.5 }' "$TMP/t.err")
ok $(( us > 0 && us % 10000 != 0 ? 0 : 1 )) "user + sys is $us us: microseconds, not clock ticks"

# -a with a command counts the CPUs: perf stat heads it 'system wide' and
# prints no user/sys (they would be the command's alone)
"$PERFSCRIPT" "$EX/stat.lua" -a -c "sleep 0.1" -e cpu-clock 2>"$TMP/a.err" >/dev/null
is "$(grep -c "Performance counter stats for 'system wide':" "$TMP/a.err"):$(grep -c 'seconds user' "$TMP/a.err")" "1:0" \
	"-a -c CMD: 'system wide', no user/sys, as perf stat"
# Ctrl-C while the command runs: its user and sys so far, as perf stat
# prints them (the command has spun 300 ms of its own CPU by then)
"$PERFSCRIPT" "$EX/stat.lua" -c "$WORKLOAD spin 300; echo spun; $WORKLOAD spin 20000" -e task-clock \
	2>"$TMP/c.err" >"$TMP/c.out" &
ps=$!
wait_for "$TMP/c.out" "^spun" 20
kill -INT "$ps"; wait "$ps"
user=$(awk '/seconds user/ { print $1 }' "$TMP/c.err")
ok $(awk -v u="${user:-0}" 'BEGIN { exit !(u > 0) }'; echo $?) "after Ctrl-C: the command's user time so far ($user s)"
# regions.lua with its default events (task-clock) says nothing of faults
out=$("$PERFSCRIPT" "$EX/regions.lua" 2>&1)
ok $([[ $out != *"page faults"* && $out == *task-clock* ]]; echo $?) "regions.lua: no '0 page faults' when faults are not counted"

done_testing
