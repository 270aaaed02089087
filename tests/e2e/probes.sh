# probes.sh: dynamic probes counted for real and checked against exact
# counts (build/tests/workload calls N makes N calls of ps_probe_target and
# passes its USDT markers N times): uprobe and uretprobe counts, sampling
# every hit without a period, a USDT marker and its semaphore, -a; kprobes
# where the kernel has the kprobe PMU; then the event-string errors that
# only show at the command line (a NUL byte in a Lua string, more than 256
# events from one string, a read-only breakpoint on x86, a missing symbol
# in a PIE) and tracefs being mounted only when needed and unmounted after.
source "$(dirname "$0")/lib.sh"
N=1000

if ! need_root; then
	skip_all "probes need root (perf_event_open of the uprobe PMU)" "uprobes, USDT, kprobes"
fi

count() { # SPEC [perfscript args...]: print the counter's value after the run
	local spec=$1; shift
	"$PERFSCRIPT" "$@" -e "c = assert(perfmon.counter('$spec'))
probe('end', function() print((c:read())) end)" 2>&1 | grep -v '^guarded '
}

out=$(count "uprobe:$WORKLOAD:ps_probe_target" -c "$WORKLOAD calls $N")
is "$out" "$N" "uprobe on a function called $N times counts $N"
out=$(count "uretprobe:$WORKLOAD:ps_probe_target" -c "$WORKLOAD calls $N")
is "$out" "$N" "uretprobe counts $N returns"
out=$(count "uprobe:$WORKLOAD:ps_probe_target:u" -c "$WORKLOAD calls 0")
is "$out" 0 "no call, no count"
out=$(cd "$(dirname "$WORKLOAD")" && PATH=.:$PATH count "uprobe:workload:ps_probe_target" -c "./workload calls 7")
is "$out" 7 "a bare file name is found along \$PATH"

