# events.sh: the event-name features at the command line: perfscript -l
# (text, JSON, GLOB, timing), and --describe for breakpoints, sysfs
# aliases with scale/unit/cpumask, tracepoint globs and libpfm4 names,
# against the fixture trees where the host lacks the PMU; breakpoints on
# symbols (mem:SYMBOL) counted on -p and on a non-PIE -c command.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FX=$ROOT/tests/fixtures

out=$("$PERFSCRIPT" -l 2>&1); rc=$?
ok $rc "perfscript -l exits 0"
like "$out" $'^hardware:\n  cpu-cycles' "-l starts with the hardware group"
like "$out" $'\nsoftware:\n' "-l has a software group"
like "$out" $'\ncache:\n' "-l has a cache group"
start=$(date +%s%N); "$PERFSCRIPT" -l >/dev/null; ms=$((($(date +%s%N) - start) / 1000000))
ok $((ms < 200 ? 0 : 1)) "-l completes in under 200 ms (took $ms ms)"
out=$(PERFSCRIPT_SYSFS=$FX/sysfs PERFSCRIPT_TRACEFS=$FX/tracefs "$PERFSCRIPT" -l 'sched:*')
is "$(grep -c '^  sched:' <<<"$out")" 3 "-l 'sched:*' lists the three fixture sched tracepoints"
out=$(PERFSCRIPT_SYSFS=$FX/sysfs PERFSCRIPT_TRACEFS=$FX/tracefs "$PERFSCRIPT" -l cas_count)
like "$out" "uncore_imc_0/cas_count_read/ +event=0x04,umask=0x03 \(scale 6.10352e-05, unit MiB\)" \
	"-l shows a sysfs alias with its terms, scale and unit"
out=$(PERFSCRIPT_SYSFS=$FX/sysfs "$PERFSCRIPT" -l --json page-faults)
like "$out" '"group": "software", "name": "page-faults", "desc": "Page faults", "supported": null' \
	"-l --json gives one object per name"
out=$(LIBPFM_FORCE_PMU=skx "$PERFSCRIPT" -l 'skx::L2_RQSTS:*')
like "$out" "skx::L2_RQSTS:ALL_DEMAND_MISS" "-l lists libpfm4 unit masks (LIBPFM_FORCE_PMU=skx)"
out=$("$PERFSCRIPT" -l 'no-such-event-zzz' 2>&1)
like "$out" "no event matches 'no-such-event-zzz'" "-l with a glob matching nothing says so"
"$PERFSCRIPT" -l a b >/dev/null 2>&1; is $? 2 "-l with two globs is a usage error"

out=$("$PERFSCRIPT" --describe 'mem:0x1000/8:w')
like "$out" $'bp_type=2\nbp_addr=0x1000\nbp_len=8' "--describe prints breakpoint fields"
out=$(PERFSCRIPT_SYSFS=$FX/sysfs "$PERFSCRIPT" --describe 'power/energy-pkg/')
like "$out" $'scale=2.3283064365386963e-10\nunit=Joules\ncpus=0' "--describe prints scale, unit and cpus"
out=$(PERFSCRIPT_TRACEFS=$FX/tracefs "$PERFSCRIPT" --describe 'syscalls:sys_enter_*:u')
is "$(grep -c '^name=' <<<"$out")" 3 "--describe expands a tracepoint glob"
out=$(LIBPFM_FORCE_PMU=skx "$PERFSCRIPT" --describe 'INST_RETIRED:ANY_P:c=1:i')
like "$out" "config=0x18000c0" "--describe encodes a libpfm4 name"
# libpfm4 is opened at the first vendor name; a broken one is named.
nopfm=$(mktemp -d) && echo 'not an ELF file' >"$nopfm/libpfm.so.4"
out=$(LD_LIBRARY_PATH=$nopfm "$PERFSCRIPT" --describe 'INST_RETIRED.ANY' 2>&1)
like "$out" "unknown event 'INST_RETIRED.ANY' at column 1 \\(cannot load libpfm.so.4 for vendor event names: $nopfm/libpfm.so.4" \
	"a vendor name without a usable libpfm4 says why"
