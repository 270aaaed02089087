# cli.sh: the perfscript command line: options, --describe, -e, arg, -o, -I,
# usage errors. No counters need privileges here.
source "$(dirname "$0")/lib.sh"

out=$("$PERFSCRIPT" --version); ok $? "--version exits 0"
like "$out" '^perfscript [0-9]+\.[0-9]+\.[0-9]+' "--version prints the version"
out=$("$PERFSCRIPT" --help); like "$out" "-c 'CMD args'" "--help lists -c"

out=$("$PERFSCRIPT" 2>&1); rc=$?
is "$rc" 2 "no script is a usage error (exit 2)"
like "$out" "usage: perfscript" "no script prints the usage"
out=$("$PERFSCRIPT" -c ls 2>&1); rc=$?
is "$rc/$out" "2/perfscript: no script given (use a script file, -e CHUNK or -i)
(perfscript --help lists the options)" "options but no script: says what is missing, exit 2"
out=$("$PERFSCRIPT" -p nope -e 'x=1' 2>&1); is "$?" 2 "-p wants a number"
like "$out" "-p wants a process id, got 'nope'" "-p error names the bad value"
out=$("$PERFSCRIPT" -T -1 -e 'x=1' 2>&1); is "$?" 2 "-T wants a positive number"
out=$("$PERFSCRIPT" -p 1 -a -e 'x=1' 2>&1); like "$out" "cannot be combined" "-p with -a is refused"
out=$("$PERFSCRIPT" -b 3 -e 'x=1' 2>&1); rc=$?
is "$rc" 2 "-b wants a power of two"
like "$out" "-b wants a power of two of pages from 1 to 1048576 \(4 GiB\), e.g. 1024; got '3'" "-b names the bad value"
out=$("$PERFSCRIPT" -b 2097152 -e 'x=1' 2>&1); rc=$?
is "$rc" 2 "-b above 1048576 pages is a usage error, not the default ring"
like "$out" "from 1 to 1048576" "-b says its limit"
for t in inf nan 1e-10 18446744074 0 ''; do
	out=$("$PERFSCRIPT" -T "$t" -e 'x=1' 2>&1); rc=$?
	is "$rc/${out%%$'\n'*}" "2/perfscript: -T wants a number of seconds from 1e-9 to 1e9 (e.g. 2.5), got '$t'" "-T '$t' is a usage error that names the range"
done
out=$("$PERFSCRIPT" -T 1e-9 -a -e 'probe("end", function() print("end") end)' 2>&1)
is "$out" end "-T 1e-9 (the shortest) ends the session at once, end probes run"
out=$("$PERFSCRIPT" -e 'exit(256)' 2>&1); rc=$?
is "$rc" 1 "exit(256) is an error, not a silent exit 0"
like "$out" "bad argument #1 to 'exit' \(exit status must be 0 to 255\)" "exit(256) says the range"
"$PERFSCRIPT" -e 'exit(255)'; is "$?" 255 "exit(255) exits 255"
out=$("$PERFSCRIPT" --backend=foo -e 'x=1' 2>&1)
like "$out" "--backend wants auto, bpf or perf, got 'foo'" "--backend names the bad value"
out=$("$PERFSCRIPT" --describe 2>&1); rc=$?
is "$rc:$out" "2:perfscript: --describe wants one event string, e.g. --describe 'cycles:u'
(perfscript --help lists the options)" "--describe without a string is a usage error"
out=$("$PERFSCRIPT" -o "$TMP/no/such/dir/out.txt" -e 'print(1)' 2>&1); rc=$?
is "$rc:$out" "1:perfscript: -o $TMP/no/such/dir/out.txt: No such file or directory" "-o into a missing directory says so and exits 1"

out=$("$PERFSCRIPT" --describe 'cycles:u')
is "$out" "$(printf 'name=cycles:u\nleader=0\ntype=0\nconfig=0x0\nexclude_kernel=1\nexclude_hv=1\ndisabled=1\nread_format=0x3')" \
	"--describe prints the attr fields of cycles:u"
