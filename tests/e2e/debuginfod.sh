# debuginfod.sh: names for a stripped binary from a real debuginfod server
# on loopback (Debian's debuginfod, serving the debug file the test split
# off its own build), fetched off the sampling path: a 10 kHz profile loses
# no sample and ends within its wait budget (2 s) when the server is
# stopped or answers after 5 s; --debuginfod-wait -1 asks nothing; without
# $DEBUGINFOD_URLS libdebuginfod is not even loaded.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
for c in debuginfod curl objcopy python3; do
	command -v $c >/dev/null && continue
	skip_all "$c is not installed (Debian's debuginfod, curl, binutils, python3)" "names from debuginfod"
done
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"' EXIT

mkdir -p "$TMP/src"
cc -O2 -g -fomit-frame-pointer -o "$TMP/src/chain" "$ROOT/tests/progs/chain.c"
objcopy --only-keep-debug "$TMP/src/chain" "$TMP/src/chain.debug"
cp "$TMP/src/chain" "$TMP/chain"
strip "$TMP/chain"
rm "$TMP/src/chain" # the server has the debug file only
id=$(readelf -n "$TMP/chain" | sed -n 's/.*Build ID: //p')
port=$((20000 + RANDOM % 20000))
debuginfod -p $port -F "$TMP/src" -d "$TMP/db.sqlite" >"$TMP/d.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do
	[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/buildid/$id/debuginfo") == 200 ]] && break
	sleep 0.05
done
prof() { # URLS seconds [perfscript options]: "top row", "samples lost", "seconds"
	local urls=$1 secs=$2 t0; shift 2
	t0=$(date +%s%N)
	DEBUGINFOD_URLS=$urls DEBUGINFOD_CACHE_PATH="$TMP/cache-$RANDOM" "$PERFSCRIPT" "$@" -e '
c = perfmon.counter("cpu-clock/freq=9999/")
local p = require("profile").new()
probe("perfmon.sample(c)", function(s) p:add(s) end)
probe("end", function() print(p:top(1)[1].key, p.total, (perfmon.lost(c))) end)' -c "$TMP/chain $secs" 2>&1
	echo "$(( ($(date +%s%N) - t0) / 1000000 ))"
}

out=$(prof "http://127.0.0.1:$port" 500 | tr '\n' ' ')
like "$out" "^chain_leaf	[0-9]+	0 " "a stripped binary is named through a debuginfod server on loopback ($out)"
# DWARF stacks while the debug file arrives: the file is read again with
# it, and the unwinders that read its CFI go first (they kept reading its
# old, unmapped image: a segfault), and the new ones read it again (they
# found no CFI in the file given back: one frame a stack from then on)
out=$(DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$TMP/cache-dwarf" "$PERFSCRIPT" -e '
c = perfmon.counter("cpu-clock/freq=999,call-graph=dwarf/")
local n, leaf, whole, t0, t1 = 0, 0, 0
probe("perfmon.sample(c)", function(s)
  n = n + 1
  t0 = t0 or s.time
  local stack = table.concat(s:ustack(), ";") -- unwound before anything names the file
  if stack:match("^chain_leaf") then
    leaf, t1 = leaf + 1, t1 or s.time
    if stack:match("^chain_leaf%+0x%x+;chain_middle%+0x%x+;chain_outer%+0x%x+;main%+") then
      whole = whole + 1
    end
  end
  if leaf >= 50 and n >= 300 then exit(0) end -- unwound well past its arrival
end)
probe("end", function() print(n, leaf, whole, (t1 - t0) // 1000000) end)' -c "$TMP/chain 20000" 2>&1; echo "rc=$?")
rc=$(sed -n 's/^rc=//p' <<<"$out")
read -r n leaf whole ms < <(grep -E '^[0-9]+[[:space:]]' <<<"$out")
# (the session ends 50 named samples after the file came, however long a
# loaded machine makes the server take: chain would run 20 s)
ok $(( ${n:-0} >= 300 && ${leaf:-0} >= 50 && ${whole:-0} == ${leaf:-1} && ${rc:-1} == 0 ? 0 : 1 )) \
	"DWARF stacks of a stripped binary while its debug file arrives: ${n:-?} samples, ${leaf:-?} named chain_leaf once it came, ${whole:-?} of them unwound to main, exit ${rc:-?} ($out)"
# (the file is given its debug file at the next sample: it was at the
# budget's next trim, up to 10 s later)
ok $(( ${ms:-99999} < 3000 ? 0 : 1 )) "the debug file names samples soon after it came (${ms:-?} ms after the first sample)"
out=$(DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$TMP/cache-lines" \
	"$PERFSCRIPT" "$ROOT/examples/profile.lua" -c "$TMP/chain 300" --lines --top 1 2>&1 | tail -1)
like "$out" "  \\[\\.\\] chain\\.c:[0-9]+$" "and its lines too (--lines: $out)"
kill ${pids[0]}; wait ${pids[0]} 2>/dev/null

read -r top n lost ms < <(prof "http://127.0.0.1:$port" 1000 | tr '\n' ' ')
# (no sample lost is the point: a stalled reader loses them; the count
# itself follows the CPU the target gets, less on a loaded machine)
ok $(( lost == 0 && n >= 1000 && ms < 1000 + 2000 + 1500 ? 0 : 1 )) \
	"the server stopped: $n samples, $lost lost, done in $ms ms (1 s run, 2 s budget) ($top)"
sport=$((20000 + RANDOM % 20000))
python3 "$(dirname "$0")/slowhttp.py" $sport 5 >"$TMP/slow.log" 2>&1 &
pids+=($!)
wait_for "$TMP/slow.log" '^ready'
read -r top n lost ms < <(prof "http://127.0.0.1:$sport" 1000 | tr '\n' ' ')
ok $(( lost == 0 && n >= 1000 && ms < 1000 + 2000 + 1500 ? 0 : 1 )) \
	"a server that answers after 5 s: $n samples, $lost lost, done in $ms ms, within the 2 s budget"
read -r top n lost ms < <(prof "http://127.0.0.1:$sport" 300 --debuginfod-wait -1 | tr '\n' ' ')
ok $(( ms < 300 + 1000 ? 0 : 1 )) "--debuginfod-wait -1 asks nothing: done in $ms ms"
# Hostile servers: an endless reply is cut off at $DEBUGINFOD_MAXSIZE, and
# what is not an ELF file with the build id asked is not kept in the cache.
hostile() { # MODE [FILE]: a hostile server on $hport, its log in $hlog
	hport=$((20000 + RANDOM % 20000)) hlog=$TMP/h-$1.log
	python3 "$(dirname "$0")/hostile_debuginfod.py" $hport "$@" >"$hlog" 2>&1 &
	pids+=($!)
	wait_for "$hlog" '^ready'
}
cached() { find "$1" -type f -name 'debuginfo*' -size +0 2>/dev/null | wc -l; }
hostile endless
DEBUGINFOD_MAXSIZE=1000000 DEBUGINFOD_URLS="http://127.0.0.1:$hport" DEBUGINFOD_CACHE_PATH="$TMP/cache-big" \
	"$PERFSCRIPT" -e 'c = perfmon.counter("cpu-clock/freq=999/")
probe("perfmon.sample(c)", function(s) local _ = s.sym end)' -c "$TMP/chain 300" >/dev/null 2>&1
wait_for "$hlog" '^sent' 5
sent=$(sed -n 's/^sent //p' "$hlog" | head -1)
ok $(( ${sent:-0} > 0 && ${sent:-0} < 50000000 && $(cached "$TMP/cache-big") == 0 ? 0 : 1 )) \
	"an endless reply is cut off past DEBUGINFOD_MAXSIZE (1 MB: ${sent:-?} bytes sent) and nothing is cached"
for m in junk "file /bin/true"; do
	# shellcheck disable=SC2086 # MODE FILE are two words
	hostile $m
	DEBUGINFOD_URLS="http://127.0.0.1:$hport" DEBUGINFOD_CACHE_PATH="$TMP/cache-${m%% *}" \
		"$PERFSCRIPT" -e 'c = perfmon.counter("cpu-clock/freq=999/")
probe("perfmon.sample(c)", function(s) local _ = s.sym end)' -c "$TMP/chain 1000" >/dev/null 2>&1
	sent=$(grep -c '^sent' "$hlog")
	ok $(( sent > 0 && $(cached "$TMP/cache-${m%% *}") == 0 ? 0 : 1 )) \
		"a reply that is ${m/file \/bin\/true/an ELF file of another build id} is not kept in the cache ($sent sent, $(cached "$TMP/cache-${m%% *}") kept)"
done
maps='c = perfmon.counter("cpu-clock/freq=999/")
local p = require("profile").new()
probe("perfmon.sample(c)", function(s) p:add(s) end)
probe("end", function()
  local top = p:top(1)[1].key -- names the stripped binary s addresses
  local f = io.open("/proc/self/maps"); local m = f:read("a"); f:close()
  print(top:match("^chain") ~= nil, m:find("libdebuginfod", 1, true) ~= nil)
end)'
is "$(env -u DEBUGINFOD_URLS "$PERFSCRIPT" -e "$maps" -c "$TMP/chain 200" 2>&1)" "true	false" \
	"without \$DEBUGINFOD_URLS, naming a stripped binary loads no libdebuginfod"
done_testing
