# examples.sh: every example under examples/ runs and prints what it promises.
source "$(dirname "$0")/lib.sh"
EX=$(cd "$(dirname "$0")/../../examples" && pwd)

out=$("$PERFSCRIPT" "$EX/hello.lua" 2>&1); ok $? "hello.lua runs"
like "$out" "hello from perfscript" "hello.lua greets"

out=$("$PERFSCRIPT" "$EX/counters.lua" -c "$WORKLOAD pages 5000" 2>&1); ok $? "counters.lua runs on a command"
like "$out" "[0-9.]+ msec task-clock" "counters.lua prints task-clock"
like "$out" "[0-9]{4,} +page-faults" "counters.lua prints page-faults"
like "$out" "context-switches" "counters.lua prints context-switches"
like "$out" "(not supported +cycles|[0-9]+ +cycles)" "counters.lua prints cycles or says it is not supported"
like "$out" "(not supported +instructions|[0-9]+ +instructions)" "counters.lua prints instructions or says it is not supported"

if need_root; then
	out=$("$PERFSCRIPT" "$EX/syscalls.lua" -c "$WORKLOAD getppid 4321" 2>&1); ok $? "syscalls.lua runs"
	like "$out" "getppid +4321" "syscalls.lua counts the workload's getppid calls exactly"
else
	skip "syscall tracepoints need root" "syscalls.lua runs"
	skip "syscall tracepoints need root" "syscalls.lua counts"
fi

if need_root; then
	out=$("$PERFSCRIPT" "$EX/syscount.lua" -c "$WORKLOAD getppid 4321" 2>&1); ok $? "syscount.lua runs"
	like "$out" $'SYSCALL +COUNT\ngetppid +4321\n' "syscount.lua: getppid first, exactly 4321 calls"
	like "$out" $'\n[0-9]+ +workload +[0-9]+\n' "syscount.lua: the command's process by name"
	wl=$(awk '/ workload /{print $3}' <<<"$out"); tot=$(awk '/system calls$/{print $1}' <<<"$out")
	is "$wl" "$tot" "syscount.lua: the per-process count adds up to the total ($tot)"
	# a process that exec'd counts under the name it had at each call
	out=$("$PERFSCRIPT" "$EX/syscount.lua" -c "sh -c '$WORKLOAD getppid 4321; true'" 2>&1)
	like "$out" $'\n([0-9]+) +workload +[0-9]{4}\n' "syscount.lua: an exec'd command's calls under its new name"
	like "$out" $'\n[0-9]+ +sh +[0-9]+\n' "syscount.lua: the shell's under its own"
	out=$("$PERFSCRIPT" "$EX/runqlat.lua" -a -T 0.5 2>&1); ok $? "runqlat.lua runs"
	like "$out" "^run queue latency \(us\): [1-9][0-9]* waits over [1-9][0-9]* context switches" \
		"runqlat.lua: waits measured from wakeups to switches"
	like "$out" $'\n +[0-9]+ \\| *@+ +[1-9]' "runqlat.lua: a log2 histogram"
else
	for ex in syscount runqlat; do skip "tracepoints need root" "$ex.lua runs"; done
fi

# Every example is run by some end-to-end test (sampling ones in sampling.sh).
for ex in "$EX"/*.lua; do
	grep -qF "\$EX/${ex##*/}" "$(dirname "$0")"/*.sh; ok $? "examples/${ex##*/} is run by a test"
done

# Every example answers --help (usage on stdout, exit 0) and names an
# option it does not know with the valid ones (stderr, exit 2), without a
# traceback and without running anything (the command is never started).
for ex in "$EX"/*.lua; do
	n=${ex##*/}
	out=$("$PERFSCRIPT" "$ex" -c "touch $TMP/ran-$n" --help 2>"$TMP/err"); rc=$?
	ok $([[ $rc == 0 && ! -s $TMP/err ]]; echo $?) "$n --help exits 0, nothing on stderr ($rc: $(head -c 200 "$TMP/err"))"
	like "$out" "^usage: perfscript .*${n}" "$n --help prints its usage on stdout"
	err=$("$PERFSCRIPT" "$ex" -c "touch $TMP/ran-$n" --no-such-option 2>&1 >/dev/null); rc=$?
	ok $(( rc == 2 ? 0 : 1 )) "$n --no-such-option exits 2 ($rc)"
	like "$err" "^${n}: unknown option '--no-such-option' \(valid: .*--help\)" "$n names the unknown option and the valid ones"
	ok $([[ $err != *traceback* && ! -e $TMP/ran-$n ]]; echo $?) "$n: no traceback, the command never ran"
done

