#!/usr/bin/env bash
# bench/sampling.sh: what overflow sampling costs, against a bare C ring
# reader and against perf, each ratio from figures taken in the same run.
#  1. delivery: samples/s end to end and perfscript's own CPU time per sample,
#     an empty Lua handler on a period=1 syscall tracepoint against
#     build/bench/ring_baseline (bench/ring_baseline.c) on the same workload;
#  2. overhead on the workload of cpu-clock at 10 kHz: the workload's own
#     time (workload loop N prints it) bare, under examples/profile.lua and
#     under perf record;
#  3. end to end: examples/profile.lua against perf record + perf report
#     --stdio for the same ~1M tracepoint samples.
# Like bench/run it asserts nothing: targets print met or MISSED, and the
# script fails only when a benchmark cannot run. Without root or perf it
# prints why and exits 0. Environment: PERFSCRIPT (default ./perfscript),
# SAMPLING_PAGES (ring pages for both readers in 1., default 256, perfscript's
# default), SAMPLING_ROUNDS (rounds of 1. and 3., default 3),
# SAMPLING_LOOP_ROUNDS (rounds of 2., default 9), SAMPLING_LOOP (rounds of
# hot_loop per run in 2., default 5000, about 0.4 s here).
set -euo pipefail
cd "$(dirname "$0")/.."

PS=${PERFSCRIPT:-./perfscript}
PAGES=${SAMPLING_PAGES:-256}
ROUNDS=${SAMPLING_ROUNDS:-3}
LROUNDS=${SAMPLING_LOOP_ROUNDS:-9}
LOOP=${SAMPLING_LOOP:-5000}
W=build/tests/workload
B=build/bench
CC=${CC:-cc}
TP=syscalls:sys_enter_getppid
TPDIR=/sys/kernel/tracing/events/syscalls/sys_enter_getppid
[ -d "$TPDIR" ] || TPDIR=/sys/kernel/debug/tracing/events/syscalls/sys_enter_getppid

