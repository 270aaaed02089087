# listener.sh: the HTTP listener as an attacker meets it, and its access
# control. examples/exporter.lua keeps answering /metrics within 1 s while
# 1000 idle connections are held, while 200 slowloris clients trickle
# headers, and after oversized requests (which get 414/431 at once); a
# connection that sends no whole request is closed after the idle time.
# With a web configuration file (the Prometheus exporters' format) it
# speaks TLS and asks for a bcrypt-checked user: curl scrapes it that way
# (and a real Prometheus, in exporter.sh). Bad configuration files are refused with their line.
source "$(dirname "$0")/lib.sh"
EX=$(cd "$(dirname "$0")/../../examples" && pwd)
ATTACK=$(dirname "$0")/attack.py
for tool in curl python3 openssl; do
	if ! command -v $tool >/dev/null; then
		skip "$tool is not installed" "the HTTP listener under attack"
		done_testing; exit
	fi
done
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
ulimit -n 4096 2>/dev/null

# start NAME ARGS...: an exporter on a free port; sets $port.
start() {
	local name=$1; shift
	"$PERFSCRIPT" "$EX/exporter.lua" --listen 127.0.0.1:0 -p $$ --events task-clock "$@" \
		>"$TMP/$name.out" 2>"$TMP/$name.err" &
	pids+=($!)
	port=$(wait_line "$TMP/$name.out" '^listening on ' | sed 's/.*:\([0-9]*\)\/metrics$/\1/')
}
# scrapes OUTPUT: "ok" when every scrape line says 200.
all_200() { awk '/^scrape/ { n++; if ($2 != 200) bad++ } END { print (n > 0 && !bad) ? "ok" : "failed" }' <<<"$1"; }

start plain
out=$(python3 "$ATTACK" "$port" idle 1000 2>&1)
like "$out" "held 1000" "1000 idle connections are accepted"
is "$(all_200 "$out")" ok "with 1000 idle connections held, every scrape is answered within 1 s"
printf '%s\n' "$out" | sed 's/^/# /'
out=$(python3 "$ATTACK" "$port" loris 200 2>&1)
is "$(all_200 "$out")" ok "with 200 slowloris clients trickling headers, every scrape is answered within 1 s"
out=$(python3 "$ATTACK" "$port" big 2>&1)
like "$out" "path HTTP/1.1 414" "a 100 kB path gets 414 at once"
like "$out" "header HTTP/1.1 431" "a 100 kB header gets 431 at once"
is "$(all_200 "$out")" ok "after 100 half-sent oversized requests, a scrape is answered within 1 s"
is "$(curl -s -m 1 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")" 200 \
	"and the listener still answers when the attackers have gone"

# A connection that never sends a whole request is closed after the idle time.
"$PERFSCRIPT" -e 'local s = assert(require("perfscript.http").listen("127.0.0.1:0",
  function() return "x" end, { idle_timeout_ms = 500 }))
print("port " .. s:port()); io.stdout:flush()' >"$TMP/idle.out" 2>&1 &
pids+=($!)
iport=$(wait_line "$TMP/idle.out" '^port ' | cut -d' ' -f2)
out=$(python3 "$ATTACK" "$iport" timeout)
like "$out" "closed after (0\.[5-9]|1\.[0-9]) read 0" "an idle connection is closed after idle_timeout_ms (500 ms)"

# TLS and basic auth from a web configuration file.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 2 \
	-subj /CN=localhost -addext subjectAltName=IP:127.0.0.1,DNS:localhost >/dev/null 2>&1
hash=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("s3cret", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))')
mkdir -p "$TMP/conf"
printf 'tls_server_config:\n  cert_file: ../cert.pem\n  key_file: %s\nbasic_auth_users:\n  prom: %s\n' \
	"$TMP/key.pem" "$hash" >"$TMP/conf/web.yml"
