# strings.sh: user strings read at the event. A syscall's string fields
# (openat's filename) are strings in s.args, read by the kernel on the BPF
# path while the process is there; opensnoop.lua names every file a
# short-lived command opened, as strace saw it; long __data_loc strings
# come whole on both paths; the perf path reads late and says so.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
EX=examples

if ! need_root || [[ ! -r /sys/kernel/btf/vmlinux ]]; then
	skip_all "user strings in the kernel need root and BTF" "strings read at the event"
fi
tracefs_mount
for f in A B C; do echo "$f" >"$TMP/$f"; done

# The files strace sees cat open, and those opensnoop names, in order.
opens() { awk 'NR > 1 { print $3, $4, $5 }'; }
strace -f -qq -e trace=open,openat,openat2 -o "$TMP/strace" cat "$TMP/A" "$TMP/B" "$TMP/C" "$TMP/none" >/dev/null 2>&1
want=$(sed -nE 's/^[0-9]+ +open[a-z0-9]*\((AT_FDCWD, )?"([^"]*)".*= (-?[0-9]+).*/\3 \2/p' "$TMP/strace" |
	awk '{ fd = $1 < 0 ? -1 : $1; print fd, ($1 < 0 ? 2 : 0), $2 }')
out=$("$PERFSCRIPT" $EX/opensnoop.lua -c "cat $TMP/A $TMP/B $TMP/C $TMP/none" -o "$TMP/out" 2>"$TMP/err")
got=$(grep -v '^[ABC]$' "$TMP/out" | opens)
is "$got" "$want" "opensnoop -c: every file cat opened, with its fd or error, as strace saw them"
like "$(head -1 "$TMP/out")" "^PID +COMM +FD ERR PATH$" "opensnoop's columns are bcc's"
like "$(grep -c "cat .*$TMP/[ABC]\$" "$TMP/out")" "^3$" "the three files are named though cat is gone when they are read"
is "$(grep -v "^cat: $TMP/none" "$TMP/err")" "" "nothing on stderr but cat's own error"
out=$("$PERFSCRIPT" $EX/opensnoop.lua -x -c "cat $TMP/A $TMP/none" -o - 2>/dev/null | grep -c "$TMP")
is "$out" "1" "-x shows only the failed opens"

# -a: a cat started once the session is (its counters open) is seen whole.
"$PERFSCRIPT" -v $EX/opensnoop.lua -a -n cat -o "$TMP/all" 2>"$TMP/all.err" &
pid=$!
wait_for "$TMP/all.err" "session started" && cat "$TMP/A" "$TMP/B" "$TMP/C" >/dev/null
wait_for "$TMP/all" "cat .*$TMP/C\$"
kill -TERM $pid; wait $pid
is "$(grep -c "cat .* 0 $TMP/[ABC]\$" "$TMP/all")" "3" "opensnoop -a: a short-lived cat's three files"

# -p: a shell's cats, forked after the session started, are its.
(while :; do cat "$TMP/A" >/dev/null; sleep 0.05; done) &
loop=$!
out=$("$PERFSCRIPT" $EX/opensnoop.lua -p $loop -T 1 -o - 2>/dev/null)
kill $loop; wait $loop 2>/dev/null
like "$out" "cat +[0-9]+ +0 $TMP/A" "opensnoop -p: the files of a running process's children"

# s.args.filename is a string on both paths; the perf path reads it late.
script='c = assert(perfmon.counter("syscalls:sys_enter_openat"))
probe(c, function(s) if s.args.filename == arg[1] then print(type(s.args.filename), s:user_string(s.args.filename)) end end)'
out=$("$PERFSCRIPT" -v -e "$script" -c "$WORKLOAD open /etc/hostname" /etc/hostname 2>"$TMP/err")
is "$out" "$(printf 'string\t/etc/hostname')" "BPF path (chosen for the strings): s.args.filename is the string"
like "$(cat "$TMP/err")" "sys_enter_openat: user strings read in the kernel at the event \(BPF path\)" "-v says where the strings come from"
out=$("$PERFSCRIPT" --backend=perf -e "$script" -c "$WORKLOAD open /etc/hostname" /etc/hostname 2>"$TMP/err")
like "$(cat "$TMP/err")" "user strings read when the handler runs \(perf path\): nil for a process that has exited" \
	"the perf path forced: says the strings are read late"
out=$("$PERFSCRIPT" -e 'c = assert(perfmon.counter("syscalls:sys_enter_read"))
probe(c, function(s) print(math.type(s.args.buf)); exit() end)' -c "$WORKLOAD getppid 1" 2>&1 | head -1)
is "$out" "integer" "a buffer (read's buf, a count follows) stays an address"

# A long __data_loc string (an exec's filename) comes whole on both paths.
long=$TMP/$(printf 'd%.0s' {1..100})/$(printf 'e%.0s' {1..100})/$(printf 'f%.0s' {1..100})
mkdir -p "$long" && cp "$WORKLOAD" "$long/workload"
for b in bpf perf; do
	out=$("$PERFSCRIPT" --backend=$b -e 'c = assert(perfmon.counter("sched:sched_process_exec"))
probe(c, function(s) print(#s.args.filename, s.args.filename == arg[1]) end)' -c "$long/workload getppid 1" "$long/workload" 2>&1)
	is "$out" "$(printf '%d\ttrue' $((${#long} + 9)))" "$b path: an exec filename of $((${#long} + 9)) bytes comes whole"
done

# probe(counter, fn) keeps a counter nothing else holds.
out=$("$PERFSCRIPT" -e 'local n = 0
do
  local c = assert(perfmon.counter("syscalls:sys_enter_openat"))
  probe(c, function(s) if s.args.filename == arg[1] then n = n + 1 end end)
end
collectgarbage(); collectgarbage()
probe("end", function() print(n) end)' -c "$WORKLOAD open /etc/hostname" /etc/hostname 2>&1)
is "$out" "1" "a counter held only by its probe is not collected under it"
tracefs_restore
done_testing
