# agent.sh: examples/agent.lua, the whole-host agent, as its clients use
# it: the real Go client (go tool pprof) fetches /debug/pprof/profile over
# HTTP and reads a profile whose top function, labels (pid, comm, cgroup,
# container) and sample count match the workload and a profile.lua -a run
# of it; promtool accepts /metrics; bad and excess requests get 400 and 503
# at once, without holding the listener; a profile still owed when the
# session ends is answered 503, not left hanging.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
EX=examples

mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
if ! need_root || ! command -v curl >/dev/null || [[ -z $mnt ]]; then
	skip_all "needs root (system-wide sampling), curl and a cgroup v2 mount" "the agent"
fi
if ! command -v go >/dev/null; then
	skip_all "go is not installed (make check installs golang-go)" "the agent read by go tool pprof"
fi
G=psagent$$
id=$(printf '%064x' $$)
C=$G/docker-$id.scope
mkdir -p "$mnt/$C"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rmdir "$mnt/$C" "$mnt/$G" 2>/dev/null
}
trap cleanup EXIT

"$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --freq 97 --max-seconds 5 >"$TMP/agent.out" 2>&1 &
agent=$!; pids+=($agent)
line=$(wait_line "$TMP/agent.out" '^listening on ')
like "$line" '^listening on http://127\.0\.0\.1:[0-9]+/ ' "agent.lua says where it listens"
port=$(sed -E 's/.*:([0-9]+)\/ .*/\1/' <<<"$line")
url=http://127.0.0.1:$port

# A spinner in a container's group, for the profile's 2 seconds and more.
printf 'echo $$ >%s/cgroup.procs && exec "$@"\n' "$mnt/$C" >"$TMP/join.sh"
sh "$TMP/join.sh" "$WORKLOAD" spin 4000 >/dev/null &
spin=$!; pids+=($spin)
t0=$(date +%s%N)
pprof_tool -raw -output "$TMP/raw.txt" "$url/debug/pprof/profile?seconds=2" >"$TMP/go.err" 2>&1
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
saved=$(sed -nE 's/^Saved profile in (.*)$/\1/p' "$TMP/go.err")
[[ -s $saved ]]; ok $? "go tool pprof fetched /debug/pprof/profile?seconds=2 over HTTP ($saved)"
awk -v m="$ms" 'BEGIN { exit !(m >= 1900 && m < 4000) }'; ok $? "... and the reply came when its 2 s were up ($ms ms)"
top=$(pprof_tool -top -nodecount=3 "$saved" 2>&1)
like "$top" "hot_spin" "the profile's top functions name the spinner's hot_spin"
tags=$(pprof_tool -tags "$saved" 2>&1)
like "$tags" "cgroup: Total.*/$C" "labels: the spinner's cgroup"
like "$tags" "container: Total.*$id" "labels: the container id of its group"
like "$tags" "comm: Total.*workload" "labels: comm"
like "$tags" "pid: Total.*: $spin" "labels: pid"
n=$(awk '/^ +[0-9]+ +[0-9]+: / && seen { s += $1 } /^Samples:/ { seen = 1 } END { print s + 0 }' "$TMP/raw.txt")
# 97 Hz on each CPU for 2 s: the spinner alone is about 194
awk -v n="$n" 'BEGIN { exit !(n >= 150 && n <= 2 * 97 * 2 * 1.2) }'; ok $? "$n samples in 2 s at 97 Hz (the spinner's CPU and what else ran)"
# names from symbol tables, the build id for the backend's lines
wmap=$(grep -E '^ *[0-9]+: 0x.*/workload [0-9a-f]+ ' "$TMP/raw.txt" | head -1)
like "$wmap" '[0-9a-f]{40} \[FN\]$' "by default functions only: the workload's Mapping has its build id, no lines ($wmap)"
# profile.lua -a of the same workload names the same top function
ref=$("$PERFSCRIPT" $EX/profile.lua -a -T 1 --top 1 2>&1 | awk '/%/ { print $NF; exit }')
like "$top" "$ref" "the same top function as profile.lua -a ($ref)"

# /metrics on the same listener: promtool accepts it.
page=$(curl -s "$url/metrics")
like "$page" 'perfscript_events_total\{event="context-switches",cpu="0"\}' "/metrics: context switches per CPU"
like "$page" 'perfscript_agent_profiles_total\{result="served"\} 1' "/metrics: the profile served"
like "$page" 'perfscript_agent_symbolizer\{what="exited"\} [0-9]+' "/metrics: the symbolizer's exited processes kept"
if command -v promtool >/dev/null; then
	out=$(promtool check metrics <<<"$page" 2>&1); ok $? "promtool check metrics accepts the page${out:+: $out}"