start tls --web.config.file "$TMP/conf/web.yml"
like "$(cat "$TMP/tls.out")" '^listening on https://127\.0\.0\.1:[0-9]+/metrics' "with TLS it says https"
url="https://127.0.0.1:$port/metrics"
c() { curl -s -m 5 -o /dev/null -w '%{http_code}' --cacert "$TMP/cert.pem" "$@"; }
is "$(c "$url")" 401 "no user: 401"
is "$(curl -s -m 5 -D - -o /dev/null --cacert "$TMP/cert.pem" "$url" | grep -ci '^WWW-Authenticate: Basic')" 1 \
	"which asks for basic auth"
is "$(c -u prom:wrong "$url")" 401 "a wrong password: 401"
is "$(c -u nobody:s3cret "$url")" 401 "an unknown user: 401"
is "$(c -u prom:s3cret "$url")" 200 "the right user and password (checked against the bcrypt hash relative to the file's folder): 200"
is "$(c -u prom:s3cret "$url")" 200 "and again (remembered, not hashed again)"
is "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")" 000 "plain HTTP on the TLS port gets no page"
# Guessing passwords is throttled, not a way to keep the loop busy.
# (at once: one after another, a loaded machine's bcrypt alone can keep
# them under 4 a second)
gp=()
for i in $(seq 12); do c -u "prom:guess$i" "$url" >"$TMP/guess$i" & gp+=($!); done
wait "${gp[@]}"
codes=$(for i in $(seq 12); do cat "$TMP/guess$i"; echo; done | sort | uniq -c | tr -s ' ' | tr '\n' ';')
like "$codes" "503" "twelve guesses at once: some are told to retry later (503) ($codes)"
is "$(c -u prom:s3cret "$url")" 200 "the remembered password still gets in during the guessing"

# (A real Prometheus scraping over TLS with basic auth: tests/e2e/exporter.sh,
# which starts one Prometheus for both of its checks.)

# Configuration files that cannot be honoured are refused, naming the line.
bad() { # FILE-TEXT REGEX DESCRIPTION
	printf '%s\n' "$1" >"$TMP/bad.yml"
	out=$("$PERFSCRIPT" "$EX/exporter.lua" --listen 127.0.0.1:0 -p $$ --web.config.file "$TMP/bad.yml" 2>&1)
	rc=$?
	like "$rc: $out" "^1: .*$2" "$3"
}
bad $'tls_server_config:\n  client_ca_file: y' "line 2: tls_server_config: 'client_ca_file' is not supported" \
	"a TLS setting perfscript does not act on is refused, with its line"
bad $'http_server_config:\n  http2: true' "line 1: 'http_server_config' is not supported" "an unknown section is refused"
bad $'basic_auth_users:\n  prom: plaintext' "line 2: a password must be a bcrypt hash" "a password that is not a bcrypt hash is refused"
bad $'tls_server_config:\n  cert_file: /nonexistent.pem\n  key_file: x' "cannot read the certificate /nonexistent.pem: No such file" \
	"a missing certificate is named"
bad $'tls_server_config:\n  cert_file: '"$TMP/cert.pem" "tls_server_config needs both cert_file and key_file" "a certificate without a key is refused"
bad $'basic_auth_users: [a, b' "line 2: .*" "a file that is not YAML is refused"
out=$("$PERFSCRIPT" "$EX/exporter.lua" --listen 127.0.0.1:0 -p $$ --web.config.file /nonexistent.yml 2>&1)
like "$out" "cannot read the web config /nonexistent.yml: No such file or directory" "a missing configuration file is named"

# Addresses.
for a in "127.0.0.1:99999|the port must be a number from 0 to 65535" "[::1]|the port is missing" \
	"::1:9100|write an IPv6 address in brackets"; do
	out=$("$PERFSCRIPT" "$EX/exporter.lua" --listen "${a%%|*}" -p $$ 2>&1)
	is "$(grep -cF "bad listen address '${a%%|*}': ${a#*|}" <<<"$out")" 1 "--listen ${a%%|*} is refused: ${a#*|}"
done
done_testing
