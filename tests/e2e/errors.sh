# errors.sh: every environment failure a user can reach gets a message that
# names the event and says what to do, and nothing stays open.
source "$(dirname "$0")/lib.sh"

# Hardware events on a machine without a PMU.
out=$("$PERFSCRIPT" -e 'h = perfmon_allocate_counter("cycles:u")' 2>&1); rc=$?
if [[ $rc -eq 0 ]]; then
	skip "this machine has a hardware PMU" "cycles:u gives the not-supported message"
	skip "this machine has a hardware PMU" "the not-supported message says what does work"
else
	like "$out" "cannot open 'cycles:u': not supported by this machine's PMU" "cycles:u gives the not-supported message"
	like "$out" "task-clock" "the not-supported message says what does work"
	is "$rc" 1 "a context that cannot open exits 1"
fi
out=$("$PERFSCRIPT" -e '
local c = perfmon.counter("instructions")
local ok, msg = c:start()
print(ok, msg ~= nil)' 2>&1)
if [[ $out == true* ]]; then skip "this machine has a hardware PMU" "c:start() returns nil, message"
else is "$out" "$(printf 'nil\ttrue')" "c:start() of an unsupported event returns nil, message"; fi
out=$("$PERFSCRIPT" -e 'print(perfmon_create_context(), perfmon_allocate_counter("branch-misses"), perfmon_create_context())' 2>&1)
like "$out" "^0	[0-9]+	(0|[0-9]+	cannot open 'branch-misses')" "perfmon_create_context returns 0, or errno and a message"

# Bad event strings open nothing: the whole context fails before any fd.
out=$("$PERFSCRIPT" -e 'print(perfmon_allocate_counter("task-clock/perod=10/"))' 2>&1)
like "$out" "^0	unknown term 'perod' at column 12 \(did you mean 'period'" "a bad term: 0, message with column and suggestion"
# The 0 of a failed allocation, used later, carries the cause.
out=$("$PERFSCRIPT" -e 'h = perfmon_allocate_counter("cycels/period=1000/")
probe("perfmon.sample(h)", function() end)' 2>&1)
like "$out" "perfmon.sample\(h\): not a live counter handle .*the last one, of 'cycels/period=1000/', failed: unknown event 'cycels'" \
	"a sample probe on the 0 of a failed allocation names the allocation's error"
out=$("$PERFSCRIPT" -e 'h = perfmon_allocate_counter("cycels"); print(perfmon_get_counter(h))' 2>&1)
like "$out" "perfmon_get_counter: bad handle 0: .*failed: unknown event 'cycels'.*did you mean 'cycles'" \
	"perfmon_get_counter(0) after a failed allocation says why it is 0"

# Permission: drop root and count a tracepoint.
if need_root && command -v setpriv >/dev/null; then
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	cp "$PERFSCRIPT" "$TMP/perfscript"; chmod 755 "$TMP" "$TMP/perfscript"
	asnobody() { (cd /tmp && setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/perfscript" "$@" 2>&1); }
	# kernel+user falls back to user space only, as perf does (unprivileged.sh);
	# the kernel alone cannot
	out=$(asnobody -e 'perfmon_allocate_counter("cpu-clock:k")'); rc=$?
	is "$rc" 1 "unprivileged: a kernel-only cpu-clock fails with exit 1"
	like "$out" "cannot open 'cpu-clock:k': permission denied" "unprivileged: the message names the event"
	like "$out" "perf_event_paranoid is $paranoid" "unprivileged: the message gives perf_event_paranoid's value ($paranoid)"
	like "$out" "CAP_PERFMON.*:u modifier.*sysctl -w kernel.perf_event_paranoid=" "unprivileged: the message says what would allow it"
	out=$(asnobody -e 'print(perfmon_allocate_counter("syscalls:sys_enter_getppid"))')
	like "$out" "^0	.*syscalls:sys_enter_getppid.*(root|permission)" "unprivileged: a tracepoint says tracefs needs privileges"
	out=$(asnobody -e 'local c = assert(perfmon.counter("task-clock:u")); assert(c:start()); print("ok")')
	is "$out" ok "unprivileged: task-clock:u on itself still works"
	out=$(asnobody -a -T 0.1 -e 'perfmon_allocate_counter("cpu-clock:u")')
	like "$out" "cannot open 'cpu-clock:u': permission denied.*CAP_PERFMON.*perf_event_paranoid to 0 for system-wide" "unprivileged: system-wide counting explains the permission"
else
	for d in exit message paranoid allow tracepoint self system-wide; do
		skip "needs root and setpriv to drop privileges" "unprivileged: $d"
	done
fi

# No tracefs mounted: a root perfscript mounts it in a mount namespace of
# its own, so nothing is left mounted however it dies, and no other process
# sees it (the test runs in a private namespace of its own, where it first
# unmounts tracefs).
if need_root && unshare -m --propagation private true 2>/dev/null; then
	out=$(unshare -m --propagation private bash -c '
umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/tracing 2>/dev/null
n() { grep -c " /sys/kernel/tracing tracefs " /proc/self/mounts; }
echo "before $(n)"
"$1" -e '"'"'c = assert(perfmon.counter("syscalls:sys_enter_getppid")); print("inside", c:read())'"'"'
echo "after exit $(n)"
for sig in KILL QUIT; do
	env --default-signal=QUIT "$1" -e '"'"'c = perfmon.counter("syscalls:sys_enter_getppid"); c:start(); print("ready"); io.stdout:flush(); while true do end'"'"' >"$2/loop.out" 2>&1 &
	p=$!
	for _ in $(seq 200); do grep -q ready "$2/loop.out" && break; sleep 0.01; done
	inner=$(grep -c " /sys/kernel/tracing tracefs " /proc/$p/mounts)
	kill -$sig $p; wait $p 2>/dev/null
	echo "SIG$sig inside $inner after $(n)"
done' _ "$PERFSCRIPT" "$TMP" 2>&1)
	like "$out" "before 0" "with tracefs unmounted"
	like "$out" $'\ninside	0	' "a root perfscript counts a tracepoint"
	like "$out" $'\nafter exit 0\n' "and leaves no tracefs mounted when it exits"
	like "$out" $'\nSIGKILL inside 1 after 0\n' "killed by SIGKILL: tracefs was mounted for it alone, and goes with it"
	like "$out" $'\nSIGQUIT inside 1 after 0' "killed by SIGQUIT: the same"
else
	for d in "with tracefs unmounted" "counts a tracepoint" "no tracefs left after exit" "after SIGKILL" "after SIGQUIT"; do
		skip "needs root and unshare -m" "$d"
	done
fi

# No tracefs mounted, and no right to mount it (a private mount namespace
# without it, CAP_SYS_ADMIN dropped): the message says how to mount it.
if need_root && command -v setpriv >/dev/null && unshare -m --propagation private true 2>/dev/null; then
	out=$(unshare -m --propagation private bash -c 'umount /sys/kernel/tracing 2>/dev/null
		umount /sys/kernel/debug/tracing 2>/dev/null
		setpriv --bounding-set=-sys_admin "$1" -e "print(perfmon.counter(\"syscalls:sys_enter_getppid\"))"' _ "$PERFSCRIPT" 2>&1)
	like "$out" "^nil	tracepoint 'syscalls:sys_enter_getppid' at column 1: no tracefs .*or by hand: mount -t tracefs nodev /sys/kernel/tracing" \
		"no tracefs and no right to mount it: the message says how"
	out=$(PERFSCRIPT_TRACEFS=$TMP/none "$PERFSCRIPT" -e 'print(perfmon.counter("syscalls:sys_enter_getppid"))' 2>&1)
	like "$out" "no tracefs \(tried $TMP/none\)	" "PERFSCRIPT_TRACEFS without tracefs: only the directory given, no mount advice"
else
	skip "needs root, setpriv and unshare -m" "no tracefs: the message says how to mount it"
	skip "needs root, setpriv and unshare -m" "PERFSCRIPT_TRACEFS without tracefs"
fi

# EMFILE: more fds than the limit allows.
out=$(ulimit -n 40; "$PERFSCRIPT" -e 'for i = 1, 100 do perfmon_allocate_counter("task-clock") end' 2>&1); rc=$?
is "$rc" 1 "too many counters for ulimit -n fails with exit 1"
like "$out" "too many open files.*ulimit -n" "EMFILE says to raise ulimit -n"

# ESRCH: -p of a process that is gone.
"$WORKLOAD" exit 0 & dead=$!; wait $dead
out=$("$PERFSCRIPT" -p "$dead" -e 'x = 1' 2>&1); rc=$?
is "$rc" 1 "-p of a dead process exits 1"
like "$out" "-p $dead: no such process" "-p of a dead process says so"

# EINVAL: the field at fault is named.
out=$("$PERFSCRIPT" -e 'perfmon_allocate_counter("task-clock/cpu=4096/")' 2>&1)
like "$out" "cannot open 'task-clock/cpu=4096/'.*cpu" "an impossible cpu= names the cpu"
out=$("$PERFSCRIPT" -C 4096 -e 'x = 1' 2>&1); rc=$?
is "$rc" 2 "-C with a CPU that does not exist is a usage error, exit 2 (it was 1, unlike the others)"
like "$out" "-C '4096': not a list of online CPUs" "-C with a bad list says what is wrong"

# The command: exec failure, exit status, death by signal.
out=$("$PERFSCRIPT" -e 'x = 1' -c "$TMP/no-such-command" 2>&1); rc=$?
is "$rc" 1 "-c of a missing command exits 1"
like "$out" "^perfscript: cannot run the command: '$TMP/no-such-command': no such file$" "-c of a missing command says so, before anything runs"
mkdir -p "$TMP/a-dir"; : >"$TMP/not-exec"
printf '#!/no/such/interpreter\necho hi\n' >"$TMP/bad-interp"; chmod +x "$TMP/bad-interp"
for c in "a-dir:'$TMP/a-dir' is a directory" \
	"not-exec:'$TMP/not-exec' is not executable (chmod +x $TMP/not-exec?)" \
	"bad-interp:'$TMP/bad-interp' asks for the interpreter '/no/such/interpreter', which is not there"; do
	out=$("$PERFSCRIPT" -e 'probe("begin", function() print("begin ran") end)' -c "$TMP/${c%%:*}" 2>&1); rc=$?
	is "$rc:$out" "1:perfscript: cannot run the command: ${c#*:}" "-c ${c%%:*}: the real problem, before anything runs"
done
for opt in -c -T -o -p -b -C -I -e --backend; do
	out=$("$PERFSCRIPT" -e 'x = 1' $opt 2>&1); rc=$?
	like "$rc:${out%%$'\n'*}" "^2:perfscript: $opt wants a value($|: SECONDS; -T is perfscript's session length)" \
		"$opt with no value says so (not \"got '--'\")"
done
out=$("$PERFSCRIPT" -e 'probe("begin", function() print("begin ran") end)' -c "no-such-command-xyz" 2>&1); rc=$?
is "$rc:$out" "1:perfscript: cannot run the command: 'no-such-command-xyz': not found in PATH" "-c of a command not in PATH: no begin probe runs"
"$PERFSCRIPT" -e 'x = 1' -c "$WORKLOAD exit 3"; is "$?" 3 "perfscript exits with the command's status"
out=$("$PERFSCRIPT" -e 'x = 1' -c "$WORKLOAD kill 11" 2>&1); rc=$?
is "$rc" $((128 + 11)) "a command killed by a signal gives 128+signal"
like "$out" "killed by signal 11" "a command killed by a signal is reported"
out=$("$PERFSCRIPT" -e 'probe("end", function() error("x") end)' -c "$WORKLOAD exit 3" 2>&1); is "$?" 1 "a script error wins over the command's status"

# Stale handles in a probe are errors with a traceback, not crashes.
out=$("$PERFSCRIPT" -e '
local h = perfmon_allocate_counter("task-clock")
perfmon_free_counter(h)
probe("begin", function() perfmon_get_counter(h) end)' 2>&1); rc=$?
is "$rc" 1 "a stale handle in a probe exits 1"
like "$out" "perfmon_get_counter: bad handle 0x[0-9a-f]+: .*stale" "a stale handle is named in the error"
like "$out" "stack traceback" "a stale handle error has a traceback"

# Filters no sample could pass are mistakes, named with the value at fault.
pid_max=$(cat /proc/sys/kernel/pid_max)
for f in "pid=-1:option 'pid': -1 is not a pid" "pid=$pid_max:option 'pid': $pid_max is not a pid" \
	"tid={1,2}:option 'tid' takes one thread id" "cpu=4096:option 'cpu': CPU 4096 is not online" \
	"cpu=-1:option 'cpu': CPU -1 is not online"; do
	out=$("$PERFSCRIPT" -e "c = perfmon.counter('syscalls:sys_enter_getppid/period=1/')
probe('perfmon.sample(c)', function() end, {${f%%:*}})" 2>&1); rc=$?
	like "$rc:$out" "^1:.*${f#*:}" "a sample probe filter {${f%%:*}} is refused: ${f#*:}"
done
out=$("$PERFSCRIPT" -e "c = perfmon.counter('syscalls:sys_enter_getppid/period=1/')
a = perfmon.aggregate(c, {by = {'pid'}, cpu = {0, 4096}})" 2>&1); rc=$?
like "$rc:$out" "^1:.*CPU 4096 is not online" "an aggregate's filter is checked the same way"

# A counter whose open failed has no value: nil and "not supported", never 0.
if [[ -d /sys/bus/event_source/devices/uprobe ]] && need_root; then
	# a misspelt symbol is found at once, with the nearest name
	out=$("$PERFSCRIPT" -e "print(perfmon.counter('uprobe:$WORKLOAD:hot_spinn'))" 2>&1)
	like "$out" "^nil	cannot open 'uprobe:[^']*': no function 'hot_spinn' in .*workload \(did you mean 'hot_spin'\?\)" \
		"perfmon.counter checks a uprobe's symbol at once: nil, the message with the nearest name"
	# the file gone between the counter and its open: the open fails
	cp "$WORKLOAD" "$TMP/w"
	out=$("$PERFSCRIPT" -e "c = perfmon.counter('uprobe:$TMP/w:hot_spin')
probe('begin', function() os.remove('$TMP/w'); assert(not c:start()) end)
probe('end', function() local v, why = c:read() print(v, why) end)" -c /bin/true 2>/dev/null); rc=$?
	is "$rc:$out" "$(printf '0:nil\tnot supported')" "reading a counter whose open failed: nil, 'not supported'"
	# opened at the start by perfscript, it ends the session before it
	# began: one line, exit 1, and no end probe reports on nothing
	cp "$WORKLOAD" "$TMP/w"
	out=$("$PERFSCRIPT" -e "c = perfmon.counter('uprobe:$TMP/w:hot_spin')
os.remove('$TMP/w')
probe('end', function() print('end ran') end)" -c /bin/true 2>&1); rc=$?
	is "$rc:$(grep -c . <<<"$out"):$(grep -c "cannot open 'uprobe:" <<<"$out")" "1:1:1" \
		"a counter that cannot open at the start: one line naming it, exit 1, no end probe ($out)"
else
	skip "no uprobe PMU, or not root" "reading a counter whose open failed"
fi
out=$("$PERFSCRIPT" -e 'c = perfmon.counter("task-clock")
print(c:read())' 2>&1)
like "$out" "^0	0	0	0" "a counter not opened yet reads 0 (nothing counted), not an error"

# A script's own sentence (error(msg, 0): no file and line) stands on one
# line, with no traceback: it is for the script's user, not a bug. An
# error that says where it was raised keeps its traceback.
out=$("$PERFSCRIPT" -e 'probe("begin", function() end)
error("top.lua: --switch-output writes --pprof or --folded files: give one", 0)' 2>&1); rc=$?
is "$rc $out" "1 perfscript: error in main chunk: top.lua: --switch-output writes --pprof or --folded files: give one" \
	"a script's own error, raised without a place, is one line, exit 1"
out=$("$PERFSCRIPT" "$(dirname "$0")/../../examples/profile.lua" -c true --switch-output 5 2>&1); rc=$?
is "$rc $out" "2 profile.lua: --switch-output writes --pprof, --otlp, --folded or --svg files: give one
(profile.lua --help lists the options)" "an example's usage error: its own line and the --help hint, exit 2"
out=$("$PERFSCRIPT" -e 'local function f() error("boom") end f()' 2>&1)
like "$out" $'\nstack traceback:\n' "an error raised at a line keeps its traceback"

# A swap of two letters is one slip: "ned" is "end" (it listed every point).
out=$("$PERFSCRIPT" -e 'probe("ned", function() end)' 2>&1)
like "$out" "unknown probe point 'ned' \(did you mean 'end'\?" "probe(\"ned\"): did you mean 'end'?"
out=$("$PERFSCRIPT" -e 'c = assert(perfmon.counter("task-cokcl"))' 2>&1)
like "$out" "did you mean 'task-clock'\?" "an event with two letters swapped: did you mean"

# perfscript's own unknown options say so in its words, with the --help
# hint (getopt printed "./perfscript: invalid option -- 'x'"), exit 2.
out=$("$PERFSCRIPT" -x 2>&1); rc=$?
is "$rc $out" "2 perfscript: unknown option '-x'
(perfscript --help lists the options)" "perfscript -x: unknown option, the hint, exit 2"
out=$("$PERFSCRIPT" -T 2>&1); rc=$?
like "$rc $out" "^2 perfscript: -T wants a value" "perfscript -T without its value: said, exit 2"

# perfmon.output's refusals: a stream other than io.stderr is a misuse
# (raises), a file that cannot be made or the script itself is nil and why
out=$("$PERFSCRIPT" -e 'print(pcall(perfmon.output, io.stdout))' 2>&1)
like "$out" "^false	.*a file name or io.stderr expected" "perfmon.output(io.stdout): raises, naming what it takes"
out=$("$PERFSCRIPT" -e 'print(perfmon.output("/nonexistent/dir/x"))' 2>&1)
is "$out" "$(printf 'nil\t/nonexistent/dir/x: No such file or directory')" "perfmon.output into a missing directory: nil and why"
printf 'print(perfmon.output(arg[0]))\n' >"$TMP/self.lua"
out=$("$PERFSCRIPT" "$TMP/self.lua" 2>&1)
like "$out" "^nil	.*self.lua is the script itself: refusing to overwrite it$" "perfmon.output(the script): refused, the script intact"
like "$(cat "$TMP/self.lua")" "^print\(perfmon.output" "... and the script is as it was"
out=$(printf 'print(pcall(perfmon.output, "x"))\n' | "$PERFSCRIPT" -i 2>&1)
like "$out" "false	.*at the prompt the output is the terminal" "perfmon.output at the prompt: raises"

done_testing
