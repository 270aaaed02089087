# jitmap.sh: /tmp/perf-PID.map as another local user can shape it. A JIT
# running as nobody, profiled by root with -a: nobody puts a FIFO, a symlink
# to /dev/zero, a 2 GiB sparse file, or a map of lines too long to keep at
# its /tmp/perf-PID.map. Each session still ends on time, small, with the
# JIT's code left unnamed; a map that nobody writes for nobody's own JIT
# names it; a map for a root process that nobody owns is not trusted.
source "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$0")/../../build/tests" && pwd)
if ! need_root || ! command -v setpriv >/dev/null; then
	skip "needs root and setpriv (the attacks run as nobody against a root profile)" "/tmp/perf-PID.map attacks"
	done_testing; exit
fi
if [[ $(uname -m) != x86_64 ]]; then
	skip "the test JIT writes x86-64 code" "/tmp/perf-PID.map attacks"
	done_testing; exit
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
done_testing
