#!/usr/bin/env bash
# bench/encode.sh: what a window's profile costs to encode, OTLP against
# pprof. build/tests/manystacks (nearly every sample a new stack) is
# sampled ENCODE_SECONDS (default 10) at 2999 Hz with frame-pointer
# stacks and pid, tid and comm labels (about 30,000 samples); its pprof
# table is then encoded five times each way and the fastest of each kept:
# pprof.encode (protobuf-c and gzip, what a pprof push sends) and
# otlp.encode (lua/otlp_pprof.c, protobuf-c and gzip, what an OTLP push
# sends), from the same table. Target (issue 44): OTLP <= pprof.
# Asserts nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
PS=${PERFSCRIPT:-./perfscript}
SECS=${ENCODE_SECONDS:-10}
W=build/tests/manystacks
source bench/lib.sh

echo
echo "encoding a window's profile ($W for $SECS s at 2999 Hz, fp stacks, pid/tid/comm labels)"
[[ -x $W ]] || { echo "bench/encode.sh: build first (make tests-bin)" >&2; exit 1; }
out=$("$PS" -T "$SECS" bench/encode.lua -c "$W $SECS" 2>&1) || { echo "  skipped: $out"; exit 0; }
read -r samples pprof_ms pprof_bytes otlp_ms otlp_bytes <<<"$(tail -1 <<<"$out")"
ratio=$(awk -v a="$otlp_ms" -v b="$pprof_ms" 'BEGIN { printf "%.2f", a / b }')
printf '  %-36s %12s\n' "samples" "$samples"
printf '  %-36s %9.1f ms  %d bytes (gzip)\n' "pprof.encode" "$pprof_ms" "$pprof_bytes"
printf '  %-36s %9.1f ms  %d bytes (gzip)\n' "otlp.encode" "$otlp_ms" "$otlp_bytes"
printf '  %-36s %12s  target <= 1.0: %s\n' "OTLP / pprof" "$ratio" "$(verdict "$ratio" 1.0)"
