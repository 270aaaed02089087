# agent_push.sh: what examples/agent.lua pushes, received by real readers.
# Remote write: a real Prometheus (--web.enable-remote-write-receiver)
# takes the agent's counters and answers a PromQL query for them, and the
# same Prometheus scrapes /metrics. Profiles: a loopback stand-in for
# Pyroscope's ingest API (tests/e2e/ingest_receiver.py; no Pyroscope is
# packaged in Debian) checks each request's path and query, is down for
# its first requests and then recovers: no window is lost, and go tool
# pprof reads every profile. A queue that overflows counts its drops.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
EX=examples

if ! need_root || ! command -v curl >/dev/null || ! command -v python3 >/dev/null; then
	skip_all "needs root (system-wide sampling), curl and python3" "the agent's pushes"
fi
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
metric() { curl -s "$1/metrics" | awk -v m="$2" '$1 == m { print $2 }'; }

# docs/api.md's examples of http.post and remote_write run as written.
awk '/^### `http.post/ { w = 1 } w && /^```lua$/ { f = 1; next } f && /^```$/ { exit } f' docs/api.md >"$TMP/post.lua"
out=$("$PERFSCRIPT" -T 10 "$TMP/post.lua" 2>&1)
like "$out" "^no reply: .*Couldn't connect" "docs/api.md's http.post example: a refused connection is a reply of its own"
awk '/^## Remote write/ { w = 1 } w && /^```lua$/ { f = 1; next } f && /^```$/ { exit } f' docs/api.md >"$TMP/rw.lua"
out=$("$PERFSCRIPT" "$TMP/rw.lua" 2>&1)
like "$out" "^[0-9]+[[:space:]]200$" "docs/api.md's remote_write example: encoded and decoded back"

# docs/tapsets.md's push and pprof_http examples run as written: a push to
# a port nobody listens on is tried, said as not sent at the end; a
# profile served by pprof_http is a pprof go tool pprof reads.
tapset_example() { awk -v h="## $1" '$0 == h { w = 1 } w && /^```lua$/ { f = 1; next } f && /^```$/ { exit } f' docs/tapsets.md; }
tapset_example push >"$TMP/push.lua"
out=$("$PERFSCRIPT" -T 0.3 "$TMP/push.lua" 2>&1)
like "$out" "example: sending the last 1 pushes .*"$'\n'"example: 1 remote_write pushes not sent: " \
	"docs/tapsets.md's push example: the body tried, then said as not sent ($(head -c 160 <<<"$out"))"
tapset_example pprof_http >"$TMP/served.lua"
"$PERFSCRIPT" -T 10 "$TMP/served.lua" >"$TMP/served.out" 2>&1 &
pids+=($!)
sport=$(wait_line "$TMP/served.out" '^listening on http://127.0.0.1:[0-9]+/$' | sed 's/.*:\([0-9]*\)\/$/\1/')
curl -s -o "$TMP/served.pb.gz" "http://127.0.0.1:${sport:-1}/debug/pprof/profile?seconds=1"
like "$(pprof_tool -raw "$TMP/served.pb.gz" 2>&1 | head -5)" "^PeriodType: cpu nanoseconds"$'\n'"Period: 10101010" \
	"docs/tapsets.md's pprof_http example: a 1 s profile over HTTP that go tool pprof reads"