die() { echo "bench/sampling.sh: $*" >&2; exit 1; }
skip() { echo "sampling: skipped: $*"; exit 0; }
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p"; }
median() { sort -g | awk '{v[NR]=$1} END {print NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
calc() { awk "BEGIN {printf \"$1\", $2}"; }                 # calc FMT EXPR
atleast() { awk -v v="$1" -v t="$2" 'BEGIN {print (v >= t) ? "met" : "MISSED"}'; }
atmost() { awk -v v="$1" -v t="$2" 'BEGIN {print (v <= t) ? "met" : "MISSED"}'; }
row() { printf '  %-34s %12s  %s\n' "$@"; }
now() { echo "${EPOCHREALTIME/[.,]/}"; }                    # microseconds
secs() { calc %.3f "($2 - $1) / 1e6"; }                     # secs T0_US T1_US

echo
echo "sampling"
[ "$EUID" = 0 ] || skip "not root (syscall tracepoints on a command need root)"
command -v perf >/dev/null || skip "perf not installed (the comparisons need it)"
[ -r "$TPDIR/id" ] || die "no $TP tracepoint: tracefs is not mounted (bench/run mounts it as root)"
[ -x "$PS" ] || die "$PS not built (run make first)"
[ -x "$W" ] || die "$W not built (run make tests-bin)"
mkdir -p "$B"
if [ ! -x "$B/ring_baseline" ] || [ bench/ring_baseline.c -nt "$B/ring_baseline" ]; then
	"$CC" -O2 -std=c11 -Wall -Wextra -o "$B/ring_baseline" bench/ring_baseline.c ||
		die "cannot build ring_baseline"
fi
TPID=$(cat "$TPDIR/id")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# ---- 1. delivery: empty Lua handler against a bare C ring reader ----
N=2000000
empty='c = perfmon_allocate_counter("'$TP'/period=1/"); local n = 0
probe("perfmon.sample(c)", function() n = n + 1 end)
probe("end", function() io.stderr:write(n, " ", os.clock(), " ", perfmon.lost(c), "\n") end)'
unordered="perfmon.ordered(false) $empty"
echo "delivery: $TP/period=1/, workload getppid $N, $PAGES-page rings, $ROUNDS interleaved rounds, medians"
c_rate=() c_ns=() c_lost=() p_rate=() p_ns=() p_lost=() u_ns=() r_ord=()
for ((r = 1; r <= ROUNDS; r++)); do
	t0=$(now)
	out=$("$B/ring_baseline" "$TPID" "$PAGES" "$W" getppid "$N") || die "ring_baseline failed: $out"
	t1=$(now)
	s=$(field samples <<<"$out")
	c_rate+=("$(calc %.0f "$s / ($(secs "$t0" "$t1"))")")
	c_ns+=("$(field ns_per_sample <<<"$out")")
	c_lost+=("$(field lost <<<"$out")")
	t0=$(now)
	out=$("$PS" -b "$PAGES" -e "$empty" -c "$W getppid $N" 2>&1 >/dev/null) ||
		die "perfscript failed: $out"
	t1=$(now)
	read -r s cpu lost < <(grep -E '^[0-9]+ [0-9.e+-]+ [0-9]+$' <<<"$out" | tail -1) ||
		die "perfscript printed no 'samples cpu lost' line: $out"
	p_rate+=("$(calc %.0f "$s / ($(secs "$t0" "$t1"))")")
	p_ns+=("$(calc %.1f "$s ? $cpu * 1e9 / $s : 0")")
	p_lost+=("$lost")
	# the same without time order across the CPUs' rings (sample/order.c)
	out=$("$PS" -b "$PAGES" -e "$unordered" -c "$W getppid $N" 2>&1 >/dev/null) ||
		die "perfscript (unordered) failed: $out"
	read -r s cpu lost < <(grep -E '^[0-9]+ [0-9.e+-]+ [0-9]+$' <<<"$out" | tail -1) ||
		die "perfscript printed no 'samples cpu lost' line: $out"
	u_ns+=("$(calc %.1f "$s ? $cpu * 1e9 / $s : 0")")
	r_ord+=("$(calc %.3f "${p_ns[-1]} / (${u_ns[-1]} > 0 ? ${u_ns[-1]} : 1)")")
done
cr=$(printf '%s\n' "${c_rate[@]}" | median)
pr=$(printf '%s\n' "${p_rate[@]}" | median)
cn=$(printf '%s\n' "${c_ns[@]}" | median)
pn=$(printf '%s\n' "${p_ns[@]}" | median)
row "C ring reader, samples/s" "$cr" "(rounds: ${c_rate[*]}; lost: ${c_lost[*]})"
row "perfscript empty handler, samples/s" "$pr" "(rounds: ${p_rate[*]}; lost: ${p_lost[*]})"
rr=$(calc %.2f "$pr / $cr")
row "ratio perfscript / C rate" "${rr}x" "(target >= 0.8: $(atleast "$rr" 0.8))"
row "C reader CPU per sample" "$cn ns" "(rounds: ${c_ns[*]})"
row "perfscript CPU per sample" "$pn ns" "(rounds: ${p_ns[*]}; target <= 250 ns: $(atmost "$pn" 250))"
un=$(printf '%s\n' "${u_ns[@]}" | median)
ro=$(printf '%s\n' "${r_ord[@]}" | median)
row "the same, perfmon.ordered(false)" "$un ns" "(rounds: ${u_ns[*]})"
row "time order adds, CPU per sample" "$(calc %+.1f "($ro - 1) * 100")%" "(median of each round's ratio: ${r_ord[*]}; target <= 15%: $(atmost "$ro" 1.15))"

# ---- 2. overhead of cpu-clock at 10 kHz on the workload ----
# Four runs a round, their order rotating from round to round: bare,
# profile.lua, an empty handler, perf record. A run's figure is the
# workload's own elapsed time around its loop (no tool's start-up or report
# is in it). The machine is shared and its load drifts over seconds, so the
# verdict is on the median over rounds of each round's own ratio (runs a
# second apart); the ratio of the medians is shown beside it.
empty10k='c = perfmon_allocate_counter("cpu-clock/freq=10000/")
probe("perfmon.sample(c)", function() end)
probe("end", function() io.stderr:write("samples=", perfmon.stats(c).samples, "\n") end)'
loop_run() { # loop_run KIND: sets v (ms) and n (samples)
	case $1 in
	bare) out=$("$W" loop "$LOOP" 2>&1) ;;
	prof) out=$("$PS" examples/profile.lua --freq 10000 --top 1 -c "$W loop $LOOP" 2>&1) ;;
	empty) out=$("$PS" -e "$empty10k" -c "$W loop $LOOP" 2>&1) ;;
	perf) out=$(perf record -F 10000 -e cpu-clock -o "$T/x.data" -- "$W" loop "$LOOP" 2>&1) ;;
	esac || die "$1: a loop run failed: $out"
	v=$(field loop_ms <<<"$out")
	[ -n "$v" ] || die "$1: a loop run printed no loop_ms: $out"
	case $1 in
	bare) n=- ;;
	prof) n=$(sed -n 's/^\([0-9]*\) samples of.*/\1/p' <<<"$out") ;;
	empty) n=$(field samples <<<"$out") ;;
	perf) n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' <<<"$out") ;;
	esac
}
echo
read -r load _ </proc/loadavg
echo "overhead at 10 kHz: workload loop $LOOP, its own elapsed time, $LROUNDS rotating rounds, medians (load $load)"
kinds=(bare prof empty perf)
declare -A all nall cur
r_prof=() r_empty=()
for ((r = 0; r < LROUNDS; r++)); do
	for ((k = 0; k < 4; k++)); do
		kind=${kinds[(r + k) % 4]}
		loop_run "$kind"
		all[$kind]+="$v " nall[$kind]+="$n " cur[$kind]=$v
	done
	r_prof+=("$(calc %.3f "${cur[prof]} / ${cur[perf]}")")
	r_empty+=("$(calc %.3f "${cur[empty]} / ${cur[perf]}")")
