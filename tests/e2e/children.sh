# children.sh: no child outlives the session. The -c command dies with
# perfscript however perfscript dies (PR_SET_PDEATHSIG), and it leads its own
# process group, so that a pipeline under sh -c or a background job it left
# is stopped with it when the session ends. Each case sleeps a distinct
# length (the marker) and then looks for leftovers with pgrep.
source "$(dirname "$0")/lib.sh"

mark=$((4000 + $$ % 1000)) # sleep lengths unique to this run
alive() { pgrep -f "^sleep $1(\$| )" >/dev/null; }
gone() { # wait up to 2 s for `sleep $1` to be gone
	for _ in $(seq 40); do alive "$1" || return 0; sleep 0.05; done
	pkill -f "^sleep $1(\$| )"; return 1
}

m=$((mark + 1))
out=$("$PERFSCRIPT" -T 0.3 -e 'probe("end", function() print("end") end)' -c "sh -c 'sleep $m | sleep $m'" 2>&1)
is "$out" end "-T ends a session whose command is a pipeline"
gone $m; ok $? "-T: both sides of the command's pipeline are stopped"

m=$((mark + 2))
out=$("$PERFSCRIPT" -e 'x = 1' -c "sh -c 'sleep $m & exit 0'" 2>&1)
gone $m; ok $? "a background job the command left behind is stopped at the end"

m=$((mark + 3))
"$PERFSCRIPT" -e 'x = 1' -c "sleep $m" &
pid=$!
for _ in $(seq 40); do alive $m && break; sleep 0.05; done
kill -KILL $pid; wait $pid 2>/dev/null
gone $m; ok $? "perfscript killed with SIGKILL: the command dies too"

m=$((mark + 4))
# a background job of a script starts with SIGQUIT ignored: give it back
env --default-signal=QUIT "$PERFSCRIPT" -e 'x = 1' -c "sleep $m" &
pid=$!
for _ in $(seq 40); do alive $m && break; sleep 0.05; done
kill -QUIT $pid; wait $pid 2>/dev/null
gone $m; ok $? "perfscript killed with SIGQUIT: the command dies too"

m=$((mark + 5))
"$PERFSCRIPT" -e 'probe("end", function() print("end after SIGHUP") end)' -c "sleep $m" >"$TMP/hup.out" 2>&1 &
pid=$!
for _ in $(seq 40); do alive $m && break; sleep 0.05; done
kill -HUP $pid; wait $pid
is "$(cat "$TMP/hup.out")" "end after SIGHUP" "SIGHUP ends the session like SIGTERM: end probes run"
gone $m; ok $? "SIGHUP: the command is stopped"

m=$((mark + 6))
"$PERFSCRIPT" -e 'probe("timer.ms(10)", function() print("x") end)' -c "sleep $m" | head -1 >/dev/null
gone $m; ok $? "perfscript | head -1: the command does not outlive the broken pipe"

# In a terminal's foreground the command stays in perfscript's group (in a
# group of its own it could not read the terminal): a pipeline is then found
# through /proc and stopped all the same.
if command -v script >/dev/null; then
	m=$((mark + 7))
	script -qec "$PERFSCRIPT -T 0.3 -e 'x = 1' -c \"sh -c 'sleep $m | sleep $m'\"" /dev/null >/dev/null 2>&1
	gone $m; ok $? "in a terminal: the command's pipeline is stopped at the end"
	m=$((mark + 8))
	out=$(printf 'typed\n' | script -qec "$PERFSCRIPT -e 'x = 1' -c 'head -1'" /dev/null 2>&1 | tr -d '\r')
	like "$out" "typed" "in a terminal: the command reads the terminal"
	# a job the command left that ignores SIGTERM and SIGHUP: handed to perfscript (its
	# subreaper) when the command exits, and killed a second later, as
	# outside a terminal
	m=$((mark + 9))
	script -qec "$PERFSCRIPT -e 'x = 1' -c \"sh -c 'trap \\\"\\\" TERM HUP; sleep $m & exit 0'\"" /dev/null >/dev/null 2>&1
	gone $m; ok $? "in a terminal: a job that ignores SIGTERM is killed a second later"
else
	skip "script(1) is not installed (util-linux)" "the command in a terminal's foreground"
	skip "script(1) is not installed (util-linux)" "the command reads the terminal"
	skip "script(1) is not installed (util-linux)" "a job that ignores SIGTERM, in a terminal"
fi
m=$((mark + 10))
"$PERFSCRIPT" -e 'x = 1' -c "sh -c 'trap \"\" TERM; sleep $m & exit 0'" >/dev/null 2>&1
gone $m; ok $? "outside a terminal: a job that ignores SIGTERM is killed a second later"

# A zombie left in the command's group, whose parent left the group and
# never reaps it: nothing is left to stop, so no SIGTERM, no second's wait.
if command -v python3 >/dev/null; then
	out=$("$PERFSCRIPT" -v -e 'x = 1' -c "python3 $(dirname "$0")/zombie.py" 2>&1)
	! grep -qE "SIGTERM|SIGKILL" <<<"$out"
	ok $? "a zombie in the command's group is not waited for or signalled"
else
	skip "python3 is not installed" "a zombie in the command's group"
fi

# -p follows the processes PID starts (as perf's -p); --no-children keeps
# to its threads (bcc's -p): a shell's children exec, the shell does not.
cat >"$TMP/forker.sh" <<'EOF'
echo ready
while [ ! -e "$1" ]; do :; done # a builtin: no exec of its own to count
for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done
EOF
for nc in "" --no-children; do
	rm -f "$TMP/go"
	sh "$TMP/forker.sh" "$TMP/go" >"$TMP/forker.out" &
	fp=$!
	wait_line "$TMP/forker.out" '^ready' >/dev/null
	# shellcheck disable=SC2086 # no option or one
	"$PERFSCRIPT" -v -e 'c = perfmon.counter("sched:sched_process_exec")
probe("end", function() print((c:read())) end)' -p $fp $nc >"$TMP/nc.out" 2>"$TMP/nc.err" &
	ps=$!
	wait_for "$TMP/nc.err" "session started" 10
	touch "$TMP/go"
	wait "$fp"; wait "$ps"
	execs[${#execs[@]}]=$(cat "$TMP/nc.out")
	[[ -s $TMP/nc.out ]] || diag "-p $nc printed nothing; it said: $(tail -c 600 "$TMP/nc.err")"
done
is "${execs[0]}:${execs[1]}" "10:0" "-p counts the execs of the process's children; --no-children does not"
out=$("$PERFSCRIPT" -a --no-children -e 'x = 1' -T 0.1 2>&1); rc=$?
like "$rc $out" "^2 perfscript: --no-children goes with -p PID or -c CMD" "--no-children without -p or -c is a usage error"

done_testing
