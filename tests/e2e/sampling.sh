# sampling.sh: overflow samples reach Lua handlers live, exactly, with lost
# samples counted and symbols resolved. A syscalls tracepoint with period=1
# gives one sample per getppid() call of the workload.
source "$(dirname "$0")/lib.sh"
EX=$(cd "$(dirname "$0")/../../examples" && pwd)

if ! need_root; then
	skip_all "syscall tracepoints and system-wide samples need root" "sampling tests"
fi

N=200000
# ring pages: enough to hold the whole flood (about 80 bytes a sample),
# since a getppid call can take 0.1 us here, faster than any handler
RING=${PS_TEST_RING_PAGES:-8192}
exact='
c = perfmon_allocate_counter("syscalls:sys_enter_getppid/period=" .. arg[1] .. "/")
local n, bad_pid, kernel, back = 0, 0, 0, 0
local last = {}
probe("perfmon.sample(c)", function(s)
  n = n + 1
  if s.pid ~= target() or s.tid ~= target() then bad_pid = bad_pid + 1 end
  -- syscall tracepoints record the user registers: ip is in libc
  if not s.user then kernel = kernel + 1 end
  if (last[s.cpu] or 0) > s.time then back = back + 1 end
  last[s.cpu] = s.time
end)
probe("end", function()
  local lost = perfmon.lost(c)
  print(n, lost, bad_pid, kernel, back)
end)'
out=$("$PERFSCRIPT" -b "$RING" -e "$exact" -c "$WORKLOAD getppid $N" -- 1 2>"$TMP/err")
is "$out" "$(printf '%d\t0\t0\t0\t0' $N)" "period=1: exactly N samples, 0 lost, all from the workload, all user-mode, time never goes back"
[[ ! -s $TMP/err ]]; ok $? "period=1: nothing on stderr ($(head -c 200 "$TMP/err"))"
# pinned: each CPU's fd has its own period, so a task that moves between CPUs
# leaves a remainder short of an overflow on each
out=$("$PERFSCRIPT" -e "$exact" -c "taskset -c 0 $WORKLOAD getppid $N" -- 1000)
is "$out" "$(printf '%d\t0\t0\t0\t0' $((N / 1000)))" "period=1000: exactly N/1000 samples"

