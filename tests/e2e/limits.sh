# limits.sh: strings of thousands of events. Memory grows with the number
# of events, not with its square (8000 events took 703 MB when each kept a
# copy of the whole string); more than PS_EVENTS_MAX (16384) is refused with
# the limit named; a group too large for the kernel's one-read limit says
# so and how many fit; and a SIGINT while thousands of counters on
# perfscript itself are being enabled (the kernel takes seconds there, its
# cost per counter growing with their number) acts at once, the end probe
# still running.
source "$(dirname "$0")/lib.sh"
many() { printf 'local t = {perfmon_allocate_counter(("task-clock,"):rep(%d) .. "task-clock")}' $(($1 - 1)); }

r2=$("$PERFSCRIPT" -c true -e "$(many 2000)"'
probe("end", function() local f = io.open("/proc/self/status"); print((f:read("a"):match("VmHWM:%s*(%d+)"))) end)' 2>&1)
r8=$("$PERFSCRIPT" -c true -e "$(many 8000)"'
probe("end", function() local f = io.open("/proc/self/status"); print((f:read("a"):match("VmHWM:%s*(%d+)"))) end)' 2>&1)
ok $(( r8 > 0 && r8 < 64000 && r8 - r2 < 4 * (r2 + 1000) ? 0 : 1 )) \
	"8000 events in one string peak at ${r8} kB (2000: ${r2} kB): linear, not the 703 MB of a copy per event"
out=$("$PERFSCRIPT" -e 'print(perfmon.counter(("task-clock,"):rep(16400) .. "task-clock"))' 2>&1)
like "$out" "^nil	more than 16384 events in one string \(at column [0-9]+\): split it, or narrow its globs	4103$" \
	"more than 16384 events: refused with the limit (PS_ERR_LIMIT), nothing opened"
out=$("$PERFSCRIPT" -e 'local g = assert(perfmon.group("{" .. ("task-clock,"):rep(1099) .. "task-clock}"))
print(g:start())' 2>&1)
like "$out" "the group is too large: the kernel reads a group in at most 16 KiB, which holds 1022 events with this read format; split it into groups of at most 1022" \
	"a group of 1100 events: too large for one read, and how many fit"

# SIGINT while 8000 counters on perfscript itself are enabled.
"$PERFSCRIPT" -e 'probe("end", function() print("end ran") end)
print("ready"); io.stdout:flush()
'"$(many 8000)" >"$TMP/open.out" 2>&1 &
pid=$!
wait_for "$TMP/open.out" '^ready'
sleep 0.3 # into the enabling, which takes seconds
t0=$(date +%s%N); kill -INT $pid; wait $pid; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
ok $(( ms < 2000 ? 0 : 1 )) "SIGINT while 8000 self counters are enabled acts in ${ms} ms (it waited 11.5 s)"
is "$rc $(grep -c 'end ran' "$TMP/open.out")" "0 1" "exit 0 and the end probe ran"
done_testing
