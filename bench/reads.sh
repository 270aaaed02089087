#!/usr/bin/env bash
# bench/reads.sh: what reading many system-wide counters often costs.
# examples/stat.lua -a -I MS with READS_EVENTS counters (the software
# events, repeated) against perf stat -a -I MS with the same list, for
# READS_SECONDS each, one after the other, READS_ROUNDS times in turn (the
# median of each tool's rounds is what is compared: one 5 s run strays by
# 30% on a shared VM); then the same with -C 0 and
# -C 1 alone, to show whether reading a CPU other than the reader's costs
# more (an inter-processor interrupt per counter, where the reader is
# elsewhere). Figures are each tool's own CPU, from /proc/PID/schedstat
# (its threads' run time in ns), as a share of one CPU.
# Target (issue 27): perfscript <= 1.0x perf stat -I, and flat in which
# CPU is read. Asserts nothing; needs root (system-wide counters) and perf.
# Environment: PERFSCRIPT (default ./perfscript), READS_EVENTS (100),
# READS_MS (10), READS_SECONDS (5), READS_ROUNDS (3).
set -uo pipefail
cd "$(dirname "$0")/.."
PS=${PERFSCRIPT:-./perfscript}
NEV=${READS_EVENTS:-100}
MS=${READS_MS:-10}
SECS=${READS_SECONDS:-5}
ROUNDS=${READS_ROUNDS:-3}

row() { printf '  %-40s %12s  %s\n' "$@"; }
calc() { awk "BEGIN {printf \"$1\", $2}"; }
atmost() { awk -v v="$1" -v t="$2" 'BEGIN {print (v <= t) ? "met" : "MISSED"}'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo
echo "counter reads ($NEV counters, every $MS ms, $SECS s each, median of $ROUNDS rounds in turn, $(nproc) CPUs)"
[ "$(id -u)" = 0 ] || { echo "  skipped: system-wide counters need root"; exit 0; }
command -v perf >/dev/null || { echo "  skipped: perf is not installed"; exit 0; }

base=(cpu-clock task-clock context-switches cpu-migrations page-faults minor-faults
	major-faults alignment-faults emulation-faults dummy)
events=
for ((i = 0; i < NEV; i++)); do events+=${events:+,}${base[i % ${#base[@]}]}; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# CPU share (percent of one CPU) of a command run for SECS s, then SIGINT
share() {
	"$@" >/dev/null 2>"$tmp/err" &
	local p=$! c0 c1 t0 t1
	sleep 0.5 # past start-up: loading, opening, the first interval
	c0=$(awk '{print $1}' /proc/$p/schedstat) t0=$(date +%s%N)
	sleep "$SECS"
	c1=$(awk '{print $1}' /proc/$p/schedstat) t1=$(date +%s%N)
	kill -INT $p
	wait $p 2>/dev/null
	calc "%.2f" "100 * ($c1 - $c0) / ($t1 - $t0)"
}

for target in "-a" "-C 0" "-C 1"; do
	pss=() pfs=()
	for ((r = 0; r < ROUNDS; r++)); do
		# shellcheck disable=SC2086
		pss+=("$(share "$PS" examples/stat.lua $target -I "$MS" -e "$events")")
		# shellcheck disable=SC2086
		pfs+=("$(share perf stat $target -I "$MS" -e "$events")")
	done
	ps=$(median "${pss[@]}") pf=$(median "${pfs[@]}")
	eval "ps_${target//[- ]/}=$ps pf_${target//[- ]/}=$pf"
	row "perfscript stat.lua $target -I $MS" "$ps%" "perf stat $target -I $MS: $pf% (rounds: ${pss[*]} / ${pfs[*]})"
done
r=$(calc "%.2f" "$ps_a / ($pf_a > 0 ? $pf_a : 1e-9)")
row "ratio perfscript / perf stat (-a)" "${r}x" "(target <= 1.0: $(atmost "$r" 1.0))"
flat=$(calc "%.2f" "$ps_C1 / ($ps_C0 > 0 ? $ps_C0 : 1e-9)")
row "perfscript -C 1 / -C 0" "${flat}x" "(flat: 1.0; perf stat $(calc "%.2f" "$pf_C1 / ($pf_C0 > 0 ? $pf_C0 : 1e-9)")x)"