# No period: a probe samples every hit, as perf record does for tracepoints.
out=$("$PERFSCRIPT" -e "c = assert(perfmon.counter('uprobe:$WORKLOAD:ps_probe_target'))
local n, other = 0, 0
probe('perfmon.sample(c)', function(s) n = n + 1; if s.pid ~= target() then other = other + 1 end end)
probe('end', function() print(n, other, (c:read())) end)" -c "$WORKLOAD calls $N" 2>&1 | grep -v '^guarded ')
is "$out" "$(printf '%d\t0\t%d' $N $N)" "a probe without period= samples each of its $N hits, all of the target"
out=$("$PERFSCRIPT" -e "c = assert(perfmon.counter('syscalls:sys_enter_getppid'))
local n = 0
probe('perfmon.sample(c)', function(s) n = n + 1 end)
probe('end', function() print(n) end)" -c "$WORKLOAD getppid $N" 2>&1)
is "$out" "$N" "a tracepoint without period= samples each of its $N hits"

# -a: the probe is in the file, whoever runs it.
out=$( ( sleep 0.3; "$WORKLOAD" calls 321 2>/dev/null ) & count "uprobe:$WORKLOAD:ps_probe_target" -a -T 1.5)
is "$out" 321 "-a: a uprobe counts the calls of a process started later"

# USDT (sys/sdt.h): every pass, and the semaphore raised only while probed.
if readelf -n "$WORKLOAD" 2>/dev/null | grep -q stapsdt; then
	out=$(count "usdt:$WORKLOAD:perfscript:tick" -c "$WORKLOAD calls $N")
	is "$out" "$N" "USDT marker perfscript:tick fires $N times"
	out=$("$PERFSCRIPT" -e "c = assert(perfmon.counter('usdt:$WORKLOAD:perfscript:guarded'))
probe('end', function() print((c:read())) end)" -c "$WORKLOAD calls $N" 2>&1)
	like "$out" "guarded $N sum [0-9]+"$'\n'"$N\$" \
		"a semaphore-guarded marker: the kernel raises the semaphore, the guarded code runs $N times"
	out=$("$WORKLOAD" calls $N 2>&1)
	like "$out" "^guarded 0 " "without a probe the semaphore stays down (guarded 0)"
	out=$(count "usdt:$WORKLOAD:perfscript:tik" -c "$WORKLOAD calls 1")
	like "$out" "no USDT marker 'perfscript:tik' in .*workload \(did you mean 'perfscript:tick'\?\)" \
		"a misspelt marker names the file and the nearest marker"
else
	skip "the workload was built without sys/sdt.h (systemtap-sdt-dev)" "USDT markers"
fi

out=$(count "uprobe:$WORKLOAD:ps_probe_targt" -c "$WORKLOAD calls 1")
like "$out" "no function 'ps_probe_targt' in .*workload \(did you mean 'ps_probe_target'\?\)" \
	"a misspelt function names the file and the nearest symbol"
out=$(count "uprobe:/no/such/file:main")
like "$out" "cannot open 'uprobe:/no/such/file:main': no file '/no/such/file'" "a missing file is named"
out=$(count "uprobe:/etc/passwd:main")
like "$out" "/etc/passwd is not an ELF file" "a file that is not ELF is named"

# kprobes: through the kprobe PMU when the kernel has one.
if [[ -e /sys/bus/event_source/devices/kprobe/type ]]; then
	out=$(count "kprobe:__x64_sys_getppid" -c "$WORKLOAD getppid $N")
	is "$out" "$N" "kprobe on the getppid syscall handler counts $N"
	out=$(count "kretprobe:__x64_sys_getppid" -c "$WORKLOAD getppid $N")
	is "$out" "$N" "kretprobe counts $N returns"
else
	skip "this kernel has no kprobe PMU (CONFIG_KPROBES is off)" "kprobe on the getppid handler"
	out=$(count "kprobe:__x64_sys_getppid")
	like "$out" "this kernel has no kprobe PMU" "kprobe: the error says the kernel lacks the PMU"
fi
# closing the fds leaves nothing behind in tracefs
left=$(grep -c . /sys/kernel/tracing/uprobe_events 2>/dev/null)
is "${left:-0}" 0 "no uprobe_events entry is left behind"

# Event-string errors seen from Lua.
out=$("$PERFSCRIPT" -e 'print(perfmon.counter("task-clock\0,page-faults"))' 2>&1)
like "$out" "^nil	NUL byte at column 11 of the event string" "a NUL byte in the string is refused with its column"
out=$("$PERFSCRIPT" -e 'print(perfmon_allocate_counter("cycles\0"))' 2>&1)
like "$out" "^0	NUL byte at column 7" "perfmon_allocate_counter refuses it too"
out=$("$PERFSCRIPT" -e 'print(perfmon.overflow("task-clock\0/period=1/"))
print(perfmon.regions("task-clock\0:k"))
print(pcall(perfmon.region, "a\0b", print))' 2>&1)
is "$out" "nil	NUL byte at column 11 of the event string (it would end the string there)	4096
nil	NUL byte at column 11 of the event string (it would end the string there)	4096
false	bad argument #1 to 'perfmon.region' (NUL byte at column 2 of the region name (it would end the string there))" \
	"perfmon.overflow, perfmon.regions and region names refuse a NUL byte with its column"
if command -v luajit >/dev/null; then
	ROOT=$(cd "$(dirname "$0")/../.." && pwd)
	out=$(PERFSCRIPT_LIB="$ROOT/build/libperfscript.so" LUA_PATH="$ROOT/bindings/?.lua;;" luajit -e '
local p = require "perfscript"
print(p.parse("task-clock\0:k"))
print(p.overflow("task-clock\0/period=1/"))
print(p.regions("task-clock\0:k"))
print(pcall(p.region, "a\0b", print))
print(assert(p.session()):counter("task-clock\0,page-faults"))' 2>&1)
	is "$out" "nil	NUL byte at column 11 of the event string (it would end the string there)	11
nil	NUL byte at column 11 of the event string (it would end the string there)	4096
nil	NUL byte at column 11 of the event string (it would end the string there)	4096
false	bad argument #1 to 'region' (NUL byte at column 2 of the region name (it would end the string there))
nil	NUL byte at column 11 of the event string (it would end the string there)	4096" \
		"LuaJIT: parse, overflow, regions, region names and counters refuse it with the same words"
else
	skip "luajit is not installed" "LuaJIT refuses NUL bytes"
fi
out=$("$PERFSCRIPT" -e 'local t = { perfmon.counter("syscalls:sys_enter_*") }
local h = { perfmon_allocate_counter("syscalls:sys_exit_*") }
local g = perfmon.group("{syscalls:sys_enter_*}")
print(#t, #h, #g, #t == #(io.popen("ls -d /sys/kernel/tracing/events/syscalls/sys_enter_*"):read("a"):gsub("[^\n]", "")))
exit() -- before the session opens them: closing a tracepoint waits ~30 ms on the kernel' 2>&1)
like "$out" "^([0-9]+)	\\1	\\1	true$" "one string gives every syscall tracepoint (more than 256), in a counter list, handles and a group"
out=$("$PERFSCRIPT" -e 'print(perfmon.counter("cycl\u{e9}s"))' 2>&1)
like "$out" "non-ASCII byte 0xc3 at column 5" "a non-ASCII character is named with its column"
if [[ $(uname -m) == x86_64 ]]; then
	out=$("$PERFSCRIPT" -e 'local c = perfmon.counter("mem:0x1000:r"); print(c:start())' 2>&1)
	like "$out" "x86 hardware breakpoints cannot be read-only: use :rw" "mem:ADDR:r on x86 says breakpoints cannot be read-only"
fi
out=$("$PERFSCRIPT" -e 'local c = perfmon.counter("mem:no_such_symbol_zz:w"); print(c:start())' -c "$WORKLOAD calls 1" 2>&1)
like "$out" "no symbol 'no_such_symbol_zz'" "a missing symbol in a PIE command is missing, not blamed on PIE"
[[ $out != *PIE* ]]; ok $? "... and the message does not mention PIE"
out=$("$PERFSCRIPT" -e 'print(perfmon.counter("cycles/period=9223372036854775808/"))' 2>&1)
like "$out" "bad value '9223372036854775808' for term 'period' at column 15 \(must be below 2\^63\)" \
	"a period of 2^63 is refused where it is written"

# tracefs: never left mounted where the test can see it, whatever asks for
# it (perfscript mounts it in a mount namespace of its own; the test runs
# in a private namespace too, so the host's tracefs is never touched).
if command -v unshare >/dev/null && unshare -m --propagation private true 2>/dev/null; then
	out=$(unshare -m --propagation private bash -c '
		umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug/tracing 2>/dev/null
		n() { grep -c " tracefs " /proc/self/mounts; }
		echo "start $(n)"
		"$1" --describe cycles >/dev/null; echo "describe $(n)"
		"$1" -l page-faults >/dev/null; echo "list $(n)"
		"$1" --describe sched:sched_switch | head -1
		echo "tracepoint $(n)"
		"$1" -e "c = assert(perfmon.counter(\"syscalls:sys_enter_getppid\")) print((c:read()))"
		echo "count $(n)"' _ "$PERFSCRIPT" 2>&1)
	is "$out" "$(printf 'start 0\ndescribe 0\nlist 0\nname=sched:sched_switch\ntracepoint 0\n0\ncount 0')" \
		"tracefs is never left mounted: parsing mounts nothing, a count mounts it for perfscript alone"
else
	skip "unshare -m is not available" "tracefs mounted and unmounted"
fi
# A counter object names its own sample point, as a global name does.
if need_root; then
	out=$("$PERFSCRIPT" -e 'local n = 0
local c = perfmon.counter("syscalls:sys_enter_getppid/period=1/")
probe(c, function() n = n + 1 end)
probe("end", function() print(n) end)' -c "$WORKLOAD getppid 1234" 2>&1)
	is "$out" 1234 "probe(counter, fn): every sample of a local counter reaches the handler"
else
	skip "syscall tracepoints need root" "probe(counter, fn)"
fi
out=$("$PERFSCRIPT" -e 'probe({}, function() end)' 2>&1)
like "$out" "bad argument #1 to 'probe' \\(a probe point .* or a sampling counter, got table\\)" \
	"probe() with neither a point nor a counter says what it takes"

# The BPF path: probes filter, forward and aggregate in the kernel too,
# counting exactly, with the registers in each forwarded sample.
if need_root && [[ -r /sys/kernel/btf/vmlinux ]]; then
	for b in bpf perf; do
		out=$("$PERFSCRIPT" --backend=$b -e "c = assert(perfmon.counter('uprobe:$WORKLOAD:ps_probe_target'))
local n, sum = 0, 0
probe(c, function(s) n = n + 1; sum = sum + s:arg(1) end)
probe('end', function() print(n, sum, (c:read())) end)" -c "$WORKLOAD calls 1000" 2>&1 | grep -v '^guarded ')
		is "$out" "$(printf '1000\t499500\t1000')" "--backend=$b uprobe: 1000 samples, s:arg(1) summed, count 1000"
		out=$("$PERFSCRIPT" --backend=$b -e "c = assert(perfmon.counter('uretprobe:$WORKLOAD:ps_probe_target/period=10/'))
local n, sum = 0, 0
probe(c, function(s) n = n + 1; sum = sum + s.retval end)
probe('end', function() print(n, sum, (c:read())) end)" -c "$WORKLOAD calls 1000" 2>&1 | grep -v '^guarded ')
		if [[ $b == bpf ]]; then
			is "$out" "$(printf '100\t50400\t1000')" "--backend=bpf uretprobe period=10: every 10th return (s.retval 9, 19, ...), count 1000"
		else
			# the perf path counts the period per fd, one per CPU: a thread
			# that moved between CPUs leaves up to a period's remainder on
			# each (perf record does the same)
			n=${out%%$'\t'*}
			ok $(( n <= 100 && n > 100 - $(nproc) && ${out##*$'\t'} == 1000 ? 0 : 1 )) \
				"--backend=perf uretprobe period=10: 1000 counted, one sample per 10 hits of each CPU's fd ($out)"
		fi
	done
	if readelf -n "$WORKLOAD" 2>/dev/null | grep -q stapsdt; then
		out=$("$PERFSCRIPT" --backend=bpf -e "c = assert(perfmon.counter('usdt:$WORKLOAD:perfscript:tick'))
local n = 0
probe(c, function() n = n + 1 end)
probe('end', function() print(n, (c:read())) end)" -c "$WORKLOAD calls 777" 2>&1 | grep -v '^guarded ')
		is "$out" "$(printf '777\t777')" "--backend=bpf USDT: 777 samples, count 777"
	fi
	out=$("$PERFSCRIPT" -e "c = assert(perfmon.counter('uretprobe:$WORKLOAD:ps_probe_target'))
local a = assert(perfmon.aggregate(c, { by = { 'retval' } }))
probe('end', function() local keys, sum = 0, 0
  for k, v in pairs(a:read()) do keys = keys + 1; sum = sum + k * v end
  print(keys, sum) end)" -c "$WORKLOAD calls 100" 2>&1 | grep -v '^guarded ')
	is "$out" "$(printf '100\t4950')" "perfmon.aggregate of a uretprobe by retval, in the kernel: 100 keys summing to 4950"
	out=$("$PERFSCRIPT" -e "c = assert(perfmon.counter('uprobe:$WORKLOAD:ps_probe_target'))
local a = assert(perfmon.aggregate(c, { by = { 'arg1', 'comm' } }))
probe('end', function() print(a:read()['42;workload']) end)" -c "$WORKLOAD calls 100" 2>&1 | grep -v '^guarded ')
	is "$out" "1" "perfmon.aggregate of a uprobe by arg1 and comm: '42;workload' once"
	if readelf -n "$WORKLOAD" 2>/dev/null | grep -q stapsdt; then
		# a marker's arg1 is where its note says (8@%rbx here), read in the kernel
		out=$("$PERFSCRIPT" -e "c = assert(perfmon.counter('usdt:$WORKLOAD:perfscript:tick'))
local a = assert(perfmon.aggregate(c, { by = { 'arg1' } }))
probe('end', function() local keys, sum = 0, 0
  for k, v in pairs(a:read()) do keys = keys + 1; sum = sum + k * v end
  print(keys, sum) end)" -c "$WORKLOAD calls 100" 2>&1 | grep -v '^guarded ')
		is "$out" "$(printf '100\t4950')" "perfmon.aggregate of a USDT marker by arg1: its 100 values 0..99"
	else
		skip "the workload was built without sys/sdt.h" "perfmon.aggregate of a USDT marker by arg1"
	fi
	out=$("$PERFSCRIPT" -e "c = assert(perfmon.counter('uprobe:$WORKLOAD:ps_probe_target'))
perfmon.aggregate(c, { by = { 'retval' } })" -c "$WORKLOAD calls 1" 2>&1)
	like "$out" "'retval': only a return probe has a return value" "retval on an entry probe is refused, saying why"
	for c in "uretprobe:$WORKLOAD:ps_probe_target arg2 a return probe's arguments are gone" \
		"syscalls:sys_enter_getppid retval is not a probe" \
		"usdt:$WORKLOAD:perfscript:tick retval a USDT marker has arg1 to arg12, no return value"; do
		read -r spec key why <<<"$c"
		out=$("$PERFSCRIPT" -e "c = perfmon.counter('$spec') perfmon.aggregate(c, { by = { '$key' } })" 2>&1)
		like "$out" "aggregation field '$key': .*$why" "$key on ${spec%%:*} is refused: $why"
	done
	out=$( ( sleep 0.3; "$WORKLOAD" calls 321 >/dev/null 2>&1 ) & "$PERFSCRIPT" --backend=bpf -a -T 1.5 -e "c = assert(perfmon.counter('uprobe:$WORKLOAD:ps_probe_target'))
local n = 0
probe(c, function() n = n + 1 end)
probe('end', function() print(n, (c:read())) end)" 2>&1)
	is "$out" "$(printf '321\t321')" "--backend=bpf -a: a uprobe's hits in a process started later"
	"$WORKLOAD" sleep 100000 >/dev/null 2>&1 &
	sleeper=$!
	out=$( ( sleep 0.3; "$WORKLOAD" calls 500 >/dev/null 2>&1 ) & "$PERFSCRIPT" --backend=bpf -p $sleeper -T 1 -e "c = assert(perfmon.counter('uprobe:$WORKLOAD:ps_probe_target'))
local n = 0
probe(c, function() n = n + 1 end)
probe('end', function() print(n, (c:read())) end)" 2>&1)
	kill $sleeper; wait $sleeper 2>/dev/null
	is "$out" "$(printf '0\t0')" "--backend=bpf -p: another process's calls of the function are not the target's"
else
	skip "BPF needs root and BTF" "probes on the BPF path"
fi
done_testing
