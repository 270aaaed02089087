# regions.sh: self-monitoring from scripts and LuaJIT: perfmon.time() is the
# clock samples carry, and the FFI binding reads the same clock; code
# regions (perfmon.region, perfmon.regions, and the FFI binding's same
# names) count a region's N getppid calls and N touched pages exactly,
# nest, count calls, and report as table, CSV and JSON at exit.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PS=${PERFSCRIPT:-$ROOT/perfscript}
EX=$ROOT/examples

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

# Regions in a script: pid() is one getpid syscall (glibc caches nothing),
# so a region around N pid() calls counts exactly N sys_enter_getpid.
N=2000
out=$(PERFSCRIPT_REPORT=csv "$PS" -e '
local r = assert(perfmon.regions("syscalls:sys_enter_getpid,page-faults"))
r:start("outer")
for _ = 1, 3 do
  perfmon.region("inner", function(n) for _ = 1, n do pid() end end, '$N')
end
r:start("pages"); local s = string.rep("x", '$N' * 4096); r:stop("pages")
r:stop("outer")
print("misuse", pcall(r.stop, r, "outer"))
print("error", pcall(perfmon.region, "bad", function() error("boom", 0) end))
local i, o = r:read("inner"), r:read("outer")
print("inner", i.calls, i["syscalls:sys_enter_getpid"])
print("outer", o.calls, o["syscalls:sys_enter_getpid"])
print("pages", r:read("pages")["page-faults"] >= '$N', #s)
print("second set", perfmon.regions("task-clock"))' 2>&1)
like "$out" "misuse	false	regions: end of 'outer' with no region open" "Lua: an end with no region open raises, naming the region"
like "$out" "error	false	boom" "Lua: perfmon.region passes fn's error on"
like "$out" "inner	3	$((3 * N))" "Lua: inner: 3 calls, exactly 3 x $N getpid"
like "$out" "outer	1	$((3 * N))" "Lua: outer includes inner: 1 call, 3 x $N getpid"
like "$out" "pages	true" "Lua: a region writing $N pages counts at least $N page faults"
like "$out" "second set	nil	regions already count" "Lua: a second event set is refused with a message"
is "$(grep '^region,' <<<"$out")" "region,tid,calls,syscalls:sys_enter_getpid,page-faults" "Lua: PERFSCRIPT_REPORT=csv reports at exit"
like "$(grep '^inner,' <<<"$out")" "^inner,[0-9]+,3,$((3 * N)),0$" "Lua: the CSV row of inner"

if command -v luajit >/dev/null; then
	# The LuaJIT program: N getppid calls and N fresh pages, exact.
	out=$(PERFSCRIPT_EVENTS="syscalls:sys_enter_getppid,page-faults" PERFSCRIPT_REPORT=json luajit -e '
local p = require "perfscript"
local ffi = require "ffi"
ffi.cdef [[ int getppid(void);
  void *mmap(void *, size_t, int, int, int, long); int munmap(void *, size_t);
  int madvise(void *, size_t, int); ]]
local N, PG = '$N', 4096
local function touch(n)
  local m = ffi.cast("char *", ffi.C.mmap(nil, n * PG, 3, 0x22, -1, 0))   -- RW, PRIVATE|ANON
  ffi.C.madvise(m, n * PG, 15)                                            -- MADV_NOHUGEPAGE
  for i = 0, n - 1 do m[i * PG] = 1 end
  ffi.C.munmap(m, n * PG)
end
local function work() for _ = 1, N do ffi.C.getppid() end; touch(N) end
local r = assert(p.regions())        -- the set from PERFSCRIPT_EVENTS
work()                                 -- traces compiled (their pages faulted) outside regions
for _ = 1, 3 do
  r:start("outer")
  p.region("inner", work)
  r:stop("outer")
end
print("misuse", pcall(r.stop, r, "outer"))
local i, o = r:read("inner"), r:read("outer")
print("inner", i.calls, i["syscalls:sys_enter_getppid"], i["page-faults"])
print("outer", o.calls, o["syscalls:sys_enter_getppid"])' 2>&1)
	like "$out" "inner	3	$((3 * N))	$((3 * N))" "LuaJIT: inner: 3 calls, exactly 3 x $N getppid and 3 x $N page faults"
	like "$out" "outer	3	$((3 * N))" "LuaJIT: outer includes inner"
	like "$out" "misuse	false	regions: end of 'outer' with no region open" "LuaJIT: misuse raises the same message"
	like "$out" '"region":"inner","tid":[0-9]+,"calls":3,"values":\{"syscalls:sys_enter_getppid":'$((3 * N))',"page-faults":'$((3 * N))'\}' \
		"LuaJIT: PERFSCRIPT_REPORT=json reports at exit"
	json=$(sed -n '/^{"events"/,/^]}/p' <<<"$out")
	ok $(python3 -c 'import json,sys; json.loads(sys.stdin.read())' <<<"$json" >/dev/null 2>&1; echo $?) "LuaJIT: the JSON report parses"
else
	for t in counts nesting misuse json parses; do skip "luajit is not installed (make deps installs it)" "LuaJIT regions: $t"; done
fi
# A first begin with no set chosen takes $PERFSCRIPT_EVENTS, and the thread
# has one row (the set is opened once, by the begin's own init).
out=$(PERFSCRIPT_EVENTS=syscalls:sys_enter_getpid PERFSCRIPT_REPORT=csv "$PS" -e '
perfmon.region("first", function() for _ = 1, 77 do pid() end end)' 2>&1)
is "$out" "region,tid,calls,syscalls:sys_enter_getpid
$(grep -o '^first,[0-9]*,' <<<"$out")1,77" "a first perfmon.region takes PERFSCRIPT_EVENTS: one row, 77 getpid"

# The examples: the script and the C program report their regions at exit.
out=$("$PS" "$EX/regions.lua" task-clock,page-faults 2>&1)
ok $? "examples/regions.lua runs"
like "$out" "fill: [1-9][0-9]* page faults" "examples/regions.lua reads a region"
like "$(grep '^sum ' <<<"$out")" "^sum +[0-9]+ +3 +[1-9][0-9]* +0$" "examples/regions.lua: sum ran 3 times, no page faults, at exit"
if cc -I"$ROOT/bindings" -o "$ROOT/build/tests/regions_example" "$ROOT/examples/regions.c" "$ROOT/build/libperfscript.a" \
	-ldw -lelf -lbpf -lpfm -liberty -ldl -lyaml -lcrypt -lm -lpthread 2>&1; then
	out=$(PERFSCRIPT_EVENTS=task-clock,page-faults PERFSCRIPT_REPORT=csv "$ROOT/build/tests/regions_example" 2>&1)
	like "$(grep '^scan,' <<<"$out")" "^scan,[0-9]+,3,[1-9][0-9]*,0$" "examples/regions.c: scan 3 times, no page faults"
	like "$(grep '^alloc,' <<<"$out")" "^alloc,[0-9]+,1,[1-9][0-9]*,[0-9]{4,}$" "examples/regions.c: alloc faults its 64 MB in"
else
	ok 1 "examples/regions.c builds"; ok 1 "examples/regions.c runs"
fi
# Nesting deeper than 64: the limit in words, not the counter limit's.
out=$("$PERFSCRIPT" -e 'local r = perfmon.regions()
for i = 1, 65 do local ok, e = pcall(r.start, r, "r" .. i); if not ok then print(i, e) break end end' 2>/dev/null)
is "$out" "65	regions: 'r65' would be the 65th open region of this thread: regions nest at most 64 deep (end one first)" \
	"a 65th nested region is refused, saying the nesting limit"
done_testing
