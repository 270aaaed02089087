# cgroup.sh: -G CGROUP, the tasks of one cgroup v2 group on every CPU, as
# perf stat -G counts them: a group the test makes, a workload that joins
# it and makes a known number of getppid calls, and the same workload
# outside it at the same time, which must not count. Counts equal perf
# stat -G's on the same run shape and the workload's own number, on the
# perf path and on the BPF path (an aggregate); samples are the group's
# only, and carry their group and container (the cgroup term) to a handler
# and to pprof labels; a group that does not exist is named with the fix.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1

mnt=$(awk '$(NF - 2) == "cgroup2" || $0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
if ! need_root || [[ -z $mnt ]]; then
	skip_all "needs root and a cgroup v2 mount" "-G cgroup targets"
fi
tracefs_mount
G=pstest$$
mkdir "$mnt/$G" || { echo "Bail out! cannot make a cgroup under $mnt"; exit 1; }
outside=
v1=
cleanup() { # the loop outside the group too, should the test end early
	[[ -n $outside ]] && kill "$outside" 2>/dev/null && wait "$outside" 2>/dev/null
	rmdir "$mnt/$G"/*/ "$mnt/$G" 2>/dev/null
	[[ -n $v1 ]] && rmdir "$v1/$G/docker"/*/ "$v1/$G/docker" "$v1/$G" 2>/dev/null
}
trap cleanup EXIT
N=54321
# the workload, in the group: the shell moves itself there and execs it
printf 'echo $$ >%s/cgroup.procs && exec "$@"\n' "$mnt/$G" >"$TMP/join.sh"
inside="sh $TMP/join.sh $WORKLOAD getppid $N"
# the same calls outside the group, all along
(end=$((SECONDS + 120)); while ((SECONDS < end)); do "$WORKLOAD" getppid 20000 >/dev/null; done) & # bounded, should a kill miss it
outside=$!

count='c = assert(perfmon.counter("syscalls:sys_enter_getppid"))
probe("end", function() print((c:read())) end)'
got=$("$PERFSCRIPT" -G $G -e "$count" -c "$inside" 2>&1)
is "$got" "$N" "-G: the group's getppid calls, none of those outside it ($N)"
if command -v perf >/dev/null; then
	perf_got=$(perf stat -x, -a -e syscalls:sys_enter_getppid -G $G -- $inside 2>&1 >/dev/null |
		awk -F, '/sys_enter_getppid/ { print $1 }')
	is "$got" "$perf_got" "-G counts equal perf stat -a -G's on the same workload ($perf_got)"
else
	skip "perf is not installed (make check installs linux-perf)" "-G against perf stat -G"
fi
got=$("$PERFSCRIPT" -G /$G/ -e "$count" -c "$inside" 2>&1)
is "$got" "$N" "-G /NAME/: leading and trailing slashes are the same group"
got=$("$PERFSCRIPT" -G $mnt/$G -e "$count" -c "$inside" 2>&1)
is "$got" "$N" "-G with the group's absolute path"

# BPF path: a tracepoint's program sees every task; the group is its filter.
agg='c = assert(perfmon.counter("syscalls:sys_enter_getppid"))
local a = assert(perfmon.aggregate(c, { by = { "pid" } }))
probe("end", function()
  local t = 0
  for _, n in pairs(a:read()) do t = t + n end
  print((c:read()), t)
end)'
got=$("$PERFSCRIPT" -G $G -e "$agg" -c "$inside" 2>&1)
is "$got" "$(printf '%d\t%d' $N $N)" "-G on the BPF path: the aggregate counts the group's calls only"
# counted on the raw tracepoint (rawtp.sh), the group is the filter too
raw='c = assert(perfmon.counter("raw_syscalls:sys_enter"))
local a = assert(perfmon.aggregate(c, { by = { "args.id" } }))
probe("end", function()
  local t, sum = a:read(), 0
  for _, n in pairs(t) do sum = sum + n end
  print(t[110], sum == (c:read()))
end)'
got=$("$PERFSCRIPT" -G $G -e "$raw" -c "$inside" 2>&1)
is "$got" "$(printf '%d\ttrue' $N)" "-G, counted on the raw tracepoint: the group's getppid calls only; the value is the aggregate's sum"

# Samples: a spinner in the group and one outside; every sample is the group's.
samples='c = assert(perfmon.counter("cpu-clock/freq=499/"))
local mine, other = 0, 0
probe(c, function(s) if s.comm == "workload" then if s.pid == target() then mine = mine + 1 else other = other + 1 end end end)
probe("end", function() print(mine, other) end)'
"$WORKLOAD" spin 1500 >/dev/null &
spinner=$!
got=$("$PERFSCRIPT" -G $G -e "$samples" -c "sh $TMP/join.sh $WORKLOAD spin 400" 2>&1)
kill $spinner 2>/dev/null; wait $spinner 2>/dev/null
read -r mine other <<<"$got"
awk -v m="${mine:-0}" -v o="${other:-1}" 'BEGIN { exit !(m >= 100 && o == 0) }'
ok $? "-G sampling: the group's spinner only ($mine samples; $other of the one outside)"

# Labels: the cgroup term gives each sample its task's group (s.cgroup) as
# the sample carries it (PERF_SAMPLE_CGROUP, or the BPF program's
# bpf_get_current_cgroup_id), and the container a runtime's group name has.
id=$(printf '%064x' $$)
C=$G/docker-$id.scope
mkdir "$mnt/$C"
printf 'echo $$ >%s/cgroup.procs && exec "$@"\n' "$mnt/$C" >"$TMP/join_c.sh"
labels='c = assert(perfmon.counter("cpu-clock/freq=199,cgroup/"))
local t = {}
probe(c, function(s)
  if s.pid == target() then local k = tostring(s.cgroup) .. " " .. tostring(s.container); t[k] = (t[k] or 0) + 1 end
end)
probe("end", function() -- the most samples (the shell, before it joins, may have a few)
  local top, most = nil, 0
  for k, n in pairs(t) do if n > most then top, most = k, n end end
  print(top, most)
end)'
for b in perf bpf; do
	got=$("$PERFSCRIPT" --backend=$b -a -e "$labels" -c "sh $TMP/join_c.sh $WORKLOAD spin 300" 2>&1)
	like "$got" "^/$C $id[[:space:]][0-9]+$" "$b path: s.cgroup is the task's group below the mount, s.container the id in its name"
done
"$PERFSCRIPT" examples/profile.lua -a --pprof "$TMP/cg.pb.gz" --labels comm,cgroup \
	-c "sh $TMP/join_c.sh $WORKLOAD spin 300" >/dev/null 2>&1
if command -v go >/dev/null; then
	tags=$(pprof_tool -tags "$TMP/cg.pb.gz" 2>&1)
	like "$tags" "cgroup: Total.*/$C" "profile.lua --labels cgroup: go tool pprof -tags shows the group"
	like "$tags" "container: Total.*$id" "... and the container id its name has"
else
	skip "go is not installed (make check installs golang-go)" "cgroup labels read by go tool pprof"
fi

# A v1 or hybrid host: where a task's v2 group is the root, its label is
# its v1 group (name=systemd's, else a controller's), container and all.
v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)name=systemd(,|$)/ { print $2; exit }' /proc/mounts)
[[ -n $v1 ]] || v1=$(awk '$3 == "cgroup" { print $2; exit }' /proc/mounts)
if [[ -n $v1 ]] && grep -qx '0::/' /proc/self/cgroup; then
	id1=$(printf '%064x' $((RANDOM + 1000000)))
	mkdir -p "$v1/$G/docker/$id1"
	# the shell spins before it joins, so that its samples name the root
	# first: the workload's, after the join and exec, must not take that
	# read (it did for a second, a whole run, when the shell was sampled)
	printf 'i=0; while [ $i -lt 30000 ]; do i=$((i + 1)); done\necho $$ >%s/cgroup.procs && exec "$@"\n' \
		"$v1/$G/docker/$id1" >"$TMP/join_v1.sh"
	for b in perf bpf; do
		got=$("$PERFSCRIPT" --backend=$b -a -e "$labels" -c "sh $TMP/join_v1.sh $WORKLOAD spin 300" 2>&1)
		like "$got" "^/$G/docker/$id1 $id1[[:space:]][0-9]+$" "$b path, v2 group the root: s.cgroup is the v1 group ($v1), s.container its id"
	done
