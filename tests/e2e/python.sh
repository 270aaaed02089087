# python.sh: CPython's frames in native profiles (python = true on a sample
# probe, profile.lua --python): on every CPython 3.10-3.13 of the machine
# (Debian's and pyenv's), a six-deep Python chain whose leaf calls into C
# (an extension built here against that CPython's headers, and zlib) is
# shown frame by frame in place of the eval loop, with the C above and
# Py_RunMain below; the layout table against each version's own headers;
# -p on a running interpreter; each thread's own chain; the script's lines
# in pprof; a native program's profile without Python frames; a version
# the table does not know gets native stacks and one line saying so.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
EX=examples

if ! need_root || [[ ! -r /sys/kernel/btf/vmlinux ]]; then
	skip_all "Python frames are read by a BPF program: needs root and BTF" "Python frames"
fi

# The CPythons here, each with its headers (for the extension and the
# layout check): Debian's python3.11 and pyenv's builds.
pythons=()
for py in /usr/bin/python3.1[0-9] "$HOME"/.pyenv/versions/3.1[0-9]*/bin/python3.1[0-9]; do
	[[ -x $py ]] || continue
	inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
	if [[ ! -r $inc/Python.h || ! -r $inc/internal/pycore_runtime.h ]]; then
		skip "$py has no headers at $inc (python3-dev)" "$py: Python frames"
		continue
	fi
	pythons+=("$py")
