# jitmap.sh: /tmp/perf-PID.map as another local user can shape it. A JIT
# running as nobody, profiled by root with -a: nobody puts a FIFO, a symlink
# to /dev/zero, a 2 GiB sparse file, or a map of lines too long to keep at
# its /tmp/perf-PID.map. Each session still ends on time, small, with the
# JIT's code left unnamed; a map that nobody writes for nobody's own JIT
# names it; a map for a root process that nobody owns is not trusted.
source "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$0")/../../build/tests" && pwd)
if ! need_root || ! command -v setpriv >/dev/null; then
	skip_all "needs root and setpriv (the attacks run as nobody against a root profile)" "/tmp/perf-PID.map attacks"
fi
if [[ $(uname -m) != x86_64 ]]; then
	skip_all "the test JIT writes x86-64 code" "/tmp/perf-PID.map attacks"
fi
chmod a+rx "$TMP"
cp "$B/jit" "$TMP/jit"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -f /tmp/perf-"$jp".map; rm -rf "$TMP"; }
trap cleanup EXIT
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# A root profile of every CPU for 0.5 s: the JIT's hottest name, the
# session's peak RSS in kB, and how long it took.
PROFILE='c = perfmon_allocate_counter("cpu-clock/freq=499/")
local p = require("profile").new()
probe("perfmon.sample(c)", function(s) if s.pid == JP then p:add(s) end end)
probe("end", function()
  local f = io.open("/proc/self/status"); local st = f:read("a"); f:close()
  local top = p:top(1)[1]
  print(top and top.key or "none", st:match("VmHWM:%s*(%d+)"))
end)'
profile() { # JIT-PID
	local t0=$SECONDS out
	out=$(timeout -s KILL 20 "$PERFSCRIPT" -a -T 0.5 -e "JP = $1; $PROFILE" 2>&1)
	echo "$out $((SECONDS - t0)) rc=$?"
}
start_jit() { # [nomap]: a JIT of nobody's; sets $jp
	as_nobody "$TMP/jit" 30000 "$@" >"$TMP/jit.out" &
	pids+=($!)
	jp=$(wait_line "$TMP/jit.out" '^ready ' | cut -d' ' -f2)
}

start_jit
read -r key rss secs _ < <(profile "$jp")
is "$key" jit_hot_loop "nobody's map of nobody's JIT names its code"
kill "${pids[-1]}"; rm -f /tmp/perf-"$jp".map

start_jit nomap
map=/tmp/perf-$jp.map
as_nobody mkfifo "$map"
read -r key rss secs rc < <(profile "$jp")
ok $(( secs <= 5 ? 0 : 1 )) "a FIFO at the map: the 0.5 s session ends in ${secs} s, not hung"
like "$key" '^(\[anon\]|\[unknown\]|0x)' "and the code stays unnamed ($key)"
rm -f "$map"; as_nobody ln -s /dev/zero "$map"
read -r key rss secs rc < <(profile "$jp")
ok $(( secs <= 5 && rss < 100000 ? 0 : 1 )) "a symlink to /dev/zero: ends in ${secs} s with a peak RSS of ${rss} kB"
rm -f "$map"; as_nobody truncate -s 2G "$map"
read -r key rss secs rc < <(profile "$jp")
ok $(( secs <= 5 && rss < 100000 ? 0 : 1 )) "a 2 GiB sparse file: ends in ${secs} s with a peak RSS of ${rss} kB"
rm -f "$map"; as_nobody sh -c "head -c 50000000 /dev/zero | tr '\\0' 'x' > $map"
read -r key rss secs rc < <(profile "$jp")
ok $(( secs <= 5 && rss < 100000 ? 0 : 1 )) "a 50 MB line: ends in ${secs} s with a peak RSS of ${rss} kB"
kill "${pids[-1]}"; rm -f "$map"

# A root JIT whose map nobody owns (as if nobody had put it there first).
"$TMP/jit" 30000 >"$TMP/rootjit.out" &
pids+=($!)
jp=$(wait_line "$TMP/rootjit.out" '^ready ' | cut -d' ' -f2)
read -r key _ < <(profile "$jp")
is "$key" jit_hot_loop "root's map of root's JIT names its code"
chown 65534 /tmp/perf-"$jp".map
read -r key _ < <(profile "$jp")
like "$key" '^(\[anon\]|\[unknown\]|0x)' "the same map owned by nobody is not trusted for a root process ($key)"
# Large maps of several processes: each keeps at most its newest entries
# and all count in the symbolizer's budget (six 64 MiB maps took the agent
# from 13.6 to 835 MB). Three JITs of 600000 entries each, sampled at once.
if cc -O1 -o "$TMP/jitmany" "$(dirname "$0")/../progs/jitmany.c" 2>"$TMP/cc.err"; then
	mp=()
	for i in 1 2 3; do
		"$TMP/jitmany" 600000 >"$TMP/many$i.out" &
		pids+=($!); mp+=($!)
	done
	for i in 1 2 3; do wait_for "$TMP/many$i.out" '^ready' 30; done
	out=$(timeout -s KILL 60 "$PERFSCRIPT" -a -T 3 -e 'c = perfmon.counter("cpu-clock/freq=499/")
local mine, n, hot = { ['"${mp[0]}"'] = true, ['"${mp[1]}"'] = true, ['"${mp[2]}"'] = true }, 0, 0
probe("perfmon.sample(c)", function(s)
  if mine[s.pid] then n = n + 1; if s.sym:match("^hot_loop") then hot = hot + 1 end end
end)
probe("end", function()
  local f = io.open("/proc/self/status"); local st = f:read("a"); f:close()
  print(n, hot, st:match("VmHWM:%s*(%d+)"))
end)' 2>&1)
	read -r n hot rss <<<"$out"
	ok $(( ${n:-0} > 100 && ${hot:-0} * 10 >= ${n:-0} * 9 && ${rss:-999999} < 120000 ? 0 : 1 )) \
		"three JITs with 600000-entry maps: ${hot:-?} of ${n:-?} samples named hot_loop (the newest entry), peak RSS ${rss:-?} kB (< 120 MB)"
	for p in "${mp[@]}"; do kill "$p"; rm -f "/tmp/perf-$p.map"; done
else
	skip "cc cannot build tests/progs/jitmany.c: $(head -c 200 "$TMP/cc.err")" "large JIT maps within the budget"
fi
done_testing
