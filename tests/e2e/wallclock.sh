# wallclock.sh: each thread's wall time split whole in the kernel
# (perfmon.aggregate with offcpu and oncpu, examples/wallclock.lua), against
# what the threads themselves and the kernel say: tests/progs/offcpu.c
# `mixed` runs six threads (sleep, pipe read, mutex wait, spin, and two
# spinners pinned to one CPU, each waiting about half its time in the run
# queue); each prints the span it saw itself live, its CPU-time clock and
# schedstat's run delay, and main the span from its creation to its join.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
EX=examples
W=build/tests/offcpu

if ! need_root || [[ ! -r /sys/kernel/btf/vmlinux ]]; then
	skip_all "wall time is split by a BPF program: needs root and BTF" "wall time"
fi
tracefs_mount

# Conservation and agreement, per thread. The parts add up to the lifetime
# in the program, so the lifetime is held to the thread's own clocks: at
# least the span it saw itself live (first line to last), at most the span
# from before its creation to its join (+0.5%). On-CPU against its CPU-time
# clock and runnable against schedstat's run delay, read at its last line,
# agree within 0.5% of the lifetime plus 1 ms, plus, above, the time outside
# the thread's own span (its start and its exit, which may wait for a CPU).
# --min-us only says which intervals keep a stack: the totals are exact at
# every threshold. The migrant's 50 waits each begin on one CPU and end on
# the other.
conserved() { # min-us: the checks of one run, on $TMP/w.csv and $TMP/own
	local tid comm L on run blocked steal self ran delay span n=0
	while IFS=, read -r tid comm L on run blocked steal; do
		[[ $tid =~ ^[0-9]+$ ]] || continue
		read -r self ran delay < <(awk -v t="$tid" '$1 == "T" && $2 == t { print $3, $4, $5 }' "$TMP/own")
		span=$(awk -v t="$tid" '$1 == "J" && $2 == t { print $3 }' "$TMP/own")
		[[ -n $self && -n $span ]] || continue
		n=$((n + 1))
		is "$((on + run + blocked + steal))" "$L" "--min-us $1: $comm ($tid): on-CPU + runnable + blocked + steal = its lifetime"
		awk -v L="$L" -v a="$self" -v b="$span" 'BEGIN { exit !(L >= a * 0.9998 && L <= b * 1.005) }'
		ok $? "--min-us $1: $comm: lifetime $L ns, within its own span $self ns and its creation-to-join $span ns"
		agrees() { # ours kernel's
			awk -v x="$1" -v k="$2" -v L="$L" -v out="$((L - self))" \
				'BEGIN { m = 0.005 * L + 1e6; exit !(x >= k - m && x <= k + m + (out > 0 ? out : 0)) }'
		}
		agrees "$on" "$ran"; ok $? "--min-us $1: $comm: on-CPU $on ns, CPU-time clock $ran ns"
		agrees "$run" "$delay"; ok $? "--min-us $1: $comm: runnable $run ns, schedstat run delay $delay ns"
	done <"$TMP/w.csv"
	is "$n" 7 "--min-us $1: the workload's seven threads are in the table and said what the kernel counted"
}
for min in 1000 10; do
	"$PERFSCRIPT" "$EX/wallclock.lua" -c "$W mixed" --min-us "$min" --csv "$TMP/w.csv" >"$TMP/m.out" 2>&1
	grep -E '^[TJ] [0-9]+ ' "$TMP/m.out" >"$TMP/own"
	conserved "$min"
done
out=$("$PERFSCRIPT" "$EX/wallclock.lua" -c "$W mixed" --min-us 1 --csv "$TMP/w.csv" \
	--folded "$TMP/w.folded" --pprof "$TMP/w.pb.gz" 2>&1)
grep -qE "^9 threads, [0-9.]+ s of wall time: on-CPU" <<<"$out"
ok $? "wallclock.lua: a summary line (7 threads, the mover and main)"
like "$out" "TID +COMM +LIFETIME ms +ON-CPU ms +RUNNABLE ms +BLOCKED ms +STEAL ms" "... a per-thread table"
like "$(head -1 "$TMP/w.csv")" "^tid,comm,lifetime_ns,oncpu_ns,runnable_ns,blocked_ns,steal_ns$" "--csv: its header"
grep -E '^[TJ] [0-9]+ ' <<<"$out" >"$TMP/own"
conserved 1
# its time in the 50 reads, as it measured it, is blocked and then, woken,
# runnable and on the CPU (that part of its whole, at most)
IFS=, read -r on run blocked < <(awk -F, '$2 == "migrant" { print $4 "," $5 "," $6 }' "$TMP/w.csv")
read -r _ _ reads moves < <(grep '^W ' <<<"$out")
awk -v b="${blocked:-0}" -v r="${run:-0}" -v o="${on:-0}" -v w="${reads:-1}" \
	'BEGIN { exit !(b >= 0.5e9 && b <= w * 1.005 + 1e6 && b + r + o >= w * 0.995 - 1e6) }'
ok $? "the migrant, moved to the other CPU in ${moves:-?} of its 50 waits: blocked ${blocked:-?} ns of its ${reads:-?} ns in them"
grep -qE "^migrant;blocked;.*;read;.*pipe_read" "$TMP/w.folded"
ok $? "--folded: its waits at the stack it left the CPU at, taken on the CPU it came back on"