out=$("$PERFSCRIPT" --describe --json '{task-clock,page-faults}')
like "$out" '^\[' "--describe --json prints a JSON array"
if command -v python3 >/dev/null; then
	n=$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d), d[1]["leader"], d[1]["name"])')
	is "$n" "2 0 page-faults" "--describe --json parses: two events, member led by event 0"
else
	skip "python3 not installed" "--describe --json parses"
fi
out=$("$PERFSCRIPT" --describe 'cycels:u' 2>&1); rc=$?
is "$rc" 1 "--describe of a bad string exits 1"
like "$out" "did you mean 'cycles'\?" "--describe suggests the nearest name"
like "$out" $'\n  cycels:u\n  \\^~~~~~' "--describe underlines the bad token"

out=$("$PERFSCRIPT" -e 'print(arg[0], #arg, ...)' -- a b 2>&1)
is "$out" "$(printf -- '-e\t2\ta\tb')" "-e code gets arg and ... like lua(1)"
# After the script's name only the target options are perfscript's: the
# rest, --help and --json and -e included, is the script's, in order.
printf 'print(table.concat(arg, " "))\n' >"$TMP/args.lua"
out=$("$PERFSCRIPT" "$TMP/args.lua" --json -e x -o y --help -I d -v -c true -T 5 2>&1)
is "$out" "--json -e x -o y --help -I d -v" "after the script: all but -c, -p, -a, -C, -T go to the script, without --"
out=$("$PERFSCRIPT" "$TMP/args.lua" -- -c x -a 2>&1)
is "$out" "-c x -a" "after --, even the target options are the script's"
printf 'print(arg[0], arg[1], select("#", ...))\n' >"$TMP/args.lua"
out=$("$PERFSCRIPT" "$TMP/args.lua" one two)
is "$out" "$(printf '%s\tone\t2' "$TMP/args.lua")" "script arguments land in arg and ..."

"$PERFSCRIPT" -o "$TMP/out.txt" -e 'printf("%d-%s\n", 42, "x"); print("p")'
is "$(cat "$TMP/out.txt")" "$(printf '42-x\np')" "-o writes printf and print output to FILE"

mkdir -p "$TMP/tapsets"
printf 'return { answer = function() return 42 end }\n' >"$TMP/tapsets/mytap.lua"
out=$("$PERFSCRIPT" -I "$TMP/tapsets" -e 'print(require("mytap").answer())')
is "$out" 42 "-I DIR puts DIR on the tapset path"
out=$(PERFSCRIPT_PATH="$TMP/tapsets" "$PERFSCRIPT" -e 'print(require("mytap").answer())')
is "$out" 42 "PERFSCRIPT_PATH puts its directories on the tapset path"
out=$("$PERFSCRIPT" -e 'print(require("perfmon") == perfmon)')
is "$out" true 'require "perfmon" returns the perfmon global'

out=$("$PERFSCRIPT" -e 'print(pid() > 0, tid() == pid(), cpu() >= 0, execname(), target() == pid())')
is "$out" "$(printf 'true\ttrue\ttrue\tperfscript\ttrue')" "helpers describe perfscript's own process"
out=$("$PERFSCRIPT" -e 'local t = gettimeofday_ns(); print(math.abs(t // 1000000000 - os.time()) <= 1)')
is "$out" true "gettimeofday_ns is wall-clock nanoseconds"

out=$("$PERFSCRIPT" -v -T 0.05 -e 'probe("timer.s(5)", print)' 2>&1)
like "$out" "session started: 0 counters, 1 timers.*session ended: -T expired" "-v says when and why the session starts and ends"