done
declare -A med
for kind in "${kinds[@]}"; do med[$kind]=$(tr ' ' '\n' <<<"${all[$kind]}" | grep . | median); done
row "bare" "${med[bare]} ms" "(rounds: ${all[bare]% })"
row "perfscript profile.lua --freq 10000" "${med[prof]} ms" "(rounds: ${all[prof]% }; samples: ${nall[prof]% })"
row "perfscript empty handler" "${med[empty]} ms" "(rounds: ${all[empty]% }; samples: ${nall[empty]% })"
row "perf record -F 10000 -e cpu-clock" "${med[perf]} ms" "(rounds: ${all[perf]% }; samples: ${nall[perf]% })"
row "slowdown over bare" "" "(profile.lua $(calc %.3f "${med[prof]} / ${med[bare]}")x, empty handler $(calc %.3f "${med[empty]} / ${med[bare]}")x, perf $(calc %.3f "${med[perf]} / ${med[bare]}")x; medians)"
ro=$(printf '%s\n' "${r_prof[@]}" | median)
row "ratio profile.lua / perf" "${ro}x" "(rounds: ${r_prof[*]}; of medians $(calc %.3f "${med[prof]} / ${med[perf]}"); target <= 1.05: $(atmost "$ro" 1.05))"
ro=$(printf '%s\n' "${r_empty[@]}" | median)
row "ratio empty handler / perf" "${ro}x" "(rounds: ${r_empty[*]}; of medians $(calc %.3f "${med[empty]} / ${med[perf]}"); target <= 1.05: $(atmost "$ro" 1.05))"

# ---- 3. end to end: profile.lua against perf record + perf report ----
M=1000000
EB=2048 # both get these ring pages: 256 lose a few % of 1M samples/s to profile.lua
echo
echo "end to end: $TP period 1, workload getppid $M, recording and report, $ROUNDS interleaved rounds, medians"
e_s=() e_n=() r_s=() r_lost=()
for ((r = 1; r <= ROUNDS; r++)); do
	t0=$(now)
	out=$("$PS" -b "$EB" examples/profile.lua --event "$TP/period=1/" --top 5 -c "$W getppid $M" 2>&1) ||
		die "profile.lua --event failed: $out"
	t1=$(now)
	e_s+=("$(secs "$t0" "$t1")")
	e_n+=("$(sed -n 's/^\([0-9]*\) samples of.*/\1/p' <<<"$out")")
	t0=$(now)
	perf record -q -m "$EB" -e "$TP" -c 1 -o "$T/F" -- "$W" getppid "$M" >/dev/null 2>&1 || die "perf record failed"
	out=$(perf report -i "$T/F" --stdio --sort sym 2>/dev/null) || die "perf report failed"
	t1=$(now)
	r_s+=("$(secs "$t0" "$t1")")
	r_lost+=("$(sed -n 's/^# Total Lost Samples: \([0-9]*\).*/\1/p' <<<"$out")")
done
em=$(printf '%s\n' "${e_s[@]}" | median)
rm_=$(printf '%s\n' "${r_s[@]}" | median)
row "profile.lua -b $EB --event" "$em s" "(rounds: ${e_s[*]}; samples: ${e_n[*]})"
row "perf record -m $EB + perf report" "$rm_ s" "(rounds: ${r_s[*]}; lost: ${r_lost[*]})"
re=$(calc %.2f "$em / $rm_")
row "ratio profile.lua / perf" "${re}x" "(target < 1: $(awk -v v="$re" 'BEGIN {print (v < 1) ? "met" : "MISSED"}'))"