# Each kind of thread where it should be.
part() { awk -F, -v c="$1" -v k="$2" '$2 == c { s += $k } END { print s + 0 }' "$TMP/w.csv"; }
share() { awk -v a="$1" -v b="$2" -v lo="$3" -v hi="$4" 'BEGIN { r = a / b; exit !(r >= lo && r <= hi) }'; }
share "$(part sleeper 6)" "$(part sleeper 3)" 0.98 1.0; ok $? "the sleeper is blocked ~all its life"
# the spinner never blocks: on the CPU, or waiting for it (however much
# of each the machine's load makes), all its life
share "$(( $(part xspinner 4) + $(part xspinner 5) ))" "$(part xspinner 3)" 0.98 1.0
ok $? "the spinner is on the CPU or runnable ~all its life ($(part xspinner 4) + $(part xspinner 5) of $(part xspinner 3) ns)"
share "$(part pinned 5)" "$(part pinned 3)" 0.3 0.85; ok $? "two spinners pinned to one CPU: each runnable about half its life (more if others share it)"

# One flame graph: comm;part;stack microseconds.
grep -qE "^reader;blocked;.*;read;.*anon_pipe_read" "$TMP/w.folded"
ok $? "--folded: the reader blocked in the pipe's read"
# the spin loop calls clock_gettime: a sample there shows run;clock_gettime,
# since the leaf sets up no frame pointer and a frame-pointer walk skips its
# caller; under load spin_a_second's own code may not be sampled at all
grep -qE "^xspinner;on-cpu;.*;run;(spin_a_second|clock_gettime)" "$TMP/w.folded"
ok $? "--folded: the spinner on the CPU in its spin loop (spin_a_second or the clock_gettime it calls)"
us=$(awk '/^pinned;runnable/ { s += $NF } END { print s + 0 }' "$TMP/w.folded")
ns=$(part pinned 5)
awk -v u="$us" -v n="$ns" 'BEGIN { d = u * 1000 - n; if (d < 0) d = -d; exit !(d < 1000 * 200) }'
ok $? "--folded: the pinned threads' runnable stacks add up to their runnable time ($us us)"
if command -v go >/dev/null; then
	top=$(pprof_tool -top -sample_index=wall "$TMP/w.pb.gz" 2>&1)
	like "$top" "Type: wall" "--pprof: go tool pprof reads it, sample type wall"
	like "$(pprof_tool -tags "$TMP/w.pb.gz" 2>&1)" "part: .*(on-cpu|blocked|runnable)" "--pprof: each sample labelled with its part"
else
	skip "go is not installed (make check installs golang-go)" "--pprof read by go tool pprof"
fi

# A slice still going on at the end is counted up to the end: the session
# stops after 1 s of a 3 s spin (and the command runs on until the figures
# are read and it is stopped: up to about 0.1 s more under load).
"$PERFSCRIPT" "$EX/wallclock.lua" -T 1 -c "build/tests/workload spin 3000" --csv "$TMP/spin.csv" >/dev/null 2>&1
read -r life on < <(awk -F, '$2 == "workload" { l += $3; o += $4 } END { print l + 0, o + 0 }' "$TMP/spin.csv")
awk -v l="$life" -v o="$on" 'BEGIN { exit !(l >= 0.85e9 && l <= 1.5e9 && o > 0) }'
ok $? "a slice going on at the end counts up to the end: the 3 s spin lived $life ns of a 1 s session, $on on the CPU"

# A thread blocked from before the session to its end never switches: it
# is told to the program from /proc when the counter starts (-p, -a).
(exec sleep 30) &
sleeper=$!
wait_for "/proc/$sleeper/comm" '^sleep$' 5
"$PERFSCRIPT" "$EX/wallclock.lua" -p "$sleeper" -T 1 --csv "$TMP/sleep.csv" >/dev/null 2>&1
kill "$sleeper" 2>/dev/null; wait "$sleeper" 2>/dev/null
row=$(awk -F, '$2 == "sleep"' "$TMP/sleep.csv")
IFS=, read -r _ _ L on run blocked _ <<<"$row"
awk -v L="${L:-0}" -v b="${blocked:-0}" 'BEGIN { exit !(L >= 0.9e9 && L <= 2e9 && b >= 0.99 * L) }'
ok $? "-p on a process asleep all along: its thread is there, blocked ${blocked:-?} of ${L:-?} ns"

# The library: on-CPU slices alone are the task clock.
out=$("$PERFSCRIPT" -e 'c = perfmon.counter("sched:sched_switch")
local a = assert(perfmon.aggregate(c, { by = { "comm" }, oncpu = true }))
probe("end", function()
  for k, ns in pairs(a:read()) do print(k, ns) end
end)' -c "$W mixed" 2>&1)
ran=$(awk '$1 == "T" && $4 > max { max = $4 } END { print max }' <<<"$out")
got=$(awk '$1 == "xspinner" { print $2 }' <<<"$out")
awk -v a="${got:-0}" -v b="${ran:-1}" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.005 * b) }'
ok $? "oncpu = true alone: the spinner's on-CPU time $got ns, its CPU-time clock $ran ns"
out=$("$PERFSCRIPT" -e 'c = perfmon.counter("cpu-clock")
perfmon.aggregate(c, { by = { "comm" }, oncpu = true })' 2>&1)
like "$out" "oncpu = true sums the intervals between sched:sched_switch" "oncpu on another event: refused, saying why"
out=$("$PERFSCRIPT" -e 'c = perfmon.counter("sched:sched_switch")
perfmon.aggregate(c, { by = { "tid" }, oncpu = true, forward = true })' 2>&1)
like "$out" "oncpu = true alone has no samples to forward \\(offcpu = true forwards its intervals\\)" "oncpu alone with forward = true: refused, saying why"

done_testing
