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
		skip_all "$tool is not installed" "the HTTP listener under attack"
	fi
done
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
ulimit -n 4096 2>/dev/null

# start NAME ARGS...: an exporter on a free port; sets $port.
start() {
	local name=$1; shift
	"$PERFSCRIPT" "$EX/exporter.lua" --listen 127.0.0.1:0 -p $$ --events task-clock -o "$TMP/$name.out" "$@" \
		2>"$TMP/$name.err" &
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
is "$(c -u prom:wrong2 "$url")" 503 "another password from the same address within the second: 503 (one check a second each)"
is "$(c --interface 127.0.0.4 -u nobody:s3cret "$url")" 401 "an unknown user: 401"
is "$(c --interface 127.0.0.5 -u prom:s3cret "$url")" 200 "the right user and password (checked against the bcrypt hash relative to the file's folder): 200"
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

# TLS versions and suites, as Go's exporters have them by default: 1.2 and
# 1.3, and for 1.2 only key exchanges with forward secrecy.
hs() { # PORT OPENSSL-ARGS...: "yes" when openssl s_client completes a handshake
	local p=$1; shift
	openssl s_client -brief -connect "127.0.0.1:$p" "$@" </dev/null 2>&1 | grep -q "CONNECTION ESTABLISHED" &&
		echo yes || echo no
}
is "$(hs "$port" -tls1_3)" yes "TLS 1.3 is spoken"
is "$(hs "$port" -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256)" yes "TLS 1.2 with ECDHE is spoken"
is "$(hs "$port" -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0')" no "TLS 1.1 is refused by default"
is "$(hs "$port" -tls1_2 -cipher AES128-GCM-SHA256)" no "TLS 1.2 without forward secrecy (RSA key exchange) is refused by default"
tls_conf() { # NAME EXTRA-LINES: a web config with TLS and these lines
	printf 'tls_server_config:\n  cert_file: %s\n  key_file: %s\n%s\n' "$TMP/cert.pem" "$TMP/key.pem" "$2" >"$TMP/$1.yml"
}
tls_conf v13 '  min_version: TLS13'
start v13 --web.config.file "$TMP/v13.yml"
is "$(hs "$port" -tls1_2)/$(hs "$port" -tls1_3)" no/yes "min_version: TLS13 refuses TLS 1.2 and speaks 1.3"
tls_conf suites $'  max_version: TLS12\n  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]'
start suites --web.config.file "$TMP/suites.yml"
is "$(hs "$port" -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256)/$(hs "$port" -tls1_2 -cipher ECDHE-RSA-AES256-GCM-SHA384)/$(hs "$port" -tls1_3)" \
	yes/no/no "cipher_suites and max_version: the suite listed is spoken, another and TLS 1.3 are not"

# Password guessing from one address does not lock out another: a flood of
# wrong passwords for a known user from 127.0.0.2, and the real scraper from
# 127.0.0.1 (never accepted before) gets in at every try; an unknown user's
# reply takes as long as a known user's wrong password (bcrypt either way).
start auth2 --web.config.file "$TMP/conf/web.yml"
aurl="https://127.0.0.1:$port/metrics"
( while :; do curl -s -m 5 -o /dev/null --cacert "$TMP/cert.pem" --interface 127.0.0.2 -u prom:guess "$aurl"; done ) &
flood=$!; pids+=($flood)
for i in $(seq 30); do c --interface 127.0.0.2 -u prom:guess "$aurl" >/dev/null; done
codes=$(for i in $(seq 5); do c -u prom:s3cret "$aurl"; echo -n " "; done)
is "$codes" "200 200 200 200 200 " "the real scraper gets in at every try while another address guesses"
kill $flood; wait $flood 2>/dev/null
ms() { local t0; t0=$(date +%s%N); c "$@" >/dev/null; echo $(( ($(date +%s%N) - t0) / 1000000 )); }
start auth3 --web.config.file "$TMP/conf/web.yml"
aurl="https://127.0.0.1:$port/metrics"
known=$(ms -u prom:wrong "$aurl")
unknown=$(ms --interface 127.0.0.3 -u nosuchuser:wrong "$aurl")
awk -v k="$known" -v u="$unknown" 'BEGIN { exit !(u * 2 >= k && k * 2 >= u) }'
ok $? "an unknown user's reply takes as long as a known user's wrong password ($unknown vs $known ms)"

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
bad $'basic_auth_users:\n  prom: plaintext' "line 2: the password of 'prom' must be a bcrypt hash" "a password that is not a bcrypt hash is refused"
bad $'basic_auth_users:\n  prom: $2y$99$'"${hash:7}" "line 2: the password of 'prom' must be a bcrypt hash" "a bcrypt hash with a cost of 99 is refused"
# a check runs on the loop: cost 20 would hold every request a minute
bad $'basic_auth_users:\n  prom: $2y$20$'"${hash:7}" "line 2: the password of 'prom' must be a bcrypt hash of cost 4 to 14" "a bcrypt hash of cost 20 is refused, saying the range"
bad $'basic_auth_users:\n  prom: '"${hash:0:40}" "line 2: the password of 'prom' must be a bcrypt hash" "a cut bcrypt hash is refused"
# Keys and users given twice (a duplicated basic_auth_users once overflowed the heap)
bad $'basic_auth_users:\n  a: '"$hash"$'\nbasic_auth_users:\n  b: '"$hash" "line 3: 'basic_auth_users' is given twice" \
	"a section given twice is refused"
bad $'basic_auth_users:\n  a: '"$hash"$'\n  a: '"$hash" "line 3: 'a' is given twice" "a user given twice is refused"
bad $'tls_server_config:\n  cert_file: '"$TMP/cert.pem"$'\n  cert_file: '"$TMP/cert.pem" "line 3: 'cert_file' is given twice" \
	"a TLS key given twice is refused"
bad $'tls_server_config:\n  cert_file: '"$TMP/cert.pem"$'\n  key_file: '"$TMP/key.pem"$'\n  min_version: TLS14' \
	"line 4: a TLS version is TLS10, TLS11, TLS12 or TLS13, not 'TLS14'" "an unknown TLS version is refused"
bad $'tls_server_config:\n  cert_file: '"$TMP/cert.pem"$'\n  key_file: '"$TMP/key.pem"$'\n  min_version: TLS13\n  max_version: TLS12' \
	"min_version TLS13 is above max_version TLS12" "min_version above max_version is refused"
bad $'tls_server_config:\n  cert_file: '"$TMP/cert.pem"$'\n  key_file: '"$TMP/key.pem"$'\n  cipher_suites: [TLS_NULL_WITH_NOTHING]' \
	"cipher_suites: 'TLS_NULL_WITH_NOTHING' is not a suite perfscript knows" "an unknown cipher suite is refused"
bad $'tls_server_config:\n  cert_file: '"$TMP/cert.pem"$'\n  key_file: '"$TMP/key.pem"$'\n  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA]' \
	"these also enable .*TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384.*set max_version: TLS12" \
	"suites GnuTLS cannot enable alone (TLS 1.3 shares their parts) are refused, naming the others"
bad $'tls_server_config:\n  cert_file: '"$TMP/cert.pem"$'\n  key_file: '"$TMP/key.pem"$'\n  max_version: TLS12\n  cipher_suites: [TLS_RSA_WITH_AES_128_CBC_SHA256, TLS_RSA_WITH_AES_256_CBC_SHA]' \
	"these also enable TLS_RSA_AES_256_CBC_SHA256, TLS_RSA_WITH_AES_128_CBC_SHA: list them too$" \
	"TLS 1.2 suites whose parts combine into others are refused, naming those (no TLS 1.3 advice when it is off)"
# Files others could change, or read for a key, are refused (perfscript runs as root).
cp "$TMP/conf/web.yml" "$TMP/ww.yml"; chmod 0666 "$TMP/ww.yml"
out=$("$PERFSCRIPT" "$EX/exporter.lua" --listen 127.0.0.1:0 -p $$ --web.config.file "$TMP/ww.yml" 2>&1)
like "$?: $out" "^1: .*the web config $TMP/ww.yml is writable by other users \(chmod go-w\)$" "a world-writable configuration is refused, in one line"
cp "$TMP/key.pem" "$TMP/conf/open.pem"; chmod 0644 "$TMP/conf/open.pem"
sed "s|key_file: .*|key_file: open.pem|" "$TMP/conf/web.yml" >"$TMP/conf/openkey.yml"
out=$("$PERFSCRIPT" "$EX/exporter.lua" --listen 127.0.0.1:0 -p $$ --web.config.file "$TMP/conf/openkey.yml" 2>&1)
like "$?: $out" "^1: .*the key $TMP/conf/open.pem is readable by every user \(chmod o-r\)" "a key every user can read is refused"
cp "$TMP/conf/web.yml" "$TMP/theirs.yml"; chown nobody "$TMP/theirs.yml"
out=$("$PERFSCRIPT" "$EX/exporter.lua" --listen 127.0.0.1:0 -p $$ --web.config.file "$TMP/theirs.yml" 2>&1)
like "$?: $out" "^1: .*the web config $TMP/theirs.yml is owned by another user" "a configuration another user owns is refused"
# An empty file is what the exporter-toolkit makes of it: plain HTTP, no users.
: >"$TMP/empty.yml"
start empty --web.config.file "$TMP/empty.yml"
is "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")" 200 "an empty web config: plain HTTP, no users"
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
