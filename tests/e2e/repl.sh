# repl.sh: perfscript -i, from a pipe and on a terminal (tmux): expressions
# print, incomplete chunks continue, errors do not end the session, counters
# open after each chunk, probes fire while the prompt waits, Ctrl-C drops
# the line and Ctrl-D ends the session with its end probes.
source "$(dirname "$0")/lib.sh"

out=$(printf '%s\n' 'c = perfmon.counter("task-clock")' '1 + 1' 'for i = 1, 2 do' '  print(i * 10)' 'end' \
	'c:read() > 0' 'probe("end", function() print("end probe") end)' 'error("oops")' 'print("still here")' |
	"$PERFSCRIPT" -i 2>"$TMP/err"); rc=$?
is "$rc" 0 "-i from a pipe exits 0 at end of input"
is "$out" "$(printf '2\n10\n20\ntrue\nstill here\nend probe')" \
	"-i: expressions print, chunks continue, counters open, an error does not end it, end probes run"
like "$(cat "$TMP/err")" "^stdin:1: oops" "-i: an error is printed with its line"
out=$(printf 'x = \n' | "$PERFSCRIPT" -i 2>&1)
like "$out" "stdin ended inside a chunk" "-i: input ending inside a chunk says so"
out=$(printf 'exit(3)\nprint("not reached")\n' | "$PERFSCRIPT" -i 2>&1); rc=$?
is "$rc:$out" "3:" "-i: exit(N) ends the session with status N"
out=$("$PERFSCRIPT" -i </dev/null 2>&1); ok $? "-i with stdin at /dev/null ends cleanly ($out)"
# With -c the command runs to its end, whatever the input did, and its
# status is perfscript's (the end of a piped input killed it before it ran,
# exit 0).
out=$(printf '1+1\nprobe("end", function() print("end probe") end)\n' |
	"$PERFSCRIPT" -i -c 'sh -c "sleep 0.2; echo ran; exit 3"' 2>&1); rc=$?
is "$rc:$out" "$(printf '3:2\nran\nend probe')" "-i -c from a pipe: the command runs to its end, then the end probes; its status"
out=$("$PERFSCRIPT" -i -e 'x=1' 2>&1); is "$?" 2 "-i with -e is a usage error"
# A misspelt global or method gets a did-you-mean; c:read() is labelled.
out=$(printf 'c = perfmon.counter("task-clock")\nperfmn.counter("x")\nc:raed()\nc:start()\nc:read()\n' |
	"$PERFSCRIPT" -i 2>&1)
like "$out" "attempt to index a nil value \\(global 'perfmn'\\) \\(did you mean 'perfmon'\\?\\)" "a misspelt global: did you mean"
like "$out" "attempt to call a nil value \\(method 'raed'\\) \\(did you mean 'read'\\?\\)" "a misspelt method: did you mean"
like "$out" $'\nvalue [0-9]+  enabled [0-9]+ ns  running [0-9]+ ns  raw [0-9]+(\n|$)' "c:read() shows labelled values"
out=$(printf 'print(perfmon.counter("cycels"))\n' | "$PERFSCRIPT" -i 2>&1)
like "$out" "nil	unknown event 'cycels'" "-i: environment failures return nil, message as in scripts"

# Results: tables one level deep, sorted keys, nested tables folded,
# cycles harmless, long ones wrapped and cut; objects by their __tostring.
out=$(printf '%s\n' '{1, 2, x = 1, ["a b"] = 2, t = {}, u = {1}}' 'local t = {}; t.self = t; return t' \
	'local t = {}; for i = 1, 100 do t[i] = i end; return t' 'perfmon.counter("task-clock")' '"a", {}, 3' |
	"$PERFSCRIPT" -i 2>&1)
like "$out" '^\{ 1, 2, \["a b"\] = 2, t = \{\}, u = \{\.\.\.\}, x = 1 \}
\{ self = \{\.\.\.\} \}
\{
  1, 2, 3, .*, 21,
  22, .*
  41, 42, 43, 44, 45, 46, 47, 48, 49, 50, \.\.\. 50 more
\}
perfscript.counter .task-clock.: [0-9]+
a	\{\}	3$' "-i shows tables one level deep with sorted keys, cut at 50, objects by __tostring"

