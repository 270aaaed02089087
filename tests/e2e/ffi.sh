# ffi.sh: the LuaJIT FFI binding (bindings/perfscript.lua) over
# libperfscript.so counts for real, and the tapsets load under LuaJIT too.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

# The library exports exactly the functions its header declares: nothing of
# the internals (the sampler's backends, the parser's helpers) leaks.
exported=$(nm -D --defined-only "$ROOT/build/libperfscript.so" | awk '$2 == "T" {sub(/@.*/, "", $3); print $3}' | LC_ALL=C sort)
declared=$("$ROOT/bindings/exports.sh")
is "$(diff <(echo "$declared") <(echo "$exported") | grep '^[<>]' | tr '\n' ' ')" "" \
	"nm -D libperfscript.so equals the functions perfscript.h declares (< declared only, > exported only)"
[[ $(wc -l <<<"$exported") -gt 50 ]]; ok $? "the export list is not empty ($(wc -l <<<"$exported") functions)"
# ... and the version script lists them, each once, in its release nodes
mapped=$("$ROOT/bindings/exports.sh" --map)
is "$(diff <(echo "$declared") <(echo "$mapped") | grep '^[<>]' | tr '\n' ' ')" "" \
	"bindings/libperfscript.map lists what perfscript.h declares (< declared only, > mapped only)"
is "$(nm -D --defined-only "$ROOT/build/libperfscript.so" | awk '$2 == "T" && $3 !~ /@@PERFSCRIPT_[0-9.]+$/' | head -3)" "" \
	"every exported function carries its release's version (name@@PERFSCRIPT_0.1.0)"
# what only the binding and the CLI use is not exported: the loop, the
# session driver, HTTP (runtime/loop/loop.h)
is "$(nm -D --defined-only "$ROOT/build/libperfscript.so" | grep -cE ' ps_(loop|driver|http|http_client)__')" 0 \
	"the loop, the driver and HTTP are not in the library's ABI"
if ! command -v luajit >/dev/null; then
	skip_all "luajit is not installed (make deps installs it)" "LuaJIT FFI binding"
fi
export PERFSCRIPT_LIB="$ROOT/build/libperfscript.so" LUA_PATH="$ROOT/bindings/?.lua;$ROOT/tapsets/?.lua;;"

# The binding's C declarations are the header's: same prototypes, same
# struct layouts and enum values as the C compiler gives (tests/ffi_decls.lua),
# and the check names a copy that drifted.
out=$(cd "$ROOT" && luajit tests/ffi_decls.lua bindings/perfscript.lua bindings/perfscript.h 2>&1)
like "$out" "^ffi: ok \([0-9]+ functions, [0-9]+ structs, [0-9]+ constants\)$" "the binding's declarations equal the header's ($out)"
sed 's/^int ps_region__begin(const char \*name);/long ps_region__begin(const char *name);/;
s/char suggestion\[64\]; char message\[320\]/char suggestion[64]; char message[256]/;
s/PS_ERR_HANDLE, PS_ERR_NOT_SUPPORTED/PS_ERR_NOT_SUPPORTED, PS_ERR_HANDLE/' "$ROOT/bindings/perfscript.lua" >"$TMP/drift.lua"
out=$(cd "$ROOT" && luajit tests/ffi_decls.lua "$TMP/drift.lua" bindings/perfscript.h 2>&1); rc=$?
ok $(( rc != 0 ? 0 : 1 )) "a binding whose declarations drifted fails the check"
like "$out" "ps_region__begin differs" "it names a prototype that differs"
like "$out" "sizeof\(struct ps_event_error\) is [0-9]+ in the binding, [0-9]+ in the header" "a struct whose size differs"
like "$out" "PS_ERR_HANDLE is 4101 in the binding, 4100 in the header" "an enum constant whose value differs"
lj() { luajit -e "$1" 2>&1; }