# Reports go where perf's do: the command's standard output stays its own,
# byte for byte (gzip's output of random bytes), for every example.
head -c 300000 /dev/urandom >"$TMP/bin.dat"
gzip -1 -c "$TMP/bin.dat" >"$TMP/want.gz"
while IFS='|' read -r ex args; do
	# shellcheck disable=SC2086 # the arguments are words
	timeout 60 "$PERFSCRIPT" "$EX/$ex" $args -c "gzip -1 -c $TMP/bin.dat" >"$TMP/got.gz" 2>"$TMP/got.err"
	rc=$?
	cmp -s "$TMP/got.gz" "$TMP/want.gz"
	is "$?:$rc:$(( $(wc -c <"$TMP/got.err") > 0 ))" "0:0:1" \
		"$ex -c 'gzip -c' > FILE: FILE is gzip's output alone, the report on stderr"
done <<EOF
agent.lua|-a --listen 127.0.0.1:0
bpf_filter.lua|-a
bpf_profile.lua|
counters.lua|
exporter.lua|--listen 127.0.0.1:0
hello.lua|
offcpu.lua|
opensnoop.lua|
pagefaults.lua|
profile.lua|
regions.lua|
runqlat.lua|-a
sample_values.lua|
stat.lua|
syscalls.lua|
syscount.lua|
top.lua|
wallclock.lua|
EOF
is "$(ls "$EX"/*.lua | wc -l)" 18 "every example is in the list above"
# -o FILE: the report there, nothing on stderr; -o -: on standard output;
# perfscript's own -o before the script counts as the script's
"$PERFSCRIPT" "$EX/syscount.lua" -c "gzip -1 -c $TMP/bin.dat" -o "$TMP/rep" >"$TMP/got.gz" 2>"$TMP/got.err"
cmp -s "$TMP/got.gz" "$TMP/want.gz"
is "$?:$(wc -c <"$TMP/got.err"):$(grep -c '^SYSCALL' "$TMP/rep")" "0:0:1" "syscount.lua -o FILE: the report in FILE alone"
out=$("$PERFSCRIPT" "$EX/syscount.lua" -c true -o - 2>/dev/null)
like "$out" "^SYSCALL +COUNT" "syscount.lua -o -: the report on standard output"
"$PERFSCRIPT" -o "$TMP/rep2" "$EX/syscount.lua" -c true 2>"$TMP/got.err"
is "$(grep -c '^SYSCALL' "$TMP/rep2"):$(wc -c <"$TMP/got.err")" "1:0" "perfscript -o FILE before the script: the report in FILE"
out=$("$PERFSCRIPT" "$EX/profile.lua" -c "touch $TMP/ran" -o /nonexistent/dir/x 2>&1); rc=$?
is "$rc:$out:$([[ -e $TMP/ran ]]; echo $?)" \
	"1:profile.lua: -o /nonexistent/dir/x: No such file or directory:1" \
	"-o into a missing directory: one line, exit 1, the command never ran"
out=$("$PERFSCRIPT" "$EX/stat.lua" -c true -o /dev/full 2>&1); rc=$?
like "$rc $out" "^1 perfscript: cannot write to /dev/full: No space left on device$" "-o /dev/full: the failed write is said, exit 1"
like "$("$PERFSCRIPT" "$EX/profile.lua" --help)" "The report goes to standard error" "--help says where the report goes"

# One error style: every example with each kind of bad value is one line
# naming the option and what it wants (and the --help hint), exit 2 for
# the user's mistake, 1 for what the machine refuses; never a traceback,
# and the command never runs.
busy=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); print("up", flush=True); time.sleep(600)' "$busy" >"$TMP/busy.out" &
holder=$!
wait_line "$TMP/busy.out" '^up' >/dev/null
while IFS='|' read -r want ex args re; do
	rm -f "$TMP/ran"
	# shellcheck disable=SC2086 # the arguments are words
	err=$(timeout 20 "$PERFSCRIPT" "$EX/$ex" -c "touch $TMP/ran" $args 2>&1 >/dev/null); rc=$?
	line1=$(head -1 <<<"$err")
	is "$rc:$([[ $err == *traceback* || -e $TMP/ran ]]; echo $?)" "$want:1" "$ex $args: exit $want, no traceback, the command never ran"
	like "$line1" "^${ex}: $re" "$ex $args: $line1"