# Other targets: -p (threads included) and system-wide.
rm -f "$TMP/ready"; mkfifo "$TMP/ready"
"$WORKLOAD" --wait-usr1 threads 3 10000 >"$TMP/ready" &
read -r _ wpid <"$TMP/ready"
# 30000 samples in a few ms: a ring that holds them all, so the check is
# about which threads -p covers, not about how fast a (sanitizer) build drains
out=$("$PERFSCRIPT" -b "$RING" -p "$wpid" -e '
c = perfmon_allocate_counter("syscalls:sys_enter_getppid/period=1/")
local n, other = 0, 0
probe("perfmon.sample(c)", function(s) n = n + 1; if s.pid ~= target() then other = other + 1 end end)
probe("begin", function() perfmon_create_context(); os.execute("kill -USR1 " .. target()) end)
probe("end", function() print(n, other, (perfmon.lost(c))) end)')
wait
is "$out" "$(printf '30000\t0\t0')" "-p: every sample of 3 threads x 10000 calls, all of the process"
out=$("$PERFSCRIPT" -b "$RING" -a -e '
c = perfmon_allocate_counter("syscalls:sys_enter_getppid/period=1/")
local mine = 0
probe("perfmon.sample(c)", function(s) if s.pid == target() then mine = mine + 1 end end)
probe("end", function() print(mine, (perfmon.lost(c))) end)' -c "$WORKLOAD getppid 20000")
is "$out" "$(printf '20000\t0')" "-a: the command's 20000 samples arrive from the per-CPU rings"

# A handle literal and the kernel.perfmon.sample alias.
out=$("$PERFSCRIPT" -e '
local h = perfmon_allocate_counter("syscalls:sys_enter_getppid/period=10/")
local n = 0
probe("kernel.perfmon.sample(" .. h .. ")", function() n = n + 1 end)
probe("end", function() print(n) end)' -c "$WORKLOAD getppid 1000")
is "$out" 100 "kernel.perfmon.sample(HANDLE) works with a handle value"
out=$("$PERFSCRIPT" -e '
c = assert(perfmon.counter("syscalls:sys_enter_getppid/period=100/"))
local n = 0
probe("perfmon.sample(c)", function(s) n = n + 1; assert(pid() == s.pid and tid() == s.tid and cpu() == s.cpu) end)
probe("end", function() print(n, execname() == "perfscript") end)' -c "taskset -c 0 $WORKLOAD getppid 1000")
is "$out" "$(printf '10\ttrue')" "a counter object global works; pid/tid/cpu describe the sample inside handlers"

# Lost accounting: a one-page ring and a slow handler lose samples; delivered + lost == N.
M=50000
out=$("$PERFSCRIPT" -b 1 -e '
c = perfmon_allocate_counter("syscalls:sys_enter_getppid/period=1/")
local n, lost_calls, lost_sum = 0, 0, 0
probe("perfmon.sample(c)", function() n = n + 1; local t = os.clock() + 5e-5; while os.clock() < t do end end)
probe("perfmon.lost(c)", function(k) lost_calls = lost_calls + 1; lost_sum = lost_sum + k end)
probe("end", function() print(n, perfmon.lost(c), lost_calls > 0, lost_sum == perfmon.lost(c)) end)' \
	-c "$WORKLOAD getppid $M" 2>"$TMP/lost.err")
read -r delivered lost fired summed <<<"$out"
diag "delivered $delivered, lost $lost"
ok $(( lost > 0 ? 0 : 1 )) "a tiny ring and a slow handler lose samples ($lost)"
is "$((delivered + lost))" "$M" "delivered + lost == N exactly"
is "$fired $summed" "true true" "perfmon.lost(c) probes fire and add up to perfmon.lost(c)"
like "$(cat "$TMP/lost.err")" "$lost of $M samples of 'syscalls:sys_enter_getppid/period=1/' were lost.*-b PAGES" \
	"stderr says how many samples were lost and what to do"

# Read-ahead: a burst the handler cannot keep up with (300000 samples in
# about 0.3 s, 5 us a handler call) waits in perfscript's queue, as perf
# record copies its rings out, instead of overflowing a 2048-page ring
# (about 116000 samples). Without time order there is no queue, and the
# same burst loses a fifth or more; with it, none on an idle machine. The
# ring is large so that the scheduler keeping perfscript off the CPU for a
# while under the parallel suite's load does not overflow it; at most half
# the unordered loss is asked (a third was seen under that load with a
# 1024-page ring), in one of two tries (a clean-clone CI once saw two
# thirds: the suite's load kept perfscript off the CPU; an idle machine
# loses none). Before read-ahead both lost the same. How much the
# unordered reader loses depends on how fast the loaded machine lets the
# workload make its burst (a fifth here, 4.8% in one CI run): that it
# loses some is what makes the comparison mean something.
burst='c = perfmon.counter("syscalls:sys_enter_getppid/period=1/")
local n = 0
perfmon.ordered(arg[1] == "ordered")
probe("perfmon.sample(c)", function() n = n + 1; local t = os.clock() + 5e-6; while os.clock() < t do end end)
probe("end", function() print(n, (perfmon.lost(c))) end)'
B=300000
read -r un ulost < <("$PERFSCRIPT" -b 2048 -e "$burst" -c "$WORKLOAD getppid $B" -- unordered 2>/dev/null)
for try in 1 2; do
	read -r n lost < <("$PERFSCRIPT" -b 2048 -e "$burst" -c "$WORKLOAD getppid $B" -- ordered 2>/dev/null)
	((${lost:-1} * 2 > ${ulost:-0})) || break
	diag "ordered, try $try: $lost of $B lost"
done
ok $(( !(${ulost:-0} * 100 > B && un + ulost == B) )) \
	"unordered (no queue), a burst past a 2048-page ring loses some of it, over 1% ($ulost of $B), delivered + lost = N"
if [[ -n ${PS_TEST_SANITIZER-} ]]; then # the queue's copies run several times slower
	is "$((n + lost))" "$B" "ordered, the burst through the read-ahead queue: delivered + lost = N ($lost lost)"
else
	ok $(( !(${n:-0} + ${lost:-1} == B && lost * 2 <= ulost) )) \
		"ordered, the burst waits in memory: $n of $B delivered, $lost lost (at most half of $ulost)"
fi

# Lost, multi-threaded (4 threads flood a one-page ring): the lost probes,
# perfmon.lost(c) and perfmon.stats(c).lost are one figure, and it balances
lost_script='c = perfmon_allocate_counter("syscalls:sys_enter_getppid/period=1/")
local n, told = 0, 0
probe("perfmon.sample(c)", function() n = n + 1; local t = os.clock() + 2e-5; while os.clock() < t do end end)
probe("perfmon.lost(c)", function(k) told = told + k end)
probe("end", function() print(n + perfmon.lost(c), perfmon.lost(c) == told, perfmon.stats(c).lost == told) end)'
for backend in perf bpf; do
	if [[ $backend == bpf && ! -r /sys/kernel/btf/vmlinux ]]; then
		skip "this kernel has no BTF for the BPF programs" "bpf: lost counts of a 4-thread flood"
		continue
	fi
	bad=0
	for _ in 1 2 3 4 5; do
		out=$("$PERFSCRIPT" --backend=$backend -b 1 -e "$lost_script" -c "$WORKLOAD threads 4 10000" 2>/dev/null)
		[[ $out == "$(printf '40000\ttrue\ttrue')" ]] || { bad=$((bad + 1)); diag "$backend: $out"; }
	done
	is "$bad" 0 "$backend: 4 threads x 10000 samples into a one-page ring, 5 runs: delivered + lost == 40000, and the lost probes, perfmon.lost and perfmon.stats agree"
done

# The CPUs' idle tasks (pid 0, which /proc does not list) are "swapper";
# up to three half seconds, for a CPU to be idle under the suite's load.
for try in 1 2 3; do
	read -r idle other < <("$PERFSCRIPT" -a -T 0.5 -e 'c = perfmon.counter("cpu-clock/freq=500/")
local idle, other = 0, 0
probe("perfmon.sample(c)", function(s)
  if s.pid == 0 then
    if s.comm == "swapper" then idle = idle + 1 else other = other + 1 end
  end
end)
probe("end", function() print(idle, other) end)' 2>&1)
	[[ ${idle:-0} == 0 && ${other:-0} == 0 ]] || break
done
if [[ ${idle:-0} == 0 && ${other:-0} == 0 ]]; then
	skip "no CPU was idle in three half seconds" "the idle tasks' comm is swapper"
else
	is "${other:-x}" 0 "the idle tasks' samples have comm swapper (${idle:-?} of them)"
fi

# The sample object: fields, copy, and no use after its handler. A syscall
# tracepoint sample carries the user registers (ip in libc's syscall
# wrapper); a context switch is taken in the kernel.
out=$("$PERFSCRIPT" -e '
c = perfmon_allocate_counter("syscalls:sys_enter_getppid/period=1/")
cs = perfmon_allocate_counter("context-switches/period=1/")
local kept, copy, kcopy
probe("perfmon.sample(c)", function(s)
  kept = s
  if s.pid == target() then copy = copy or s:copy() end
end)
probe("perfmon.sample(cs)", function(s) kcopy = kcopy or s:copy() end)
probe("end", function()
  print(copy.pid == target(), copy.period, copy.user, copy.name, copy.comm)
  print(copy.sym:match("^([%w_.]+)%+0x%x+$"), copy.dso:match("libc") ~= nil)
  print(kcopy.user, kcopy.dso, kcopy.sym:match("^([%w_.]+)%+0x%x+$"))
  print(pcall(function() return kept.ip end))
  print(tostring(kept))
end)' -c "$WORKLOAD --fork getppid 10" 2>&1) # the parent waits: a context switch
like "$out" $'^true\t1\ttrue\tsyscalls:sys_enter_getppid/period=1/\tworkload\n' \
	"s:copy() keeps pid, period, user, name and comm"
like "$out" $'\nsyscall\ttrue\n' "a user-space ip resolves to libc's syscall()"
kfunc=$(sed -n 3p <<<"$out" | cut -f3)
like "$(sed -n 3p <<<"$out")" $'^false\t\\[kernel.kallsyms\\]\t[a-z_]' "a context-switch sample is in the kernel"
grep -qE " [tTwW] $kfunc\$" /proc/kallsyms; ok $? "its ip resolves to a kallsyms name ($kfunc)"
like "$out" "false	.*this sample is gone: its handler returned" "reading a sample after its handler raises"
like "$out" "perfscript.sample \(gone\)" "tostring of a gone sample says so"

# Symbols: the workload's hot function tops a cpu-clock profile.
out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD spin 600" --folded "$TMP/folded.txt" 2>&1); ok $? "profile.lua runs"
top=$(sed -n '4p' <<<"$out")
like "$top" "^ +[0-9]+ +[0-9.]+%  \\[\\.\\] hot_spin$" "profile.lua: hot_spin is the top function"
like "$out" "^[0-9]+ samples of cpu-clock at 999 Hz" "profile.lua prints the sample count"
bad=$(grep -cvE '^[^ ;]+(;[^ ;]+)* [0-9]+$' "$TMP/folded.txt")
is "$bad" 0 "--folded: every line is 'frame;frame;... count'"
grep -qE '^workload;.*main;.*hot_spin [0-9]+$' "$TMP/folded.txt"; ok $? "--folded has workload;...;main;...;hot_spin stacks"
out=$("$PERFSCRIPT" "$EX/pagefaults.lua" -c "$WORKLOAD pages 3000" 2>&1); ok $? "pagefaults.lua runs"
like "$out" "do_pages" "pagefaults.lua names the faulting function"
out=$("$PERFSCRIPT" "$EX/sample_values.lua" -c "$WORKLOAD spin 200" 2>&1); ok $? "sample_values.lua runs"
like "$out" "[0-9.]+ ms cpu +[0-9]+ page-faults +[0-9]+ context-switches" "sample_values.lua prints member deltas"
n=$(sed -n 's/^\([0-9]*\) slices$/\1/p' <<<"$out")
ok $(( n >= 10 && n <= 30 ? 0 : 1 )) "sample_values.lua: about 20 slices of 10 ms in 200 ms of CPU (got $n)"
# A task that moves between CPUs: each sample carries its own CPU's values,
# so slices taken against another CPU's last sample went negative.
if (($(nproc) > 1)); then
	out=$("$PERFSCRIPT" "$EX/sample_values.lua" -c "sh -c 'for c in 0 1 0 1 0 1; do taskset -c \$c $WORKLOAD spin 60; done'" 2>&1)
	like "$out" "cpu 1 " "sample_values.lua: samples from both CPUs"
	! grep -qE ' -[0-9]' <<<"$out"; ok $? "sample_values.lua: no negative slice when the task changes CPUs"
else
	skip "one CPU: nothing to migrate to" "sample_values.lua across CPUs"
fi

# Bad sample probes fail with the script line.
out=$("$PERFSCRIPT" -e 'probe("perfmon.sample(nosuch)", print)' 2>&1); rc=$?
is "$rc" 1 "a sample probe on a nil global exits 1"
like "$out" "\(command line\):1: perfmon.sample\(nosuch\): global 'nosuch' is nil" "a nil global is named with the probe's line"
out=$("$PERFSCRIPT" -e 'c = perfmon_allocate_counter("task-clock")
probe("perfmon.sample(c)", print)' 2>&1)
like "$out" ":2: perfmon.sample\(c\): counter 'task-clock' does not sample; give it a period" "a counting counter is refused with the fix"
out=$("$PERFSCRIPT" -e 'c = perfmon_allocate_counter("task-clock/period=1000000/"); perfmon_free_counter(c)
probe("perfmon.sample(c)", print)' 2>&1)
like "$out" ":2: perfmon.sample\(c\): not a live counter handle" "a freed handle is refused"
out=$("$PERFSCRIPT" -e 'probe("perfmon.sample(1+1)", print)' 2>&1)
like "$out" "'1\+1' is neither a global name nor a handle" "a malformed target is refused"

# A failing handler: traceback, error and end probes, exit 1.
out=$("$PERFSCRIPT" -e '
c = perfmon_allocate_counter("syscalls:sys_enter_getppid/period=1/")
local n = 0
probe("perfmon.sample(c)", function() n = n + 1; if n == 5 then error("bad sample") end end)
probe("error", function(m) print("error probe", m) end)
probe("end", function() print("end", n) end)' -c "$WORKLOAD getppid 1000" 2>"$TMP/herr"); rc=$?
is "$rc" 1 "a handler error exits 1"
like "$(cat "$TMP/herr")" "error in perfmon.sample probe: .*bad sample.*stack traceback" "a handler error prints a traceback"
is "$out" "$(printf 'error probe\t(command line):4: bad sample\nend\t5')" "after a handler error no more samples run; error then end probes do"

# exit() in a sample handler: no handler runs after it, though samples wait.
out=$("$PERFSCRIPT" -e '
c = perfmon_allocate_counter("syscalls:sys_enter_getppid/period=1/")
local n = 0
probe("perfmon.sample(c)", function() n = n + 1; exit() end)
probe("end", function() print(n) end)' -c "$WORKLOAD getppid 10000")
is "$out" 1 "exit() in a sample handler: no sample handler runs after it"

# A slow handler stays responsive to SIGINT.
"$PERFSCRIPT" -e '
c = perfmon_allocate_counter("syscalls:sys_enter_getppid/period=1/")
probe("perfmon.sample(c)", function() for _ = 1, 20000 do end end)
probe("end", function() print("end ran") end)' -c "$WORKLOAD getppid 100000000" >"$TMP/slow.out" 2>&1 &
pid=$!
sleep 1; kill -INT $pid
for _ in $(seq 40); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done
kill -0 $pid 2>/dev/null; is "$?" 1 "a slow handler still ends within 2 s of SIGINT"
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
like "$(cat "$TMP/slow.out")" "end ran" "end probes ran after SIGINT"
pkill -f "workload getppid 100000000" 2>/dev/null

# perfmon.drain_interval: records wait in the rings up to the interval
# (200 getppid samples fill no quarter ring), and perfmon.drain() hands
# them over at once; perfmon.after fires once, a set one from a handler too.
out=$("$PERFSCRIPT" -e 'c = perfmon.counter("syscalls:sys_enter_getppid/period=1/")
local n, fired = 0, 0
probe(c, function() n = n + 1 end)
assert(perfmon.drain_interval(1000) == 1000)
perfmon.after(500, function()
  local before = n
  perfmon.drain()
  fired = fired + 1
  perfmon.after(20, function() fired = fired + 1; print(before, n, fired); exit() end)
end)' -c "sh -c '$WORKLOAD getppid 200; $WORKLOAD sleep 3000'" 2>&1)
like "$out" "^0	20[0-9]	2$" "drain_interval(1000): none of 200 samples delivered at 500 ms; drain() delivers them; after() fired twice"
like "$("$PERFSCRIPT" -e 'perfmon.drain_interval(0.5)' 2>&1)" "an interval from 1 to 1000 milliseconds" \
	"perfmon.drain_interval refuses an interval under 1 ms"
# perfmon.ring_pages: -b's value, asked or not; rings mapped after a call
# have its size (the data pages and the header page, on each CPU)
rings='print(perfmon.ring_pages())
perfmon.ring_pages(16)
local c = perfmon.counter("cpu-clock/freq=99/")
probe(c, function() end)
probe("timer.ms(20)", function()
  local sizes = {}
  for l in io.lines("/proc/self/maps") do
    local a, b = l:match("^(%x+)-(%x+) .*perf_event")
    if a then sizes[(tonumber(b, 16) - tonumber(a, 16)) // 4096] = true end
  end
  for k in pairs(sizes) do print(k) end
  exit()
end)'
is "$("$PERFSCRIPT" -e "$rings" 2>&1)" "$(printf '256\tfalse\n17')" "ring_pages: 256 by default, not asked; rings mapped after ring_pages(16) have 16 data pages"
like "$("$PERFSCRIPT" -b 32 -e 'print(perfmon.ring_pages())' 2>&1)" "^32	true" "ring_pages: -b 32 is 32, asked"
like "$("$PERFSCRIPT" -e 'perfmon.ring_pages(24)' 2>&1)" "a power of two of pages from 1 to 1048576" "ring_pages refuses a size that is not a power of two"
# the docs' example of perfmon.after runs as the page says
awk '/^### `perfmon.after/ { w = 1 } w && /^```lua$/ { f = 1; next } f && /^```$/ { exit } f' \
	"$(dirname "$0")/../../docs/api.md" >"$TMP/after.lua"
is "$("$PERFSCRIPT" "$TMP/after.lua" 2>&1)" "200 ms in" "docs/api.md's perfmon.after example prints what it says"

# When the session ends, its sampled counters stop: an end probe that takes
# its time (a profile being built) does not leave a -p target filling the
# rings, reported as lost after it, and its counter reads the same twice.
"$WORKLOAD" spin 4000 >/dev/null &
spin=$!
out=$("$PERFSCRIPT" -p $spin -T 0.5 -e '
c = assert(perfmon.counter("cpu-clock/freq=9999,call-graph=fp/"))
probe(c, function() end)
probe("end", function()
  local a = c:read(); os.execute("sleep 1.5"); print(a == c:read())
end)' 2>"$TMP/end.err")
kill $spin 2>/dev/null; wait $spin 2>/dev/null
is "$out" true "after the session, a sampled counter is stopped: its value holds through a slow end probe"
[[ ! -s $TMP/end.err ]]; ok $? "... and no samples are reported lost for the end probe's 1.5 s ($(head -c 300 "$TMP/end.err"))"
done_testing
