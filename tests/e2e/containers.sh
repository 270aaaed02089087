# containers.sh: names inside containers and from split debug files, as
# perf finds them. A stripped PIE whose debug file is found by its
# .gnu_debuglink (beside it, in .debug/, under /usr/lib/debug/DIR; a debug
# file of another build refused by its CRC); Node's JIT map written inside
# a private mount and pid namespace (unshare), read through the process's
# root by its pid there; a symlink planted there not followed; and a debug
# file that exists only in the container's own /usr/lib/debug.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EX="$ROOT/examples"

if ! need_root || ! command -v unshare >/dev/null || ! command -v objcopy >/dev/null; then
	skip_all "needs root, unshare and objcopy (binutils)" "containers and split debug files"
fi

# The top function of a profile of CMD ("chain_leaf", or "pie_dl+0x1232").
top_of() { # dir cmd...
	(cd "$1" && shift && "$PERFSCRIPT" "$EX/profile.lua" "$@" --top 1 -o - 2>/dev/null) |
		awk '$3 == "[.]" { print $4; exit }'
}

# A stripped PIE with a debuglink, its debug file moved from place to place.
D="$TMP/dl"
mkdir -p "$D"
gcc -O2 -g -fPIE -pie -o "$D/pie_dl" "$ROOT/tests/progs/chain.c"
objcopy --only-keep-debug "$D/pie_dl" "$D/pie_dl.debug"
strip --strip-all "$D/pie_dl"
objcopy --add-gnu-debuglink="$D/pie_dl.debug" "$D/pie_dl"
is "$(top_of "$D" -c "./pie_dl 200")" chain_leaf "debuglink: the debug file beside the binary names it"
line=$(cd "$D" && "$PERFSCRIPT" "$EX/profile.lua" -c "./pie_dl 200" --lines --top 1 -o - 2>/dev/null |
	awk '$3 == "[.]" { print $4; exit }')
like "$line" "^chain\.c:[0-9]+$" "debuglink: and its source lines ($line)"
mkdir -p "$D/.debug" && mv "$D/pie_dl.debug" "$D/.debug/"
is "$(top_of "$D" -c "./pie_dl 200")" chain_leaf "debuglink: in .debug/ beside the binary"
mkdir -p "/usr/lib/debug$D" && mv "$D/.debug/pie_dl.debug" "/usr/lib/debug$D/"
trap 'rm -rf "/usr/lib/debug$TMP" "$TMP"' EXIT
is "$(top_of "$D" -c "./pie_dl 200")" chain_leaf "debuglink: under /usr/lib/debug and the binary's directory"
if command -v perf >/dev/null; then
	(cd "$D" && perf record -q -o "$TMP/dl.data" ./pie_dl 200 >/dev/null 2>&1)
	want=$(perf report -i "$TMP/dl.data" --stdio --sort sym 2>/dev/null | awk '/^ +[0-9]/ { print $NF; exit }')
	is "$want" chain_leaf "perf report names the same function on the same binary"
else
	skip "perf is not installed (linux-perf)" "perf's name for the debuglink binary"
fi
# a debug file of another build under the same name: its CRC differs
echo "// another build" >>"/usr/lib/debug$D/pie_dl.debug"
like "$(top_of "$D" -c "./pie_dl 200")" "^pie_dl\+0x" "debuglink: a debug file whose CRC differs is not used"
rm -rf "/usr/lib/debug$TMP"

