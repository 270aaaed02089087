# rawtp.sh: a tracepoint counter that only aggregates in the kernel is
# counted on its raw tracepoint, with no perf event of its own: its value
# and its aggregate still equal what perf stat counts, on a command, a
# process and the whole machine, through stop, start and reset, and
# another tool on the same tracepoint counts what it counts alone.
source "$(dirname "$0")/lib.sh"

if ! need_root; then
	skip_all "BPF programs and tracepoints need root" "raw tracepoint counting"
fi
if [[ ! -r /sys/kernel/btf/vmlinux ]]; then
	skip_all "this kernel has no BTF (/sys/kernel/btf/vmlinux), which the programs need" "raw tracepoint counting"
fi
have_perf=false
command -v perf >/dev/null && have_perf=true
perf_count() { # EVENT CMD...: perf stat's count of EVENT on CMD
	local ev=$1
	shift
	perf stat -x, -e "$ev" -- "$@" 2>&1 >/dev/null | grep -F ",$ev," | cut -d, -f1
}

N=100000
# -c: by the syscall number, the counter's value and the sum of its
# aggregate are the command's syscalls, as perf stat counts them
by_id='
c = perfmon.counter("raw_syscalls:sys_enter")
local a = assert(perfmon.aggregate(c, { by = { "args.id" } }))
probe("end", function()
  local sum, t = 0, a:read()
  for _, n in pairs(t) do sum = sum + n end
  local v, en, run = c:read()
  print(t[110], sum, v, en > 0 and en == run)
end)'
out=$("$PERFSCRIPT" -v -e "$by_id" -c "$WORKLOAD getppid $N" 2>"$TMP/err")
read -r getppid sum value times <<<"$out"
is "$getppid" "$N" "-c: getppid (id 110) counted $N times on the raw tracepoint"
is "$sum" "$value" "-c: the aggregate's sum is the counter's value ($value)"
is "$times" "true" "-c: time enabled is time running, and not 0"
like "$(cat "$TMP/err")" "'raw_syscalls:sys_enter' is counted and aggregated on its raw tracepoint" "-v says the counter has no perf event of its own"
if $have_perf; then
	is "$value" "$(perf_count raw_syscalls:sys_enter "$WORKLOAD" getppid $N)" "-c: the value is perf stat's count of the same command"
else
	skip "perf is not installed" "raw tracepoint counts against perf stat"
fi