else
	skip "promtool is not installed (make check installs prometheus)" "promtool accepts /metrics"
fi

# Bad and excess requests are answered at once.
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/debug/pprof/profile?seconds=abc")
is "$code" 400 "seconds=abc: 400"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/debug/pprof/profile?seconds=600")
is "$code" 400 "seconds over --max-seconds: 400"
# seconds is a whole number, as Go's net/http/pprof takes it: a tiny
# fraction once raised inside the handler and ended the whole session.
for bad in 1e-7 0.5 0 -1 1.0 %201 0x10; do
	code=$(curl -s -o /dev/null -w '%{http_code}' "$url/debug/pprof/profile?seconds=$bad")
	is "$code" 400 "seconds=$bad: 400"
done
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/metrics")
is "$code" 200 "... and the agent is still serving after them"
for i in $(seq 16); do curl -s -o "$TMP/held.$i" "$url/debug/pprof/profile?seconds=1" & done
for ((i = 0; i < 200; i++)); do # until the 16 are owed
	curl -s "$url/metrics" | grep -q '^perfscript_agent_profiles_in_progress 16$' && break
	sleep 0.05
done
# (a 5 s one: waiting for a slot would take the owed second and then 5 s,
# where a refusal takes a request's time, however loaded the machine)
t0=$(date +%s%N)
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/debug/pprof/profile?seconds=5")
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
is "$code" 503 "a 17th profile while 16 are owed: 503"
awk -v m="$ms" 'BEGIN { exit !(m < 2500) }'; ok $? "... at once, not after a slot and its 5 s ($ms ms)"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/metrics")
is "$code" 200 "/metrics is served while 16 profiles are owed"
wait_n=0
for i in $(seq 16); do
	while kill -0 %$i 2>/dev/null && ((wait_n < 100)); do sleep 0.05; wait_n=$((wait_n + 1)); done
done
wait $(jobs -p | grep -v -E "^($agent|$spin)$") 2>/dev/null
gz=0
for i in $(seq 16); do [[ $(head -c2 "$TMP/held.$i" | od -An -tx1 | tr -d ' ') == 1f8b ]] && gz=$((gz + 1)); done
is "$gz" 16 "the 16 owed profiles all came, gzip pprof each"
# Clients that hang up stop their profiles at once (as Go's handler does):
# 16 of 5 s whose clients go after 0.3 s hold no slot 1 s later.
for i in $(seq 16); do curl -s -m 0.3 -o /dev/null "$url/debug/pprof/profile?seconds=5" & done
wait $(jobs -p | grep -v -E "^($agent|$spin)$") 2>/dev/null
for ((i = 0; i < 40; i++)); do # a hang-up is seen within a quarter second
	page=$(curl -s "$url/metrics")
	grep -q '^perfscript_agent_profiles_in_progress 0$' <<<"$page" && break
	sleep 0.05
done
like "$page" $'\nperfscript_agent_profiles_in_progress 0\n' "16 clients that hung up hold no profile 2 s before their end ($((i * 50)) ms after)"
like "$page" 'perfscript_agent_profiles_total\{result="gone"\} 16' "... counted as gone"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url/debug/pprof/profile?seconds=1")
is "$code" 200 "... and the next request is served"
kill $agent; wait $agent 2>/dev/null

# --profiles-budget: profiles taken at once share one budget of stacks, so
# 16 requests cost no more than it; past it samples still count, under
# "[over the profiles' budget]"
"$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --freq 997 --profiles-budget 1 >"$TMP/agent6.out" 2>&1 &
agent=$!; pids+=($agent)
port=$(wait_line "$TMP/agent6.out" '^listening on ' | sed -E 's/.*:([0-9]+)\/ .*/\1/')
"$WORKLOAD" forks 30000 >/dev/null &
forks=$!; pids+=($forks)
for i in $(seq 16); do curl -s -o "$TMP/b.$i.pb.gz" "http://127.0.0.1:$port/debug/pprof/profile?seconds=2" & done
wait $(jobs -p | grep -v -E "^($agent|$spin|$forks)$") 2>/dev/null
tags=$(pprof_tool -tags "$TMP/b.16.pb.gz" 2>&1)
like "$tags" "comm: Total [0-9.]+s.*: \[over the profiles' budget\]" \
	"16 profiles at once over --profiles-budget 1: new stacks count under [over the profiles' budget]"
secs=$(awk '/comm: Total/ { sub(/s$/, "", $3); print $3; exit }' <<<"$tags")
awk -v s="${secs:-0}" 'BEGIN { exit !(s >= 3) }'; ok $? "... and every sample still counts (${secs:-?} s of 2 CPUs' 4 s)"
kill $agent $forks; wait $agent 2>/dev/null

