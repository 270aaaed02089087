# unprivileged.sh: the main examples as an unprivileged user at
# kernel.perf_event_paranoid 2, perf's default, where perf stat and perf
# record count user space only. perfscript does the same and says so once;
# what this user may not count at all says why, never "<not supported>".
# The sysctl is set for the test and restored after it.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

if ! need_root || ! command -v setpriv >/dev/null; then
	skip_all "needs root (to set the sysctl) and setpriv (to drop privileges)" "examples as an unprivileged user"
fi
sysctl=/proc/sys/kernel/perf_event_paranoid
saved=$(cat $sysctl)
trap 'echo "$saved" >$sysctl; rm -rf "$TMP"' EXIT
echo 2 >$sysctl

# A copy the user can run, with its tapsets beside it and a workload.
mkdir -p "$TMP/bin"
cp "$PERFSCRIPT" "$TMP/bin/perfscript"; cp -r "$ROOT/tapsets" "$TMP/bin/tapsets"
cp "$WORKLOAD" "$TMP/bin/workload"
chmod -R a+rX "$TMP"
W="$TMP/bin/workload"
user() { (cd /tmp && setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/bin/perfscript" "$@"); }

notice="kernel.perf_event_paranoid does not let this user count the kernel: counting user space only"
user "$ROOT/examples/stat.lua" -c "$W spin 100" 2>"$TMP/stat.err" >/dev/null
out=$(cat "$TMP/stat.err") # the report is on stderr, as perf stat's
like "$out" "[0-9]+\.[0-9]+ msec task-clock" "stat.lua: task-clock is counted, user space only"
like "$out" "[0-9]+ +page-faults" "stat.lua: page-faults is counted"
! grep -qE "<not supported> +(task-clock|page-faults|context-switches)" <<<"$out"
ok $? "stat.lua: no '<not supported>' for events this machine has"
is "$(grep -c "$notice" "$TMP/stat.err")" 1 "the user-space-only notice is said once"
ms=$(sed -n 's/^ *\([0-9.]*\) msec task-clock.*/\1/p' <<<"$out")
awk -v ms="$ms" 'BEGIN { exit !(ms >= 90 && ms < 400) }'; ok $? "stat.lua: task-clock is the 100 ms of CPU the workload spun (${ms} ms)"

out=$(user "$ROOT/examples/profile.lua" -c "$W spin 300" --top 3 2>&1)
like "$out" "hot_spin" "profile.lua samples the command's user space: hot_spin on top"
out=$(user "$ROOT/examples/counters.lua" -c "$W pages 5000" 2>&1)
like "$out" "[0-9]{4,} +page-faults" "counters.lua counts the command's page faults"

out=$(user -e 'c = assert(perfmon.counter("cpu-clock/freq=1000/u")); local n = 0
probe("perfmon.sample(c)", function() n = n + 1 end)
probe("end", function() print(n > 50) end)' -c "$W spin 200" 2>&1)
is "$out" true "a :u sampling counter samples (the ring's carrier asks no more than :u)"

# What :u does not make allowed: system-wide counting.
# Nothing counted at all is a failure, as perf stat's (it printed
# "<not counted>" rows and exited 0).
out=$(user "$ROOT/examples/stat.lua" -a -T 0.2 2>&1); rc=$?
like "$rc $out" "^1 stat.lua: nothing could be counted: cannot open 'cpu-clock': permission denied \(kernel.perf_event_paranoid is 2\)" \
	"stat.lua -a: exit 1 and the real reason (cpu-clock, as perf names system-wide time)"
out=$(user "$ROOT/examples/stat.lua" -p 1 -T 0.2 2>&1); rc=$?
like "$rc $out" "^1 stat.lua: nothing could be counted: .*permission denied" "stat.lua -p 1 (root's init): exit 1 and the reason"
# One event counted and one not: the rows, "<not counted>" and the reason.
out=$(user "$ROOT/examples/stat.lua" -e 'task-clock,cpu-clock:k' -c "$W spin 10" 2>&1); rc=$?
like "$rc $out" "^0 .*<not counted> +msec cpu-clock:k" "stat.lua: an event this user may not count is '<not counted>', not '<not supported>'"
like "$out" "permission denied \(kernel.perf_event_paranoid is 2\)" "stat.lua: and the real reason is printed"

# Dynamic probes: the kernel asks for CAP_PERFMON whatever the sysctl
# says, so the advice is that and nothing else (":u" would not help).
out=$(user -e 'c = perfmon.counter("uprobe:'"$W"':main")' -c "$W spin 1" 2>&1)
like "$out" "permission denied .*run as root or with CAP_PERFMON: the kernel asks for it for every uprobe, whatever kernel.perf_event_paranoid says" \
	"a uprobe as nobody: the advice that works"
ok $([[ $out != *":u modifier"* && $out != *"lower kernel"* ]]; echo $?) "and no advice that does not"
# opensnoop as nobody: the reason the tracepoints cannot be had, not "none here"
out=$(user "$ROOT/examples/opensnoop.lua" -c "$W spin 1" 2>&1); rc=$?
like "$rc:$out" "^1:opensnoop.lua: cannot trace open, openat or openat2: .*(permission denied|not allowed|need)" \
	"opensnoop.lua as nobody: exit 1, saying why it cannot trace"
out=$(user "$ROOT/examples/offcpu.lua" -c "$W spin 1" 2>&1); rc=$?
like "$rc:$out" "^1:offcpu.lua: tracepoint 'sched:sched_switch' .*(permission denied|not allowed)" \
	"offcpu.lua as nobody: exit 1, saying why, no traceback"

# Every example that needs more than this user has, run as it would be run:
# one line on stderr naming the permission, a non-zero exit, nothing on
# stdout, and nothing announced before it ("listening on", an empty report).
while IFS='|' read -r ex args; do
	# shellcheck disable=SC2086 # the arguments are words
	(cd /tmp && timeout 20 setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/bin/perfscript" \
		"$ROOT/examples/$ex" $args >"$TMP/nb.out" 2>"$TMP/nb.err"); rc=$?
	is "$(( rc != 0 && rc != 124 )):$(wc -l <"$TMP/nb.err"):$(wc -c <"$TMP/nb.out")" "1:1:0" \
		"$ex $args as nobody: exit $rc, one line on stderr, nothing on stdout"
	like "$(cat "$TMP/nb.err")" "^(${ex}|perfscript): .*permission denied" \
		"$ex as nobody: the line names the permission ($(head -c 150 "$TMP/nb.err"))"
done <<EOF
agent.lua|-a --listen 127.0.0.1:0
bpf_filter.lua|-a -c true
bpf_profile.lua|-a -T 5
counters.lua|-a -T 5
exporter.lua|-a --listen 127.0.0.1:0
exporter.lua|-p 1 --listen 127.0.0.1:0
offcpu.lua|-a -T 5
opensnoop.lua|-a -T 5
pagefaults.lua|-a -T 5
profile.lua|-a -T 5
runqlat.lua|-a -T 5
sample_values.lua|-a -T 5
stat.lua|-a -T 5
syscalls.lua|-a -T 5
syscount.lua|-a -T 5
wallclock.lua|-a -T 5
EOF

done_testing
