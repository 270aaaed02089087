# fuzz.sh: 30 seconds of the event-string fuzzer (tests/fuzz/fuzz_event.c,
# libFuzzer with ASan and UBSan) from the seed corpus, and 15 seconds of the
# ring and record fuzzer (tests/fuzz/fuzz_ring.c), in every `make check-slow`.
# Skips, saying why, when clang cannot build a libFuzzer target here.
source "$(dirname "$0")/../e2e/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
SECONDS_=${FUZZ_CHECK_SECONDS:-30}

printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$TMP/probe.c"
if ! command -v clang >/dev/null; then
	skip "clang is not installed" "fuzzer builds"
	skip "clang is not installed" "fuzz_event: no crash, leak or hang in ${SECONDS_} s"
	skip "clang is not installed" "ring fuzzer builds"
	skip "clang is not installed" "fuzz_ring: no crash, leak or hang"
elif ! clang -fsanitize=fuzzer,address,undefined -o "$TMP/probe" "$TMP/probe.c" >/dev/null 2>&1; then
	skip "clang here has no libFuzzer (-fsanitize=fuzzer)" "fuzzer builds"
	skip "clang here has no libFuzzer (-fsanitize=fuzzer)" "fuzz_event: no crash, leak or hang in ${SECONDS_} s"
	skip "clang here has no libFuzzer (-fsanitize=fuzzer)" "ring fuzzer builds"
	skip "clang here has no libFuzzer (-fsanitize=fuzzer)" "fuzz_ring: no crash, leak or hang"
else
	out=$(make -s --no-print-directory build/fuzz/fuzz_event 2>&1)
	ok $? "fuzzer builds"
	[[ -n $out ]] && printf '%s\n' "$out" | sed 's/^/# /' | head -20
	mkdir -p "$TMP/corpus"
	build/fuzz/fuzz_event "$TMP/corpus" tests/fuzz/corpus/event -max_total_time="$SECONDS_" \
		-timeout=10 -print_final_stats=1 -artifact_prefix="$TMP/" >"$TMP/fuzz.log" 2>&1
	rc=$?
	ok $rc "fuzz_event: no crash, leak or hang in ${SECONDS_} s"
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/fuzz.log")
	diag "executions: ${runs:-?}"
	if [[ $rc -ne 0 ]]; then
		grep -E 'ERROR|SUMMARY|Test unit written' "$TMP/fuzz.log" | head -10 | sed 's/^/# /'
		for a in "$TMP"/crash-* "$TMP"/leak-* "$TMP"/timeout-*; do
			[[ -f $a ]] && { cp "$a" build/ 2>/dev/null; diag "input kept: build/${a##*/}: $(head -c 200 "$a" | od -c | head -3)"; }
		done
	fi
	# The sample path's parsers: ring images through ps_ring and ps_record.
	out=$(make -s --no-print-directory build/fuzz/fuzz_ring 2>&1)
	ok $? "ring fuzzer builds"
	mkdir -p "$TMP/corpus-ring"
	build/fuzz/fuzz_ring "$TMP/corpus-ring" -max_total_time="$(( SECONDS_ / 2 ))" -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$TMP/ring-" >"$TMP/fuzz-ring.log" 2>&1
	rc=$?
	ok $rc "fuzz_ring: no crash, leak or hang in $(( SECONDS_ / 2 )) s of ring images"
	diag "executions: $(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/fuzz-ring.log")"
	[[ $rc -ne 0 ]] && grep -E 'ERROR|SUMMARY' "$TMP/fuzz-ring.log" | head -10 | sed 's/^/# /'
fi
done_testing
