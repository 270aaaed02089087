#!/usr/bin/env bash
# bench/stacks.sh: what profiles of real stacks cost, against perf, each
# ratio from figures taken in the same run.
#  1. DWARF unwinding: cpu-clock at STACKS_FREQ Hz with call-graph=dwarf on
#     a -O2 program without frame pointers (build/tests/chain), attached
#     with -p for STACKS_SECS seconds so that no tool's figure includes the
#     workload: perfscript's examples/profile.lua --call-graph dwarf
#     --folded against perf record --call-graph dwarf followed by perf
#     report --stdio (which unwinds and names what record saved). CPU per
#     unwound sample, and the time each job takes beyond the recording
#     window both share (perfscript unwinds and names as samples arrive;
#     perf record writes them out and perf report unwinds them after).
#  2. symbolization with inline frames: every distinct instruction address
#     of a binary with DWARF (the perfscript binary) named and expanded into
#     its inline frames and source lines through ps_symbols
#     (build/bench/symbolize), against binutils addr2line -f -i on the same
#     addresses (the tool perf report runs for source lines and inline
#     frames).
# Asserts nothing: targets print met or MISSED; fails only when a benchmark
# cannot run. Without root or perf it says why and exits 0. Environment:
# PERFSCRIPT (default ./perfscript), STACKS_FREQ (default 10000),
# STACKS_SECS (default 10), STACKS_PAGES (ring pages for both, default 8192).
set -euo pipefail
cd "$(dirname "$0")/.."

PS=${PERFSCRIPT:-./perfscript}
FREQ=${STACKS_FREQ:-10000}
SECS=${STACKS_SECS:-10}
PAGES=${STACKS_PAGES:-8192}
B=build/bench
CC=${CC:-cc}