# Hostile receivers, against http.post itself: a redirect is followed (a
# POST stays a POST, with its body), at most 10 (a loop of them was
# retried for ever); an endless reply body is cut off and the reply's
# status given at once (it was read to the timeout at 31% of a CPU).
post='local t0 = gettimeofday_ns()
http = require "perfscript.http"
http.post(arg[1], "payload", { timeout_ms = 10000 }, function(status, body)
  print(status, #body, (gettimeofday_ns() - t0) // 1000000)
end)'
hostile() { # MODE: a hostile receiver; sets $rport, its log in $TMP/r-MODE.log
	python3 tests/e2e/hostile_receiver.py "$1" >"$TMP/r-$1.log" 2>&1 &
	pids+=($!)
	rport=$(wait_line "$TMP/r-$1.log" '^port ' | cut -d' ' -f2)
}
hostile redirect
out=$(timeout 20 "$PERFSCRIPT" -e "$post" "http://127.0.0.1:$rport/push" 2>&1)
like "$out" "^200	2	" "a 307 to another path: followed, and the POST arrives there with its body ($out)"
like "$(cat "$TMP/r-redirect.log")" "request /ok 7" "... the body too (7 bytes)"
hostile loop
out=$(timeout 20 "$PERFSCRIPT" -e "$post" "http://127.0.0.1:$rport/push" 2>&1)
like "$out" "^-40	" "a redirect loop: given up after 10 redirects, as -ELOOP ($out)"
is "$(grep -c '^request' "$TMP/r-loop.log")" 11 "... the first request and 10 redirects, no more"
hostile endless
out=$(timeout 20 "$PERFSCRIPT" -e "$post" "http://127.0.0.1:$rport/push" 2>&1)
read -r status kept ms <<<"$out"
ok $(( status == 200 && kept == 65536 && ms < 5000 ? 0 : 1 )) \
	"an endless reply body: cut off after 1 MiB read, its status 200 at once, 64 KiB kept ($out)"

# Misuse and refusals say what is wrong.
out=$("$PERFSCRIPT" -e 'print(pcall(require("perfscript.remote_write").encode, { { value = 1 } }))' 2>&1)
like "$out" "series 1 has no name" "remote_write.encode: a series without a name is refused, naming it"
# A host without libsnappy (hidden in a mount namespace of the test's own):
# encode says so as nil and why, and a queue given that counts a drop and
# says it once, where the call raised and a push of its nil stopped the agent.
snappy=$(ldconfig -p | sed -n 's/.*libsnappy.so.1 .*=> //p' | head -1)
if [[ -n $snappy && $(id -u) == 0 ]] && command -v unshare >/dev/null; then
	out=$(timeout 20 unshare -m sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' sh "$(readlink -f "$snappy")" \
		"$PERFSCRIPT" -e '
local body, why = require("perfscript.remote_write").encode({ { name = "x_total", value = 1 } })
print(body, why)
local q = require("push").new():queue("remote_write")
q:push(nil, why); q:push(nil, why)
print(q.dropped)
exit()' 2>&1)
	like "$out" $'^nil\tremote_write: cannot load libsnappy.so.1: .*\(install libsnappy1v5\)\n.*push: remote_write: remote_write: cannot load.*\n2$' \
		"without libsnappy: encode gives nil and why, a queue counts the drops and says it once"
else
	skip "not root, no unshare or no libsnappy here" "remote write without libsnappy"
fi
out=$("$PERFSCRIPT" -T 5 -e 'require("perfscript.http").post("ftp://127.0.0.1/x", "b", function(st, why) print(st, why); exit() end)' 2>&1)
like "$out" "^-5[[:space:]]Protocol \"ftp\" not supported" "http.post: a URL that is not http or https gets no request, and says why"
out=$("$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --push-interval 0 2>&1)
like "$out" "agent.lua: --push-interval wants a number from 0.1 to 3600 \(S\), got '0'" "agent.lua: a push interval out of range is refused"
"$PERFSCRIPT" -T 5 -e 'local s = assert(require("perfscript.http").listen("127.0.0.1:0", function(req) req:defer(); req:defer() end))
print("port", s:port())' >"$TMP/twice.out" 2>&1 &
pids+=($!)
port=$(wait_line "$TMP/twice.out" '^port' | cut -f2)
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${port:-1}/")
is "$code" 500 "req:defer() twice: the handler's error is a 500 for the client"
wait_line "$TMP/twice.out" "req:defer\(\) is for the handler's own request, once" >/dev/null
ok $? "... and the error names the misuse"

out=$("$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --push http://127.0.0.1:1/ --flush-ms -1 2>&1)
like "$out" "agent.lua: --flush-ms wants a number from 0 to 600000 \(MS\), got '-1'" "agent.lua: a --flush-ms out of range is refused"
out=$("$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --offcpu --offcpu-min-us -1 2>&1)
like "$out" "^agent.lua: --offcpu-min-us wants a number of at least 0 \(N\), got '-1'" "agent.lua: a negative --offcpu-min-us is refused"
out=$("$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --symbols-budget 0.5 2>&1)
like "$out" "^agent.lua: --symbols-budget wants a number of at least 1 \(MIB\), got '0.5'" "agent.lua: a --symbols-budget under 1 MiB is refused"
out=$("$PERFSCRIPT" -e 'local http = require "perfscript.http"; print(http.flush(0)); print(pcall(http.flush, -1))' 2>&1)
like "$out" $'^0\nfalse.*timeout_ms from 0 to 3600000' "http.flush: nothing under way is 0 left; a negative timeout is refused"

# Profiles: a receiver down for its first 2 requests.
mkdir -p "$TMP/ingest"
python3 tests/e2e/ingest_receiver.py "$TMP/ingest" 2 >"$TMP/ingest.log" 2>&1 &
pids+=($!)
rport=$(wait_line "$TMP/ingest.log" '^port ' | cut -d' ' -f2)
"$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --push "http://127.0.0.1:$rport/" --app web \
	--push-interval 0.5 >"$TMP/agent.out" 2>&1 &
agent=$!; pids+=($agent)
url=http://127.0.0.1:$(wait_line "$TMP/agent.out" '^listening on ' | sed -E 's/.*:([0-9]+)\/ .*/\1/')
# windows after the receiver recovered (its backoff is 1 s, then 2 s)
wait_line "$TMP/ingest.log" "^ok 6 " >/dev/null
sent=$(metric "$url" 'perfscript_agent_pushes_total{kind="pyroscope",result="sent"}')
retried=$(metric "$url" 'perfscript_agent_pushes_total{kind="pyroscope",result="retried"}')
kill $agent; wait $agent 2>/dev/null
is "$(grep -c "^failing$" "$TMP/ingest.log")" 2 "the receiver refused the first 2 pushes (503)"
is "$(grep -c '^bad' "$TMP/ingest.log")" 0 "no request was malformed: path /ingest, name=APP{host=...}, from <= until, format=pprof, a profile field$(grep -m1 '^bad' "$TMP/ingest.log" | sed 's/^/: /')"
like "$(grep -m1 '^ok ' "$TMP/ingest.log")" "^ok 1 web\{host=[^}]+\} [0-9]+ [0-9]+$" "name is --app with the host's name as a label"
# windows follow each other: each one's from is the last one's until, none lost
gaps=$(awk '/^ok / { if (last != "" && $4 != last) bad++; last = $5 } END { print bad + 0 }' "$TMP/ingest.log")
is "$gaps" 0 "every window arrived, in order, none lost while the receiver was down"
like "$retried" "^[1-9]" "the failures were retried ($retried), and counted on /metrics"
like "$sent" "^[0-9]+$" "pushes sent are counted on /metrics ($sent)"
good=0
for f in "$TMP"/ingest/*.pb.gz; do
	pprof_tool -raw "$f" >/dev/null 2>&1 && good=$((good + 1))
done
n=$(ls "$TMP"/ingest/*.pb.gz | wc -l)
is "$good" "$n" "go tool pprof reads each of the $n profiles received"

# A destination that never answers: the queue keeps 16, drops the oldest.
"$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --push "http://127.0.0.1:1" \
	--push-interval 0.1 >"$TMP/agent2.out" 2>&1 &
agent=$!; pids+=($agent)
url=http://127.0.0.1:$(wait_line "$TMP/agent2.out" '^listening on ' | sed -E 's/.*:([0-9]+)\/ .*/\1/')
for ((i = 0; i < 100; i++)); do
	dropped=$(metric "$url" 'perfscript_agent_pushes_total{kind="pyroscope",result="dropped"}')
	[[ ${dropped:-0} -gt 0 ]] && break
	sleep 0.1
done
queued=$(metric "$url" 'perfscript_agent_push_queue{kind="pyroscope"}')
kill $agent; wait $agent 2>/dev/null
like "$dropped" "^[1-9]" "a destination that never answers: the oldest windows are dropped ($dropped), and counted"
is "$queued" 16 "the queue stays at 16"

# The session's last window is pushed at its end: a window longer than the
# session gives exactly one push, from the start to the end.
mkdir -p "$TMP/last"
python3 tests/e2e/ingest_receiver.py "$TMP/last" 0 >"$TMP/last.log" 2>&1 &
pids+=($!)
rport=$(wait_line "$TMP/last.log" '^port ' | cut -d' ' -f2)
t0=$(date +%s)
"$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --push "http://127.0.0.1:$rport/" \
	--push-interval 600 >"$TMP/last.out" 2>&1 &
agent=$!; pids+=($agent)
wait_line "$TMP/last.out" '^listening on ' >/dev/null
"$WORKLOAD" spin 300 >/dev/null
kill -INT $agent; wait $agent 2>/dev/null
t1=$(date +%s)
is "$(grep -c '^ok ' "$TMP/last.log")" 1 "a session shorter than its window pushes its last, partial window at the end"
read -r _ _ _ from until < <(grep -m1 '^ok ' "$TMP/last.log")
ok $(( !(${from:-0} >= t0 - 1 && ${from:-0} <= ${until:-0} && ${until:-0} <= t1 + 1) )) "... from the session's start ($from) to its end ($until)"
like "$(pprof_tool -raw "$TMP"/last/*.pb.gz 2>&1 | grep -c '^ *[0-9]*: ')" '^[1-9]' "... with the session's samples in it"

# --offcpu: each window's off-CPU profile is pushed too, as APP.offcpu
mkdir -p "$TMP/off"
python3 tests/e2e/ingest_receiver.py "$TMP/off" 0 >"$TMP/off.log" 2>&1 &
pids+=($!)
rport=$(wait_line "$TMP/off.log" '^port ' | cut -d' ' -f2)
"$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --push "http://127.0.0.1:$rport/" --offcpu \
	--push-interval 600 >"$TMP/off.out" 2>&1 &
agent=$!; pids+=($agent)
line=$(wait_line "$TMP/off.out" '^listening on ')
# the listener answers once the session runs (its programs loaded)
curl -s -o /dev/null "http://127.0.0.1:$(sed -E 's/.*:([0-9]+)\/ .*/\1/' <<<"$line")/metrics"
"$WORKLOAD" sleep 300
kill -INT $agent; wait $agent 2>/dev/null
n=$(awk '$1 == "ok" && $3 ~ /^host\.offcpu\{host=/ { print $2 }' "$TMP/off.log")
like "${n:-none}" "^[0-9]+$" "--offcpu: the window's off-CPU profile is pushed too, named host.offcpu{host=...}"
like "$(pprof_tool -top "$TMP/off/${n:-0}.pb.gz" 2>&1)" "Type: off-cpu" "... and go tool pprof reads it as off-cpu"

# A destination that holds the connection and never answers: the end waits
# --flush-ms for it, then says what was not sent; a second Ctrl-C cuts the wait.
python3 -c 'import socket, time, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
print("port", s.getsockname()[1], flush=True)
conns = []
while True: conns.append(s.accept())' >"$TMP/hole.log" 2>&1 &
pids+=($!)
hport=$(wait_line "$TMP/hole.log" '^port ' | cut -d' ' -f2)
"$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --push "http://127.0.0.1:$hport/" \
	--push-interval 600 --flush-ms 700 >"$TMP/hole.out" 2>&1 &
agent=$!; pids+=($agent)
wait_line "$TMP/hole.out" '^listening on ' >/dev/null
s0=$(date +%s%N); kill -INT $agent; wait $agent 2>/dev/null; s1=$(date +%s%N)
ms=$(( (s1 - s0) / 1000000 ))
ok $(( !(ms >= 600 && ms < 3000) )) "a destination that never answers: the end waits about --flush-ms 700 for it ($ms ms)"
like "$(cat "$TMP/hole.out")" "agent: 1 pyroscope pushes not sent: no answer within (69[0-9]|7[0-9][0-9]) ms" "... and says what was not sent, and how long it waited"
# A destination where nothing listens: the end does not claim a wait it did
# not make (it said "within 5000 ms" after a 1.3 s exit)
cport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --push "http://127.0.0.1:$cport/" \
	--push-interval 600 --flush-ms 5000 >"$TMP/closed.out" 2>&1 &
agent=$!; pids+=($agent)
wait_line "$TMP/closed.out" '^listening on ' >/dev/null
kill -INT $agent; wait $agent 2>/dev/null
line=$(grep 'pushes not sent' "$TMP/closed.out")
like "$line" "the destination refused or failed the last try \(1 retried, 0 refused; [0-9]+ ms spent\)" \
	"a destination where nothing listens: says the last try failed, and the time it really spent"
"$PERFSCRIPT" -a $EX/agent.lua --listen 127.0.0.1:0 --push "http://127.0.0.1:$hport/" \
	--push-interval 600 --flush-ms 60000 >"$TMP/hole2.out" 2>&1 &
agent=$!; pids+=($agent)
wait_line "$TMP/hole2.out" '^listening on ' >/dev/null
kill -INT $agent
wait_line "$TMP/hole2.out" '^agent: sending the last 1 pushes' >/dev/null
s0=$(date +%s%N); kill -INT $agent; wait $agent 2>/dev/null; s1=$(date +%s%N)
ms=$(( (s1 - s0) / 1000000 ))
ok $(( !(ms < 500) )) "a second Ctrl-C during the end's wait ends it at once ($ms ms)"
# A full queue drops the oldest body waiting, not the one being sent (it
# was dropped, then arrived: counted twice, tests/slow/fleet.sh)
out=$("$PERFSCRIPT" -T 5 -e '
local q = require("push").new{ max = 2 }:queue("x")
for _, b in ipairs{ "a", "b", "c", "d" } do q:push{ url = "http://127.0.0.1:'"$hport"'/", body = b } end
print(q.busy, q.items[1].body, q.items[2].body, q.dropped)
exit()' 2>&1)
is "$out" $'true	a	d	2' "a full queue drops the oldest body waiting, never the one under way"

# Remote write, into a real Prometheus that also scrapes the agent.
if ! command -v prometheus >/dev/null; then
	skip "prometheus is not installed (Debian's prometheus package)" "remote write into Prometheus"
	done_testing; exit
fi
for try in 1 2 3 4 5; do
	pport=$((20000 + RANDOM % 40000))
	aport=$((20000 + RANDOM % 40000))
	printf '%s\n' "global: { scrape_interval: 1s, scrape_timeout: 1s }" "scrape_configs:" \
		"  - job_name: agent" "    static_configs: [ { targets: [\"127.0.0.1:$aport\"] } ]" \
		>"$TMP/prom.yml"
	prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/prom-data" \
		--web.enable-remote-write-receiver --web.listen-address="127.0.0.1:$pport" >"$TMP/prom.log" 2>&1 &
	prom=$!; pids+=($prom)
	wait_line "$TMP/prom.log" 'Server is ready|address already in use' >/dev/null
	kill -0 $prom 2>/dev/null && ! grep -q 'address already in use' "$TMP/prom.log" && break
done
"$PERFSCRIPT" -a $EX/agent.lua --listen "127.0.0.1:$aport" --push-interval 0.5 \
	--remote-write "http://127.0.0.1:$pport/api/v1/write" >"$TMP/agent3.out" 2>&1 &
pids+=($!)
query() { curl -s "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1"; }
got=""
for ((i = 0; i < 100; i++)); do
	got=$(query 'perfscript_events_total{event="context-switches",cpu="0",job=""}')
	[[ $got == *'"value"'* ]] && break
	sleep 0.2
done
like "$got" '"__name__":"perfscript_events_total".*"cpu":"0".*"event":"context-switches","host":"'"$(cat /proc/sys/kernel/hostname)"'"' \
	"Prometheus received the remote-written series, under the host's name, and answers a PromQL query for it"
for ((i = 0; i < 100; i++)); do # the count of a push arrives with the next one
	got=$(query 'perfscript_agent_pushes_total{kind="remote_write",result="sent",job=""} > 0')
	[[ $got == *'"value"'* ]] && break
	sleep 0.2
done
like "$got" '"value"' "the agent's own push counter arrives by remote write too"
for ((i = 0; i < 100; i++)); do
	got=$(query 'up{job="agent"} == 1')
	[[ $got == *'"value"'* ]] && break
	sleep 0.2
done
like "$got" '"job":"agent"' "the same Prometheus scrapes the agent's /metrics"
done_testing
