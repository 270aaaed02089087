# hostile.sh: what a local user (nobody) can do to a root perfscript that
# names their process's frames, through the library the process maps, which
# the user owns: truncate it while the symbolizer reads it (a SIGBUS ended
# the root process), or rename a FIFO, a symlink to a root-only file, or
# another library over its path before the symbolizer opens it (the open
# blocked the loop for good; the root-only file's names were served; the
# other library's names were given to the process's frames). Each attack
# runs against tests/progs/truncmain.c and trunclib.c, built as the user.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if ! need_root || ! command -v setpriv >/dev/null || ! command -v cc >/dev/null; then
	skip "needs root, setpriv and cc" "a local user's library truncated under the symbolizer"
	for t in FIFO symlink other; do skip "needs root, setpriv and cc" "a $t renamed over a mapped library"; done
	done_testing; exit
fi
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; pkill -KILL -f "^$U/tr" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
chmod 755 "$TMP"
as_user() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
U=$TMP/u # the user's own folder
mkdir "$U" && chown nobody "$U"
as_user cc -O1 -fomit-frame-pointer -shared -fPIC -o "$U/libtr.so.orig" "$ROOT/tests/progs/trunclib.c"
as_user cp "$U/libtr.so.orig" "$U/libtr.so"
as_user cc -O1 -fomit-frame-pointer -shared -fPIC -DNAME=w -o "$U/other.so" "$ROOT/tests/progs/trunclib.c"
as_user cc -O1 -o "$U/tr" "$ROOT/tests/progs/truncmain.c" -L"$U" -ltr -Wl,-rpath,"$U"
# a root-only library whose names must never leave perfscript
mkdir -m 700 "$TMP/root"
sed 's/long run(/long TOPSECRET2491(/' "$ROOT/tests/progs/trunclib.c" >"$TMP/root/secret.c"
cc -O1 -shared -fPIC -DNAME=TOPSECRET -o "$TMP/root/secret.so" "$TMP/root/secret.c"
chmod 600 "$TMP/root/secret.so"

# start_user: the user's program, spinning in its library; sets $upid.
start_user() {
	: >"$TMP/tr.out"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$U/tr" >"$TMP/tr.out" 2>&1 &
	upid=$!; pids+=($upid)
	wait_for "$TMP/tr.out" '^ready' || diag "the user's program did not start"
}

# 1. Truncation while the symbolizer reads the file: each new child gets an
# unwinder whose ELF is read from perfscript's image of the library; the
# user cuts the library's tail (section headers, symbols) where the
# program itself never reads, so it runs on.
start_user
"$PERFSCRIPT" -p "$upid" -T 3 -e 'c = perfmon.counter("cpu-clock/freq=999,call-graph=dwarf/")
local n = 0
probe("perfmon.sample(c)", function(s) n = n + 1; local _ = s:ustack() end)
probe("timer.ms(100)", function() print("samples " .. n); io.stdout:flush() end)' >"$TMP/trunc.out" 2>&1 &
ps=$!; pids+=($ps)
wait_for "$TMP/trunc.out" '^samples [1-9]'
end=0
while read -r off size; do (( off + size > end )) && end=$(( off + size )); done < <(readelf -lW "$U/libtr.so" | awk '$1 == "LOAD" { print $2, $5 }')
end=$(( (end + 4095) / 4096 * 4096 ))
as_user truncate -s "$end" "$U/libtr.so"
before=$(grep -c '^samples' "$TMP/trunc.out")
wait $ps; rc=$?
after=$(grep -c '^samples' "$TMP/trunc.out")
is "$rc" 0 "a library truncated by its owner while perfscript unwinds through it: no SIGBUS, exit 0"
(( after > before + 5 )); ok $? "... and the session went on ($before reports before the truncation, $after in all)"
kill "$upid" 2>/dev/null; wait "$upid" 2>/dev/null

# 2-4. Something else renamed over the library's path between the mapping
# (read when the session attaches) and the first name asked of it.
names='c = perfmon.counter("cpu-clock/freq=499/")
local go, n, seen = false, 0, {}
print("ready"); io.stdout:flush()
probe("perfmon.sample(c)", function(s)
  if not go then return end
  n = n + 1
  seen[s.sym or "?"] = true
end)
probe("timer.ms(20)", function()
  if not go and io.open(arg[1]) then go = true end
  print("tick"); io.stdout:flush()
end)
probe("end", function()
  local l = {}
  for k in pairs(seen) do l[#l + 1] = k end
  print("named " .. n .. ": " .. table.concat(l, " "))
end)'
swap() { # WHAT DESCRIPTION: rename WHAT over the library after the attach
	rm -f "$U/libtr.so"
	as_user cp "$U/libtr.so.orig" "$U/libtr.so"
	start_user
	rm -f "$TMP/go"
	# (blocked in an open for good, the session would be killed at 20 s)
	timeout -s KILL 20 "$PERFSCRIPT" -p "$upid" -T 2 -e "$names" "$TMP/go" >"$TMP/swap.out" 2>&1 &
	ps=$!; pids+=($ps)
	wait_for "$TMP/swap.out" '^ready'
	case $1 in
	fifo) as_user mkfifo "$U/new" ;;
	symlink) as_user ln -s "$TMP/root/secret.so" "$U/new" ;;
	other) as_user cp "$U/other.so" "$U/new" ;;
	esac
	as_user mv -f "$U/new" "$U/libtr.so"
	touch "$TMP/go"
	t0=$(date +%s%N)
	wait $ps; rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	kill "$upid" 2>/dev/null; wait "$upid" 2>/dev/null
	out=$(cat "$TMP/swap.out")
}

swap fifo
is "$rc" 0 "a FIFO renamed over a mapped library: the session ends on time, exit 0 ($ms ms)"
(( $(grep -c '^tick' <<<"$out") >= 10 )); ok $? "... and its timers ran all along ($(grep -c "^tick" <<<"$out") ticks of 20 ms in 2 s; $(grep "^named" <<<"$out" | cut -c1-80))"
swap symlink
grep -q '^named [1-9]' <<<"$out"; ok $? "a symlink to a root-only library renamed over a mapped one: samples are still named"
! grep -q TOPSECRET <<<"$out"; ok $? "... and no name from the root-only file is served ($(grep '^named' <<<"$out" | cut -c1-120))"
swap other
! grep -qE '(^| )w[0-9]+' <<<"$out"; ok $? "another library renamed over a mapped one: none of its names are given to the process's frames ($(grep '^named' <<<"$out" | cut -c1-120))"
done_testing