# Node in its own mount and pid namespace, /tmp private: its map is
# /tmp/perf-1.map in there. Profiled from here with -p and with -a.
C=/var/tmp/perfscript-ct.$$
mkdir -p "$C"
trap 'rm -rf "/usr/lib/debug$TMP" "$TMP" "$C"' EXIT
cat >"$C/spin.js" <<'EOF'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
console.log("ready");
const end = Date.now() + Number(process.argv[2]);
let s = 0;
while (Date.now() < end) s += fib(20);
EOF
in_ns() { # out-file command: it runs in new pid and mount namespaces, /tmp a tmpfs,
	# in $C (where node leaves its logs)
	local out=$1; shift
	(cd "$C" && exec unshare --pid --mount --fork --mount-proc sh -c 'mount -t tmpfs none /tmp && exec "$@"' \
		sh "$@" >"$out" 2>&1) &
}
# User-mode samples of pid NP (the JIT's code is user code, and how many
# kernel ones there are depends on the machine's load), and of them those
# a JIT map named (the dso is the map): "N NAMED", for -p NP or -a. Named
# at the end, as perf report names them after perf record (code the JIT
# wrote late is in the map by then).
SHARE='c = perfmon.counter("cpu-clock/freq=499/u")
local ips = {}
probe("perfmon.sample(c)", function(s)
  if s.pid ~= NP then return end
  ips[#ips + 1] = s.ip
  if ENOUGH and #ips >= ENOUGH then exit() end -- ENOUGH samples, however slow the machine
end)
probe("end", function()
  local named = 0
  for _, ip in ipairs(ips) do
    local _, dso = perfmon.symbolize(NP, ip)
    if (dso or ""):match("/tmp/perf%-%d+%.map$") then named = named + 1 end
  end
  print(#ips, named)
end)'
share() { # target-option... : the named share, in percent, as "PCT (NAMED of N)"
	local n named
	# to a file, not a pipe: the notices it prints after the end probe are
	# in share.err once the line is read
	"$PERFSCRIPT" -e "NP = $np; ENOUGH = ${ENOUGH:-nil}; $SHARE" "$@" >"$TMP/share.out" 2>"$TMP/share.err"
	read -r n named <"$TMP/share.out"
	echo "$(( ${n:-0} ? 100 * named / n : 0 )) ($named of $n)"
}
perf_share() { # perf record -p NP over 0.5 s: the share of user samples a map named
	perf record -q -e cpu-clock:u -F 499 -p "$np" -o "$TMP/perf.data" -- sleep 0.5 >/dev/null 2>&1
	perf report -i "$TMP/perf.data" --stdio --sort dso 2>/dev/null |
		awk '/^ +[0-9.]+%/ { sub(/%/, "", $1); if ($2 == "[JIT]") m += $1 } END { printf "%d", m }'
}
if command -v node >/dev/null; then
	in_ns "$TMP/node.out" node --perf-basic-prof --interpreted-frames-native-stack "$C/spin.js" 6000
	wait_line "$TMP/node.out" '^ready' >/dev/null
	np=$(pgrep -f "node --perf-basic-prof --interpreted-frames-native-stack $C/spin.js" | tail -1)
	is "$(awk '/^NSpid:/ { print $NF }' "/proc/$np/status")" 1 "node runs as pid 1 of its own pid namespace"
	# perf on the same window as -p
	command -v perf >/dev/null && { perf_share >"$TMP/perf.share" & }
	p=$(ENOUGH=150 share -p "$np" -T 5) # 150 samples, however loaded the machine
	wait %% 2>/dev/null
	ok $(( ${p%% *} >= 95 ? 0 : 1 )) "-p on node in a container: $p of its samples named by its map"
	if [[ -s $TMP/perf.share ]]; then
		ps=$(cat "$TMP/perf.share")
		ok $(( ${p%% *} >= ps - 3 ? 0 : 1 )) "-p: as many as perf 6.1 names on the same window ($p against perf's $ps%)"
	else
		skip "perf is not installed (linux-perf)" "perf's share of the container's JIT names"
	fi
	a=$(ENOUGH=150 share -a -T 5)
	ok $(( ${a%% *} >= 95 ? 0 : 1 )) "-a: the container's node samples, $a named by its map"
	kill "$np" 2>/dev/null
	wait
	# a map inside the container that is not to be trusted: refused as on
	# the host, in one line on stderr, and the session ends on time
	for bad in "ln -s /etc/passwd /tmp/perf-1.map:a symbolic link" \
		"mkfifo /tmp/perf-1.map:not a regular file" \
		"echo 1 >/tmp/perf-1.map && chown 65534 /tmp/perf-1.map:uid 65534"; do
		# (a file of its own: the last one's "ready" is not this node's)
		out2="$TMP/node2.$((++nbad)).out"
		in_ns "$out2" sh -c "${bad%%:*} && exec node $C/spin.js 3000"
		wait_line "$out2" '^ready' >/dev/null
		np=$(pgrep -f "^node $C/spin.js" | tail -1)
		t0=$SECONDS
		p=$(ENOUGH=50 share -p "$np" -T 10)
		is "${p%% *}:$(grep -c "perf-1.map of process $np is not read: .*${bad#*:}" "$TMP/share.err")" "0:1" \
			"a map that is ${bad#*:} inside the container: not read, said in one line ($(head -c 120 "$TMP/share.err"))"
		ok $(( SECONDS - t0 <= 10 ? 0 : 1 )) "... and the session ends on time (50 samples, or 10 s)"
		kill "$np" 2>/dev/null
		wait
	done
else
	for _ in 1 2 3 4 5 6 7 8 9 10; do skip "node is not installed" "JIT maps in a container"; done
fi

# Java in the container: its map written by jcmd PID Compiler.perfmap, run
# inside (the JVM's attach socket is in its own /tmp).
if command -v javac >/dev/null && command -v jcmd >/dev/null && command -v nsenter >/dev/null; then
	cat >"$C/Spin.java" <<'EOF'
public class Spin {
    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
    public static void main(String[] a) {
        long end = System.currentTimeMillis() + Long.parseLong(a[0]), s = 0;
        System.out.println("ready");
        while (System.currentTimeMillis() < end) s += fib(22);
        System.out.println(s);
    }
}
EOF
	javac -d "$C" "$C/Spin.java"
	in_ns "$TMP/java.out" java -XX:+PreserveFramePointer -cp "$C" Spin 15000
	wait_line "$TMP/java.out" '^ready' >/dev/null
	np=$(pgrep -f "java -XX:\+PreserveFramePointer -cp $C Spin" | tail -1)
	nsenter -t "$np" -m -p jcmd 1 Compiler.perfmap >"$TMP/jcmd.out" 2>&1
	ok $? "jcmd 1 Compiler.perfmap inside the container writes its map ($(head -c 100 "$TMP/jcmd.out"))"
	p=$(ENOUGH=150 share -p "$np" -T 5) # 150 samples, however loaded the machine
	ok $(( ${p%% *} >= 95 ? 0 : 1 )) "-p on java in a container: $p of its samples named by its map"
	kill "$np" 2>/dev/null
	wait
else
	for _ in 1 2; do skip "javac, jcmd or nsenter is missing" "Java's map in a container"; done
fi

# A binary in the container's own tree (no such path here) whose debug
# file is only in the container's /usr/lib/debug/.build-id.
gcc -O2 -g -o "$C/ctprog" "$ROOT/tests/progs/chain.c"
id=$(readelf -n "$C/ctprog" | awk '/Build ID/ { print $3 }')
objcopy --only-keep-debug "$C/ctprog" "$C/ctprog.debug"
strip --strip-all "$C/ctprog"
mkdir -p "$C/dbg/.build-id/${id:0:2}"
cp "$C/ctprog.debug" "$C/dbg/.build-id/${id:0:2}/${id:2}.debug"
in_ns "$TMP/ct.out" sh -c "mkdir -p /tmp/app && cp $C/ctprog /tmp/app/ && mount --bind $C/dbg /usr/lib/debug && echo ready && exec /tmp/app/ctprog 3000"
wait_line "$TMP/ct.out" '^ready' >/dev/null
cp=$(pgrep -f "^/tmp/app/ctprog" | tail -1)
for i in $(seq 100); do [[ -n $cp ]] && break; sleep 0.01; cp=$(pgrep -f "^/tmp/app/ctprog" | tail -1); done
[[ ! -e /tmp/app/ctprog ]]; ok $? "the container's binary has no path here"
# its user-mode samples, as for Node above (the kernel's share follows the load)
top=$("$PERFSCRIPT" "$EX/profile.lua" -p "$cp" -T 0.5 -e cpu-clock:u --top 1 -o - 2>/dev/null | awk '$3 == "[.]" { print $4, int($2); exit }')
is "${top% *}" chain_leaf "a debug file only in the container's /usr/lib/debug/.build-id names its binary"
ok $(( ${top#* } >= 95 ? 0 : 1 )) "... in ${top#* }% of its samples"
kill "$cp" 2>/dev/null
wait

# perfscript in a mount namespace of its own (it makes one to mount tracefs
# where none is): the command's /tmp is still ours, so a map written at the
# command's exit is read at the end, after /proc/PID/root is gone with it
# (it was looked for only through that root: 0 named)
if [[ $(uname -m) == x86_64 ]]; then
	cat >"$TMP/jitend.lua" <<'EOF'
c = assert(perfmon.counter("cpu-clock/freq=999/"))
local ips, pid = {}, nil
probe("perfmon.sample(c)", function(s) if s.user then local _ = s.sym; ips[s.ip] = true; pid = s.pid end end)
probe("end", function()
  local named, all = 0, 0
  for ip in pairs(ips) do
    local sym, dso = perfmon.symbolize(pid, ip)
    if dso == "[anon]" or dso:match("perf%-%d+%.map$") then all = all + 1 end
    if sym:match("^jit_hot_loop") then named = named + 1 end
  end
  print(("named %d of %d"):format(named, all))
end)
EOF
	out=$(unshare -m --propagation private sh -c "umount /sys/kernel/tracing 2>/dev/null; \
		umount /sys/kernel/debug/tracing 2>/dev/null; \
		'$PERFSCRIPT' -v -c '$ROOT/build/tests/jit 300 atexit' '$TMP/jitend.lua' 2>&1")
	like "$out" "in perfscript's own mount namespace" "perfscript made a mount namespace of its own for tracefs"
	like "$out" $'\n''named ([1-9][0-9]*) of \1$' "... and a map written at the command's exit still names its code ($(tail -1 <<<"$out"))"
else
	for _ in 1 2; do skip "the test JIT writes x86-64 code" "a map at exit, perfscript in its own mount namespace"; done
fi

done_testing
