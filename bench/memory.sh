#!/usr/bin/env bash
# bench/memory.sh: the memory of a profile of many distinct stacks. The
# stack-heavy test program (build/tests/manystacks: 16 functions calling
# each other 5 deep along random paths) runs for MEM_SECONDS (default 15)
# under profile.lua at 9999 Hz with frame-pointer stacks, writing folded
# stacks, then pprof; and under perf record -g, whose perf.data perf report
# reads (folded callchains) on the same workload. Printed: distinct stacks,
# peak RSS, and peak RSS per 10,000 distinct stacks, perfscript against perf
# record + perf report (their larger peak). Needs root for perf; skips it,
# saying so, without.
set -euo pipefail
cd "$(dirname "$0")/.."
PS=${PERFSCRIPT:-./perfscript}
SECS=${MEM_SECONDS:-15}
W=build/tests/manystacks
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -x "$W" ] || { echo "bench/memory.sh: build $W first (make)" >&2; exit 1; }
rss_of() { /usr/bin/time -f '%M' -o "$T/rss" "$@" >/dev/null 2>&1 || true; cat "$T/rss"; }
row() { printf '  %-34s %12s  %s\n' "$@"; }

echo
echo "memory of distinct stacks ($W for $SECS s, 9999 Hz, fp stacks)"
r=$(rss_of "$PS" examples/profile.lua -c "$W $SECS" --freq 9999 --folded "$T/f.folded" --top 1)
n=$(wc -l <"$T/f.folded")
row "profile.lua --folded" "$r kB" "($n distinct stacks: $(( r * 10000 / (n > 0 ? n : 1) )) kB per 10k)"
r2=$(rss_of "$PS" examples/profile.lua -c "$W $SECS" --freq 9999 --pprof "$T/p.pb.gz" --top 1)
row "profile.lua --pprof" "$r2 kB" "($(( r2 * 10000 / (n > 0 ? n : 1) )) kB per 10k stacks)"
if ! command -v perf >/dev/null || [ "$(id -u)" != 0 ]; then
	row "perf record + perf report" "skipped" "(needs perf and root)"
	exit 0
fi
pr=$(rss_of perf record -q -F 9999 -g -o "$T/perf.data" "$W" "$SECS")
pp=$(rss_of perf report -i "$T/perf.data" --stdio -g folded,0,caller --no-children)
peak=$(( pr > pp ? pr : pp ))
row "perf record / perf report" "$pr / $pp kB" "($(( peak * 10000 / (n > 0 ? n : 1) )) kB per 10k stacks)"
row "ratio: pprof / perf's peak" "$(awk -v a="$r2" -v b="$peak" 'BEGIN { printf "%.2f", a / b }')" \
	"folded: $(awk -v a="$r" -v b="$peak" 'BEGIN { printf "%.2f", a / b }')"
