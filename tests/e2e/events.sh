# events.sh: the event-name features at the command line: perfscript -l
# (text, JSON, GLOB, timing), and --describe for breakpoints, sysfs
# aliases with scale/unit/cpumask, tracepoint globs and libpfm4 names,
# against the fixture trees where the host lacks the PMU.
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
is "$(grep -c '^name=' <<<"$out")" 2 "--describe expands a tracepoint glob"
out=$(LIBPFM_FORCE_PMU=skx "$PERFSCRIPT" --describe 'INST_RETIRED:ANY_P:c=1:i')
like "$out" "config=0x18000c0" "--describe encodes a libpfm4 name"
out=$(PERFSCRIPT_SYSFS=$FX/sysfs "$PERFSCRIPT" --describe 'cpu/evnt=1/' 2>&1)
like "$out" "did you mean 'event'" "a misspelt PMU term gets a did-you-mean"
out=$("$PERFSCRIPT" -e 'local t = perfmon.describe("mem:0x10:x"); print(t[1].bp_type, t[1].bp_addr, t[1].bp_len)' 2>&1)
is "$out" $'4\t16\t8' "perfmon.describe has bp_type, bp_addr, bp_len"
done_testing
