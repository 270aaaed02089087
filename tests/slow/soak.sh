# soak.sh: a profile with DWARF stacks at 1 kHz per CPU for 60 s of a
# command whose short-lived processes of many binaries come and go (gzip,
# xz, sort, perl, ls, the stack-heavy test program), each sample folded into its
# stack's names, with the symbolizer's budget set to 3 MiB (it holds about
# 4.5 MB of this process's memory without one). Its memory must level off:
# what the symbolizer holds stays within the budget at every check (files
# given back: there are evictions), and the RSS outside
# Lua's heap grows less than 16 MiB over the second half. Every figure goes
# to the log.
source "$(dirname "$0")/../e2e/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/build/tests
SECS=${SOAK_SECONDS:-60}
if ! need_root; then
	skip "the soak profiles binaries of other users: it needs root" "soak: memory levels off"
	done_testing; exit
fi
# The churn is the profile's own command (-c follows it and every process
# it starts): other work on the machine, whose binaries the budget cannot
# answer for, stays out of the figures.
cat >"$TMP/churn.sh" <<EOF
while :; do
	gzip -c "$PERFSCRIPT" >/dev/null
	xz -1 -c /etc/services >/dev/null 2>&1
	sort /etc/services >/dev/null
	perl -e '1 for 1..100000' 2>/dev/null
	ls -R /usr/share/doc >/dev/null 2>&1
	"$B/manystacks" 0.2
done
EOF
"$PERFSCRIPT" -c "bash $TMP/churn.sh" -T "$SECS" -e '
perfmon.symbols(3 * 1024 * 1024)
c = perfmon.counter("cpu-clock/freq=1000,call-graph=dwarf/")
local n, bytes = 0, 0
probe("perfmon.sample(c)", function(s) n = n + 1; bytes = bytes + #s:folded() end)
local t0 = os.time()
probe("timer.s(5)", function()
  local f = io.open("/proc/self/status"); local st = f:read("a"); f:close()
  local y = perfmon.symbols()
  local rss, lua = tonumber(st:match("VmRSS:%s*(%d+)")), math.floor(collectgarbage("count"))
  print(os.time() - t0, rss - lua, y.bytes, y.budget, y.evictions, y.processes, n, bytes // n)
  io.stdout:flush()
end)' >"$TMP/soak.log" 2>&1
rc=$?
is "$rc" 0 "a ${SECS} s DWARF profile of processes coming and going runs to its end"
diag "seconds rss_outside_lua_kb symbolizer_bytes budget evictions processes samples folded_bytes_avg"
sed 's/^/# /' "$TMP/soak.log"
# trims come at most once a second, and this churn reads a few files (and
# builds their units' indexes, counted too) a second: up to half over
# between trims (1.30x seen)
over=$(awk '$3 > $4 * 1.5 { n++ } END { print n + 0 }' "$TMP/soak.log")
is "$over" 0 "what the symbolizer holds stays within its 3 MiB budget (half over at most, between trims)"
# the budget binds (the churn's files would hold more): the symbolizer
# gives back, by itself, the pages it read only once every 2 s, and files
# only when that is not enough, so what it holds either reaches the budget
# or falls between readings while the churn reads more
ok $(( $(awk '$3 > most { most = $3 } NR > 1 && prev - $3 > 102400 { fell++ } { prev = $3 }
	END { print (most >= $4 * 0.9 || $5 > 0 || fell > 0) }' "$TMP/soak.log") ? 0 : 1 )) \
	"the budget binds: the symbolizer gives back to stay under it (at most $(awk '$3 > m { m = $3 } END { print m }' "$TMP/soak.log") of $(awk 'END { print $4 }' "$TMP/soak.log") bytes, $(awk 'NR > 1 && p - $3 > 102400 { f++ } { p = $3 } END { print f + 0 }' "$TMP/soak.log") falls, $(awk 'END { print $5 }' "$TMP/soak.log") files given back)"
half=$(awk -v s="$SECS" '$1 >= s / 2 && !a { a = $2 } { b = $2 } END { print b - a }' "$TMP/soak.log")
ok $(( half < 16384 ? 0 : 1 )) "the RSS outside Lua's heap grows ${half} kB over the second half (less than 16 MiB)"
done_testing