out=$(lj 'local p = require "perfscript"; local s = assert(p.session())
local c = assert(s:counter("task-clock"))
assert(c:start()); local x = 0; for i = 1, 1e6 do x = x + i end
local v, e, r = c:read(); print(v > 0, r <= e, c:name())')
is "$out" "$(printf 'true\ttrue\ttask-clock')" "FFI: a task-clock counter on this process counts"

out=$(lj 'local p = require "perfscript"; local s = assert(p.session())
print(s:counter("task-clock,cycels"))')
like "$out" "^nil	unknown event 'cycels' at column 12 \(did you mean 'cycles'\?\)" "FFI: a bad string gives nil and the parser's message"

out=$(lj 'local p = require "perfscript"; local s = assert(p.session())
local c = assert(s:counter("instructions")); print(c:start())')
if [[ $out == nil* ]]; then
	like "$out" "not supported by this machine's PMU" "FFI: an unsupported event gives nil and the explanation"
else
	skip "this machine has a hardware PMU" "FFI: an unsupported event gives nil and the explanation"
fi

# Closed counters and sessions: misuse raises a Lua error, never a crash.
out=$(lj 'local p = require "perfscript"; local s = assert(p.session())
local c = assert(s:counter("task-clock")); c:close(); c:close()
print(tostring(c), pcall(c.name, c))
local d = assert(s:counter("page-faults")); s:close()
print(tostring(d), pcall(d.read, d))
print(pcall(s.counter, s, "task-clock"))')
is "$out" "$(printf '%s\n%s\n%s' \
	"perfscript.counter (closed)	false	attempt to use a closed counter" \
	"perfscript.counter (closed)	false	attempt to use a closed counter" \
	"false	attempt to use a closed session")" "FFI: a closed counter or session raises as in scripts, never a crash"
out=$(lj 'local p = require "perfscript"; local s = assert(p.session())
local t = { s:counter(("task-clock,"):rep(299) .. "task-clock") }
print(#t, t[300]:name())')
is "$out" "$(printf '300\ttask-clock')" "FFI: a string of 300 events gives 300 counters (no fixed limit)"

if need_root; then
	out=$(lj 'local ffi, p = require "ffi", require "perfscript"
ffi.cdef "long syscall(long n, ...);"
local r = p.measure("syscalls:sys_enter_getppid", function(n) for _ = 1, n do ffi.C.syscall(110) end return "done" end, 12345)
print(r["syscalls:sys_enter_getppid"])')
	is "$out" 12345 "FFI: perfscript.measure counts exactly 12345 getppid() calls"
	out=$(lj 'local ffi, p = require "ffi", require "perfscript"
ffi.cdef "long syscall(long n, ...);"
local s = assert(p.session()); local g = assert(s:group("{syscalls:sys_enter_getppid,task-clock}"))
assert(g:start()); for _ = 1, 1000 do ffi.C.syscall(110) end; g:stop()
local v = g:read(); print(v[1], v["task-clock"] > 0)')
	is "$out" "$(printf '1000\ttrue')" "FFI: a group reads coherently"
	out=$(lj 'local ffi, p = require "ffi", require "perfscript"
ffi.cdef "long syscall(long n, ...);"
local s = assert(p.session({ cpus = true })); local c = assert(s:counter("syscalls:sys_enter_getppid"))
assert(c:start()); assert(s:read_ahead({ c }))
for _ = 1, 1000 do ffi.C.syscall(110) end
local a, b = c:read(), c:read(); print(b - a >= 1000)')
	is "$out" true "FFI: session:read_ahead: the next read takes the value read ahead, the one after is live"
else
	skip "syscall tracepoints need root" "FFI: perfscript.measure counts exactly"
	skip "syscall tracepoints need root" "FFI: a group reads coherently"
	skip "syscall tracepoints need root" "FFI: session:read_ahead"
fi

# Groups: a start that fails says why; a group one of whose counters was
# closed raises as a closed group does (its values would no longer line up).
out=$(lj 'local p = require "perfscript"; local s = assert(p.session())
local g = assert(s:group("{task-clock,no-such-thing}"))' 2>&1)
like "$out" "unknown event 'no-such-thing'" "FFI: a bad group string gives the parser's message"
out=$(lj 'local p = require "perfscript"; local s = assert(p.session())
local g = assert(s:group("{task-clock,page-faults}")); assert(g:start())
g.counters[2]:close()
print(pcall(g.read, g)); print(pcall(g.stop, g)); print(tostring(g.counters[2]))
local h = assert(s:group("{task-clock,page-faults}")); h:close(); print(pcall(h.start, h)); print(tostring(h))')
is "$out" "$(printf '%s
' "false	attempt to use a closed group" "false	attempt to use a closed group" \
	"perfscript.counter (closed)" "false	attempt to use a closed group" "perfscript.group (closed)")" \
	"FFI: a group with a closed counter, or closed itself, raises 'attempt to use a closed group'"
if lj 'local p = require "perfscript"; local s = assert(p.session()); print(assert(s:counter("cycles")):start())' | grep -q "not supported"; then
	out=$(lj 'local p = require "perfscript"; local s = assert(p.session())
local g = assert(s:group("{task-clock,cycles}")); print(g:start())')
	like "$out" "^nil	cannot open 'cycles': not supported by this machine's PMU.*	2$" \
		"FFI: a group whose start fails returns nil, the reason and errno, as in scripts"
else
	skip "this machine has a hardware PMU" "FFI: a group whose start fails returns the reason"
fi
# Overflow counters the program drops are collected when 64 are alive: the
# library calls back into LuaJIT's collector, no collectgarbage() needed.
out=$(lj 'local p = require "perfscript"; collectgarbage("stop")
for i = 1, 200 do assert(p.overflow("task-clock/period=1000000/", function() end)) end
print("made 200")')
is "$out" "made 200" "FFI: 200 overflow counters made and dropped, 64 alive at most (reclaimed by the library's callback)"

out=$(lj 'local p = require "perfscript"; local e = assert(p.parse("{cycles,instructions}:u"))
print(#e, e[2].name, e[2].leader)')
is "$out" "$(printf '2\tinstructions:u\t1')" "FFI: parse lists the events of a string"

out=$(lj 'local stats = require "stats"; stats.autoprint(false)
local s = stats.new(); for i = 1, 100 do s:add(i) end
print(s:count(), s:sum(), s:min(), s:max())')
is "$out" "$(printf '100\t5050\t1\t100')" "the stats tapset runs under LuaJIT"

# Past `exact` distinct values: the Lua summary mode under LuaJIT, its C
# twin under perfscript; the two print the same.
summary='local stats = require "stats"; stats.autoprint(false)
local s = stats.new{ exact = 10 }; for i = 1, 3000 do s:add(i * 7919 % 3001 - 700) end
print(s:count(), s:sum(), s:min(), s:max(), ("%.17g"):format(s:variance())); io.write(s:hist_log())'
out=$(lj "$summary")
like "$out" "^3000	" "the stats tapset's summary mode runs under LuaJIT"
is "$out" "$("$PERFSCRIPT" -e "$summary" 2>&1)" "LuaJIT's summary mode prints what perfscript's C one does"
done_testing
