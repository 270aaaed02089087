# stacks.sh: profiles of real programs built as distributions build them
# (-O2, no frame pointers; tests/progs/), checked against perf where it is
# installed: DWARF unwinding reaches main, C++ names read as c++filt prints
# them, a stripped library's rows are file+offset as perf report prints
# them, inlined code shows its inline frame and source line, a JIT's perf
# map names its code, the vDSO is named, and a -p target that exits early
# keeps its symbols.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EX=$ROOT/examples
B=$ROOT/build/tests
PROFILE=("$PERFSCRIPT" "$EX/profile.lua")

# perf, when it is here and can sample (cpu-clock needs no PMU).
have_perf() {
	command -v perf >/dev/null && perf record -q -e cpu-clock -o "$TMP/probe.data" true >/dev/null 2>&1
}

# The folded lines (stack count) of FILE whose stack ends in LEAF, and how
# many of those samples have PATH (a ;-separated run of frames) in them.
leaf_share() { # file leaf path -> "with total"
	awk -v leaf="$2" -v path="$3" '{
		n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		if (s !~ (";" leaf "$")) next
		total += n; if (index(s, path)) with += n
	} END { print with + 0, total + 0 }' "$1"
}

# ---- DWARF unwinding: chain_leaf's samples unwind to main ----
"${PROFILE[@]}" -c "$B/chain 400" --call-graph dwarf --folded "$TMP/dwarf.folded" >"$TMP/dwarf.out" 2>&1
ok $? "profile.lua --call-graph dwarf runs on a -O2 program without frame pointers"
read -r with total < <(leaf_share "$TMP/dwarf.folded" chain_leaf "main;chain_outer;chain_middle;chain_leaf")
diag "call-graph=dwarf: $with of $total chain_leaf samples unwind to main"
((total >= 50 && with * 100 >= total * 90)); ok $? "call-graph=dwarf: >= 90% of leaf samples unwind to main ($with of $total)"
"${PROFILE[@]}" -c "$B/chain 400" --call-graph fp --folded "$TMP/fp.folded" >/dev/null 2>&1
read -r fwith ftotal < <(leaf_share "$TMP/fp.folded" chain_leaf "main;chain_outer;chain_middle;chain_leaf")
diag "call-graph=fp on the same program: $fwith of $ftotal reach main (no frame pointers)"
if have_perf; then
	perf record -q -F 999 --call-graph dwarf -o "$TMP/chain.data" -- "$B/chain" 400 >/dev/null 2>&1
	perf script -i "$TMP/chain.data" -F ip,sym 2>/dev/null | awk '
		/^$/ { if (n) { for (i = n; i >= 1; i--) s = s (i < n ? ";" : "") f[i]; c[s]++ } n = 0; s = ""; next }
		{ f[++n] = $2 } END { for (k in c) print "x;" k, c[k] }' >"$TMP/perf.folded"
	read -r pwith ptotal < <(leaf_share "$TMP/perf.folded" chain_leaf "main;chain_outer;chain_middle;chain_leaf")
	diag "perf record --call-graph dwarf: $pwith of $ptotal chain_leaf samples unwind to main"
	((ptotal > 0 && with * 100 * ptotal >= (pwith * 100 - 5 * ptotal) * total)); ok $? "perfscript's share is within 5 points of perf's or better ($with/$total vs $pwith/$ptotal)"
else
	skip "perf is not installed or cannot sample here" "dwarf unwinding compared with perf record --call-graph dwarf"
fi

