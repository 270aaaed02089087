# order.sh: samples and side-band records reach handlers in time order
# across every CPU's ring and the BPF ring buffer. A thread moved to the
# next CPU before each syscall (workload hop) puts consecutive samples in
# different rings; processes with threads forking, exec'ing and exiting
# (sh spawning workloads) test FORK/COMM before a child's samples; a BPF
# counter on sys_enter and a perf one on sys_exit test the merge across the
# two backends. perfmon.ordered(false) shows the disorder the tests catch.
source "$(dirname "$0")/lib.sh"

if ! need_root; then
	skip_all "syscall tracepoints need root" "time order"
fi
ncpu=$(nproc)

# Per thread: time never goes back; enter and exit alternate; no empty comm.
check='
local en_spec = arg[1] or "syscalls:sys_enter_getppid/period=1/"
if arg[2] == "off" then perfmon.ordered(false) end
en = perfmon_allocate_counter(en_spec)
ex = perfmon_allocate_counter("syscalls:sys_exit_getppid/period=1/")
local inside, last, n, back, pairs, nocomm = {}, {}, 0, 0, 0, 0
local function seen(s, entering)
  n = n + 1
  if (inside[s.tid] or false) == entering then pairs = pairs + 1 end
  inside[s.tid] = entering
  if s.time < (last[s.tid] or 0) then back = back + 1 end
  last[s.tid] = s.time
  if s.comm == "" then nocomm = nocomm + 1 end
end
probe("perfmon.sample(en)", function(s) seen(s, true) end)
probe("perfmon.sample(ex)", function(s) seen(s, false) end)
probe("end", function()
  print(("samples=%d back=%d mismatched=%d nocomm=%d lost=%d"):format(n, back, pairs, nocomm,
        perfmon.lost(en) + perfmon.lost(ex)))
end)'
field() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$2"; }

if ((ncpu < 2)); then
	skip "one CPU: one ring, nothing to merge" "a thread hopping CPUs: time order"
else
	out=$("$PERFSCRIPT" -b 1024 -e "$check" -c "$WORKLOAD hop 5000" 2>&1)
	is "$out" "samples=10000 back=0 mismatched=0 nocomm=0 lost=0" "a thread hopping CPUs: every sample, time never goes back, enter/exit alternate"
	out=$("$PERFSCRIPT" -b 1024 -e "$check" -c "$WORKLOAD hop 5000" -- "syscalls:sys_enter_getppid/period=1/" off 2>&1)
	b=$(field back "$out") m=$(field mismatched "$out")
	diag "perfmon.ordered(false) on the same: $out"
	((b + m > 0)); ok $? "without order the same run goes back in time (the check above can fail)"
fi

# Processes and threads coming and going, three runs.
bad=""
for r in 1 2 3; do
	out=$("$PERFSCRIPT" -b 2048 -e "$check" -c "sh -c 'for i in 1 2 3 4 5 6 7 8; do $WORKLOAD --fork threads 3 500 & done; wait'" 2>&1)
	# 48000 of the workloads, and the few sh makes itself
	[[ $out =~ ^samples=480[0-9][0-9]\ back=0\ mismatched=0\ nocomm=0\ lost=0$ ]] || bad+="run $r: $out; "
done
[[ -z $bad ]]; ok $? "16 processes of 3 threads, three runs: time never goes back per thread, pairs match, every sample has its comm ($bad)"

# BPF and the perf ring merged: sys_enter through a BPF program, sys_exit through the ring.
if "$PERFSCRIPT" -e 'c = perfmon_allocate_counter("syscalls:sys_enter_getppid/period=1,bpf/")' -c true >/dev/null 2>&1; then
	out=$("$PERFSCRIPT" -b 1024 -e "$check" -c "$WORKLOAD --fork threads 4 2500" -- "syscalls:sys_enter_getppid/period=1,bpf/" 2>&1)
	is "$out" "samples=40000 back=0 mismatched=0 nocomm=0 lost=0" "BPF-forwarded and ring samples in one time order: enter (BPF) before exit (ring) per thread"
	# A short command's page faults through BPF: each sample's live s.sym
	# names what the end of the session names (its COMM and MMAP2 records
	# come first now; before, the BPF ring buffer overtook the perf ring's).
	out=$("$PERFSCRIPT" -c "$(dirname "$WORKLOAD")/chain 20" -e '
c = perfmon_allocate_counter("page-faults/period=1,bpf/")
local seen = {}
probe("perfmon.sample(c)", function(s)
  if s.user then seen[#seen + 1] = { s.pid, s.ip, s.sym:match("^0x") ~= nil } end
end)
probe("end", function()
  local late = 0
  for _, x in ipairs(seen) do
    if x[3] and not perfmon.symbolize(x[1], x[2]):match("^0x") then late = late + 1 end
  end
  print(#seen, late)
end)' 2>&1)
	like "$out" $'^[1-9][0-9]*\t0$' "a short command on the BPF path: live s.sym names every sample the end names (samples, hex live only: $out)"
else
	skip "BPF programs cannot load here" "BPF and ring samples in one time order"
	skip "BPF programs cannot load here" "a short command on the BPF path names its samples live"
fi

done_testing
