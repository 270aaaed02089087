#!/usr/bin/env bash
# bench/self.sh: self-monitoring costs through libperfscript (bench/self.c),
# each a ratio against its reference taken in the same run:
# perfmon.time()/ps_time() against clock_gettime(CLOCK_MONOTONIC) (vDSO);
# a region begin+end pair against two bare read()s of the same counters.
set -euo pipefail
cd "$(dirname "$0")/.."
B=build/bench
CC=${CC:-cc}
N=${BENCH_N:-1000000}
mkdir -p "$B"
if [ ! -x "$B/self" ] || [ bench/self.c -nt "$B/self" ] || [ build/libperfscript.a -nt "$B/self" ]; then
	"$CC" -O2 -std=gnu11 -Wall -Wextra -Ibindings -o "$B/self" bench/self.c \
		build/libperfscript.a \
		-ldw -lelf -lbpf -lpfm -liberty -ldl -lyaml -lcrypt -lm -lpthread || { echo "bench/self.sh: cannot build self" >&2; exit 1; }
fi
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p"; }
verdict() { awk -v v="$1" -v t="$2" 'BEGIN {print (v <= t) ? "met" : "MISSED"}'; }
row() { printf '  %-34s %12s  %s\n' "$@"; }

echo
echo "self-monitoring (bench/self.c, $N calls a round, median of 7 interleaved rounds)"
out=$("$B/self" time "$N")
v=$(field ratio <<<"$out")
row "ps_time() [$(field source <<<"$out")]" "$(field ps_time_ns <<<"$out") ns" \
	"(clock_gettime $(field clock_gettime_ns <<<"$out") ns; ratio $v, target <= 1.1: $(verdict "$v" 1.1))"
out=$("$B/self" region "$((N / 10))")
v=$(field ratio <<<"$out")
row "region begin+end (2 events)" "$(field pair_ns <<<"$out") ns" \
	"(two read()s $(field two_reads_ns <<<"$out") ns; ratio $v, target <= 1.2: $(verdict "$v" 1.2))"