else
	skip "no cgroup v1 hierarchy, or this shell is not in v2's root group" "v1 cgroup labels"
	skip "no cgroup v1 hierarchy, or this shell is not in v2's root group" "v1 cgroup labels (BPF path)"
fi

# A container: a process in the group, in its own pid and mount namespaces,
# running /opt/psapp.../workload, a path that is another program (a decoy)
# outside. Its samples carry its group, and its names come from its own
# root (/proc/PID/root), not from the decoy at the same path here.
app=/opt/psapp$$
mkdir -p "$app" "$TMP/ctr"
cp "$(dirname "$WORKLOAD")/inline" "$app/workload"
cp "$WORKLOAD" "$TMP/ctr/workload"
if command -v unshare >/dev/null && command -v go >/dev/null; then
	unshare --mount --pid --fork --mount-proc sh -c "mount --bind $TMP/ctr $app &&
		echo 1 >$mnt/$C/cgroup.procs && exec $app/workload spin 1500" &
	ctr=$!
	"$PERFSCRIPT" examples/profile.lua -a -T 1 --pprof "$TMP/ctr.pb.gz" --labels comm,cgroup >/dev/null 2>&1
	wait $ctr
	top=$(pprof_tool -top -nodecount=3 -tagfocus="cgroup=$C" "$TMP/ctr.pb.gz" 2>&1)
	like "$top" "hot_spin" "a process in its own pid and mount namespaces: named from its own root (hot_spin, not the decoy's names)"
	like "$(pprof_tool -tags "$TMP/ctr.pb.gz" 2>&1)" "container: Total.*$id" "... and labelled with its group's container id"
else
	skip "unshare or go is missing" "a process in its own namespaces"
	skip "unshare or go is missing" "its container label"
fi
rm -rf "$app"

# The C library through the LuaJIT binding: {cgroup = NAME}.
if command -v luajit >/dev/null; then
	got=$(CG=$G RUN=$inside PERFSCRIPT_LIB=build/libperfscript.so LUA_PATH="bindings/?.lua;;" luajit -e '
local p = require "perfscript"
local s = assert(p.session({ cgroup = os.getenv("CG") }))
local c = assert(s:counter("syscalls:sys_enter_getppid"))
assert(c:start())
os.execute(os.getenv("RUN"))
print((c:read()))' 2>&1)
	is "$got" "$N" "the FFI binding's session{cgroup = NAME}: the group's calls only"
else
	skip "luajit is not installed (make check installs it)" "the FFI binding's cgroup session"
fi

kill $outside 2>/dev/null; wait $outside 2>/dev/null; outside=

out=$("$PERFSCRIPT" -G "nosuch$$" -e 'print(1)' 2>&1)
like "$out" "-G 'nosuch$$': no such cgroup \(a group's path below the cgroup2 mount" "a group that does not exist: named, with where groups are"
out=$("$PERFSCRIPT" -G "$G" -p 1 -e 'print(1)' 2>&1)
like "$out" "-p cannot be combined with -c, -a, -C or -G" "-G with -p is refused"
tracefs_restore
done_testing
