# regions.sh: self-monitoring from scripts and LuaJIT: perfmon.time() is the
# clock samples carry, and the FFI binding reads the same clock.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PS=${PERFSCRIPT:-$ROOT/perfscript}

# A sample's time is taken before its handler runs, on the same clock: the
# handler's perfmon.time() is later, and by less than a second (a realtime
# or sched_clock reading would be off by years or by the boot offset).
out=$("$PS" -e 'c = perfmon.counter("syscalls:sys_enter_getppid/period=1/")
n, bad = 0, 0
probe("perfmon.sample(c)", function(s)
  local d = perfmon.time() - s.time
  n = n + 1
  if d < 0 or d > 1e9 then bad = bad + 1; print("off by", d) end
end)
probe("end", function() print(n, bad, (perfmon.time_source())) end)' -c "$WORKLOAD getppid 100" 2>&1)
like "$out" "^100	0	(tsc|clock_gettime)$" "perfmon.time() follows each of 100 sample times within 1 s, never before ($out)"

if command -v luajit >/dev/null; then
	export PERFSCRIPT_LIB="$ROOT/build/libperfscript.so" LUA_PATH="$ROOT/bindings/?.lua;;"
	# The two readings bracket a perfscript reading: one clock across processes.
	a=$(luajit -e 'print(require("perfscript").time())')
	b=$("$PS" -e 'print(perfmon.time())')
	c=$(luajit -e 'local p = require "perfscript"; print(p.time(), (p.time_source()))')
	ok $([[ $a -le $b && $b -le ${c%%	*} ]]; echo $?) "FFI perfscript.time() and perfmon.time() read one clock ($a <= $b <= ${c%%	*})"
	like "${c#*	}" "^(tsc|clock_gettime)$" "FFI perfscript.time_source() names the path"
else
	skip "luajit is not installed (make deps installs it)" "FFI perfscript.time()"
	skip "luajit is not installed (make deps installs it)" "FFI perfscript.time_source()"
fi
done_testing
