# fleet.sh: a fleet in a box. Four hosts, each a network namespace and a
# UTS namespace of its own (its own host name) joined by veth to a bridge
# in a fifth, each running examples/agent.lua with --otlp and
# --remote-write; the fifth runs the OpenTelemetry Collector's OTLP
# receiver (build/tests/otlp_receiver) and a real Prometheus that takes
# the remote writes and scrapes the agents. Every host's profiles and
# series arrive under its own name; the Collector is stopped for 30 s and
# started again: the agents keep sampling, their queues stay within 16 and
# their RSS within 40 MB, what they dropped is exactly the windows missing
# at the Collector (the windows follow each other: a gap of k seconds is k
# windows), what they sent is exactly what arrived, and nothing arrived
# twice.
#   FLEET_DOWN=30 bash tests/slow/fleet.sh   (make check-fleet)
source "$(dirname "$0")/../e2e/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
B=$PWD/build/tests
DOWN=${FLEET_DOWN:-30}
N=4
if ! need_root || ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
	skip_all "needs root, ip (iproute2) and unshare for the namespaces" "fleet"
fi
if [[ ! -x $B/otlp_receiver ]] || ! command -v prometheus >/dev/null || ! command -v curl >/dev/null; then
	skip_all "needs build/tests/otlp_receiver (Go), prometheus and curl (make check-slow builds and installs them)" "fleet"
fi
tag=psf$$
hub=$tag-hub
NET=10.213.0
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for ns in "$hub" $(for ((i = 1; i <= N; i++)); do echo "$tag-h$i"; done); do ip netns del "$ns" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

metric() { # HOST NAME: the agent's sample of NAME on its /metrics
	ip netns exec "$tag-h$1" curl -s --max-time 5 "http://127.0.0.1:9464/metrics" | awk -v m="$2" '$1 == m { print $2 }'
}
query() { ip netns exec "$hub" curl -s --max-time 5 "http://$NET.1:9090/api/v1/query" --data-urlencode "query=$1"; }

# The network: a bridge in the hub, a veth to each host.
ip netns add "$hub" && ip -n "$hub" link set lo up && ip -n "$hub" link add br0 type bridge &&
	ip -n "$hub" addr add "$NET.1/24" dev br0 && ip -n "$hub" link set br0 up
net=$?
for ((i = 1; i <= N; i++)); do
	h=$tag-h$i
	ip netns add "$h" && ip -n "$h" link set lo up &&
		ip -n "$hub" link add "v$i" type veth peer name eth0 netns "$h" &&
		ip -n "$hub" link set "v$i" master br0 up &&
		ip -n "$h" addr add "$NET.$((10 + i))/24" dev eth0 && ip -n "$h" link set eth0 up || net=1
done
is "$net" 0 "five network namespaces, four hosts on a bridge to the hub"

collector() { # N: the Collector's receiver, its requests in $TMP/colN.jsonl
	ip netns exec "$hub" "$B/otlp_receiver" "$NET.1:4318" >"$TMP/col$1.jsonl" 2>"$TMP/col$1.err" &
	col=$!; pids+=($col)
	wait_line "$TMP/col$1.jsonl" '^listening 4318' >/dev/null
}
collector 1
ok $? "the Collector's OTLP receiver listens in the hub ($(cat "$TMP/col1.err"))"
{
	echo "global: { scrape_interval: 1s, scrape_timeout: 1s }"
	echo "scrape_configs:"
	echo "  - job_name: fleet"
	printf '    static_configs: [ { targets: [%s] } ]\n' \
		"$(for ((i = 1; i <= N; i++)); do printf '"%s.%d:9464"%s' "$NET" $((10 + i)) "$( ((i < N)) && echo ,)"; done)"
} >"$TMP/prom.yml"
ip netns exec "$hub" prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/prom-data" \
	--web.enable-remote-write-receiver --web.listen-address="$NET.1:9090" >"$TMP/prom.log" 2>&1 &