done
[[ ${#pythons[@]} -gt 0 ]] || skip_all "no CPython with its headers here (python3-dev)" "Python frames"

cat >"$TMP/chain.py" <<'EOF'
import os, sys, time, zlib
sys.path.insert(0, sys.argv[2])
import pyext
data = bytes(range(256)) * 2048
def f6(i):
    if i % 2:
        return pyext.spin(2000000)
    return zlib.compress(data, 6)
def f5(i): return f6(i)
def f4(i): return f5(i)
def f3(i): return f4(i)
def f2(i): return f3(i)
def f1(i): return f2(i)
if len(sys.argv) > 3:  # for -p: up for argv[3] s, then at work once argv[4] exists
    time.sleep(float(sys.argv[3]))
    print("running", flush=True)
    while not os.path.exists(sys.argv[4]):
        time.sleep(0.01)
# seconds of its own CPU time, so that a loaded machine gives as many samples
end, i = time.process_time() + float(sys.argv[1]), 0
while time.process_time() < end:
    f1(i)
    i += 1
EOF

# Samples of the script's run (under Py_RunMain), and of those how many
# have the six frames in order between Py_RunMain and the C function;
# the lines the C calls were made from.
cat >"$TMP/check.lua" <<'EOF'
local c = perfmon.counter("cpu-clock/freq=199,call-graph=dwarf/")
local n, good, ext, zlib, lines = 0, 0, 0, 0, {}
local six = "Py_RunMain;.-py::f1:[^;]*chain%.py;.-py::f2:[^;]*;.-py::f3:[^;]*;.-py::f4:[^;]*;" ..
            ".-py::f5:[^;]*;.-py::f6:[^;]*chain%.py;.-"
probe(c, function(s)
  local f = s:folded()
  if not f:find(";Py_RunMain;") then return end
  n = n + 1
  local e, z = f:find(six .. "spin_in_c"), f:find(six .. "deflate")
  if e or z then
    good = good + 1
    ext, zlib = ext + (e and 1 or 0), zlib + (z and 1 or 0)
    for _, a in ipairs(s.callchain) do
      local fr = perfmon.frames(s.pid, a)[1]
      if fr.func:match("^py::f6:") then lines[fr.srcline] = true end
    end
  end
end, { python = true })
probe("end", function()
  local l = {}
  for k in pairs(lines) do l[#l + 1] = k end
  table.sort(l)
  print(("good %d of %d ext %d zlib %d lines %s"):format(good, n, ext, zlib, table.concat(l, ",")))
end)
EOF

# the walker's table, as the library has it (not a Lua API: a unit test's dump)
layouts=$("$(dirname "$0")/../../build/tests/test_pylayout" --dump)

dir_of() { # the python -> its work directory (the extension built there)
	echo "$TMP/$(basename "$(dirname "$(dirname "$1")")")-$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
}
build_ext() { # python include-dir: the extension, in the python's directory
	mkdir -p "$(dir_of "$1")"
	gcc -shared -fPIC -O2 -I"$2" -o "$(dir_of "$1")/pyext.so" tests/progs/pyext.c
}
# The first python3 of the list starts now, for -p below: it is up for
# two seconds (while the others are tested), then waits for perfscript to
# attach before it goes to work.
py=${pythons[0]}
build_ext "$py" "$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
"$py" "$TMP/chain.py" 30 "$(dir_of "$py")" 2 "$TMP/go" >"$TMP/running" 2>&1 &
pid=$!

for py in "${pythons[@]}"; do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
	d=$(dir_of "$py")
	mkdir -p "$d"
	# the table's row is what this CPython's own headers say
	gcc -w -I"$inc" -o "$d/pyoffsets" tests/progs/pyoffsets.c && want=$("$d/pyoffsets")
	is "$(grep "^$v " <<<"$layouts")" "$want" "$py: the layout table's row for $v is its headers' offsets"
	[[ -f $d/pyext.so ]] || build_ext "$py" "$inc"
	"$PERFSCRIPT" "$TMP/check.lua" -c "$py $TMP/chain.py 0.5 $d" >"$d/out" 2>&1
	read -r _ good _ n _ ext _ zlib _ lines < <(grep '^good' "$d/out")
	# >= 95% on a quiet machine; 93-94.6% under the parallel suite's load
	# (the clean-clone CI saw 56 of 60), where a few stacks come short
	ok "$(awk -v g="${good:-0}" -v n="${n:-0}" 'BEGIN { exit !(n >= 40 && g >= 0.9 * n) }'; echo $?)" \
		"$py: $good of $n samples show f1..f6 between Py_RunMain and the C function (>= 90%)"
	# both C functions show up (their shares vary with the machine's load)
	ok "$( ((${ext:-0} >= 2 && ${zlib:-0} >= 2)); echo $?)" \
		"$py: the extension's C function ($ext) and zlib's deflate ($zlib) under the six frames"
	is "$lines" "chain.py:7,chain.py:8" "$py: f6's frames are at the lines of its two calls"
done

# The first python3 of the list: a process running for a while before
# perfscript starts (-p), and its profile.lua --python outputs.
py=${pythons[0]}
d=$(dir_of "$py")
wait_line "$TMP/running" "^running" >/dev/null
"$PERFSCRIPT" -v -T 0.8 "$TMP/check.lua" -p "$pid" >"$TMP/p.out" 2>"$TMP/p.err" &
ps_pid=$!
wait_for "$TMP/p.err" "session started" 10
touch "$TMP/go"
wait "$ps_pid"
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
read -r _ good _ n _ < <(grep '^good' "$TMP/p.out")
# 2 s of wall time: beside busy suites the process gets a share of a CPU,
# so the samples are fewer (23 seen in a loaded run); their share counts
ok "$(awk -v g="${good:-0}" -v n="${n:-0}" 'BEGIN { exit !(n >= 10 && g >= 0.9 * n) }'; echo $?)" \
	"-p on a $py running for 2 s: $good of $n samples with the six frames"

"$PERFSCRIPT" "$EX/profile.lua" --python --folded "$TMP/f.folded" --pprof "$TMP/p.pb.gz" \
	-c "$py $TMP/chain.py 0.8 $d" >"$TMP/prof.out" 2>&1
like "$(sort -t' ' -k2 -nr "$TMP/f.folded" | head -1)" \
	"^python[0-9.]*;.*Py_RunMain;.*py::<module>:[^;]*chain.py;py::f1:[^;]*chain.py;.*py::f6:[^;]*chain.py;" \
	"profile.lua --python --folded: the Python frames root first, in place of the eval loop"
like "$(sed -n 4p "$TMP/prof.out")" "^ *[0-9]+ +[0-9.]+%  \[\.\] py::f6:[^ ]*chain.py$" \
	"profile.lua --python: the top row is the innermost Python function"
"$PERFSCRIPT" "$EX/profile.lua" --python --lines -c "$py $TMP/chain.py 0.6 $d" --top 3 >"$TMP/lines.out" 2>&1
like "$(sed -n 4,5p "$TMP/lines.out" | sort)" "chain.py:7.*chain.py:8|chain.py:8.*chain.py:7" \
	"profile.lua --python --lines: the top rows are f6's two lines of the script"
if command -v go >/dev/null; then
	pprof_tool -top -lines "$TMP/p.pb.gz" >"$TMP/pprof.top" 2>&1
	like "$(grep -c 'py::f[1-6]:.*chain.py .*chain.py:[0-9]' "$TMP/pprof.top")" "^([6-9]|[1-9][0-9]+)$" \
		"go tool pprof -lines reads a Function and a Line of the script for each Python frame"
else
	skip "go tool pprof is not installed (golang-go)" "pprof Python frames"
fi

# Threads: each thread's samples carry its own chain.
cat >"$TMP/threads.py" <<'EOF'
import sys, threading, time, zlib
sys.path.insert(0, sys.argv[2])
import pyext
data = bytes(range(256)) * 2048
def ta3(): return zlib.compress(data, 6)
def ta2(): return ta3()
def ta1(end):
    while time.time() < end: ta2()
def tb3(): return pyext.spin(2000000)
def tb2(): return tb3()
def tb1(end):
    while time.time() < end: tb2()
end = time.time() + float(sys.argv[1])
ts = [threading.Thread(target=ta1, args=(end,), name="a"), threading.Thread(target=tb1, args=(end,), name="b")]
for t in ts: t.start()
for t in ts: t.join()
EOF
"$PERFSCRIPT" "$EX/profile.lua" --python --folded "$TMP/t.folded" -c "$py $TMP/threads.py 0.8 $d" >/dev/null 2>&1
count() { awk -v re="$1" '$0 ~ re { s += $NF } END { print s + 0 }' "$TMP/t.folded"; }
a=$(count 'py::ta1:[^;]*;py::ta2:[^;]*;py::ta3:[^;]*;.*deflate')
b=$(count 'py::tb1:[^;]*;py::tb2:[^;]*;py::tb3:[^;]*;.*spin_in_c')
mixed=$(count 'py::t[ab][123].*py::t[ab][123].*py::t[ab][123].*py::t[ab]')
ok "$( ((a >= 40 && b >= 40 && mixed == 0)); echo $?)" \
	"threads: $a samples of thread a's chain, $b of thread b's, none mixing the two"

# A native program's profile has no Python frame and the same stacks.
"$PERFSCRIPT" "$EX/profile.lua" --python --folded "$TMP/n.folded" -c "build/tests/chain 300" >/dev/null 2>&1
"$PERFSCRIPT" "$EX/profile.lua" --call-graph dwarf --folded "$TMP/n0.folded" -c "build/tests/chain 300" >/dev/null 2>&1
top() { sort -t' ' -k2 -nr "$1" | head -1 | sed 's/ [0-9]*$//'; }
is "$(grep -c 'py::' "$TMP/n.folded")" "0" "a native program: no Python frame"
is "$(top "$TMP/n.folded")" "$(top "$TMP/n0.folded")" "a native program: the same top stack with --python as without"

# Cross-check against the interpreter's own view: a thread of the script
# samples sys._current_frames() of the main thread, which spends its time
# in a() and b() (about 3 to 1); the share of a() among the main thread's
# samples of the profile and among the script's own samples agree. That
# sampler sees the main thread only where it hands over the GIL, which a
# loaded machine skews (0.699 against the profile's 0.816 once in CI), so
# the exact reference is the main thread's own CPU time in each
# (time.thread_time around the calls): the profile's share is within 0.1
# of it, and within 0.15 of the sampler's.
cat >"$TMP/cross.py" <<'PYEOF'
import sys, threading, time
def a():
    x = 0
    for i in range(30000): x += i
def b():
    x = 0
    for i in range(10000): x += i
seen = {"a": 0, "b": 0}
main, stop = threading.get_ident(), False
def sampler():
    while not stop:
        f = sys._current_frames().get(main)
        if f is not None and f.f_code.co_name in seen: seen[f.f_code.co_name] += 1
        time.sleep(0.001)
t = threading.Thread(target=sampler); t.start()
end, ta, tb = time.time() + 1.5, 0.0, 0.0
while time.time() < end:
    t0 = time.thread_time(); a(); t1 = time.thread_time(); b(); t2 = time.thread_time()
    ta += t1 - t0; tb += t2 - t1
stop = True; t.join()
print("%.3f %d %.3f" % (seen["a"] / max(1, seen["a"] + seen["b"]), seen["a"] + seen["b"], ta / (ta + tb)))
PYEOF
"$PERFSCRIPT" -e '
local c = perfmon.counter("cpu-clock/freq=499,call-graph=dwarf/")
local n = { a = 0, b = 0 }
probe(c, function(s)
  if s.tid ~= s.pid or not s.pyip then return end
  local _, _, func = perfmon.symbolize(s.pid, s.pyip)
  local f = func:match("^py::(%w+):")
  if n[f] then n[f] = n[f] + 1 end
end, { python = true })
probe("end", function() io.stderr:write(("%.3f %d\n"):format(n.a / math.max(1, n.a + n.b), n.a + n.b)) end)' \
	-c "${pythons[0]} $TMP/cross.py" >"$TMP/cross.own" 2>"$TMP/cross.prof"
read -r own nown cpu <"$TMP/cross.own"
read -r prof nprof < <(tail -1 "$TMP/cross.prof")
ok $(awk -v a="${cpu:-0}" -v b="${prof:-9}" -v m="${nprof:-0}" \
	'BEGIN { d = a - b; print (m >= 100 && d < 0.1 && d > -0.1) ? 0 : 1 }') \
	"a() takes the same share of the main thread in the profile ($prof of $nprof samples) as of its CPU time ($cpu)"
if ((${nown:-0} >= 100)); then
	ok $(awk -v a="${own:-0}" -v b="${prof:-9}" \
		'BEGIN { d = a - b; print (d < 0.15 && d > -0.15) ? 0 : 1 }') \
		"... and as in sys._current_frames() ($own of $nown samples)"
else # its thread waits for the GIL and the CPU: on a loaded machine it gets few
	skip "the script's own sampler got ${nown:-0} samples, too few to compare (a loaded machine)" \
		"... and as in sys._current_frames()"
fi

# profile.lua on a python3 target reads its Python frames unasked;
# --no-python leaves them out.
"$PERFSCRIPT" "$EX/profile.lua" --folded "$TMP/auto.folded" -c "${pythons[0]} $TMP/cross.py" >/dev/null 2>&1
like "$(cat "$TMP/auto.folded")" "py::a:" "profile.lua -c 'python3 ...' without --python: the Python frames are there"
"$PERFSCRIPT" "$EX/profile.lua" --no-python --folded "$TMP/noauto.folded" -c "${pythons[0]} $TMP/cross.py" >/dev/null 2>&1
is "$(grep -c 'py::' "$TMP/noauto.folded")" 0 "... and --no-python leaves them out"

# A version the table does not know: native stacks, and one line.
py39=$(ls "$HOME"/.pyenv/versions/3.9*/bin/python3.9 2>/dev/null | head -1)
if [[ -x $py39 ]]; then
	"$PERFSCRIPT" "$EX/profile.lua" --python --folded "$TMP/39.folded" \
		-c "$py39 -c 'import zlib; [zlib.compress(bytes(1000000)) for i in range(300)]'" >/dev/null 2>"$TMP/39.err"
	is "$(grep -c 'runs Python 3.9: its Python frames are not available (CPython 3.10 to 3.13 are)' "$TMP/39.err")" \
		"1" "Python 3.9: one line says its frames are not available"
	like "$(cat "$TMP/39.folded")" "_PyEval_EvalFrameDefault;.*deflate" "Python 3.9: native stacks as before"
else
	skip "no Python 3.9 here to stand for an unknown version" "unknown version"
fi

# Without BPF (a user without CAP_BPF) the perf ring serves, and says the
# samples have no Python frames.
if command -v runuser >/dev/null && runuser -u nobody -- test -x "$PERFSCRIPT"; then
	runuser -u nobody -- "$PERFSCRIPT" -e 'c = perfmon.counter("cpu-clock/freq=99,call-graph=dwarf/")
probe(c, function() end, { python = true })' -c "${pythons[0]} -c pass" >/dev/null 2>"$TMP/nobody.err"
	like "$(cat "$TMP/nobody.err")" "using the perf ring buffer: .*; samples have no Python frames" \
		"as nobody: the perf ring serves, and one line says the samples have no Python frames"
else
	skip "runuser cannot run $PERFSCRIPT as nobody" "Python frames without BPF"
fi

# Python frames are read at an overflow: a tracepoint has none.
"$PERFSCRIPT" -e 'c = perfmon.counter("syscalls:sys_enter_getppid/period=1/")
probe(c, function() end, { python = true, backend = "bpf" })' -c true >/dev/null 2>"$TMP/tp.err"
like "$(cat "$TMP/tp.err")" "cannot walk Python frames on 'syscalls:sys_enter_getppid/period=1/': they are read at a sample's overflow" \
	"python = true on a tracepoint: refused, saying why"
# A hostile process: 70000 code objects sharing one 64 KiB line table. The
# code objects read are held within a budget of bytes (the old count-only
# cache took 2.25 GB here in 5 s at 4999 Hz, 4.7 GB in the report; 3 s
# would take well over the 300 MB allowed).
"${pythons[0]}" tests/e2e/hostile_code.py >"$TMP/hostile.out" 2>&1 &
hpid=$!
wait_for "$TMP/hostile.out" '^ready'
out=$("$PERFSCRIPT" -p $hpid -T 3 -e 'c = perfmon.counter("cpu-clock/freq=4999,call-graph=dwarf/")
local n, named = 0, 0
probe("perfmon.sample(c)", function(s)
  n = n + 1
  if s:folded():find("py::f", 1, true) then named = named + 1 end
end, { python = true })
probe("end", function()
  local f = io.open("/proc/self/status"); local st = f:read("a"); f:close()
  print(n, named, st:match("VmHWM:%s*(%d+)"))
end)' 2>&1)
kill $hpid; wait $hpid 2>/dev/null
read -r n named rss <<<"$out"
ok $(( ${n:-0} > 1000 && ${named:-0} * 10 >= ${n:-0} * 8 && ${rss:-999999} < 300000 ? 0 : 1 )) \
	"70000 code objects sharing a 64 KiB line table: ${named:-?} of ${n:-?} samples named, peak RSS ${rss:-?} kB (< 300 MB)"
# A process that becomes another CPython (os.execv, the same pid): its
# new Python frames are named as its own, the old process's entry is not
# walked for it (it was, for good, before the backend looked again).
b=""
for py in "${pythons[@]}"; do
	[[ $("$py" -c 'import sys; print(sys.version_info[1])') != $("${pythons[0]}" -c 'import sys; print(sys.version_info[1])') ]] && { b=$py; break; }
done
if [[ -n $b ]]; then
	cat >"$TMP/exec_a.py" <<EOF
import os, time
def old_loop():
    end = time.process_time() + 0.3
    while time.process_time() < end: pass
old_loop()
os.execv("$b", ["$b", "$TMP/exec_b.py"])
EOF
	cat >"$TMP/exec_b.py" <<'EOF'
import time
def new_loop():
    end = time.process_time() + 1.5
    while time.process_time() < end: pass
new_loop()
EOF
	out=$("$PERFSCRIPT" "$EX/profile.lua" --python -c "${pythons[0]} $TMP/exec_a.py" --top 5 2>&1)
	pct=$(awk '/py::new_loop/ { sub(/%/, "", $2); print int($2); exit }' <<<"$out")
	ok $(( ${pct:-0} >= 40 ? 0 : 1 )) \
		"a CPython that execs another ($b): the new one's frames named, py::new_loop ${pct:-no}% of the samples ($(grep -m1 py:: <<<"$out"))"
else
	skip "one CPython version here" "a CPython that execs another"
fi
done_testing