# a forking command: its processes join as they are forked, as the perf
# events of a second counter on the same tracepoint in the same session
# count them (exactly, whatever the run)
for ev in sys_enter sys_exit; do
	out=$("$PERFSCRIPT" -e 'c = perfmon.counter("raw_syscalls:'$ev'")
local d = perfmon.counter("raw_syscalls:'$ev'")
local a = assert(perfmon.aggregate(c, { by = { "pid" } }))
probe("end", function()
  local s, n = 0, 0
  for _, v in pairs(a:read()) do s = s + v; n = n + 1 end
  print(s == (c:read()) and s == (d:read()), n)
end)' -c "sh -c '/bin/true; /bin/true; ls / >/dev/null'")
	is "$out" "$(printf 'true\t5')" "-c on a forking command: raw_syscalls:$ev's aggregate, value and a perf-counted twin agree, over its 5 processes (sh, sh, true, true, ls)"
done
# other tracepoints count so on a CPU target only (a process target's
# events also take wake-ups handed to its tasks by others)
out=$("$PERFSCRIPT" -v -e 'c = perfmon.counter("sched:sched_switch")
local a = assert(perfmon.aggregate(c, { by = { "pid" } }))' -c /bin/true 2>&1)
ok $(grep -c "raw tracepoint" <<<"$out") "-c: sched:sched_switch keeps the perf path"
out=$("$PERFSCRIPT" -v -a -e 'c = perfmon.counter("sched:sched_switch")
local a = assert(perfmon.aggregate(c, { by = { "cpu" } }))
probe("end", function() c:stop(); local s = 0; for _, v in pairs(a:read()) do s = s + v end; print(s == (c:read()), s > 0) end)' -c "sleep 0.05" 2>&1)
like "$out" "'sched:sched_switch' is counted and aggregated on its raw tracepoint" "-a: sched:sched_switch is counted on its raw tracepoint"
like "$out" "true	true" "-a: its aggregate's sum is its value"

# a cpu= term: the counter's events are on that CPU only, and so is what
# its program counts, on the raw tracepoint (by cpu) and on the perf path
# (by cpu and ip, which a raw tracepoint cannot key by): a command makes
# 5000 calls on CPU 0, then 7000 on CPU 1
for by in '"cpu", "args.id"' '"cpu", "ip", "args.id"'; do
	out=$("$PERFSCRIPT" -e 'c = perfmon.counter("raw_syscalls:sys_enter/cpu=0/")
local a = assert(perfmon.aggregate(c, { by = { '"$by"' } }))
probe("end", function()
  local cpus, sum, getppid = {}, 0, 0
  for k, n in pairs(a:read()) do
    cpus[k:match("^%d+")] = true; sum = sum + n
    if k:match(";110$") then getppid = getppid + n end
  end
  local list = {}
  for cpu in pairs(cpus) do list[#list + 1] = cpu end
  print(table.concat(list, ","), getppid, sum == (c:read()))
end)' -c "sh -c 'taskset -c 0 $WORKLOAD getppid 5000; taskset -c 1 $WORKLOAD getppid 7000'" 2>&1)
	read -r cpus calls same <<<"$out"
	[[ $cpus == 0 && $same == true ]] && ((calls >= 5000 && calls < 5100)) # sh's and taskset's own calls too
	ok $? "cpu=0, by { $by }: only CPU 0's hits (its 5000 getppid calls, not CPU 1's 7000: $out), summing to the value"
done

# -p: three threads' calls, every one, from the moment they are told to start
rm -f "$TMP/ready"; mkfifo "$TMP/ready"
"$WORKLOAD" --wait-usr1 threads 3 10000 >"$TMP/ready" &
read -r _ wpid <"$TMP/ready"
out=$("$PERFSCRIPT" -p "$wpid" -e '
c = perfmon.counter("raw_syscalls:sys_enter")
local a = assert(perfmon.aggregate(c, { by = { "tid", "args.id" } }))
probe("begin", function() perfmon_create_context(); os.execute("kill -USR1 " .. target()) end)
probe("end", function()
  local threads, calls = 0, 0
  for k, n in pairs(a:read()) do if k:match(";110$") then threads = threads + 1; calls = calls + n end end
  print(threads, calls)
end)')
wait
is "$out" "$(printf '3\t30000')" "-p: 3 threads x 10000 getppid calls, by thread"

# No perf event of perfscript's on the tracepoint: its program hangs on
# the raw tracepoint (bpftool lists both kinds, by the process holding them)
$have_perf && alone=$(perf_count raw_syscalls:sys_enter "$WORKLOAD" getppid $N)
"$PERFSCRIPT" -a -e '
c = perfmon.counter("raw_syscalls:sys_enter")
local a = assert(perfmon.aggregate(c, { by = { "pid" } }))
local told = false -- timers run once the counters are open
probe("timer.ms(5)", function() if not told then print("attached"); io.stdout:flush(); told = true end end)' >"$TMP/a.out" 2>&1 &
ps_pid=$!
if wait_for "$TMP/a.out" attached; then
	if command -v bpftool >/dev/null; then
		bpftool perf show 2>/dev/null | grep -E "^pid $ps_pid " >"$TMP/attached"
		is "$(grep -oE '(raw_)?tracepoint +[a-z_]+' "$TMP/attached" | tr -s ' ')" "raw_tracepoint sys_enter" "-a: the session's one program is on the raw tracepoint, none on a perf event"
	else
		skip "bpftool is not installed" "where the program hangs"
	fi
	if $have_perf; then
		is "$alone" "$(perf_count raw_syscalls:sys_enter "$WORKLOAD" getppid $N)" "perf stat on the same tracepoint meanwhile counts what it counts alone ($alone)"
	fi
else
	ok 1 "-a session did not start: $(cat "$TMP/a.out")"
fi
kill -INT $ps_pid; wait $ps_pid
ok $? "-a: Ctrl-C ends the session cleanly"

# -a: stopped, the value and the aggregate agree to the hit; a command's
# pid has at least its own calls
out=$("$PERFSCRIPT" -a -e '
c = perfmon.counter("raw_syscalls:sys_enter")
local a = assert(perfmon.aggregate(c, { by = { "pid" } }))
probe("end", function()
  c:stop()
  local t, sum = a:read(), 0
  for _, n in pairs(t) do sum = sum + n end
  print(sum == (c:read()), (t[target()] or 0) >= '$N')
end)' -c "$WORKLOAD getppid $N")
is "$out" "$(printf 'true\ttrue')" "-a: after stop the aggregate's sum is the value; the command's pid has its $N calls"

# stop, start and reset
ctl='
c = perfmon.counter("raw_syscalls:sys_enter")
local a = assert(perfmon.aggregate(c, { by = { "pid" } }))
c:stop()
if arg[1] == "restart" then c:start() end
probe("end", function()
  local before = c:read()
  c:reset()
  print(before, a:read()[target()] or 0, (c:read()))
end)'
out=$("$PERFSCRIPT" -e "$ctl" -c "$WORKLOAD getppid 1000")
is "$out" "$(printf '0\t0\t0')" "a stopped counter counts nothing, nor does its aggregate"
out=$("$PERFSCRIPT" -e "$ctl" -c "$WORKLOAD getppid 1000" -- restart)
read -r before agg after <<<"$out"
[[ ${before:-0} -ge 1000 && $agg == "$before" ]]
ok $? "stopped then started, it counts the command again ($before, aggregate $agg)"
is "$after" "0" "reset: the value counts from 0 again"

# after the start, the aggregation cannot change: nothing else counts it
out=$("$PERFSCRIPT" -e '
c = perfmon.counter("raw_syscalls:sys_enter")
assert(perfmon.aggregate(c, { by = { "pid" } }))
probe("timer.ms(1)", function() print(pcall(perfmon.aggregate, c, { by = { "tid" } })); exit() end)' -c "sleep 5" 2>&1)
like "$out" "nil.*ask for samples and aggregations before it starts" "a new aggregation after the start is refused, and says when to ask"

# what needs a record field or a sample keeps the perf path, and is exact
out=$("$PERFSCRIPT" -v -e '
c = perfmon.counter("syscalls:sys_enter_getppid")
local a = assert(perfmon.aggregate(c, { by = { "pid" } }))
probe("end", function() print(a:read()[target()], (c:read())) end)' -c "$WORKLOAD getppid $N" 2>"$TMP/err")
is "$out" "$(printf '%d\t%d' $N $N)" "syscalls:sys_enter_getppid (no raw tracepoint of that name): exact on the perf path"
ok $(grep -c "raw tracepoint" "$TMP/err") "and -v does not say it is counted on a raw tracepoint"
done_testing