# --lines: source lines and inline frames named in the agent
"$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --freq 97 --lines >"$TMP/agent5.out" 2>&1 &
agent=$!; pids+=($agent)
line=$(wait_line "$TMP/agent5.out" '^listening on ')
port=$(sed -E 's/.*:([0-9]+)\/ .*/\1/' <<<"$line")
"$WORKLOAD" spin 1500 >/dev/null &
pids+=($!)
pprof_tool -raw -output "$TMP/raw5.txt" "http://127.0.0.1:$port/debug/pprof/profile?seconds=1" >/dev/null 2>&1
wmap=$(grep -E '^ *[0-9]+: 0x.*/workload [0-9a-f]+ ' "$TMP/raw5.txt" | head -1)
like "$wmap" '\[FN\]\[FL\]\[LN\]\[IN\]$' "--lines: the workload's Mapping has lines and inline frames ($wmap)"
like "$(grep -c 'workload.c:[0-9]' "$TMP/raw5.txt")" '^[1-9]' "--lines: locations name workload.c's lines"
kill $agent; wait $agent 2>/dev/null

# A profile owed when the session ends: 503 with a reason, at the end.
"$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 -T 1 >"$TMP/agent2.out" 2>&1 &
pids+=($!)
line=$(wait_line "$TMP/agent2.out" '^listening on ')
port=$(sed -E 's/.*:([0-9]+)\/ .*/\1/' <<<"$line")
out=$(curl -s -w ' %{http_code}' "http://127.0.0.1:$port/debug/pprof/profile?seconds=5")
like "$out" "the session ended before the reply was ready.* 503$" "a profile owed at the session's end: 503, saying why"

# The systemd unit's way: no root, only the unit's capabilities.
unit=$EX/perfscript-agent.service
caps=$(sed -n 's/^AmbientCapabilities=//p' "$unit")
like "$caps" "^CAP_PERFMON CAP_BPF CAP_SYSLOG$" "the unit grants CAP_PERFMON, CAP_BPF and CAP_SYSLOG, no more"
if command -v systemd-analyze >/dev/null; then
	out=$(systemd-analyze verify "$unit" 2>&1 | grep -v 'is not executable')
	is "$out" "" "systemd-analyze verify accepts the unit (but for its binary, not installed here)"
fi
capset=$(tr 'A-Z ' 'a-z,' <<<"${caps//CAP_/+}")
setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps="$capset" --ambient-caps="$capset" \
	"$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --freq 97 >"$TMP/agent3.out" 2>&1 &
pids+=($!)
line=$(wait_line "$TMP/agent3.out" '^listening on ')
port=$(sed -E 's/.*:([0-9]+)\/ .*/\1/' <<<"$line")
"$WORKLOAD" spin 2500 >/dev/null &
pids+=($!)
top=$(pprof_tool -top -nodecount=3 "http://127.0.0.1:${port:-1}/debug/pprof/profile?seconds=1" 2>&1)
like "$top" "hot_spin" "as nobody with the unit's capabilities ($capset): a profile naming hot_spin"

# docs/api.md's example of a reply that comes later runs as written.
awk '/^The request also has `args`/ { w = 1 } w && /^```lua$/ { f = 1; next } f && /^```$/ { exit } f' \
	docs/api.md >"$TMP/later.lua"
"$PERFSCRIPT" -T 3 "$TMP/later.lua" >"$TMP/later.out" 2>&1 &
pids+=($!)
port=$(wait_line "$TMP/later.out" '^port' | cut -f2)
out=$(curl -s "http://127.0.0.1:$port/x?n=7")
is "$out" "a second later: n=7" "docs/api.md's req:defer() example: the reply comes from the timer"