# sysfs .scale/.unit: counter:scaled() applies them (a fixture PMU; not opened).
out=$(PERFSCRIPT_SYSFS="$(cd "$(dirname "$0")/../fixtures/sysfs" && pwd)" "$PERFSCRIPT" -e '
local e = assert(perfmon.counter("power/energy-pkg/"))
local v, unit = e:scaled()
local t = assert(perfmon.counter("task-clock")); t:start()
local tv, tunit = t:scaled()
print(v, unit, math.type(tv), tv > 0, tunit == "")')
is "$out" "$(printf '0.0\tJoules\tfloat\ttrue\ttrue')" "counter:scaled() gives value x .scale and the .unit"

# Output is never lost silently.
printf 'print("kept")\n' >"$TMP/self.lua"
out=$("$PERFSCRIPT" -o "$TMP/self.lua" "$TMP/self.lua" 2>&1); rc=$?
is "$rc/$(cat "$TMP/self.lua")" '1/print("kept")' "-o naming the script is refused and the script stays intact"
like "$out" "-o .*self.lua is the script itself: refusing to overwrite it" "-o onto the script says why"
for how in "-o /dev/full" ">/dev/full"; do
	out=$(eval "\"\$PERFSCRIPT\" -e 'for i = 1, 10000 do print(i) end' $how" 2>&1); rc=$?
	where=${how#-o }; [[ $how == ">"* ]] && where="standard output"
	is "$rc/$out" "1/perfscript: cannot write to $where: No space left on device" \
		"a script writing to a full device ($how) exits 1 and says why"
done
out=$("$PERFSCRIPT" -e 'io.write("x")' -o /dev/full 2>&1); is "$?" 1 "io.write's failure is reported too"
out=$("$PERFSCRIPT" --describe cycles 2>&1 >/dev/full); rc=$?
is "$rc/$out" "1/perfscript: cannot write to standard output: No space left on device" "--describe into a full device exits 1"
out=$("$PERFSCRIPT" -l 2>&1 >/dev/full); is "$?" 1 "-l into a full device exits 1"
rm -f "$TMP/closed.txt"
"$PERFSCRIPT" -e 'print("written")' -o "$TMP/closed.txt" >&-; rc=$?
is "$rc/$(cat "$TMP/closed.txt")" "0/written" "with standard output closed, -o FILE still writes FILE"
out=$("$PERFSCRIPT" -e 'print("lost")' 2>&1 >&-)
like "$out" "standard output is closed: the script's output is discarded \(give -o FILE\)" "a closed standard output is said, not silent"

# Messages (issue 21): several -e run in order, each its own chunk, as
# lua(1) runs them; a -c string with an open quote or nothing in it is a
# usage error (exit 2), never run as something else.
out=$("$PERFSCRIPT" -e 'local x = 1; print("first", x)' -e 'print("second", x)' 2>&1)
is "$out" "first	1
second	nil" "-e twice: both chunks run, in order, each its own chunk"
out=$("$PERFSCRIPT" -e 'probe("end", function() print("end ran") end)' -e 'x = (' 2>&1); rc=$?
like "$rc $out" "^1 perfscript: \(command line\):1: unexpected symbol near <eof>.*end ran" \
	"a second -e that does not compile: reported, the first one's end probe still runs, exit 1"
out=$("$PERFSCRIPT" -c '"unterminated' -e 'x = 1' 2>&1); rc=$?
like "$rc $out" "^2 perfscript: -c: a quote is left open in '\"unterminated'" "-c with an open quote: refused, exit 2"
out=$("$PERFSCRIPT" -c '' -e 'x = 1' 2>&1); rc=$?
like "$rc $out" "^2 perfscript: -c wants a command, got ''" "-c '': a usage error, exit 2"
if need_root && command -v setpriv >/dev/null && unshare -m --propagation private true 2>/dev/null; then
	cp "$PERFSCRIPT" "$TMP/ps"; chmod 755 "$TMP" "$TMP/ps"
	out=$(unshare -m --propagation private bash -c 'mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
setpriv --reuid=65534 --regid=65534 --clear-groups "$1" -l "sched:*"' _ "$TMP/ps" 2>&1)
	like "$out" "no event matches 'sched:\*'; tracepoints are not listed: permission denied reading tracefs" \
		"as nobody, -l 'sched:*' says tracefs was not readable, not only that nothing matched"
else
	skip "needs root, setpriv and unshare -m" "-l as nobody says permission denied"
fi
done_testing
