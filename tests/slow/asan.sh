# asan.sh: the end-to-end suites that drive the runtime hardest, run again
# on the sanitizer build (make asan: ASan, UBSan, LeakSanitizer). One TAP
# line per suite: it passes and no sanitizer spoke.
source "$(dirname "$0")/../e2e/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if ! make -s -C "$ROOT" asan >"$TMP/build.log" 2>&1; then
	ok 1 "make asan builds"; sed 's/^/# /' "$TMP/build.log" | tail -20
	done_testing; exit
fi
# a binary outside the source tree finds the tapsets only where it is told
export PERFSCRIPT_PATH="$ROOT/tapsets"
export PERFSCRIPT="$ROOT/build-asan/perfscript" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
# sampling.sh's floods, with a handler several times slower under the
# sanitizers: a ring that holds them (2048 pages lost 1.3% once)
export PS_TEST_RING_PAGES=16384
# and what they measure of speed is not asked of this build
export PS_TEST_SANITIZER=1
for suite in cli lifecycle errors sampling repl; do
	bash "$ROOT/tests/e2e/$suite.sh" >"$TMP/$suite.log" 2>&1
	rc=$?
	grep -qE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" "$TMP/$suite.log"
	clean=$?
	ok $(( rc == 0 && clean == 1 ? 0 : 1 )) "$suite.sh passes on the sanitizer build with no sanitizer report"
	if [[ $rc -ne 0 || $clean -eq 0 ]]; then
		grep -E "^not ok|ERROR:|runtime error:|SUMMARY" "$TMP/$suite.log" | head -20 | sed 's/^/# /'
	fi
done
done_testing
