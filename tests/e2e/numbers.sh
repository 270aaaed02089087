# numbers.sh: the value of a sampling counter is the true count. A sampling
# counter on a task is opened once per CPU (each fd writes into its CPU's
# ring); its value must still be the task's count, not one extrapolation per
# CPU. A syscall tracepoint gives exact counts: the workload makes exactly N
# getppid() calls; page-faults and task-clock are checked against a plain
# counting counter of the same run.
source "$(dirname "$0")/lib.sh"

if ! need_root; then
	skip_all "syscall tracepoints need root (run make check as root)" "sampling counters read exact values"
fi
N=100000

# value and sample count of the counter given as arg[1]
value_script='h = perfmon_allocate_counter(arg[1])
local n = 0
probe("perfmon.sample(h)", function() n = n + 1 end)
probe("end", function() print(perfmon_get_counter(h), n > 0) end)'
for spec in "period=1000" "freq=1000"; do
	out=$("$PERFSCRIPT" --backend=perf -e "$value_script" -c "$WORKLOAD getppid $N" \
		-- "syscalls:sys_enter_getppid/$spec/" 2>&1)
	is "$out" "$(printf '%d\ttrue' $N)" "-c: a sampling tracepoint counter ($spec) reads exactly N"
done

# self: the script's own close() calls, sampled and counted, 30 times over
# (each CPU's fd is enabled a moment after the previous one: scaling by
# enabled/running read 1006 in one run of 20 under load)
out=$("$PERFSCRIPT" -e '
local seen = {}
for _ = 1, 30 do
  local c = assert(perfmon.counter("syscalls:sys_enter_close/period=10/"))
  c:start()
  for _ = 1, 1000 do assert(io.open("/proc/self/stat")):close() end
  c:stop()
  local v, en, run = c:read()
  seen[#seen + 1] = v .. (en == run and "" or " (running " .. run .. " of " .. en .. ")")
  c:close()
end
table.sort(seen)
print(seen[1], seen[#seen])')
is "$out" "$(printf '1000\t1000')" "self: a sampling counter on 1000 closes reads exactly 1000, counting all the time it is enabled (30 runs)"

# -p: every thread of the process, each opened on every CPU
rm -f "$TMP/ready"; mkfifo "$TMP/ready"
"$WORKLOAD" --wait-usr1 threads 3 10000 >"$TMP/ready" &
read -r _ wpid <"$TMP/ready"
out=$("$PERFSCRIPT" -p "$wpid" -e "$value_script"'
probe("begin", function() perfmon_create_context(); os.execute("kill -USR1 " .. target()) end)' \
	-- "syscalls:sys_enter_getppid/period=100/" 2>&1)
wait
is "$out" "$(printf '30000\ttrue')" "-p: a sampling counter on 3 threads x 10000 calls reads exactly 30000"

# Software events and group members under a sampling leader, against plain
# counters of the same run.
out=$("$PERFSCRIPT" -e '
local g = assert(perfmon.group("{syscalls:sys_enter_getppid/period=1000/,page-faults,task-clock}"))
local pf, tc = assert(perfmon.counter("page-faults")), assert(perfmon.counter("task-clock"))
local spf = assert(perfmon.counter("page-faults/period=10/"))
local stc = assert(perfmon.counter("task-clock/period=1000000/"))
probe("end", function()
  local v, enabled, running = g:read()
  local within = function(a, b) return math.abs(a - b) <= b / 100 end
  print(v[1], v[2] == pf:read(), within(v[3], tc:read()), spf:read() == pf:read(),
        within(stc:read(), tc:read()), running == enabled)
end)' -c "$WORKLOAD getppid $N" 2>&1)
is "$out" "$(printf '%d\ttrue\ttrue\ttrue\ttrue\ttrue' $N)" \
	"-c: group members under a sampling leader and sampling software counters equal plain counters"

done_testing