pids+=($!)
wait_for "$TMP/prom.log" 'Server is ready' 30
ok $? "Prometheus listens in the hub, taking remote writes and scraping the four agents"

# The agents: one a host, each with its own host name.
agents=()
for ((i = 1; i <= N; i++)); do
	ip netns exec "$tag-h$i" unshare --uts sh -c 'hostname "$1" && shift && exec "$@"' sh "fleet-h$i" \
		"$PERFSCRIPT" -a examples/agent.lua --listen 0.0.0.0:9464 --push-interval 1 --app fleet \
		--otlp "http://$NET.1:4318" --remote-write "http://$NET.1:9090/api/v1/write" >"$TMP/agent$i.out" 2>&1 &
	agents+=($!); pids+=($!)
done
up=0
for ((i = 1; i <= N; i++)); do wait_for "$TMP/agent$i.out" '^listening on ' 30 && up=$((up + 1)); done
is "$up" "$N" "four agents listen, one in each host ($(grep -hv '^listening' "$TMP"/agent*.out | head -3))"

arrived() { # FILE HOST: requests of HOST in FILE
	grep -c "\"host.name\":\"$2\"" "$1"
}
for ((t = 0; t < 300; t++)); do
	least=9
	for ((i = 1; i <= N; i++)); do
		n=$(arrived "$TMP/col1.jsonl" "fleet-h$i"); ((n < least)) && least=$n
	done
	((least >= 3)) && break
	sleep 0.1
done
ok $((least < 3)) "each host's first windows reach the Collector under its own host.name"

# The Collector is down for DOWN seconds: the agents sample on, their
# queues fill to 16 and then drop their oldest windows.
kill -TERM "$col"; wait "$col" 2>/dev/null
samples0=$(metric 1 'perfscript_samples_total{event="cpu-clock"}')
most=0
t0=$SECONDS
while ((SECONDS - t0 < DOWN)); do
	for ((i = 1; i <= N; i++)); do
		q=$(metric "$i" 'perfscript_agent_push_queue{kind="otlp"}')
		((${q:-0} > most)) && most=${q:-0}
	done
	sleep 1
done
samples1=$(metric 1 'perfscript_samples_total{event="cpu-clock"}')
dropped=()
for ((i = 1; i <= N; i++)); do dropped+=("$(metric "$i" 'perfscript_agent_pushes_total{kind="otlp",result="dropped"}')"); done
ok $((most > 16 || most < 10)) "while the Collector is down, each agent's queue fills and stays within 16 (at most $most)"
like "${dropped[*]}" "^[1-9][0-9]* [1-9][0-9]* [1-9][0-9]* [1-9][0-9]*$" "... and the oldest windows are dropped (${dropped[*]})"
ok $((!(${samples1:-0} > ${samples0:-0}))) "... the agents sample on meanwhile (host 1's samples: $samples0, then $samples1)"

# Back up: each queue drains (its backoff has reached 16 or 30 s).
collector 2
for ((t = 0; t < 90; t++)); do
	left=0
	for ((i = 1; i <= N; i++)); do
		q=$(metric "$i" 'perfscript_agent_push_queue{kind="otlp"}')
		left=$((left + ${q:-1}))
	done
	((left == 0)) && break
	sleep 1
done
is "$left" 0 "the Collector back, every queue drains (in ${t} s)"

# Prometheus has each host's series under its host label (remote write)
# and each agent's /metrics under its instance (scrape).
hosts=$(query 'count by (host) (perfscript_events_total{event="context-switches",job=""})' |
	grep -o '"host":"[^"]*"' | sort | tr '\n' ' ')
is "$hosts" '"host":"fleet-h1" "host":"fleet-h2" "host":"fleet-h3" "host":"fleet-h4" ' \
	"Prometheus has each host's remote-written series under its own host label"
is "$(query 'count(up{job="fleet"} == 1)' | grep -o '"value":\[[^]]*\]' | grep -o '"[0-9]*"]' | tr -d '"]')" "$N" \
	"... and scrapes all four agents"