out=$(LD_LIBRARY_PATH=$nopfm "$PERFSCRIPT" --describe 'cpu-clok' 2>&1 | head -1)
like "$out" "did you mean 'cpu-clock'\\?\\)$" "a misspelt perf name still gets its did-you-mean, not libpfm4's failure"
rm -rf "$nopfm"
out=$(PERFSCRIPT_SYSFS=$FX/sysfs "$PERFSCRIPT" --describe 'cpu/evnt=1/' 2>&1)
like "$out" "did you mean 'event'" "a misspelt PMU term gets a did-you-mean"
out=$("$PERFSCRIPT" -e 'local t = perfmon.describe("mem:0x10:x"); print(t[1].bp_type, t[1].bp_addr, t[1].bp_len)' 2>&1)
is "$out" $'4\t16\t8' "perfmon.describe has bp_type, bp_addr, bp_len"

out=$("$PERFSCRIPT" --describe 'mem:poke_target+0x8/8:w')
like "$out" $'bp_addr=0x0\nbp_symbol=poke_target\+0x8\nbp_len=8' "--describe prints a breakpoint's symbol"
out=$("$PERFSCRIPT" -e 'print(perfmon.describe("mem:main:x")[1].bp_symbol)' 2>&1)
is "$out" "main+0x0" "perfmon.describe has bp_symbol"
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
bp_script='h = perfmon_allocate_counter(BP or "mem:poke_target:w")
probe("end", function() print(perfmon_get_counter(h)) end)'
# Whether a breakpoint fires here at all: some VMs open breakpoints but never
# trigger them (perf stat -e mem:ADDR:w counts 0 there too).
bp_fires() {
	local out wpid
	rm -f "$TMP/ready"; mkfifo "$TMP/ready"
	"$WORKLOAD" --wait-usr1 poke 10 >"$TMP/ready" &
	read -r _ wpid <"$TMP/ready"
	out=$("$PERFSCRIPT" -p "$wpid" -e "$bp_script"'
probe("begin", function() perfmon_create_context(); os.execute("kill -USR1 " .. target()) end)' 2>&1)
	wait
	[[ $out =~ ^[1-9] ]]
}
bp_why=""
if ! need_root && ((paranoid > 1)); then
	bp_why="breakpoints need root or kernel.perf_event_paranoid <= 1"
elif ! bp_fires; then
	bp_why="this machine opens hardware breakpoints but never fires them (a VM without debug registers)"
fi
if [[ -n $bp_why ]]; then
	skip "$bp_why" "-p: mem:poke_target:w counts the workload's writes"
	skip "$bp_why" "-c: mem:poke_target on a non-PIE command"
else
	rm -f "$TMP/ready"; mkfifo "$TMP/ready"
	"$WORKLOAD" --wait-usr1 poke 5000 >"$TMP/ready" &
	read -r _ wpid <"$TMP/ready"
	out=$("$PERFSCRIPT" -p "$wpid" -e "$bp_script"'
probe("begin", function() perfmon_create_context(); os.execute("kill -USR1 " .. target()) end)' 2>&1)
	wait
	is "$out" 5000 "-p: mem:poke_target:w counts the workload's 5000 writes"
	# Before exec only a non-PIE executable's symbols are its addresses. From
	# exec on, the kernel's own writes while loading it (clearing .bss) count
	# too: :u keeps the program's.
	# Built as the Makefile builds the workload, but -no-pie; gcc is in DEPS,
	# so a failure here is a failure, not a skip.
	if out=$(cc -std=c11 -D_GNU_SOURCE -O2 -no-pie -o "$TMP/workload-nopie" \
		"$ROOT/tests/workload.c" -lpthread 2>&1); then
		out=$("$PERFSCRIPT" -e 'BP = "mem:poke_target:w:u"'$'\n'"$bp_script" \
			-c "$TMP/workload-nopie poke 3000" 2>&1)
	fi
	is "$out" 3000 "-c: mem:poke_target:w:u on a non-PIE command counts its 3000 writes"
fi
if [[ $(od -An -tu2 -j16 -N2 "$WORKLOAD" | tr -d ' ') == 3 ]]; then # e_type ET_DYN
	out=$("$PERFSCRIPT" -e "$bp_script" -c "$WORKLOAD poke 10" 2>&1)
	like "$out" "the command's addresses are not known before exec \(PIE\); attach to the running process \(-p PID\)" \
		"-c: a PIE command's symbol is refused before exec"
else
	skip "the workload is not PIE here" "-c: a PIE command's symbol is refused before exec"
fi
done_testing