# ---- C++: names as c++filt prints them, in every view ----
mapfile -t want < <(nm "$B/cxxprog" | awk '/ [tTwW] _Z.*(Accum|geopl)/ {print $3}' | c++filt)
((${#want[@]} == 2)); ok $? "cxxprog has the two C++ functions to look for (${#want[@]})"
"${PROFILE[@]}" -c "$B/cxxprog 300" --call-graph dwarf --folded "$TMP/cxx.folded" --top 5 >"$TMP/cxx.out" 2>&1
for w in "${want[@]}"; do
	grep -qxF "$w" <(sed -n 's/^ *[0-9]\+ \+[0-9.]\+%  \[[.k]\] //p' "$TMP/cxx.out"); ok $? "top list row equals c++filt: $w"
	grep -qF ";$w " "$TMP/cxx.folded"; ok $? "folded stacks carry it as c++filt prints it"
done
out=$("$PERFSCRIPT" --no-demangle "$EX/profile.lua" -c "$B/cxxprog 200" --top 2 2>&1)
like "$out" "_ZNK3geo6detail5AccumIdE3runE" "--no-demangle shows the mangled names"
if need_root; then
	out=$("$PERFSCRIPT" -c "$B/cxxprog 300" -e '
prof = perfmon_allocate_counter("cpu-clock/period=1000000/")
local agg = assert(perfmon.aggregate(prof, { by = { "ip" } }))
probe("end", function() for k, n in pairs(agg:read()) do print(n, k) end end)' 2>&1)
	for w in "${want[@]}"; do
		grep -qF "$(printf '\t')$w" <<<"$out"; ok $? "aggregate keys equal c++filt: ${w:0:40}..."
	done
else
	skip "BPF aggregation needs root" "aggregate keys equal c++filt"
	skip "BPF aggregation needs root" "aggregate keys equal c++filt"
fi

# ---- a stripped library: file+offset, the offsets perf report prints ----
rows() { sed -n 's/^ *[0-9]\+ \+\([0-9.]\+\)%  \[\.\] libhot\.so+0x\([0-9a-f]\+\)$/\2 \1/p' "$1"; }
if have_perf; then
	# One run under both: perf records perfscript's child as perfscript samples it.
	perf record -q -F 999 -o "$TMP/hot.data" -- "${PROFILE[@]}" -c "$B/usehot 400" --top 10 -o "$TMP/hot.out" 2>/dev/null
	perf report -i "$TMP/hot.data" --stdio --comms usehot --dsos libhot.so --sort sym 2>/dev/null |
		sed -n 's/^ *\([0-9.]\+\)% .*\[\.\] 0x0*\([0-9a-f]\+\)$/\2 \1/p' >"$TMP/perf.rows"
else
	"${PROFILE[@]}" -c "$B/usehot 400" --top 10 -o "$TMP/hot.out" 2>/dev/null
fi
top=$(rows "$TMP/hot.out" | head -1 | cut -d' ' -f1)
[[ -n $top ]]; ok $? "the stripped library's hot code is a libhot.so+0xOFF row (0x$top)"
if have_perf && [[ -s $TMP/perf.rows ]]; then
	ptop=$(head -1 "$TMP/perf.rows" | cut -d' ' -f1)
	is "$top" "$ptop" "its offset is the one perf report prints first for the same run"
	missing=$(rows "$TMP/hot.out" | awk '$2 >= 5 {print $1}' | grep -vxFf <(cut -d' ' -f1 "$TMP/perf.rows"))
	[[ -z $missing ]]; ok $? "every libhot.so row over 5% is an offset perf report shows ($missing)"
else
	skip "perf is not installed or cannot sample here" "offsets equal perf report's"
	skip "perf is not installed or cannot sample here" "offsets equal perf report's"
fi
out=$("${PROFILE[@]}" -c "$B/usehot 300" --sort dso --top 1 2>&1)
like "$out" $'dso\n +[0-9]+ +[0-9.]+%  libhot\\.so$' "--sort dso: libhot.so tops the per-file view"

# ---- inlined code: the inline frame and its source line ----
mix_line=$(grep -n 'MIX_LINE' "$ROOT/tests/progs/inline.c" | cut -d: -f1)
call_line=$(grep -n 'CALL_LINE' "$ROOT/tests/progs/inline.c" | cut -d: -f1)
loop_line=$(grep -n 'MIX_LOOP' "$ROOT/tests/progs/inline.c" | cut -d: -f1)
out=$("${PROFILE[@]}" -c "$B/inline 300" --inline --top 1 2>&1)
like "$out" '%  \[\.\] mix \(inlined\)$' "--inline: the hot function is mix, inlined"
out=$("${PROFILE[@]}" -c "$B/inline 300" --lines --top 3 2>&1)
like "$out" "%  \\[\\.\\] inline\\.c:$mix_line" "--lines: the hot line is mix's loop body (inline.c:$mix_line)"
"${PROFILE[@]}" -c "$B/inline 300" --inline --call-graph dwarf --folded "$TMP/inl.folded" >/dev/null 2>&1
grep -q ";main;crunch;mix (inlined) " "$TMP/inl.folded"; ok $? "folded stacks with --inline: main;crunch;mix (inlined)"
out=$("$PERFSCRIPT" -c "$B/inline 200" -e '
c = perfmon_allocate_counter("cpu-clock/freq=999/")
local lines = {}
probe("perfmon.sample(c)", function(s) if s.srcline then lines[s.srcline] = (lines[s.srcline] or 0) + 1 end end)
probe("end", function()
  local best, n = nil, 0
  for l, k in pairs(lines) do if k > n then best, n = l, k end end
  local f = perfmon.frames(target(), 0, false) -- an unmapped address: one frame, no line
  print(best, f[1].srcline, #f)
end)' 2>&1)
# the hottest line is mix's loop or its body (inlined: which one wins
# varies with the compiler's line table), or the call site
like "$out" "^inline\\.c:($loop_line|$mix_line|$call_line)"$'\tnil\t1$' "s.srcline names the source line of a live sample (inline.c:$loop_line, $mix_line or $call_line)"

# ---- a JIT's /tmp/perf-PID.map ----
if [[ $(uname -m) == x86_64 ]]; then
	out=$("$PERFSCRIPT" -c "$B/jit 300" -e '
c = perfmon_allocate_counter("cpu-clock/freq=999/")
local p = require("profile").new()
probe("perfmon.sample(c)", function(s) p:add(s) end)
probe("end", function() print(target()); print(p:top(1)[1].key) end)' 2>&1 | grep -v '^ready ')
	rm -f "/tmp/perf-$(head -1 <<<"$out").map"
	is "$(sed -n 2p <<<"$out")" "jit_hot_loop" "code a JIT lists in its perf map is named"
else
	skip "the test JIT writes x86-64 code" "JIT perf map"
fi

# ---- the vDSO ----
out=$("${PROFILE[@]}" -c "$B/clockspin 300" --sort dso --top 3 2>&1)
like "$out" '%  \[vdso\]' "a clock_gettime loop spends its time in [vdso]"
out=$("${PROFILE[@]}" -c "$B/clockspin 300" --top 10 2>&1)
like "$out" '%  \[\.\] __vdso_clock_gettime' "the vDSO's functions are named (__vdso_clock_gettime), as perf names them"

# ---- -p: a target that exits before the session ends keeps its symbols ----
"$B/chain" 300 &
cpid=$!
out=$("${PROFILE[@]}" -p "$cpid" -T 1.5 --top 3 2>&1)
wait "$cpid"
like "$out" '%  \[\.\] chain_leaf' "-p: the target exited first, its samples still name chain_leaf"

# The top list marks rows as perf report does: [k] kernel, [.] user.
out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD pages 30000" --top 50 2>&1)
like "$out" $'\n +[0-9]+ +[0-9.]+%  \\[k\\] (clear_page|exc_page_fault|asm_exc_page_fault)' "page faults are [k] rows"
# (a CPU-bound program for that one: the page toucher's own code gets a
# sample or none, under load)
out2=$("$PERFSCRIPT" "$EX/profile.lua" -c "$B/chain 200" --top 5 2>&1)
like "$out2" $'\n +[0-9]+ +[0-9.]+%  \\[\\.\\] chain_leaf($|\n)' "the program's own code is a [.] row"
bad=$(grep -cE '^ +[0-9]+ +[0-9.]+%  ' <<<"$out" | awk '{ print $1 }')
marked=$(grep -cE '^ +[0-9]+ +[0-9.]+%  \[[.k]\] ' <<<"$out")
is "$marked" "$bad" "every row has its mark"

# An address in no mapping (a frame-pointer walk's garbage) keeps its hex
# form as sym and is counted, folded and put in pprof as "[unknown]", as
# perf names it, rather than one row per stray address.
out=$("$PERFSCRIPT" -e 'local pid = io.open("/proc/self/stat"):read("n")
print(perfmon.symbolize(pid, 16)); print(perfmon.frames(pid, 16)[1].func)')
is "$out" $'0x10\t[unknown]\t[unknown]\n[unknown]' "an address in no mapping: sym 0x10, counted and framed as [unknown]"

# perfmon.symbolize of a process no records follow reads its maps from
# /proc once; an address in a library it loaded since (dlopen) is found
# by reading them again on the miss, as perf report would name it
python3 -c '
import os, sys, time
open(sys.argv[1] + "/ready", "w").close()
while not os.path.exists(sys.argv[1] + "/go"): time.sleep(0.01)
import _ctypes
open(sys.argv[1] + "/loaded", "w").close()
time.sleep(60)' "$TMP" &
py=$!
out=$("$PERFSCRIPT" -e '
local pid, dir = tonumber(arg[1]), arg[2]
local function text_of(pat)
  for l in io.lines("/proc/" .. pid .. "/maps") do
    local a = l:match("^(%x+)%-%x+ r%-xp .*" .. pat)
    if a then return tonumber(a, 16) end
  end
end
-- python3 may be a launcher that execs the interpreter: wait for it
while not io.open(dir .. "/ready") do os.execute("sleep 0.01") end
local before = perfmon.symbolize(pid, text_of("libc%.so") + 0x1000)
io.open(dir .. "/go", "w"):close()
while not io.open(dir .. "/loaded") do os.execute("sleep 0.05") end
local a = text_of("_ctypes")
local name, file = perfmon.symbolize(pid, a + 0x2000)
print(before:match("^[%a_]") and "named" or before, name, file, perfmon.mapping(pid, a + 0x2000).file)' -- "$py" "$TMP" 2>&1)
kill "$py" 2>/dev/null
like "$out" $'^named\t[A-Za-z_][A-Za-z_0-9.]*\+0x[0-9a-f]+\t[^\t]*_ctypes[^\t]*\.so\t[^\t]*_ctypes' \
	"perfmon.symbolize names an address in a library the process loaded after its maps were read ($out)"
# a pid gone from /proc: an address in it is [unknown], asked twice (the
# second miss does not read /proc again at once)
sh -c 'exit 0' &
gone=$!
wait "$gone"
out=$("$PERFSCRIPT" -e 'local pid = tonumber(arg[1])
for _ = 1, 2 do
  local sym, dso, func = perfmon.symbolize(pid, 0x401000)
  print(sym, dso, func, perfmon.mapping(pid, 0x401000))
end' -- "$gone" 2>&1)
is "$out" $'0x401000\t[unknown]\t[unknown]\tnil\n0x401000\t[unknown]\t[unknown]\tnil' \
	"perfmon.symbolize of a pid that is gone: [unknown], no error"

done_testing
