#!/usr/bin/env bash
# bench/continuous.sh: a continuous whole-host profile's memory over time.
# examples/profile.lua -a at 1 kHz with --pprof and --switch-output 15 (a
# file every 15 s) runs CONT_SECS (default 120) seconds beside exec churn
# (about 100 short processes a second), a deep-stack spinner and a
# process busy in libLLVM (bench/lib.sh). Printed:
# its RSS after the first window and at the end, the lowest and highest
# after the first window (read every 15 s, between window ends), and the
# verdict on the target: flat within 2 MB after the first window. Asserts
# nothing. Needs root (system-wide sampling); says why and exits 0 without.
set -uo pipefail
cd "$(dirname "$0")/.."
PS=${PERFSCRIPT:-./perfscript}
SECS=${CONT_SECS:-120}
T=$(mktemp -d)
pids=()
cleanup() { exec 2>/dev/null; for p in "${pids[@]}"; do pkill -P "$p"; kill "$p"; done; wait; rm -rf "$T"; }
trap cleanup EXIT
[[ $(id -u) == 0 ]] || { echo "continuous: skipped: needs root (system-wide sampling)"; exit 0; }
[[ -x build/tests/chain && -x build/tests/llvmloop ]] || { echo "bench/continuous.sh: build first (make tests-bin)" >&2; exit 1; }
. bench/lib.sh
row() { printf '  %-44s %12s  %s\n' "$@"; }

host_workload $((SECS + 30))
echo "continuous profile (bench/continuous.sh: profile.lua -a, 1 kHz, --pprof, --switch-output 15, ${SECS} s)"
"$PS" -a examples/profile.lua --freq 1000 --pprof "$T/p.pb.gz" --switch-output 15 ${CONT_ARGS:-} >"$T/out" 2>&1 &
ps=$!
pids+=($ps)
first=""
: >"$T/rss"
for ((t = 22; t <= SECS; t += 15)); do # mid-window: 7 s after each window's end
	sleep $((t - SECONDS > 0 ? t - SECONDS : 0))
	r=$(rss_mb $ps)
	[[ -n $r ]] || { echo "bench/continuous.sh: profile.lua ended: $(head -3 "$T/out")" >&2; exit 1; }
	[[ -z $first ]] && first=$r
	echo "$r" >>"$T/rss"
done
kill -INT $ps; wait $ps
windows=$(grep -c ' samples in ' "$T/out")
read -r lo hi last < <(awk 'NR == 1 { lo = hi = $1 } { lo = $1 < lo ? $1 : lo; hi = $1 > hi ? $1 : hi; l = $1 }
	END { print lo, hi, l }' "$T/rss")
row "RSS after the first window / at the end" "$first / $last MB" "($windows windows written)"
row "RSS after the first window: lowest / highest" "$lo / $hi MB" \
	"(flat within 2 MB: $(verdict "$(stray "$first" "$T/rss")" 2))"
echo "  RSS every 15 s (MB): $(tr '\n' ' ' <"$T/rss")"
