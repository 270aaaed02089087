#!/usr/bin/env bash
# bench/capture.sh: what a pprof profile costs to take, against perf. The
# stack-heavy test program (build/tests/manystacks: 16 functions calling
# each other 5 deep along random paths, so nearly every sample is a new
# stack) runs CAPTURE_SECONDS (default 20) under
#   profile.lua -p PID --freq 9999 --pprof (frame-pointer stacks),
#   profile.lua -p PID --freq 9999 --folded, and
#   perf record -F 9999 -g -p PID, then perf report -g folded of its data;
# each tool attached with -p, so that its own CPU (user + sys, from
# /usr/bin/time) is all that is counted. Printed: samples, distinct
# stacks, CPU, peak RSS, samples lost, and the ratio of profile.lua
# --pprof's CPU to perf record + perf report's. Target (issue 27): <= 1.0,
# and nothing lost where perf loses nothing. Asserts nothing; needs root
# and perf, and says so without them.
set -uo pipefail
cd "$(dirname "$0")/.."
PS=${PERFSCRIPT:-./perfscript}
SECS=${CAPTURE_SECONDS:-20}
W=build/tests/manystacks

row() { printf '  %-36s %12s  %s\n' "$@"; }
echo
echo "pprof capture ($W for $SECS s at 9999 Hz, fp stacks, -p)"
[[ $(id -u) == 0 ]] && command -v perf >/dev/null || { echo "  skipped: needs root and perf"; exit 0; }
[[ -x $W ]] || { echo "bench/capture.sh: build first (make tests-bin)" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# "user+sys peak_kB" of a command run beside the workload, given its pid
timed() {
	local out=$1; shift
	"$W" $((SECS + 2)) >/dev/null &
	local w=$!
	/usr/bin/time -f "%U %S %M" -o "$T/$out.time" "${@//PID/$w}" >/dev/null 2>"$T/$out.err"
	wait $w
	awk '{ printf "%.2f %d", $1 + $2, $3 }' "$T/$out.time"
}
read -r pp_cpu pp_kb < <(timed pprof "$PS" examples/profile.lua -p PID --freq 9999 --pprof "$T/p.pb.gz" --top 1 -T "$SECS")
read -r fo_cpu fo_kb < <(timed folded "$PS" examples/profile.lua -p PID --freq 9999 --folded "$T/f.folded" --top 1 -T "$SECS")
read -r rec_cpu rec_kb < <(timed record perf record -q -F 9999 -g -p PID -o "$T/perf.data" -- sleep "$SECS")
/usr/bin/time -f "%U %S %M" -o "$T/report.time" perf report --stdio -g folded -i "$T/perf.data" >/dev/null 2>&1
read -r rep_cpu rep_kb < <(awk '{ printf "%.2f %d", $1 + $2, $3 }' "$T/report.time")
samples=$(perf report --stdio -i "$T/perf.data" 2>/dev/null | sed -n 's/^# Samples: \([0-9.]*[KM]*\).*/\1/p' | head -1)
lost=$(grep -ho 'perfscript: [0-9]* of [0-9]* samples' "$T/pprof.err" | head -1)
row "profile.lua --pprof" "${pp_cpu} s" "(peak $((pp_kb / 1024)) MB; ${lost:-no samples lost})"
row "profile.lua --folded" "${fo_cpu} s" "(peak $((fo_kb / 1024)) MB; $(wc -l <"$T/f.folded") distinct stacks)"
row "perf record + perf report" "$(awk -v a="$rec_cpu" -v b="$rep_cpu" 'BEGIN { printf "%.2f", a + b }') s" "(peak $((rec_kb / 1024)) / $((rep_kb / 1024)) MB; perf: ${samples:-?} samples)"
r=$(awk -v p="$pp_cpu" -v a="$rec_cpu" -v b="$rep_cpu" 'BEGIN { printf "%.2f", p / (a + b > 0 ? a + b : 1e-9) }')
row "ratio --pprof / perf" "${r}x" "(target <= 1.0: $(awk -v r="$r" 'BEGIN { print (r <= 1.0) ? "met" : "MISSED" }'))"
