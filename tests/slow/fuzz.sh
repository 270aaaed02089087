# fuzz.sh: the fuzzers (libFuzzer with ASan and UBSan) from their seed
# corpora, in every `make check-slow`: the event-string parser for 30
# seconds (tests/fuzz/fuzz_event.c), the ring and record reader
# (fuzz_ring.c), the web configuration reader (fuzz_webconfig.c) and the
# CPython code-object reader (fuzz_pycode.c: memory images a hostile
# process shapes) for 15 each. Skips, saying why, when clang cannot build a libFuzzer target here.
source "$(dirname "$0")/../e2e/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
SECONDS_=${FUZZ_CHECK_SECONDS:-30}
# name, seconds, seed corpus (or none), what it reads
targets=("event $SECONDS_ tests/fuzz/corpus/event event strings"
	"ring $((SECONDS_ / 2)) - ring images"
	"webconfig $((SECONDS_ / 2)) tests/fuzz/corpus/webconfig web configuration files"
	"pycode $((SECONDS_ / 2)) tests/fuzz/corpus/pycode CPython code-object images")

printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$TMP/probe.c"
why=
if ! command -v clang >/dev/null; then
	why="clang is not installed"
elif ! clang -fsanitize=fuzzer,address,undefined -o "$TMP/probe" "$TMP/probe.c" >/dev/null 2>&1; then
	why="clang here has no libFuzzer (-fsanitize=fuzzer; make check installs libclang-rt-14-dev)"
fi
for t in "${targets[@]}"; do
	read -r name secs seeds what <<<"$t"
	if [[ -n $why ]]; then
		skip "$why" "fuzz_$name builds"
		skip "$why" "fuzz_$name: no crash, leak or hang in $secs s of $what"
		continue
	fi
	out=$(make -s --no-print-directory "build/fuzz/fuzz_$name" 2>&1)
	ok $? "fuzz_$name builds"
	[[ -n $out ]] && printf '%s\n' "$out" | sed 's/^/# /' | head -20
	mkdir -p "$TMP/corpus-$name"
	[[ $seeds == - ]] && seeds=
	"build/fuzz/fuzz_$name" "$TMP/corpus-$name" $seeds -max_total_time="$secs" -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$TMP/$name-" >"$TMP/fuzz-$name.log" 2>&1
	rc=$?
	ok $rc "fuzz_$name: no crash, leak or hang in $secs s of $what"
	diag "executions: $(sed -n 's/^stat::number_of_executed_units: *//p' "$TMP/fuzz-$name.log")"
	if [[ $rc -ne 0 ]]; then
		grep -E 'ERROR|SUMMARY|Test unit written' "$TMP/fuzz-$name.log" | head -10 | sed 's/^/# /'
		for a in "$TMP/$name-"*; do
			[[ -f $a ]] && { cp "$a" build/ 2>/dev/null; diag "input kept: build/${a##*/}: $(head -c 200 "$a" | od -c | head -3)"; }
		done
	fi
done
done_testing