die() { echo "bench/stacks.sh: $*" >&2; exit 1; }
skip() { echo "stacks: skipped: $*"; exit 0; }
calc() { awk "BEGIN {printf \"$1\", $2}"; }
atmost() { awk -v v="$1" -v t="$2" 'BEGIN {print (v <= t) ? "met" : "MISSED"}'; }
atleast() { awk -v v="$1" -v t="$2" 'BEGIN {print (v >= t) ? "met" : "MISSED"}'; }
row() { printf '  %-38s %12s  %s\n' "$@"; }
now() { echo "${EPOCHREALTIME/[.,]/}"; } # microseconds
# run CMD...: its stdout in $T/out, stderr in $T/err; sets wall (s) and cpu
# (s, user + system of it and what it waited for, from the shell's times)
run() {
	local t0 t1
	t0=$(now)
	("$@" >"$T/out" 2>"$T/err" || echo "exit $?" >>"$T/err"; times >"$T/times")
	t1=$(now)
	wall=$(calc %.3f "($t1 - $t0) / 1e6")
	cpu=$(sed -n 2p "$T/times" | awk '{
		split($1, u, /[ms]/); split($2, s, /[ms]/)
		printf "%.3f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
}

echo
echo "stacks"
[ "$EUID" = 0 ] || skip "not root (attaching to a process and perf need it)"
command -v perf >/dev/null || skip "perf not installed (the comparisons need it)"
[ -x "$PS" ] || die "$PS not built (run make first)"
[ -x build/tests/chain ] || die "build/tests/chain not built (run make tests-bin)"
mkdir -p "$B"
T=$(mktemp -d)
trap 'kill "$wpid" 2>/dev/null || true; rm -rf "$T"' EXIT
wpid=

# ---- 1. DWARF unwinding ----
echo "dwarf unwinding: cpu-clock at $FREQ Hz, -p on build/tests/chain for $SECS s, $PAGES-page rings"
build/tests/chain $(((SECS * 2 + 10) * 1000)) &
wpid=$!
sleep 0.5
run "$PS" -b "$PAGES" examples/profile.lua -p "$wpid" -T "$SECS" --freq "$FREQ" \
	--call-graph dwarf --folded "$T/ps.folded" --top 3 -o -
ps_wall=$wall ps_cpu=$cpu
ps_n=$(sed -n 's/^\([0-9]*\) samples of.*/\1/p' "$T/out")
ps_lost=$(sed -n 's/.*: \([0-9]*\) of [0-9]* samples .* were lost.*/\1/p' "$T/err")
[ -n "$ps_n" ] && [ "$ps_n" -gt 0 ] || die "profile.lua took no samples: $(cat "$T/out" "$T/err")"
ps_main=$(awk '{n = $NF; t += n; if (index($0, ";main;")) m += n} END {printf "%.1f", t ? 100 * m / t : 0}' "$T/ps.folded")
run timeout -s INT "$SECS" perf record -p "$wpid" -e cpu-clock -F "$FREQ" -m "$PAGES" \
	--call-graph dwarf -o "$T/perf.data"
rec_wall=$wall rec_cpu=$cpu
run perf report -i "$T/perf.data" --stdio --no-children
rep_wall=$wall rep_cpu=$cpu
kill "$wpid" 2>/dev/null || true
wait "$wpid" 2>/dev/null || true
perf report -i "$T/perf.data" --stdio -n --no-children --sort comm -g none 2>/dev/null >"$T/comm"
pf_n=$(awk '$NF == "chain" && $1 ~ /%$/ {print $(NF - 1)}' "$T/comm")
pf_lost=$(sed -n 's/^# Total Lost Samples: \([0-9]*\).*/\1/p' "$T/comm")
[ -n "$pf_n" ] && [ "$pf_n" -gt 0 ] || die "perf record took no samples"
ps_us=$(calc %.1f "$ps_cpu * 1e6 / $ps_n")
pf_us=$(calc %.1f "($rec_cpu + $rep_cpu) * 1e6 / $pf_n")
row "perfscript profile.lua, samples" "$ps_n" "(lost ${ps_lost:-0}; $ps_main% of stacks reach main)"
row "perf record, samples" "$pf_n" "(lost ${pf_lost:-0})"
row "perfscript CPU per unwound sample" "$ps_us us" "(${ps_cpu} s: record, unwind, name, fold)"
row "perf record + report CPU per sample" "$pf_us us" "(record ${rec_cpu} s, report ${rep_cpu} s)"
r=$(calc %.2f "$ps_us / $pf_us")
row "ratio perfscript / perf, CPU per sample" "${r}x" "(target <= 0.5: $(atmost "$r" 0.5))"
# Both record for the same window; what differs is the work around it:
# perf record's flushing of ~8 KiB per sample and perf report's unwinding,
# against perfscript's settling at the end of its window.
ps_job=$(calc %.3f "$ps_wall - $SECS")
pf_job=$(calc %.3f "$rec_wall - $SECS + $rep_wall")
row "work beyond the $SECS s window, perfscript" "$ps_job s" "(wall $ps_wall s)"
row "work beyond the window, perf" "$pf_job s" "(record wall $rec_wall s, report $rep_wall s)"
r=$(calc %.2f "$ps_job / $pf_job")
row "ratio end to end, beyond the window" "${r}x" "(target <= 0.5: $(atmost "$r" 0.5))"
r=$(calc %.2f "$ps_wall / ($rec_wall + $rep_wall)")
row "ratio of whole jobs, window included" "${r}x" "(per 100k samples: perfscript $(calc %.1f "$ps_wall * 1e5 / $ps_n") s, perf $(calc %.1f "($rec_wall + $rep_wall) * 1e5 / $pf_n") s)"

# ---- 2. symbolization with inline frames ----
if [ ! -x "$B/symbolize" ] || [ bench/symbolize.c -nt "$B/symbolize" ] ||
	[ build/libperfscript.a -nt "$B/symbolize" ]; then
	"$CC" -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Ibindings -o "$B/symbolize" bench/symbolize.c \
		build/libperfscript.a -ldw -lelf -lbpf -lpfm -liberty -ldl -lyaml -lcrypt || die "cannot build symbolize"
fi
echo
BIN=${STACKS_BIN:-$PS}
echo "symbolization with inline frames: every instruction address of $BIN"
"$B/symbolize" "$BIN" "$T/addrs" >"$T/sym" || die "symbolize failed: $(cat "$T/sym")"
n=$(sed -n 's/.*addresses=\([0-9]*\).*/\1/p' "$T/sym")
rate=$(sed -n 's/.*per_s=\([0-9]*\).*/\1/p' "$T/sym")
row "ps_symbols: name + inline frames + line" "$rate /s" "($(cat "$T/sym"); target >= 500000 /s: $(atleast "$rate" 500000))"
LIBC=$(ldd "$PS" | awk '$1 ~ /^libc\.so/ { print $3 }')
if [ -n "$LIBC" ] && "$B/symbolize" "$LIBC" "$T/libc.addrs" >"$T/libc.sym"; then
	first=$(sed -n 's/.*first_ms=\([0-9.]*\).*/\1/p' "$T/libc.sym")
	row "cold libc, first lookup" "$first ms" "($LIBC, its debug file when installed; target <= 250 ms: $(atmost "$first" 250))"
	row "libc: name + inline frames + line" "$(sed -n 's/.*per_s=\([0-9]*\).*/\1/p' "$T/libc.sym") /s" "($(cat "$T/libc.sym"))"
fi
if command -v addr2line >/dev/null; then
	# like for like: both whole processes, start-up and DWARF reading
	# included, both outputs to a file
	run "$B/symbolize" "$BIN" "$T/addrs"
	ps_whole=$(calc %.0f "$n / $wall")
	run addr2line -f -i -e "$BIN" <"$T/addrs"
	a2l=$(calc %.0f "$n / $wall")
	row "ps_symbols, whole process" "$ps_whole /s" "(start-up and file reading included)"
	row "addr2line -f -i, whole process" "$a2l /s" "($n addresses in $wall s)"
	row "ratio ps_symbols / addr2line" "$(calc %.1f "$ps_whole / $a2l")x" "(whole processes, like for like)"
else
	echo "  addr2line not installed: not compared"
fi

# ---- 3. time order: the latency it adds ----
if [ ! -x "$B/order" ] || [ bench/order.c -nt "$B/order" ] || [ build/libperfscript.a -nt "$B/order" ]; then
	"$CC" -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Ibindings -Iruntime -o "$B/order" bench/order.c \
		build/libperfscript.a -ldw -lelf -lbpf -lpfm -liberty -ldl -lyaml -lcrypt -lz -lm || die "cannot build order"
fi
echo
echo "time order: cpu-clock at 1 kHz on a thread hopping between CPUs (workload hop), latency from"
echo "a sample's timestamp to its callback, with and without order (bench/order.c, the session driver)"
out=$("$B/order" 1000 build/tests/workload hop 20000) || die "order failed: $out"
o=$(grep '^ordered=1' <<<"$out") u=$(grep '^ordered=0' <<<"$out")
f() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }
row "ordered: p50 / p99 / max" "$(f p50_us "$o") us" "(p99 $(f p99_us "$o") us, max $(f max_us "$o") us; $(f samples "$o") samples, $(f back "$o") went back)"
row "unordered: p50 / p99 / max" "$(f p50_us "$u") us" "(p99 $(f p99_us "$u") us, max $(f max_us "$u") us; $(f samples "$u") samples, $(f back "$u") went back)"
x=$(calc %.1f "($(f max_us "$o") - $(f max_us "$u")) / 1e3")
row "order adds, at most" "$x ms" "(p50 +$(calc %.1f "($(f p50_us "$o") - $(f p50_us "$u")) / 1e3") ms; target <= 10 ms: $(atmost "$x" 10))"
