# otlp.sh: profiles over OTLP, read by the OpenTelemetry Collector's own
# OTLP receiver (build/tests/otlp_receiver: otlpreceiver and pdata at
# collector 0.165.0, from tests/peers/otlp_receiver). What the Collector
# understood is compared, sample by sample, with perfscript's own pprof of
# the same run or window: every stack (function names, inline frames,
# lines), every value and every label, and the mappings' build ids.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
RECEIVER=${RECEIVER:-build/tests/otlp_receiver}

if [[ ! -x $RECEIVER ]]; then
	skip_all "no Go to build the Collector's receiver (tests/peers/otlp_receiver)" "OTLP profiles"
fi
if ! need_root || ! command -v curl >/dev/null; then
	skip_all "needs root (the agent samples the host) and curl" "OTLP profiles"
fi
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

# The Collector's receiver on a free port; $port, its lines in $TMP/recv.out.
"$RECEIVER" 0 >"$TMP/recv.out" 2>"$TMP/recv.err" </dev/null &
pids+=($!)
port=$(wait_line "$TMP/recv.out" '^listening [0-9]+$' | cut -d' ' -f2)
[[ -n $port ]] || diag "the receiver did not start: $(cat "$TMP/recv.err")"
post() { curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/x-protobuf' \
	--data-binary @"$1" "http://127.0.0.1:${port:-1}/v1development/profiles"; }

# A pprof profile as lines "name:line;...(leaf first) TAB value TAB k=v,..."
# in the receiver's terms: the default sample type's value, inline frames
# first, labels under OpenTelemetry's names; samples of one stack and
# labels as one, their values added (pprof's readers merge them, and so
# does perfscript's: pprof.read). FILE
fold_pprof() {
	"$PERFSCRIPT" -e '
local t = assert(require("pprof").read(arg[1]))
local keys = { pid = "process.pid", tid = "thread.id", comm = "thread.name", container = "container.id" }
local col = 1
for i, st in ipairs(t.sample_type) do if st.type == t.default_sample_type then col = i end end
local loc, fn = {}, {}
for _, l in ipairs(t.location) do loc[l.id] = l end
for _, f in ipairs(t["function"]) do fn[f.id] = f end
for _, s in ipairs(t.sample) do
  local names, labels = {}, {}
  for _, id in ipairs(s.location_id) do
    for _, ln in ipairs(loc[id].line) do names[#names + 1] = fn[ln.function_id].name .. ":" .. (ln.line or 0) end
  end
  for _, l in ipairs(s.label or {}) do labels[#labels + 1] = (keys[l.key] or l.key) .. "=" .. tostring(l.str or l.num) end
  table.sort(labels)
  print(table.concat(names, ";") .. "\t" .. s.value[col] .. "\t" .. table.concat(labels, ","))
end' "$1" | merged
}
merged() { awk -F'\t' '{ v[$1 "\t" $3] += $2 } END { for (k in v) { split(k, a, "\t"); print a[1] "\t" v[k] "\t" a[2] } }' | sort; }
# The same lines of profile P of request line N the receiver printed.
fold_otlp() { # N P
	python3 - "$TMP/recv.out" "$1" "$2" <<'EOF' | merged
import json, sys
reqs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
p = reqs[int(sys.argv[2]) - 1]["profiles"][int(sys.argv[3])]
for s in p["samples"]:
    names = ";".join(f"{n}:{l}" for n, l in zip(s["stack"], s["lines"]))
    labels = ",".join(sorted(f"{k}={v}" for k, v in (s.get("attributes") or {}).items()))
    print(f"{names}\t{s['values'][0]}\t{labels}")
EOF
}
otlp_field() { # N P EXPR: a python expression of r (the request) and p (its profile P)
	python3 -c "import json,sys
reqs = [json.loads(l) for l in open('$TMP/recv.out') if l.startswith('{')]
r = reqs[$1 - 1]; p = r['profiles'][$2]
print($3)"
}

# profile.lua --otlp and --pprof of one run: what the Collector reads of
# the first is the second, sample for sample.
out=$("$PERFSCRIPT" examples/profile.lua -c "$WORKLOAD pages 20000" -F 4999 --otlp "$TMP/w.otlp" \
	--pprof "$TMP/w.pb.gz" --labels pid,tid,comm 2>&1)
ok $? "profile.lua --otlp FILE --pprof FILE ($(tail -c 200 <<<"$out"))"
is "$(post "$TMP/w.otlp")" 200 "the Collector's OTLP receiver accepts the file as a request (HTTP 200)"
wait_for "grep -c '^{' $TMP/recv.out | grep -qx 1" 10
fold_pprof "$TMP/w.pb.gz" >"$TMP/pprof.txt"
fold_otlp 1 0 >"$TMP/otlp.txt"
n=$(wc -l <"$TMP/pprof.txt")
ok $(( n >= 10 ? 0 : 1 )) "the pprof has samples of distinct stacks to compare ($n)"
if cmp -s "$TMP/pprof.txt" "$TMP/otlp.txt"; then ok 0 "every sample the Collector read is the pprof's: stack, lines, value, labels ($n)"
else ok 1 "every sample the Collector read is the pprof's"; diff "$TMP/pprof.txt" "$TMP/otlp.txt" | head -8 | sed 's/^/# /'; fi
like "$(grep -c 'do_pages:[1-9]' "$TMP/otlp.txt")" "^[1-9]" "... the workload's own function with its source line"
is "$(otlp_field 1 0 "p['type'], p['unit'], p['period_type'], p['period'], r['resource']['process.command_line']")" \
	"cpu nanoseconds cpu 200040 $WORKLOAD pages 20000" "sample type, period and the command as the resource's"
is "$(otlp_field 1 0 "r['resource']['host.name']")" "$(cat /proc/sys/kernel/hostname)" "host.name is the host's"
want=$(readelf -n "$WORKLOAD" | awk '/Build ID/ { print $3 }')
is "$(otlp_field 1 0 "[m['attributes']['process.executable.build_id.gnu'] for m in p['mappings'] if m['file'].endswith('/workload')][0]")" \
	"$want" "the workload's mapping carries its GNU build id"
# perfscript reads back what it wrote, too
out=$("$PERFSCRIPT" -e 'local f = io.open(arg[1], "rb"); local r = assert(require("otlp").decode(f:read("a")))
local p = r.resource_profiles[1].scope_profiles[1].profiles[1]
print(r.dictionary.string_table[p.sample_type.type_strindex + 1], #p.samples)' "$TMP/w.otlp" 2>&1)
is "$out" "cpu	$(otlp_field 1 0 "len(p['samples'])")" "otlp.decode reads the file back: its sample type and the samples the Collector read"

# The agent pushes each window over OTLP (--otlp URL, no path: OTLP/HTTP's)
# beside Pyroscope's pprof (--push, the ingest stand-in): the same window
# twice, CPU time and off-CPU time.
mkdir -p "$TMP/ingest"
python3 tests/e2e/ingest_receiver.py "$TMP/ingest" >"$TMP/ingest.log" 2>&1 &
pids+=($!)
iport=$(wait_line "$TMP/ingest.log" '^port ' | cut -d' ' -f2)
"$WORKLOAD" spin 4000 >/dev/null 2>&1 &
pids+=($!)
out=$(timeout 30 "$PERFSCRIPT" -a -T 2.5 examples/agent.lua --listen 127.0.0.1:0 --push-interval 1 --offcpu \
	--otlp "http://127.0.0.1:$port" --push "http://127.0.0.1:${iport:-1}" 2>&1)
ok $? "agent.lua --otlp URL --push URL --offcpu ran ($(tail -c 200 <<<"$out"))"
wait_for "[ \$(grep -c '^{' $TMP/recv.out) -ge 3 ]" 10
is "$(otlp_field 2 0 "p['type'], r['profiles'][1]['type'], r['profiles'][1]['unit'], r['resource']['service.name']")" \
	"cpu off-cpu nanoseconds host" "a window is one request: CPU time, then off-CPU time, under service.name"
fold_pprof "$TMP/ingest/1.pb.gz" >"$TMP/a-pprof.txt"
fold_otlp 2 0 >"$TMP/a-otlp.txt"
if cmp -s "$TMP/a-pprof.txt" "$TMP/a-otlp.txt"; then
	ok 0 "the window's CPU profile over OTLP is its pprof pushed to Pyroscope ($(wc -l <"$TMP/a-otlp.txt") samples)"
else ok 1 "the window's CPU profile over OTLP is its pprof"; diff "$TMP/a-pprof.txt" "$TMP/a-otlp.txt" | head -8 | sed 's/^/# /'; fi
fold_pprof "$TMP/ingest/2.pb.gz" >"$TMP/o-pprof.txt"
fold_otlp 2 1 >"$TMP/o-otlp.txt"
n=$(wc -l <"$TMP/o-otlp.txt")
if (( n > 0 )) && cmp -s "$TMP/o-pprof.txt" "$TMP/o-otlp.txt"; then
	ok 0 "... and its off-CPU profile too ($n stacks, nanoseconds each)"
else ok 1 "... and its off-CPU profile too ($n stacks)"; diff "$TMP/o-pprof.txt" "$TMP/o-otlp.txt" | head -8 | sed 's/^/# /'; fi
like "$(grep -c 'workload' "$TMP/a-otlp.txt")" "^[1-9]" "the busy workload's samples are there, by thread name"

# docs/tapsets.md's otlp example runs as written.
awk '/^## otlp/ { w = 1 } w && /^```lua$/ { f = 1; next } f && /^```$/ { exit } f' docs/tapsets.md >"$TMP/ex.lua"
out=$("$PERFSCRIPT" "$TMP/ex.lua" -c "$WORKLOAD spin 200" 2>&1)
is "$out" "true" "docs/tapsets.md's otlp example: a request written and read back with its samples"
# otlp.post gzips its body (Content-Encoding: gzip): the request's bytes,
# a seventh of them (the agent's pushes above went so, read by the Collector)
cat >"$TMP/gz.lua" <<EOF
local otlp = require "otlp"
prof = perfmon.counter("cpu-clock/freq=999/")
local p = require("profile").new { pprof = true, labels = { "pid", "comm" } }
probe(prof, function(s) p:add(s) end)
probe("end", function()
  local t = p:pprof()
  local req = assert(otlp.post("http://127.0.0.1:1", { t }))
  io.open("$TMP/gz.body", "wb"):write(req.body):close()
  io.open("$TMP/raw.body", "wb"):write(assert(otlp.encode({ t }))):close()
  print(req.headers["Content-Encoding"], otlp.post("http://127.0.0.1:1", { t }, { gzip = false }).headers["Content-Encoding"])
end)
EOF
out=$("$PERFSCRIPT" "$TMP/gz.lua" -c "$WORKLOAD spin 200" 2>&1)
# (the same request but for its profile's random 16-byte id)
same=$(python3 -c 'import gzip, sys; a = gzip.decompress(open(sys.argv[1], "rb").read()); b = open(sys.argv[2], "rb").read()
print(len(a) == len(b) and sum(x != y for x, y in zip(a, b)) <= 16, "%.1f" % (len(b) / len(open(sys.argv[1], "rb").read())))' \
	"$TMP/gz.body" "$TMP/raw.body" 2>&1)
is "$out $same" $'gzip\tnil True '"${same##* }" "otlp.post: the body is the request gzip-compressed, said by Content-Encoding (${same##* }x smaller); gzip = false sends it as it is"

# Names come from processes perfscript does not trust: bytes that are not
# UTF-8 (which proto3 string fields must be) go out repaired, each bad byte
# U+FFFD, as in pprof; a name repaired twice is still one string.
out=$("$PERFSCRIPT" -e '
local t = { sample_type = { { type = "cpu", unit = "nanoseconds" } }, default_sample_type = "cpu",
  ["function"] = { { id = 1, name = "bad\xff\xfename" }, { id = 2, name = "bad\xff\xfename" } },
  location = { { id = 1, line = { { function_id = 1 }, { function_id = 2 } } } },
  sample = { { location_id = { 1 }, value = { 5 }, label = { { key = "comm", str = "x\xc3" } } } } }
local otlp = require "otlp"
local st, bad = assert(otlp.decode(assert(otlp.encode({ t })))).dictionary.string_table, 0
for _, s in ipairs(st) do if not utf8.len(s) then bad = bad + 1 end end
print(bad, #st, st[4] == "bad\u{FFFD}\u{FFFD}name", st[#st] == "x\u{FFFD}")' 2>&1)
is "$out" "0	6	true	true" "names that are not UTF-8 leave repaired, each once in the string table"

# 200 distinct label values: the string table grows while attributes are
# made (its array moved under one that was being filled: an empty
# thread.name in one agent window of three).
cat >"$TMP/grow.lua" <<'LUA'
local t = { sample_type = { { type = "cpu", unit = "nanoseconds" } }, default_sample_type = "cpu",
  ["function"] = {}, location = {}, sample = {} }
for i = 1, 200 do t["function"][i] = { id = i, name = "f" .. i }; t.location[i] = { id = i, line = { { function_id = i } } } end
for i = 1, 200 do t.sample[i] = { location_id = { i }, value = { i }, label = { { key = "comm", str = "c" .. i } } } end
local otlp = require "otlp"
local d = assert(otlp.decode(assert(otlp.encode({ t })))).dictionary
local bad = 0
for i, a in ipairs(d.attribute_table) do
  if i > 1 and not (a.value and a.value.string_value and a.value.string_value:match("^c%d+$")) then bad = bad + 1 end
end
print(#d.attribute_table - 1, bad)
LUA
is "$("$PERFSCRIPT" "$TMP/grow.lua" 2>&1)" "200	0" "every attribute keeps its value while the string table grows (200 distinct)"

# Refusals say what is wrong.
out=$("$PERFSCRIPT" -e 'print(pcall(require("perfscript.otlp").encode, { dictionary = { stack_table = { {}, { location_indices = { 1, "x" } } } } }))' 2>&1)
like "$out" "dictionary.stack_table\[2\].location_indices\[2\]: wants an integer, not string" \
	"otlp.encode: a bad value is named by its path in the request"
out=$("$PERFSCRIPT" -e 'print(pcall(require("perfscript.otlp").encode, { resource_profile = {} }))' 2>&1)
like "$out" "ExportProfilesServiceRequest has no field resource_profile" "... a misspelt field by its message"
out=$("$PERFSCRIPT" -e 'print(require("otlp").decode("\255\255\255"))' 2>&1)
like "$out" "not an OTLP profiles request" "otlp.decode: bytes that are not a request"
out=$("$PERFSCRIPT" -e 'print(require("otlp").encode({ { sample_type = { { type = "cpu" } }, sample = { { value = { 1 } }, { location_id = true, value = { 1 } } } } }))' 2>&1)
like "$out" "^nil	otlp.from_pprof: sample\[2\].location_id: list or packed string expected" \
	"otlp.encode: a pprof table that is not one is named by its element"
out=$("$PERFSCRIPT" -e 'print(require("otlp").encode({ { sample_type = { { type = "cpu" } }, location = { { id = 1 } }, sample = { { location_id = { 1, 7 }, value = { 1 } } } } }))' 2>&1)
like "$out" "^nil	otlp.from_pprof: sample\[1\].location_id: ids of the profile's Locations expected" \
	"... a sample's location id that no Location has (it was the zero location, silently)"
out=$("$PERFSCRIPT" examples/profile.lua -c true --otlp /nonexistent/dir/x.otlp 2>&1)
like "$out" "otlp /nonexistent/dir/x.otlp: No such file or directory" "profile.lua --otlp: a path that cannot be written fails at once"
done_testing