done <<EOF
2|profile.lua|--event nosuch|--event nosuch: unknown event 'nosuch' at column 1$
2|profile.lua|--event cpu-clock/freq=x/|--event cpu-clock/freq=x/: bad number 'x' for term 'freq'
2|profile.lua|--freq 0|--freq wants a whole number of at least 1 \(HZ\), got '0'$
2|profile.lua|--max-stack 2000|--max-stack wants a whole number from 1 to 1024
2|profile.lua|--switch-output 5|--switch-output writes --pprof, --otlp, --folded or --svg files
1|profile.lua|--pprof /nonexistent/p.pb.gz|--pprof /nonexistent/p.pb.gz: No such file or directory$
2|stat.lua|-I 0|-I wants a whole number of at least 1 \(MS\), got '0'$
2|stat.lua|-r 1.5|-r wants a whole number of at least 1 \(N\), got '1.5'$
2|exporter.lua|--listen 127.0.0.1:0 --events nosuch|--events nosuch: unknown event 'nosuch'
2|exporter.lua|--listen 127.0.0.1:99999|bad listen address '127.0.0.1:99999'
1|exporter.lua|--listen 127.0.0.1:$busy|cannot listen on 127.0.0.1:$busy: Address already in use$
2|exporter.lua||--listen ADDR:PORT is needed
1|agent.lua|-a --listen 127.0.0.1:$busy|cannot listen on 127.0.0.1:$busy: Address already in use$
2|agent.lua|-a --listen bad|bad listen address 'bad'
2|agent.lua|-a --listen 127.0.0.1:0 --freq 0|--freq wants a whole number from 1 to 10000
2|offcpu.lua|--min-us -1|--min-us wants a number of at least 0
2|wallclock.lua|--hz 0|--hz wants a whole number of at least 1
2|wallclock.lua|--min-us -1|--min-us wants a number of at least 0
2|wallclock.lua|--call-graph lbr|--call-graph wants fp or dwarf, got 'lbr'
2|offcpu.lua|--svg|--svg wants FILE
2|syscount.lua|--top 0|--top wants a whole number of at least 1
2|bpf_profile.lua|--top -1|--top wants a whole number of at least 1
2|runqlat.lua|-a --pid x|--pid wants a whole number of at least 1 \(PID\), got 'x'$
EOF
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null

# The peers' spellings, each with the behaviour its peer documents.
# perf record -F 99 -e cpu-clock -g: 99 samples a second of CPU time (the
# workload spins 1 s of its own CPU time, so the machine's load does not
# change the count), with stacks
out=$("$PERFSCRIPT" "$EX/profile.lua" -F 99 -e cpu-clock -g -c "$WORKLOAD spin 1000" --top 1 -o -)
n=$(sed -n 's/^\([0-9]*\) samples of cpu-clock$/\1/p' <<<"$out")
ok $(( ${n:-0} >= 80 && ${n:-0} <= 120 ? 0 : 1 )) "profile.lua -F 99 -e cpu-clock -g: about 99 samples in 1 s of CPU ($n)"
like "$out" "hot_spin" "profile.lua -F 99 -e cpu-clock -g: the hot function"
# bcc's opensnoop -d SECONDS: traces that long, then ends
out=$(timeout 20 "$PERFSCRIPT" "$EX/opensnoop.lua" -a -d 0.3 -o - 2>&1); rc=$?
like "$rc $out" "^0 PID +COMM" "opensnoop.lua -a -d 0.3 ends by itself, exit 0 ($rc)"
ok $([[ $out != *" $$ "* ]]; echo $?) "opensnoop.lua -a: perfscript's own opens are not listed"
# bcc's offcputime -f: folded lines, comm first, microseconds
out=$("$PERFSCRIPT" "$EX/offcpu.lua" -f -c "sleep 0.3" -o -)
us=$(awk '/^sleep;.*nanosleep/ { s += $NF } END { print s + 0 }' <<<"$out")
ok $(( us >= 300000 && us < 400000 ? 0 : 1 )) "offcpu.lua -f: sleep's 0.3 s as folded microseconds ($us)"
ok $(grep -vqE '^[^ ]+(;[^;]+)* [0-9]+$' <<<"$out"; echo $(( ! $? ))) "offcpu.lua -f: every line is 'comm;frames N'"
# bcc's runqlat INTERVAL COUNT: COUNT histograms, one an interval, then the end
out=$(timeout 20 "$PERFSCRIPT" "$EX/runqlat.lua" -a 0.2 3 -o -); rc=$?
is "$rc:$(grep -c '^run queue latency' <<<"$out"):$(grep -cE '^[0-9]{2}:[0-9]{2}:[0-9]{2}$' <<<"$out")" "0:3:3" \
	"runqlat.lua -a 0.2 3: three histograms, each under its time, then exit 0"
# bcc's syscount -L: the time in each call; a 0.3 s nanosleep is 0.3 s
out=$("$PERFSCRIPT" "$EX/syscount.lua" -L --top 40 -c "sleep 0.3" -o -)
us=$(awk '$1 == "clock_nanosleep" || $1 == "nanosleep" { print int($3) }' <<<"$out")
ok $(( ${us:-0} >= 300000 && ${us:-0} < 400000 ? 0 : 1 )) "syscount.lua -L: sleep's nanosleep took 0.3 s ($us us)"
like "$out" "^SYSCALL +COUNT +TIME \(us\)" "syscount.lua -L: bcc's TIME (us) column"
# -T stays perfscript's: bcc's opensnoop -T says what to type instead
out=$("$PERFSCRIPT" "$EX/opensnoop.lua" -a -T 2>&1); rc=$?
like "$rc $out" "^2 perfscript: -T wants a value: SECONDS.*--timestamp" "opensnoop.lua -T (bcc's timestamps): exit 2, names --timestamp"

done_testing
