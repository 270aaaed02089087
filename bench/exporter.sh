#!/usr/bin/env bash
# bench/exporter.sh: what the always-on exporter costs (examples/exporter.lua
# -a, the standard software events on every CPU). Figures are the
# exporter's own CPU time, summed over its threads from
# /proc/PID/task/*/schedstat (nanoseconds, not 10 ms ticks):
#  1. idle: CPU per second while nobody scrapes;
#  2. one scrape: CPU per scrape over EXPORTER_SCRAPES scrapes on one
#     keep-alive connection (as Prometheus scrapes), and the page's size;
#  3. always on at 1 scrape/s for EXPORTER_SECONDS: the share of one CPU,
#     against perf stat -a -I 1000 on the same events over the same seconds
#     (a tool that reads the same counters each second and prints them).
# The target: at most 0.5% of a CPU at 1 scrape/s. Like bench/run it
# asserts nothing and fails only when a benchmark cannot run; without root,
# curl or perf it says why and exits 0.
# Environment: PERFSCRIPT (default ./perfscript), EXPORTER_SECONDS (default
# 20), EXPORTER_SCRAPES (default 1000).
set -euo pipefail
cd "$(dirname "$0")/.."

PS=${PERFSCRIPT:-./perfscript}
SECS=${EXPORTER_SECONDS:-20}
SCRAPES=${EXPORTER_SCRAPES:-1000}
EVENTS=cpu-clock,context-switches,cpu-migrations,page-faults,minor-faults,major-faults

skip() { echo "exporter: skipped: $*"; exit 0; }
calc() { awk "BEGIN {printf \"$1\", $2}"; }
atmost() { awk -v v="$1" -v t="$2" 'BEGIN {print (v <= t) ? "met" : "MISSED"}'; }
row() { printf '  %-34s %12s  %s\n' "$@"; }
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'; }
now_ns() { date +%s%N; }

echo
echo "exporter (examples/exporter.lua -a: $(tr ',' ' ' <<<"$EVENTS" | wc -w) events x $(nproc) CPUs)"
[ "$(id -u)" = 0 ] || skip "system-wide counters need root"
command -v curl >/dev/null || skip "curl is not installed"

tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT
"$PS" examples/exporter.lua --listen 127.0.0.1:0 -a -o "$tmp/out" 2>"$tmp/err" &
ex=$!; pids+=($ex)
for _ in $(seq 100); do grep -q '^listening' "$tmp/out" && break; sleep 0.05; done
url=$(sed -n 's/^listening on //p' "$tmp/out")
[ -n "$url" ] || { cat "$tmp/err" >&2; echo "bench/exporter.sh: the exporter did not start" >&2; exit 1; }
url=${url/0.0.0.0/127.0.0.1}
curl -s -o /dev/null "$url"
sleep 1

# 1. idle
c0=$(cpu_ns $ex) t0=$(now_ns)
sleep 5
c1=$(cpu_ns $ex) t1=$(now_ns)
idle_us=$(calc "%.1f" "($c1 - $c0) / 1000 / (($t1 - $t0) / 1e9)")
row "idle: CPU per second" "$idle_us us" "($(calc "%.4f" "$idle_us / 1e4")% of a CPU)"

# 2. scrapes on one keep-alive connection
urls=()
for ((i = 0; i < SCRAPES; i++)); do urls+=("$url"); done
size=$(curl -s "$url" | wc -c)
c0=$(cpu_ns $ex) t0=$(now_ns)
curl -s "${urls[@]}" >/dev/null
c1=$(cpu_ns $ex) t1=$(now_ns)
scrape_us=$(calc "%.1f" "($c1 - $c0) / 1000 / $SCRAPES")
row "one scrape: exporter CPU" "$scrape_us us" "($SCRAPES scrapes in $(calc "%.2f" "($t1 - $t0) / 1e9") s; page $size bytes)"
c0=$(cpu_ns $ex)
curl -s -H 'Accept: application/openmetrics-text; version=1.0.0' "${urls[@]:0:$((SCRAPES / 4))}" >/dev/null
c1=$(cpu_ns $ex)
row "one scrape, OpenMetrics" "$(calc "%.1f" "($c1 - $c0) / 1000 / ($SCRAPES / 4)") us" "(same page, Prometheus' format negotiation)"

# 3. always on: 1 scrape/s, beside perf stat -a -I 1000 on the same events
if command -v perf >/dev/null; then
	perf stat -a -e "$EVENTS" -I 1000 -x, -o /dev/null &
	pf=$!; pids+=($pf)
fi
sleep 0.5
c0=$(cpu_ns $ex) t0=$(now_ns)
[ -n "${pf:-}" ] && p0=$(cpu_ns $pf)
for ((i = 0; i < SECS; i++)); do curl -s -o /dev/null "$url"; sleep 1; done
c1=$(cpu_ns $ex) t1=$(now_ns)
share=$(calc "%.4f" "($c1 - $c0) / ($t1 - $t0) * 100")
row "always on, 1 scrape/s (${SECS} s)" "$share%" "of one CPU (target <= 0.5%: $(atmost "$share" 0.5))"
row "predicted from 1. and 2." "$(calc "%.4f" "($idle_us + $scrape_us) / 1e4")%" "(idle + one scrape per second)"
if [ -n "${pf:-}" ]; then
	p1=$(cpu_ns $pf)
	pshare=$(calc "%.4f" "($p1 - $p0) / ($t1 - $t0) * 100")
	row "perf stat -a -I 1000, same events" "$pshare%" "of one CPU, same seconds"
	row "ratio exporter / perf stat -I" "$(calc "%.2f" "$share / ($pshare > 0 ? $pshare : 1e-9)")x" "(lower is better for us)"
	kill $pf 2>/dev/null || true
else
	row "perf stat -a -I 1000" "-" "skipped: perf is not installed"
fi
kill $ex
wait $ex 2>/dev/null || true
