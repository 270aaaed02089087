# tracepoints.sh: a tracepoint's fields by name in sample handlers
# (s.args, s.raw), checked against what the run is known to have done: the
# exec of the command (a __data_loc string), the file it opened (a user
# pointer read with s:user_string), getppid's syscall number and argument
# array, every context switch of the machine under -a; and probes'
# registers (s:arg, s.retval) summed over known calls.
source "$(dirname "$0")/lib.sh"

if ! need_root || [[ ! -r /sys/kernel/tracing/events/sched/sched_switch/format ]]; then
	skip_all "tracepoints need root and tracefs" "tracepoint fields"
fi
N=1000

out=$("$PERFSCRIPT" -e 'c = assert(perfmon.counter("sched:sched_process_exec"))
probe("perfmon.sample(c)", function(s) print(s.args.filename, s.args.pid == s.pid, s.args.old_pid == s.pid) end)' \
	-c "$WORKLOAD getppid 1" 2>&1)
is "$out" "$(printf '%s\ttrue\ttrue' "$WORKLOAD")" "sched_process_exec: the filename (__data_loc string) is the command's, pid and old_pid its pid"

out=$("$PERFSCRIPT" -e 'c = assert(perfmon.counter("syscalls:sys_enter_openat"))
probe("perfmon.sample(c)", function(s)
  local name = s:user_string(s.args.filename)
  if name == arg[1] then print(name, s.args.flags & 3) end
end)' -c "$WORKLOAD open /etc/hostname" -- /etc/hostname 2>&1)
is "$out" "$(printf '/etc/hostname\t0')" "sys_enter_openat: s:user_string(s.args.filename) is the file the command opened (O_RDONLY)"

out=$("$PERFSCRIPT" -e 'c = assert(perfmon.counter("raw_syscalls:sys_enter"))
local n, args = 0, 0
probe("perfmon.sample(c)", function(s)
  if s.args.id == 110 then n = n + 1; args = #s.args.args end
end)
probe("end", function() print(n, args) end)' -c "$WORKLOAD getppid $N" 2>&1)
if [[ $(uname -m) == x86_64 ]]; then
	is "$out" "$(printf '%d\t6' $N)" "raw_syscalls:sys_enter: id 110 (getppid) $N times, args an array of 6"
fi

out=$("$PERFSCRIPT" -a -T 0.5 -e 'c = assert(perfmon.counter("sched:sched_switch"))
local n, bad = 0, 0
probe("perfmon.sample(c)", function(s)
  local a = s.args
  n = n + 1
  -- a task switching out for the last time (state X) has no tid left to sample: -1
  if (a.prev_pid ~= s.tid and s.tid ~= 0xffffffff) or a.common_pid ~= a.prev_pid
     or a.next_pid == a.prev_pid or a.prev_comm == "" or a.next_comm == ""
     or a.prev_prio < -1 or a.prev_prio > 139 or a.next_prio < -1 or a.next_prio > 139 then
    bad = bad + 1
  end
end)
probe("end", function() print(n > 0, bad) end)' 2>&1)
is "$out" "$(printf 'true\t0')" "sched_switch under -a: prev_pid is the sampled task, names set, priorities -1..139"

out=$("$PERFSCRIPT" -e 'c = assert(perfmon.counter("sched:sched_process_exec"))
local t
probe("perfmon.sample(c)", function(s)
  local names = {}
  for k in pairs(s.args) do names[#names + 1] = k end
  t = s:copy()
  print(table.concat(names, " "), #s.raw >= 20, type(t.args), t.args.filename == s.args.filename)
  print(pcall(function() return s.args.nosuch end))
end)
probe("end", function() print(t.args.pid > 0, type(t.raw)) end)' -c "$WORKLOAD getppid 1" 2>&1)
like "$out" "^common_type common_flags common_preempt_count common_pid filename pid old_pid	true	table	true
false	.*tracepoint 'sched:sched_process_exec' has no field 'nosuch' \(fields: common_type .* old_pid\)
true	string$" "pairs(s.args) in format order, s.raw, s:copy() keeps args, an unknown field lists the fields"

out=$("$PERFSCRIPT" -e 'c = assert(perfmon.counter("task-clock/period=1000000/"))
probe("perfmon.sample(c)", function(s) print(s.args, s.raw, s.retval); exit() end)' -c "$WORKLOAD spin 50" 2>&1)
is "$out" "$(printf 'nil\tnil\tnil')" "a software event's sample has no args, raw or retval"

out=$("$PERFSCRIPT" -e 'c = assert(perfmon.counter("uprobe:'"$WORKLOAD"':ps_probe_target"))
r = assert(perfmon.counter("uretprobe:'"$WORKLOAD"':ps_probe_target"))
local a, v, n = 0, 0, 0
probe("perfmon.sample(c)", function(s) a = a + s:arg(1); n = n + 1 end)
probe("perfmon.sample(r)", function(s) v = v + s.retval end)
probe("end", function() print(n, a, v) end)' -c "$WORKLOAD calls $N" 2>&1 | grep -v '^guarded ')
is "$out" "$(printf '%d\t%d\t%d' $N $((N * (N - 1) / 2)) $((N * (N - 1) / 2)))" \
	"uprobe s:arg(1) and uretprobe s.retval add up to 0+1+...+$((N - 1))"

out=$("$PERFSCRIPT" -e 'c = assert(perfmon.counter("syscalls:sys_enter_getppid"))
probe("perfmon.sample(c)", function(s) print(pcall(s.arg, s, 1)); exit() end)' -c "$WORKLOAD getppid 1" 2>&1)
like "$out" "^false	.*the sample carries no registers" "s:arg on a tracepoint sample says it has no registers"
# The BPF path: the program copies the record into its ring; and counts by
# a field in the kernel, as bpftrace's @[args.id] = count().
if [[ -r /sys/kernel/btf/vmlinux ]]; then
	out=$("$PERFSCRIPT" -e 'c = assert(perfmon.counter("syscalls:sys_enter_openat/bpf/"))
probe("perfmon.sample(c)", function(s)
  if s:user_string(s.args.filename) == arg[1] then print(s.args.filename ~= 0, #s.raw >= 48) end
end)' -c "$WORKLOAD open /etc/hostname" -- /etc/hostname 2>&1)
	is "$out" "$(printf 'true\ttrue')" "BPF path: s.args and s.raw of a forwarded tracepoint sample"
	out=$("$PERFSCRIPT" -e 'c = assert(perfmon.counter("sched:sched_process_exec/bpf/"))
probe("perfmon.sample(c)", function(s) print(s.args.filename, s.args.pid == s.pid) end)' \
		-c "$WORKLOAD getppid 1" 2>&1)
	is "$out" "$(printf '%s\ttrue' "$WORKLOAD")" "BPF path: a __data_loc string comes through the ring"
	out=$("$PERFSCRIPT" -e 'c = assert(perfmon.counter("raw_syscalls:sys_enter"))
local by_id = assert(perfmon.aggregate(c, { by = { "args.id" } }))
local by_comm = assert(perfmon.aggregate(c, { by = { "comm", "args.id" } }))
probe("end", function() print(by_id:read()[110], by_comm:read()["workload;110"]) end)' \
		-c "$WORKLOAD getppid $N" 2>&1)
	if [[ $(uname -m) == x86_64 ]]; then
		is "$out" "$(printf '%d\t%d' $N $N)" "in-kernel counts keyed by args.id: getppid (110) exactly $N, also by comm"
	fi
	out=$("$PERFSCRIPT" -e 'c = assert(perfmon.counter("sched:sched_switch"))
print(pcall(perfmon.aggregate, c, { by = { "args.prev_comm" } }))
print(pcall(perfmon.aggregate, c, { by = { "args.nosuch" } }))' 2>&1)
	like "$out" "'args.prev_comm' is a char, not an integer.*
false	.*tracepoint 'sched:sched_switch' has no field 'nosuch'" "args keys: a string field and a missing one are refused"
else
	skip "this kernel has no BTF for the BPF programs" "tracepoint fields on the BPF path"
fi
done_testing