# --offcpu: /debug/pprof/offcpu?seconds=N, where threads waited, in
# nanoseconds: a process asleep the whole 2 s has about 2 s of it, under
# its comm, ending in the kernel's __schedule (no tracing frames), with why
"$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --offcpu >"$TMP/agent4.out" 2>&1 &
pids+=($!)
line=$(wait_line "$TMP/agent4.out" '^listening on ')
port=$(sed -E 's/.*:([0-9]+)\/ .*/\1/' <<<"$line")
cp "$WORKLOAD" "$TMP/asleep-agent" # a comm no other suite uses: this is -a
"$TMP/asleep-agent" sleep 4000 &
pids+=($!)
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${port:-1}/debug/pprof/offcpu?seconds=1e-7")
is "$code" 400 "--offcpu: /debug/pprof/offcpu?seconds=1e-7: 400, the session goes on"
curl -s -o "$TMP/off.pb.gz" "http://127.0.0.1:${port:-1}/debug/pprof/offcpu?seconds=2"
top=$(pprof_tool -top -nodecount=400 "$TMP/off.pb.gz" 2>&1)
like "$top" "Type: off-cpu" "--offcpu: /debug/pprof/offcpu is an off-cpu profile go tool pprof reads"
# (pprof prints every value in one unit, the smallest that keeps them
# whole: seconds, or ms, us, ns when the profile has values that small)
cum=$(awk '$NF == "asleep-agent" { v = $4; n = v + 0
	if (v ~ /ns$/) n /= 1e9; else if (v ~ /(us|µs)$/) n /= 1e6; else if (v ~ /ms$/) n /= 1e3
	print n; exit }' <<<"$top")
# the window asked is 2 s; a loaded machine may end it later, and the
# profile says how long it was (pprof's Duration): the sleeper's is that,
# never more (it was 2.13 s in a 2.02 s window under load, when the window
# was stamped after the take that starts it), and at most the takes' time less.
dur=$(sed -n 's/^Duration: \([0-9.]*\)\(m\{0,1\}\)s,.*/\1 \2/p' <<<"$top" | awk '{ print $2 == "m" ? $1 / 1000 : $1 }')
awk -v c="${cum:-0}" -v d="${dur:-0}" 'BEGIN { exit !(d >= 1.9 && c >= d - 0.2 && c <= d + 0.005) }'
ok $? "--offcpu: a process asleep all along has its window off the CPU (${cum:-none}s of ${dur:-?}s)"
like "$top" " __schedule"$'\n' "--offcpu: kernel stacks end at __schedule, not in the tracepoint's frames"
unlike "$top" "__traceiter_|bpf_trace_run" "--offcpu: no tracing frame in the profile"
like "$(pprof_tool -tags "$TMP/off.pb.gz" 2>&1)" "state: Total.*S" "--offcpu: each sample says why (state S: asleep)"

# The page at /: the next seconds as a flame graph and the top functions,
# one HTML page that fetches nothing, with a spinning command whose name
# is markup shown as text.
cp "$WORKLOAD" "$TMP/<b>page"
"$TMP/<b>page" spin 3000 &
pids+=($!)
curl -s -o "$TMP/page.html" -w '%{http_code} %{content_type}' "http://127.0.0.1:${port:-1}/?seconds=1" >"$TMP/page.code"
is "$(cat "$TMP/page.code")" "200 text/html; charset=utf-8" "/: an HTML page"
is "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${port:-1}/?seconds=x")" 400 \
	"/?seconds=x: 400, as the profile's"
out=$(python3 - "$TMP/page.html" <<'PYEOF2'
import html.parser, sys, re
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.refs = []; self.tags = set(); self.text = []
    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for k, v in attrs:
            if k in ("src", "href") and v: self.refs.append(v)
    def handle_data(self, d): self.text.append(d)
p = P(); p.feed(open(sys.argv[1]).read())
print("svg" if "svg" in p.tags else "no-svg")
print("external" if any(re.match(r"^[a-z]+:", r) or r.startswith("//") for r in p.refs) else "local")
print("table" if "table" in p.tags else "no-table")
print("bold" if "b" in p.tags else "text")
print("named" if any("<b>page" in t for t in p.text) else "unnamed")
PYEOF2
)
is "$out" $'svg\nlocal\ntable\ntext\nnamed' "/: the flame graph inline, a top table, links to this host only, and a command named <b>page shown as text"
like "$(cat "$TMP/page.html")" "data-total=\"[1-9]" "... with the window's samples in its graph"

# --offcpu for a user who may sample but not read tracepoints: refused at
# once, with the reason, not a session without its off-CPU half
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=+perfmon,+syslog \
	--ambient-caps=+perfmon,+syslog "$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --offcpu 2>&1)
rc=$?
like "$out" "^agent.lua: --offcpu: tracepoint 'sched:sched_switch'.*permission denied" \
	"--offcpu without the right to read tracepoints: says so"
is "$rc" 1 "... and exits 1 (what the machine refuses; a usage error is 2)"

out=$("$PERFSCRIPT" $EX/agent.lua --listen 127.0.0.1:0 2>&1)
like "$out" "agent.lua: profiles the whole host: run it with -a" "without -a: says how to run it"
out=$("$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --profiles-budget 0.5 2>&1)
like "$out" "agent.lua: --profiles-budget wants a number of at least 1 \(MIB\), got '0.5'" "--profiles-budget under 1 MiB: refused, saying what it wants"
done_testing
