# tsan.sh: the C tests of the parts that threads share, run on a
# ThreadSanitizer build (make tsan): code regions (a report while threads
# add regions, threads counting apart), overflow signals (a handler per
# thread, the queue its thread takes from, polling), the loop, the HTTP
# listener, and two sessions and symbolizers in two threads at once
# (test_threads: what they share in the process). One TAP line per test
# program: it ran to its end and ThreadSanitizer reported nothing. Their
# exact counts are checked by the normal build (tests/run): under TSan the
# signals are deferred to its safe points and its shadow memory adds page
# faults, so the counts are not asserted here.
source "$(dirname "$0")/../e2e/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if ! make -s -C "$ROOT" tsan >"$TMP/build.log" 2>&1; then
	ok 1 "make tsan builds"; sed 's/^/# /' "$TMP/build.log" | tail -20
	done_testing; exit
fi
export PERFSCRIPT_REPORT=none TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1"
for t in region overflow loop http threads; do
	"$ROOT/build-tsan/tests/test_$t" >"$TMP/$t.log" 2>&1
	plan=$(grep -m1 -E '^1\.\.[0-9]+' "$TMP/$t.log")
	ran=$(grep -cE '^(not )?ok [0-9]+' "$TMP/$t.log")
	races=$(grep -c 'WARNING: ThreadSanitizer' "$TMP/$t.log")
	ok $(( ${plan#1..} == ran && races == 0 ? 0 : 1 )) \
		"test_$t under ThreadSanitizer: ran its ${plan#1..} tests ($ran), $races reports"
	[[ $races -ne 0 ]] && grep -A12 'WARNING: ThreadSanitizer' "$TMP/$t.log" | head -40 | sed 's/^/# /'
done
done_testing
