# lifecycle.sh: a script's life: main chunk, begin, context, loop, end
# exactly once; timers on the loop; exit(), -T, SIGINT, the target's end;
# syntax and runtime errors with their exit status.
source "$(dirname "$0")/lib.sh"

out=$("$PERFSCRIPT" -e '
io.write("chunk ")
probe("begin", function() io.write("begin1 ") end)
probe("begin", function() io.write("begin2 ") end)
probe("end", function() io.write("end1 ") end)
probe("end", function() print("end2") end)')
is "$out" "chunk begin1 begin2 end1 end2" "probes run in phase and registration order; end once"

out=$("$PERFSCRIPT" -e '
probe("end(10)", function() io.write("late ") end)
probe("end", function() io.write("a ") end)
probe("end(-5)", function() io.write("early ") end)
probe("end(0)", function() io.write("b ") end)
probe("end(10)", function() print("later") end)
probe("begin(1)", function() io.write("begin1 ") end)
probe("begin", function() io.write("begin0 ") end)')
is "$out" "begin0 begin1 early a b late later" "begin(N)/end(N) run by priority, then registration order"
out=$("$PERFSCRIPT" -e 'probe("end(x)", print)' 2>&1)
like "$out" "unknown probe point 'end\(x\)'" "a bad priority is an unknown point"

out=$("$PERFSCRIPT" -e '
local n = 0
probe("timer.ms(100)", function() n = n + 1 end)
probe("end", function() print(n) end)' -T 1)
ok $(( out >= 8 && out <= 12 ? 0 : 1 )) "timer.ms(100) fires 10±2 times in one second (got $out)"

start=$(date +%s%N)
out=$("$PERFSCRIPT" -e '
local n = 0
probe("timer.hz(50)", function() n = n + 1; if n == 5 then exit() end end)
probe("end", function() print("ended after", n) end)')
ms=$(( ($(date +%s%N) - start) / 1000000 ))
is "$out" "$(printf 'ended after\t5')" "exit() in a timer ends the session after that probe"
ok $(( ms < 2000 ? 0 : 1 )) "exit() ends promptly (${ms} ms)"

out=$("$PERFSCRIPT" -e '
probe("begin", function() print("b1"); exit() end)
probe("begin", function() print("b2") end)
probe("timer.s(10)", function() print("timer") end)
probe("end", function() print("end") end)')
is "$out" "$(printf 'b1\nend')" "exit() in begin skips later begin probes and the loop"

for u in s ms us ns hz; do
	out=$("$PERFSCRIPT" -e "probe('timer.$u(5000)', function() end)" -T 0.05 2>&1)
	ok $? "timer.$u(N) is accepted"
done
out=$("$PERFSCRIPT" -e 'probe("timer.sec(1)", print)' -T 0.01 2>&1); ok $? "timer.sec(N) is accepted as stap spells it"
out=$("$PERFSCRIPT" -e 'probe("timer.msecs(1)", print)' 2>&1); rc=$?
is "$rc" 1 "an unknown probe point fails"
like "$out" "\(command line\):1: unknown probe point 'timer.msecs\(1\)' \(did you mean 'timer.ms\(N\)'\?" \
	"an unknown probe point names the line and the nearest point"
out=$("$PERFSCRIPT" -e 'probe("timer.ms(0)", print)' 2>&1)
like "$out" "bad interval in probe point 'timer.ms\(0\)'" "a zero interval is refused"
out=$("$PERFSCRIPT" -e 'probe("begin", 42)' 2>&1)
like "$out" "bad argument #2 to 'probe' \(function expected, got number\)" "probe() checks its handler"

# -T ends a session that would otherwise wait for a signal.
start=$(date +%s%N)
out=$("$PERFSCRIPT" -a -T 0.3 -e 'probe("end", function() print("end") end)')
ms=$(( ($(date +%s%N) - start) / 1000000 ))
is "$out" end "-T ends a system-wide session and runs end probes"
ok $(( ms >= 250 && ms < 3000 ? 0 : 1 )) "-T 0.3 lasts about 0.3 s (${ms} ms)"

# SIGINT: end probes run once, exit status 0; a second SIGINT ends at once.
# Each signal goes once the session says it runs (its begin probe), not
# after a fixed sleep.
STARTED='probe("begin", function() print("started"); io.stdout:flush() end)'
"$PERFSCRIPT" -e "$STARTED"'
probe("timer.ms(10)", function() end)
probe("end", function() print("end ran") end)' >"$TMP/int.out" 2>&1 &
pid=$!
wait_line "$TMP/int.out" '^started' >/dev/null
kill -INT $pid
wait $pid; rc=$?
is "$rc" 0 "SIGINT ends the session with status 0"
is "$(cat "$TMP/int.out")" $'started\nend ran' "SIGINT runs end probes exactly once"

"$PERFSCRIPT" -e "$STARTED"'
probe("timer.ms(10)", function() end)
probe("end", function() print("in end"); io.stdout:flush(); while true do end end)' >"$TMP/int2.out" 2>&1 &
pid=$!
wait_line "$TMP/int2.out" '^started' >/dev/null
kill -INT $pid
wait_line "$TMP/int2.out" '^in end' >/dev/null
kill -INT $pid
t0=$(date +%s%N)
while kill -0 $pid 2>/dev/null && (( $(date +%s%N) - t0 < 500000000 )); do sleep 0.01; done
kill -0 $pid 2>/dev/null; is "$?" 1 "a second SIGINT ends a stuck end probe within 0.5 s"
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null

"$PERFSCRIPT" -e "$STARTED"'
probe("timer.ms(10)", function() end) probe("end", function() print("term") end)' >"$TMP/term.out" 2>&1 &
pid=$!
wait_line "$TMP/term.out" '^started' >/dev/null
kill -TERM $pid; wait $pid
is "$(cat "$TMP/term.out")" $'started\nterm' "SIGTERM runs end probes"

# Syntax error: file:line, exit 1, nothing opened and the command never runs.
printf 'probe("begin", function()\n  print("x"\nend)\n' >"$TMP/bad.lua"
out=$("$PERFSCRIPT" "$TMP/bad.lua" -c "touch $TMP/ran" 2>&1); rc=$?
is "$rc" 1 "a syntax error exits 1"
like "$out" "bad.lua:3: '\)' expected \(to close '\(' at line 2\)" "a syntax error names file and line"
[[ ! -e $TMP/ran ]]; ok $? "after a syntax error the -c command never runs"
out=$("$PERFSCRIPT" "$TMP/nonexistent.lua" 2>&1); rc=$?
is "$rc" 1 "a missing script exits 1"
like "$out" "cannot open .*nonexistent.lua" "a missing script is named"

# Runtime error in a probe: message, traceback, error probes, end probes, exit 1.
printf '%s\n' 'local function inner() error("boom") end' \
	'probe("timer.ms(10)", function() inner() end)' \
	'probe("timer.ms(10)", function() end)' \
	'probe("error", function(msg) print("error probe: " .. msg) end)' \
	'probe("end", function() print("end probe") end)' >"$TMP/rt.lua"
out=$("$PERFSCRIPT" "$TMP/rt.lua" 2>"$TMP/rt.err"); rc=$?
err=$(cat "$TMP/rt.err")
is "$rc" 1 "a runtime error in a probe exits 1"
like "$err" "error in timer.ms\(10\) probe: .*rt.lua:1: boom" "the error names the probe, file, line and message"
like "$err" "stack traceback:.*rt.lua:1: in.*inner" "the error carries a traceback"
is "$out" "$(printf 'error probe: %s:1: boom\nend probe' "$TMP/rt.lua")" "error probes, then end probes run"

out=$("$PERFSCRIPT" -e 'probe("end", function() error("e1") end) probe("end", function() print("e2 ran") end)' 2>&1); rc=$?
is "$rc" 1 "an error in an end probe exits 1"
like "$out" "e2 ran" "an error in one end probe does not skip the next"

out=$("$PERFSCRIPT" -e 'error({})' 2>&1)
like "$out" "error object is a table value" "a non-string error is reported"
out=$("$PERFSCRIPT" -e 'probe("begin", function() exit(7) end)'); is "$?" 7 "exit(N) sets the exit status"

# A strict _G (the common idiom: reading an undefined global raises) is a
# normal Lua error wherever C looks a global up: reported with its
# traceback, error and end probes run, exit 1; never a Lua panic (SIGABRT).
strict='setmetatable(_G, {__index = function(_, k) error("undefined " .. k, 2) end})'
out=$("$PERFSCRIPT" -e "$strict"'
probe("perfmon.sample(NAME)", function(s) end)
probe("error", function(m) print("error probe: " .. m) end)
probe("end", function() print("end probe") end)' 2>"$TMP/strict.err"); rc=$?
is "$rc" 1 "strict _G, a sample probe on an undefined global: exit 1 (not a panic: $rc)"
is "$out" "$(printf 'error probe: undefined NAME\nend probe')" "strict _G: the error and end probes run"
like "$(cat "$TMP/strict.err")" "perfscript: error in perfmon.sample\(NAME\) probe: undefined NAME" \
	"strict _G: the error is reported as a Lua error"
! grep -q PANIC "$TMP/strict.err"; ok $? "strict _G: no PANIC"
out=$("$PERFSCRIPT" -e "$strict"'
probe("perfmon.lost(NAME)", function() end)
probe("end", function() print("end probe") end)' 2>&1); rc=$?
is "$rc:$(tail -1 <<<"$out")" "1:end probe" "strict _G, a lost probe: exit 1, end probes run"
out=$("$PERFSCRIPT" -e "$strict"'
c = perfmon_allocate_counter("task-clock/period=1000000/")
probe("perfmon.sample(c)", function(s) end)
probe("begin", exit)
probe("end", function() print("end probe") end)' 2>&1); rc=$?
is "$rc:$out" "0:end probe" "strict _G with the global defined: runs as before"

# docs/guide.md: a self-measuring script with no timer ends right after
# begin, sample probes or not (its samples come from its own handlers).
out=$(timeout 10 "$PERFSCRIPT" -e '
c = perfmon.counter("task-clock/period=100000/")
local n = 0
probe("perfmon.sample(c)", function() n = n + 1 end)
probe("end", function() print("end") end)' 2>&1); rc=$?
is "$rc/$out" "0/end" "self with a sample probe and no timer ends after begin"

done_testing
