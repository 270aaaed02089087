# offcpu.sh: off-CPU time measured in the kernel (perfmon.aggregate with
# offcpu = true, examples/offcpu.lua) against a workload that knows what
# it did: four threads, one sleeping 1 s, one blocked 1 s in read() on a
# pipe, one waiting 1 s for a mutex, one spinning 1 s (tests/progs/offcpu.c).
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
EX=examples
W=build/tests/offcpu

if ! need_root || [[ ! -r /sys/kernel/btf/vmlinux ]]; then
	skip_all "off-CPU time is measured by a BPF program: needs root and BTF" "off-CPU time"
fi
tracefs_mount
declare -A where

# Per thread: seconds off the CPU while sleeping (S), with the wait's stack.
out=$("$PERFSCRIPT" -e 'c = perfmon.counter("sched:sched_switch")
local a = assert(perfmon.aggregate(c, { by = { "comm", "args.prev_state", "kstack" }, offcpu = true }))
probe("end", function()
  local t = {}
  for k, ns in pairs(a:read()) do
    local comm, state, stack = k:match("^([^;]*);(%-?%d+);?(.*)$")
    if state == "1" then
      local e = t[comm] or { ns = 0, top = 0 }
      e.ns = e.ns + ns
      if ns > e.top then e.top, e.stack = ns, stack end
      t[comm] = e
    end
  end
  for _, comm in ipairs({ "sleeper", "reader", "locker", "xspinner" }) do
    local e = t[comm] or { ns = 0, stack = "" }
    print(comm, string.format("%.4f", e.ns / 1e9), e.stack or "")
  end
end)' -c "$W" 2>&1)
secs() { awk -v c="$1" '$1 == c { print $2 }' <<<"$out"; }
near1() { awk -v s="$1" 'BEGIN { exit !(s >= 0.98 && s <= 1.02) }'; }
near1 "$(secs sleeper)"; ok $? "the sleeping thread: $(secs sleeper) s off the CPU in S (1 s, within 2%)"
like "$(awk '$1 == "sleeper"' <<<"$out")" "do_nanosleep" "... at do_nanosleep"
near1 "$(secs reader)"; ok $? "the thread reading a pipe: $(secs reader) s in S"
like "$(awk '$1 == "reader"' <<<"$out")" "pipe_read" "... in the pipe's read"
near1 "$(secs locker)"; ok $? "the thread waiting for a mutex: $(secs locker) s in S"
like "$(awk '$1 == "locker"' <<<"$out")" "futex_wait" "... in futex_wait"
awk -v s="$(secs xspinner)" 'BEGIN { exit !(s < 0.02) }'; ok $? "the spinning thread sleeps about 0 s ($(secs xspinner) s)"

# The example: a top list, folded microseconds, a pprof profile.
out=$("$PERFSCRIPT" "$EX/offcpu.lua" -c "$W" --folded "$TMP/off.folded" --pprof "$TMP/off.pb.gz" 2>&1)
like "$out" "S reader +read > anon_pipe_read" "offcpu.lua: the reader's wait, by user function and kernel function"
# in all: the four 1 s waits (3 threads and main), and however long the
# machine kept them runnable; the same total as the folded lines'
total=$(awk '/ s off the CPU/ { print $1 }' <<<"$out")
folded=$(awk '{ s += $NF } END { printf "%.6f", s / 1e6 }' "$TMP/off.folded")
awk -v t="${total:-0}" -v f="${folded:-0}" 'BEGIN { d = t - f; if (d < 0) d = -d; exit !(t >= 3.99 && d < 0.002) }'
ok $? "offcpu.lua: ${total:-no} s off the CPU in all, the four 1 s waits and more, as the folded lines add up (${folded:-no} s)"
# (1 s blocked on the pipe, and its wait for a CPU after the wake-up)
us=$(awk '/^reader;/ { s += $NF } END { print s + 0 }' "$TMP/off.folded")
awk -v u="$us" 'BEGIN { exit !(u >= 980000 && u <= 1200000) }'; ok $? "--folded: comm;stack microseconds lines (reader $us us)"
if command -v go >/dev/null; then
	top=$(pprof_tool -top -sample_index=off-cpu "$TMP/off.pb.gz" 2>&1)
	like "$top" "Type: off-cpu" "--pprof: go tool pprof reads it, sample type off-cpu"
	like "$top" "anon_pipe_read" "--pprof: with the stacks' functions"
else
	skip "go is not installed (make check installs golang-go)" "--pprof read by go tool pprof"
fi
# --min-us: shorter intervals keep no stack but still count, so the
# totals do not move with the threshold.
out=$("$PERFSCRIPT" "$EX/offcpu.lua" -c "$W" --min-us 2000000 --folded "$TMP/long.folded" 2>&1)
total=$(awk '/ s off the CPU/ { print $1 }' <<<"$out")
folded=$(awk '{ s += $NF } END { printf "%.6f", s / 1e6 }' "$TMP/long.folded")
awk -v t="${total:-0}" -v f="${folded:-0}" 'BEGIN { d = t - f; if (d < 0) d = -d; exit !(t >= 3.99 && d < 0.002) }'
ok $? "--min-us 2000000: ${total:-no} s off the CPU in all, the four 1 s waits and more, as its folded lines add up"
unlike "$(awk 'NR > 2 && / ms/ == 0 && $1 ~ /^[0-9.]+$/ && $5 != "-"' <<<"$out")" "." \
	"... and no interval under 2 s has a stack (each row's WHERE is -)"
like "$out" "\(-: no stack: intervals under 2e\+06 us" "... said under the table"
us=$(awk '/^reader / { s += $NF } END { print s + 0 }' "$TMP/long.folded")
# (and the wait for a CPU after its wake-up: 75 ms once, beside another suite)
awk -v u="$us" 'BEGIN { exit !(u >= 980000 && u <= 1200000) }'; ok $? "... the reader's second in --folded, on its comm alone ($us us)"

# A long wait after short ones (500 pipe round trips, then a 200 ms
# sleep): at --min-us 1000 none of the short ones kept a stack, so the
# sleep's are taken as the thread runs again (where the kernel has
# sched_exit_tp), at 1 when it leaves the CPU: the same place either way.
for min in 1000 1; do
	out=$("$PERFSCRIPT" "$EX/offcpu.lua" -c "$W late" --min-us "$min" 2>&1)
	row=$(awk '$3 == "S" && $4 == "late" && $1 > 150' <<<"$out")
	ms=$(awk '{ print $1 }' <<<"$row")
	awk -v m="${ms:-0}" 'BEGIN { exit !(m >= 198 && m <= 210) }'
	ok $? "--min-us $min: the 200 ms sleep after 500 short waits, ${ms:-no} ms"
	where[$min]=$(awk '{ $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); print }' <<<"$row")
done
like "${where[1000]}" "clock_nanosleep > do_nanosleep" "... named as it ran again: ${where[1000]}"
is "${where[1000]}" "${where[1]}" "... where it was named at its switch-out"

# A thread that renames itself midway: its short waits (summed in its
# entry, under 100 ms each) go under the name it had at each.
out=$("$PERFSCRIPT" -e 'local c = perfmon.counter("sched:sched_switch")
local a = assert(perfmon.aggregate(c, { by = { "comm", "args.prev_state" }, offcpu = true, min_us = 100000 }))
probe("end", function()
  for k, ns in pairs(a:read()) do if k:match("^before;1") or k:match("^after;1") then print(k, ns) end end
end)' -c "$W rename" 2>&1)
for name in before after; do
	ns=$(awk -v n="$name;1" '$1 == n { print $2 }' <<<"$out")
	awk -v v="${ns:-0}" 'BEGIN { exit !(v >= 100e6 && v <= 120e6) }'
	ok $? "renamed midway: ${ns:-no} ns asleep as '$name' (50 sleeps of 2 ms)"
done

# Stacks remembered by place: one call site reads one fd number, a pipe
# or a socket dup2'd onto it, so by its registers one place with two
# kernel stacks. Alternating, the first reuse walks again, finds the other
# stack and the place is walked from then on: each stack has its own
# reads' time (the program's own clock around each read). Twelve of one,
# then twelve of the other: the socket's reads are the place's 12th to
# 23rd uses, and the check at the 16th finds it, so the 12th to 15th (4
# waits) go under the pipe's stack (docs/api.md: up to 15 such). Beside
# four busy loops one wait can be twice as long as another (4 waits came
# to 5.3 average ones), so the bound is 8.5 of the average; never found,
# all 12 would go. The total is the reads' whole.
cat >"$TMP/oneplace.lua" <<'EOF'
local c = perfmon.counter("sched:sched_switch")
local a = assert(perfmon.aggregate(c, { by = { "comm", "args.prev_state", "ustack", "kstack" },
                                        offcpu = true, min_us = 10 }))
local t = { pipe = 0, sock = 0 }
local function sum(rows)
  for _, r in ipairs(rows) do
    local w = r.comm == "oneplace" and (r.kstack:match("pipe_read") and "pipe" or r.kstack:match("unix_stream") and "sock")
    if w then t[w] = t[w] + r.count end
  end
end
local every = tonumber(os.getenv("TAKE_MS"))
if every then probe(("timer.ms(%d)"):format(every), function() sum(a:take { rows = true }) end) end
probe("end", function()
  sum(every and a:take { rows = true } or a:read { rows = true })
  local p = a:places()
  print("pipe", t.pipe, "sock", t.sock, "used", p.used, "unstable", p.unstable)
end)
EOF
# (alt-takes: taken every 20 ms, as the agent takes each second: the
# stack map is emptied at each take, and a place walked again after)
for how in alt blocks alt-takes; do
	take=
	[[ $how == alt-takes ]] && { take=20; how=alt; }
	out=$(TAKE_MS=$take "$PERFSCRIPT" "$TMP/oneplace.lua" -c "$W oneplace $how" 2>&1)
	read -r P U pipe sock used unstable < <(awk '$1 == "P" { p = $2 } $1 == "U" { u = $2 }
		$1 == "pipe" { print p, u, $2, $4, $6, $8 }' <<<"$out")
	[[ ${unstable:-0} -ge 1 ]]
	ok $? "oneplace $how${take:+ taken every $take ms}: the place found with two stacks (${unstable:-no} unstable, ${used:-no} uses)"
	if [[ $how == alt ]]; then
		awk -v g="${pipe:-0}" -v w="${P:-0}" -v h="${sock:-0}" -v u="${U:-0}" \
			'BEGIN { exit !(w > 6e7 && u > 6e7 && g <= w && g >= 0.98 * w - 1e6 && h <= u && h >= 0.98 * u - 1e6) }'
		ok $? "... alternating, each stack its own reads: pipe ${pipe:-no} of $P ns, socket ${sock:-no} of $U ns"
	else
		awk -v g="${pipe:-0}" -v w="${P:-0}" -v h="${sock:-0}" -v u="${U:-0}" \
			'BEGIN { wait = u / 12; exit !(w > 6e7 && g + h <= w + u && g + h >= 0.98 * (w + u) - 2e6 &&
			                               h >= u - 8.5 * wait && g <= w + 8.5 * wait) }'
		ok $? "... in blocks, found at the 16th use: at most 4 of the socket's 12 waits under the pipe's stack: pipe ${pipe:-no} of $P ns, socket ${sock:-no} of $U ns"
	fi
done

# An aggregate that is not off-CPU has no places: all 0, not an error.
out=$("$PERFSCRIPT" -e 'local c = perfmon.counter("syscalls:sys_enter_getppid")
local a = assert(perfmon.aggregate(c, { by = { "pid" } }))
probe("end", function() local p = assert(a:places()); print(p.used, p.checked, p.unstable, p.walked) end)' -c true 2>&1)
is "$out" $'0\t0\t0\t0' "aggregate:places() of an aggregate that is not off-CPU: all 0"

# The run queue: two threads spinning on one CPU each wait about half
# their time runnable; keyed by args.prev_state, that wait (preempted, or
# after a wake-up) is state 0 (or 256, preempted), and it equals the
# kernel's own run_delay in /proc/PID/task/TID/schedstat.
"$PERFSCRIPT" -e 'c = perfmon.counter("sched:sched_switch")
local a = assert(perfmon.aggregate(c, { by = { "tid", "args.prev_state" }, offcpu = true, min_us = 0 }))
probe("end", function()
  local r = {}
  for k, ns in pairs(a:read()) do
    local tid, state = k:match("^(%d+);(%-?%d+)$")
    if state == "0" or state == "256" then r[tid] = (r[tid] or 0) + ns end
  end
  for tid, ns in pairs(r) do io.stderr:write("runnable ", tid, " ", ns, "\n") end
end)' -c "$W pinned" >"$TMP/pinned.out" 2>"$TMP/pinned.err"
n=0
while read -r tid oncpu delay _; do
	got=$(awk -v t="$tid" '$1 == "runnable" && $2 == t { print $3 }' "$TMP/pinned.err")
	# the scheduler's own figure (ps_switch), and the thread's wait to
	# exit after it read its schedstat: a preemption between the read and
	# the exit adds its wait, up to a time slice of a loaded machine
	# (8.1 ms once, beside the whole suite: +2.03%)
	awk -v g="${got:-0}" -v d="$delay" 'BEGIN { exit !(d > 1e8 && g >= d * 0.995 && g <= d * 1.02 + 20e6) }'
	ok $? "thread $tid: runnable ${got:-none} ns, its schedstat run_delay $delay ns (-0.5% to +2% and a 20 ms slice)"
	n=$((n + 1))
done <"$TMP/pinned.out"
is "$n" 2 "both pinned threads reported their schedstat"

# Keyed by another field of the record, the tracepoint's own program
# measures (bpf_ktime_get_ns, no wake-up split): the second asleep, and
# no more than the run lasted (its wait for a CPU after it, R, counts
# too: on a loaded machine that is more than 2%).
t0=$(date +%s%N)
out=$("$PERFSCRIPT" -e 'c = perfmon.counter("sched:sched_switch")
local a = assert(perfmon.aggregate(c, { by = { "comm", "args.prev_pid" }, offcpu = true }))
probe("end", function()
  local t = {}
  for _, r in ipairs(a:read { rows = true }) do t[r.comm] = (t[r.comm] or 0) + r.count end
  print("sleeper", string.format("%.4f", (t.sleeper or 0) / 1e9))
end)' -c "$W" 2>&1)
wall=$(( $(date +%s%N) - t0 ))
awk -v s="$(secs sleeper)" -v w="$wall" 'BEGIN { exit !(s >= 0.98 && s * 1e9 <= w) }'
ok $? "keyed by args.prev_pid (the tracepoint's program): the sleeper $(secs sleeper) s off the CPU (1 s asleep; the run took $((wall / 1000000)) ms)"

# A wait still going on at the end is counted up to the end: the session
# stops after 1 s of a 3 s sleep. Its stacks are taken as the thread runs
# again, which it has not: without them where the kernel takes them so.
out=$("$PERFSCRIPT" "$EX/offcpu.lua" -T 1 -c "build/tests/workload sleep 3000" 2>&1)
ms=$(awk '$3 == "S" && $4 == "workload" { s += $1 } END { print s + 0 }' <<<"$out")
awk -v m="${ms:-0}" 'BEGIN { exit !(m >= 900 && m <= 1100) }'
ok $? "a wait going on at the end counts up to the end: ${ms:-no} ms of a 3 s sleep in a 1 s session"

# Taken every 300 ms (as the agent takes its sums each second), a 2 s
# sleep keeps its stack in every window: the stack map is emptied at each
# take but for the stacks an interval going on still holds (it lost them
# after the first window, 1.8 s of 2 counted without a stack).
out=$("$PERFSCRIPT" -e 'local sw = perfmon.counter("sched:sched_switch")
local a = assert(perfmon.aggregate(sw, { by = { "comm", "args.prev_state", "kstack" }, offcpu = true, min_us = 10 }))
local sums = {}
local function take()
  for k, ns in pairs(a:take() or {}) do
    if k:match("^workload;1") then sums[k] = (sums[k] or 0) + ns end
  end
end
probe("timer.ms(300)", take)
probe("end", function()
  take()
  for k, ns in pairs(sums) do print(("%.3f"):format(ns / 1e9), k) end
end)' -c "build/tests/workload sleep 2000" 2>&1)
named=$(awk '/do_nanosleep/ { s += $1 } END { print s + 0 }' <<<"$out")
awk -v s="$named" 'BEGIN { exit !(s >= 1.98 && s <= 2.05) }'
ok $? "a 2 s sleep taken every 300 ms: ${named} s of it at do_nanosleep, in every window"

# The guide's example runs as written (keyed to this workload's reader).
awk '/^## Where threads wait/ { w = 1 } w && /^```lua$/ { f = 1; next } f && /^```$/ { exit } f' \
	docs/guide.md | sed 's/\^worker/^reader/' >"$TMP/guide.lua"
out=$("$PERFSCRIPT" "$TMP/guide.lua" -c "$W" 2>&1)
ms=$(awk '$3 ~ /^reader;/ && $3 ~ /pipe_read/ { print $1 }' <<<"$out")
awk -v m="${ms:-0}" 'BEGIN { exit !(m >= 980 && m <= 1020) }'
ok $? "docs/guide.md's off-CPU example runs: the reader's ${ms:-no} ms in the pipe's read"

# The tapset's example (docs/tapsets.md) runs as written: the threads'
# waits by command, state and stack, and the total.
awk '/^## offcpu/ { w = 1 } w && /^```lua$/ { f = 1; next } f && /^```$/ { exit } f' \
	docs/tapsets.md >"$TMP/tapset.lua"
out=$("$PERFSCRIPT" "$TMP/tapset.lua" -c "$W" 2>&1)
like "$out" "S reader +.*anon_pipe_read" "docs/tapsets.md's offcpu example: the reader's wait with its stack"
# the total: the four 1 s sleeps and waits, and however long the
# machine's load kept the threads runnable (R): 4 s or more
total=$(awk '/ s in all$/ { print $1 }' <<<"$out")
awk -v t="${total:-0}" 'BEGIN { exit !(t >= 3.98 && t < 60) }'
ok $? "... and the total, the four 1 s waits and the runnable time (${total:-no} s)"

# Misuse says what offcpu is for.
out=$("$PERFSCRIPT" -e 'c = perfmon.counter("syscalls:sys_enter_getppid")
perfmon.aggregate(c, { by = { "pid" }, offcpu = true })' 2>&1)
like "$out" "offcpu = true sums the intervals between sched:sched_switch" "offcpu on another tracepoint is refused, saying why"
out=$("$PERFSCRIPT" -e 'c = perfmon.counter("sched:sched_switch")
perfmon.aggregate(c, { by = { "tid" }, offcpu = true, min_us = -1 })' 2>&1)
like "$out" "min_us must be 0 or more microseconds" "a negative min_us is refused"
tracefs_restore
# An aggregate read before its counter opens (an end probe that runs when
# a signal comes in the session's first moments) is empty, not an error:
# offcpu.lua and wallclock.lua died with a traceback there.
out=$("$PERFSCRIPT" -a -e 'local sw = perfmon.counter("sched:sched_switch")
local w = assert(perfmon.aggregate(sw, { by = { "comm" }, offcpu = true }))
local t, err = w:read()
print(type(t), t and next(t), err, type(w:take()))
exit()' 2>&1)
is "$out" $'table\tnil\tnil\ttable' "an aggregate read and taken before its counter opens: empty tables"
done_testing