# What each agent cost (user and system CPU over its life, RSS): for the
# log, not a test (benchmarks are not assertions: bench/agent.sh).
tick=$(getconf CLK_TCK)
for ((i = 1; i <= N; i++)); do
	diag "agent $i's symbolizer: $(ip netns exec "$tag-h$i" curl -s --max-time 5 http://127.0.0.1:9464/metrics |
		awk -F'[{}"= ]+' '/^perfscript_agent_symbolizer\{/ { printf "%s %s ", $3, $4 }')"
done
for p in "${agents[@]}"; do
	read -r -a st <"/proc/$p/stat"
	age=$(awk -v s="${st[21]}" -v t="$tick" '{ print $1 - s / t }' /proc/uptime)
	diag "agent $p: $(awk -v u="${st[13]}" -v s="${st[14]}" -v t="$tick" -v a="$age" \
		'BEGIN { printf "%.2f%% of a CPU over %.0f s", 100 * (u + s) / t / a, a }'), $(awk '/^(VmRSS|RssAnon|RssFile)/ { printf "%s %.1f MB ", $1, $2 / 1024 }' "/proc/$p/status")"
done
# Memory over each agent's life, the Collector's restart included (a Go
# program starting: libdw inflated its DWARF into the unwinder, 41-43 MB).
peak=$(for p in "${agents[@]}"; do awk '/^VmHWM/ { print $2 }' "/proc/$p/status"; done | sort -n | tail -1)
ok $((${peak:-99999} > 40 * 1024)) "no agent's RSS went past 40 MB in its life (the most: $((${peak:-0} / 1024)) MB)"
# The end: each agent pushes its last window and says what it pushed.
for p in "${agents[@]}"; do kill -INT "$p"; done
for p in "${agents[@]}"; do wait "$p"; done
kill -TERM "$col"; wait "$col" 2>/dev/null
cat "$TMP"/col1.jsonl "$TMP"/col2.jsonl | grep '^{' >"$TMP/all.jsonl"
for ((i = 1; i <= N; i++)); do
	read -r sent retried drop refused < <(sed -nE 's/^agent: otlp pushes: ([0-9]+) sent, ([0-9]+) retried, ([0-9]+) dropped, ([0-9]+) refused$/\1 \2 \3 \4/p' "$TMP/agent$i.out")
	python3 - "$TMP/all.jsonl" "fleet-h$i" >"$TMP/h$i.acct" <<'EOF'
import json, sys
wins = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["resource"].get("host.name") != sys.argv[2]:
        continue
    cpu = r["profiles"][0]
    wins.append((cpu["time_unix_nano"], cpu["duration_nano"], len(cpu["samples"] or [])))
starts = [w[0] for w in wins]
wins.sort()
missing, odd = 0, 0
for a, b in zip(wins, wins[1:]):
    gap = (b[0] - a[0] - a[1]) / 1e9  # seconds between one window's end and the next one's start
    k = round(gap)
    missing += k
    odd += abs(gap - k) > 0.3
print(len(wins), len(starts) - len(set(starts)), missing, odd, sum(1 for w in wins if w[2] > 0))
EOF
	read -r got twice missing odd nonempty <"$TMP/h$i.acct"
	is "$got" "${sent:-none}" "host $i: the Collector received exactly the $sent requests the agent says it sent ($retried retried)"
	is "$twice" 0 "host $i: no window arrived twice"
	is "$missing $odd" "${drop:-none} 0" "host $i: the windows missing at the Collector are exactly the $drop the agent dropped"
	like "$nonempty" "^[1-9]" "host $i: its windows hold samples ($nonempty of $got)"
	rw=$(query "perfscript_agent_pushes_total{kind=\"otlp\",result=\"dropped\",host=\"fleet-h$i\",job=\"\"}" |
		grep -o '"value":\[[^]]*\]' | grep -o '"[0-9]*"]' | tr -d '"]')
	is "$rw" "$drop" "host $i: the drops Prometheus has by remote write are the agent's ($drop)"
done
done_testing