if command -v tmux >/dev/null; then
	# Each step waits for what it makes appear (a new prompt, a completion,
	# output), never a fixed time. One session stays for the whole file:
	# killing the last one ends tmux's server, and a new session started
	# while it exits fails ("server exited unexpectedly", seen once in CI).
	tmux new-session -d -s "ps-repl-keep-$$" "sleep 300"
	trap 'tmux kill-session -t "ps-repl-keep-$$" 2>/dev/null; rm -rf "$TMP"' EXIT
	nlines() { tmux capture-pane -t $s -p | grep -cE "$1"; }
	send() { # LINE: type it, Enter, and wait for the next prompt
		local n; n=$(nlines '^perfscript>')
		tmux send-keys -t $s -l "$1"; tmux send-keys -t $s Enter
		tmux_wait $s '^perfscript>' $((n + 1))
	}
	sendc() { # LINE: a line that continues a chunk: wait for the next ">>"
		local n; n=$(nlines '^ *>>')
		tmux send-keys -t $s -l "$1"; tmux send-keys -t $s Enter
		tmux_wait $s '^ *>>' $((n + 1))
	}
	tab() { tmux send-keys -t $s -l "$1"; tmux send-keys -t $s Tab; tmux_wait $s "$2"; } # TEXT WAIT-REGEX
	start() { # NAME ROWS
		s=$1-$$
		tmux new-session -d -s $s -x 150 -y "$2" "$PERFSCRIPT -i; echo EXITED \$?; sleep 10"
		tmux_wait $s '^perfscript> *$'
	}
	start ps-repl 30
	send 'c = perfmon.counter("task-clock")'
	sendc 'for i = 1, 2 do'
	sendc 'print(i * 10)'
	send 'end'
	send 'c:read() > 0'
	tab 'perfmon.cou' 'perfscript> perfmon\.counter *$'
	tab '("syscalls:sys_enter_getpp' 'sys_enter_getppid *$'
	send '"):name()'
	n=$(nlines '^perfscript>')
	tmux send-keys -t $s -l 'unfinished('; tmux send-keys -t $s C-c
	tmux_wait $s '^perfscript>' $((n + 1))
	send 'probe("timer.ms(200)", function() print("tick") end)'
	send 'probe("end", function() print("end probe") end)'
	tmux_wait $s '^tick' 2
	tmux send-keys -t $s C-d; tmux_wait $s '^EXITED'
	screen=$(tmux capture-pane -t $s -p)
	tmux kill-session -t $s 2>/dev/null
	like "$screen" "perfscript> for i = 1, 2 do
 +>> print\(i \* 10\)
 +>> end
10
20" "tty: a chunk continues over lines and runs"
	like "$screen" $'perfscript> c:read\\(\\) > 0\ntrue' "tty: an expression prints"
	like "$screen" "perfscript> unfinished\(
perfscript> probe" "tty: Ctrl-C drops the line being typed"
	like "$screen" "perfscript> perfmon.counter\(\"syscalls:sys_enter_getppid\"\):name\(\)
syscalls:sys_enter_getppid" "tty: TAB completes Lua names, and event names inside quotes"
	like "$screen" "tick.*tick" "tty: timer probes fire while the prompt waits"
	like "$screen" "end probe
EXITED 0" "tty: Ctrl-D ends the session with its end probes"
	# TAB completion on a strict _G: looking the table up raises, completion
	# finds nothing and the session goes on (it died with a Lua panic).
	start ps-repl-strict 30
	send 'local _ = setmetatable(_G, {__index = function(_, k) error("undefined " .. k, 2) end})'
	tmux send-keys -t $s -l 'nosuch.fie'; tmux send-keys -t $s Tab
	tmux send-keys -t $s C-u
	tab 'perfmon.ver' 'perfscript> perfmon\.version *$'
	n=$(nlines '^perfscript>'); tmux send-keys -t $s Enter; tmux_wait $s '^perfscript>' $((n + 1))
	send 'probe("end", function() print("end probe") end)'
	tmux send-keys -t $s C-d; tmux_wait $s '^EXITED'
	screen=$(tmux capture-pane -t $s -p)
	tmux kill-session -t $s 2>/dev/null
	! grep -q PANIC <<<"$screen"; ok $? "tty, strict _G: TAB on an undefined table does not panic"
	like "$screen" "perfscript> perfmon.version
$(sed 's/\./\\./g' <<<"$("$PERFSCRIPT" --version | sed 's/^perfscript \([^ ]*\).*/\1/')")" \
		"tty, strict _G: completion still works and the session goes on"
	like "$screen" "end probe
EXITED 0" "tty, strict _G: Ctrl-D ends the session with its end probes"
	# Probe output while a line is half typed goes above it; TAB completes
	# methods after ':' and fields after '.', from metatables.
	start ps-repl-above 40
	send 'c = perfmon.counter("syscalls:sys_enter_getpid/period=1/")'
	send 'probe("perfmon.sample(c)", function(s) last = s end); pid()'
	tab 'c:sta' 'perfscript> c:start *$'; send '()'
	tab 'last.callch' 'perfscript> last\.callchain *$'
	send ' -- completed'
	# two methods start so (ustack, user_string): nothing to add, nothing breaks
	tmux send-keys -t $s -l 'last:us'; tmux send-keys -t $s Tab; tmux send-keys -t $s C-u
	send 'n = 0; probe("timer.ms(150)", function() n = n + 1; if n <= 3 then print("tick " .. n) end end)'
	tmux send-keys -t $s -l 'half typed'
	tmux_wait $s '^tick 3'
	tmux_wait $s '^perfscript> half typed *$'
	screen=$(tmux capture-pane -t $s -p)
	tmux send-keys -t $s C-u; tmux send-keys -t $s C-d; tmux_wait $s '^EXITED'
	tmux kill-session -t $s 2>/dev/null
	like "$screen" "perfscript> c:start\(\)" "tty: TAB after ':' completes a counter's method"
	like "$screen" "perfscript> last.callchain -- completed" "tty: TAB after '.' completes a sample's field"
	like "$screen" $'tick 1\ntick 2\ntick 3\nperfscript> half typed *$' \
		"tty: probe output goes above the half-typed line, which is drawn again"
	! grep -q "typedtick\|> tick" <<<"$screen"; ok $? "tty: probe output never lands on the prompt line"
else
	for d in chunk expression completion ctrl-c timers ctrl-d strict-panic strict-completion strict-end \
		method-completion field-completion output-above output-not-on-prompt; do
		skip "tmux is not installed" "tty: $d"
	done
fi
done_testing
