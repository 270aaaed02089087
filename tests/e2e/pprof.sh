# pprof.sh: profiles written in pprof's format, read back with the
# reference reader, go tool pprof: the top function and the totals match
# the live top list examples/profile.lua printed for the same run, sample
# types and period are what pprof expects, kernel frames are kernel
# functions under their user callers, labels, and differential profiles
# equal to what go tool pprof -diff_base computes.
source "$(dirname "$0")/lib.sh"
EX=$(cd "$(dirname "$0")/../../examples" && pwd)
export HOME=$TMP PPROF_TMPDIR=$TMP GOCACHE=$TMP/go-cache # go tool pprof writes nothing elsewhere
gopprof() { pprof_tool "$@" 2>"$TMP/pprof.err"; }

if ! command -v go >/dev/null; then
	skip_all "go is not installed (Debian's golang-go gives go tool pprof)" "pprof profiles read back with go tool pprof"
fi

# A cpu-clock profile: samples/count and cpu/nanoseconds, period 1e9/999 ns.
out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD spin 500" --pprof "$TMP/cpu.pb.gz" 2>&1)
ok $? "profile.lua --pprof runs"
total=$(sed -n 's/^\([0-9]*\) samples of cpu-clock.*/\1/p' <<<"$out")
livetop=$(sed -n '4s/^ *[0-9]* *[0-9.]*%  \[[.k]\] //p' <<<"$out")
raw=$(gopprof -raw "$TMP/cpu.pb.gz"); ok $? "go tool pprof -raw reads it"
like "$raw" $'\nsamples/count cpu/nanoseconds(\\[dflt\\])?\n' "sample types samples/count and cpu/nanoseconds"
like "$raw" $'\nPeriodType: cpu nanoseconds\nPeriod: 1001001\n' "period type cpu/nanoseconds, period 1e9/999 ns"
top=$(gopprof -top -sample_index=samples "$TMP/cpu.pb.gz")
like "$top" $'\nType: samples\n' "-sample_index=samples selects the sample count"
like "$top" "of $total total" "pprof's total is the $total samples of the live top list"
first=$(awk '/flat%/ { getline; print $6; exit }' <<<"$top")
is "$first" "$livetop" "pprof's top function is the live top list's ($livetop)"
like "$(gopprof -top "$TMP/cpu.pb.gz")" "Type: cpu" "the default sample type is cpu"
awk '/^Mappings/ { m = 1; next } m && NR { print }' <<<"$raw" >"$TMP/maps"
like "$(head -1 "$TMP/maps")" "/workload " "mapping 1 is the main binary"
like "$(cat "$TMP/maps")" "\[FN\]" "mappings say their functions are resolved"

# Profiles another tool can symbolize again (Parca, Pyroscope): each
# mapping has its runtime range, file offset and the file's build id; a
# location of inlined code has a Line per function, innermost first, with
# its source line, as profile.lua --lines names them; a Function has the
# symbol table's name beside DWARF's.
B=$(dirname "$WORKLOAD")
"$PERFSCRIPT" "$EX/profile.lua" -c "$B/inline 300" --lines --top 5 --pprof "$TMP/inl.pb.gz" >"$TMP/inl.top" 2>&1
raw=$(gopprof -raw "$TMP/inl.pb.gz")
maps=$(awk '/^Mappings/ { m = 1; next } m && /^[0-9]+: 0x/' <<<"$raw")
like "$(head -1 <<<"$maps")" "^1: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ $B/inline [0-9a-f]{40} \[FN\]\[FL\]\[LN\]\[IN\]$" \
	"mapping 1: runtime range, file offset, path, build id, functions, files, lines and inline frames"
bad=0 checked=0
while read -r num range file id _; do
	[[ $id =~ ^[0-9a-f]{40}$ ]] || continue
	[[ $file == "["*"]" ]] && continue # [vdso]: an image in memory, no file for readelf
	want=$(readelf -n "$file" 2>/dev/null | sed -n 's/.*Build ID: //p')
	checked=$((checked + 1))
	[[ $id == "$want" ]] || { bad=$((bad + 1)); diag "$file: $id in the profile, $want in readelf -n"; }
	IFS=/ read -r lo hi _ <<<"$range"
	n=$(awk -v m="M=${num%:}" '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 } l && $3 == m { print $2 }' <<<"$raw" |
		while read -r a; do (( a < lo || a >= hi )) && echo "$a"; done | wc -l)
	(( n == 0 )) || { bad=$((bad + 1)); diag "$file: $n locations outside $range"; }
done <<<"$maps"
ok $(( checked >= 1 && bad == 0 ? 0 : 1 )) "every build id in go tool pprof -raw is readelf -n's, every location in its mapping's range ($checked mappings)"
# rows of 5 samples or more: go tool pprof drops the smallest nodes
ours=$(sed -n 's/^ *\([0-9]\+\) \+[0-9.]\+%  \[\.\] \(.*\.c:[0-9]*\)$/\1 \2/p' "$TMP/inl.top" | awk '$1 >= 5')
theirs=$(gopprof -lines -top -sample_index=samples "$TMP/inl.pb.gz" |
	awk '/flat%/ { r = 1; next } r && $1 >= 5 && $(NF - 1) ~ /\.c:[0-9]+$/ { n = split($(NF - 1), p, "/"); print $1, p[n] }
	     r && $1 >= 5 && $NF ~ /\.c:[0-9]+$/ { n = split($NF, p, "/"); print $1, p[n] }')
is "$theirs" "$ours" "go tool pprof -lines -top gives profile.lua --lines' rows"
like "$(gopprof -lines -top "$TMP/inl.pb.gz")" " mix .*inline\.c:[0-9]+ \(inline\)" "the inlined mix is a Line of its own, marked inline by pprof"
"$PERFSCRIPT" "$EX/profile.lua" -c "$B/cxxprog 200" --pprof "$TMP/cxx.pb.gz" >/dev/null 2>&1
names=$("$PERFSCRIPT" -e 'for _, f in ipairs(require("pprof").read(arg[1])["function"]) do
  if f.name:find("geo::", 1, true) then print(f.name .. "\t" .. f.system_name) end end' "$TMP/cxx.pb.gz")
like "$names" $'geo::[^\t]*\t_ZN' "a C++ function's name is demangled, its system_name the symbol table's _Z name"

# Kernel frames: page faults of the workload are kernel functions (names of
# /proc/kallsyms) whose callers are the workload's do_pages.
out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD pages 30000" --pprof "$TMP/pages.pb.gz" 2>&1)
ok $? "profile.lua --pprof on a page-faulting command"
traces=$(gopprof -traces -sample_index=samples "$TMP/pages.pb.gz")
grep -q "asm_exc_page_fault" <<<"$traces"; ok $? "the page-fault entry is in the profile"
# samples whose asm_exc_page_fault was called from do_pages, and all of them
# (the loader's own faults have other callers)
share=$(awk '/-----/ { w = 0; k = 0; next } w == 0 && NF == 2 { w = $1 } /asm_exc_page_fault/ { k = 1; all += w; next }
	k && NF == 1 { if ($1 == "do_pages") mine += w; k = 0 } END { printf "%d %d", mine, all }' <<<"$traces")
read -r mine all <<<"$share"
ok $(( all > 0 && mine * 10 >= all * 9 ? 0 : 1 )) "the caller of asm_exc_page_fault is the workload's do_pages ($mine of $all samples)"
if need_root; then
	gopprof -raw "$TMP/pages.pb.gz" | awk '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 } l' >"$TMP/locs"
	kmap=$(gopprof -raw "$TMP/pages.pb.gz" | sed -n 's/^\([0-9]*\): .*\[kernel.kallsyms\].*/\1/p')
	awk -v m="M=$kmap" '$3 == m { print $4 }' "$TMP/locs" | sort -u >"$TMP/kfuncs"
	n=$(wc -l <"$TMP/kfuncs")
	missing=$(awk 'NR == FNR { k[$3] = 1; next } !($1 in k)' /proc/kallsyms "$TMP/kfuncs" | head -3)
	ok $(( n > 0 ? 0 : 1 )) "kernel locations are in the [kernel.kallsyms] mapping ($n functions)"
	is "$missing" "" "every kernel function of the profile is a /proc/kallsyms name"
else
	skip "kernel symbols need root" "kernel locations are in the kernel mapping"
	skip "kernel symbols need root" "kernel functions are kallsyms names"
fi

# Another event: its name and count, and an exact total.
out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD getppid 3000" --event 'syscalls:sys_enter_getppid/period=1/' \
	--pprof "$TMP/sys.pb.gz" --labels pid,comm 2>&1)
if [[ $? -ne 0 ]] && ! need_root; then
	skip "syscall tracepoints need root" "a tracepoint profile"
else
	raw=$(gopprof -raw "$TMP/sys.pb.gz")
	like "$raw" $'\nsamples/count syscalls:sys_enter_getppid/count(\\[dflt\\])?\n' "a tracepoint's sample type is its name and count"
	like "$raw" $'\nPeriod: 1\n' "period=1 is the profile's period"
	like "$(gopprof -top -sample_index=samples "$TMP/sys.pb.gz")" "of 3000 total" "3000 getppid calls are 3000 samples"
	tags=$(gopprof -tags "$TMP/sys.pb.gz")
	like "$tags" "comm: Total 3000.*workload" "--labels comm: every sample carries the command"
	like "$tags" "pid: Total 3000" "--labels pid: every sample carries its pid"
fi

# Differential profiles: the tapset's diff equals go tool pprof -diff_base
# on the same two files, and profile.lua --diff-base writes one.
"$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD loop 2000" --pprof "$TMP/new.pb.gz" >/dev/null 2>&1
"$PERFSCRIPT" -e 'local pprof = require "pprof"
local new, base = assert(pprof.read(arg[1])), assert(pprof.read(arg[2]))
assert(pprof.write(pprof.diff(new, base), arg[3]))' "$TMP/new.pb.gz" "$TMP/cpu.pb.gz" "$TMP/d.pb.gz"
ok $? "pprof.diff writes a differential profile"
rows() { awk '/flat%/ { r = 1; next } r' <<<"$1"; }
theirs=$(gopprof -top -sample_index=samples -diff_base "$TMP/cpu.pb.gz" "$TMP/new.pb.gz")
ours=$(gopprof -top -sample_index=samples "$TMP/d.pb.gz")
is "$(rows "$ours")" "$(rows "$theirs")" "go tool pprof -top of pprof.diff equals -diff_base on the same files"
like "$(rows "$ours")" "-[0-9]+ .* hot_spin" "the base's hot_spin shows as a loss"

out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD loop 2000" --diff-base "$TMP/cpu.pb.gz" \
	--pprof "$TMP/diff.pb.gz" --folded "$TMP/diff.folded" 2>&1)
ok $? "profile.lua --diff-base runs"
like "$out" $'\nChange against .*cpu.pb.gz \\('"$total"' samples there, [0-9]+ here\):' "--diff-base prints the change"
like "$out" $'\n +[0-9]+ +0 +-[0-9]+  hot_spin\n' "--diff-base: hot_spin went away"
like "$out" $'\n +0 +[0-9]+ +\\+[0-9]+  hot_loop(\n|$)' "--diff-base: hot_loop came (the last line when it is the only other)"
bad=$(grep -cvE '^[^ ]+ [0-9]+ [0-9]+$' "$TMP/diff.folded")
is "$bad" 0 "--diff-base --folded: every line is 'stack old new'"
is "$(awk '{ s += $2 } END { print s }' "$TMP/diff.folded")" "$total" "the old column adds up to the base's samples"
here=$(sed -n 's/^Change against .*, \([0-9]*\) here.*/\1/p' <<<"$out")
is "$(awk '{ s += $3 } END { print s }' "$TMP/diff.folded")" "$here" "the new column adds up to this run's samples"
like "$(gopprof -top -sample_index=samples "$TMP/diff.pb.gz")" "of $total total" \
	"the differential profile reads in go tool pprof, percentages of the base"

# A program whose file name (so its comm and its mapping) is not UTF-8: the
# profile's strings are, each bad byte a U+FFFD (receivers refuse the whole
# profile otherwise).
bad=$TMP/$'w\xff\xfeload'
cp "$WORKLOAD" "$bad"
"$PERFSCRIPT" examples/profile.lua -c "$bad spin 300" --pprof "$TMP/bad.pb.gz" >/dev/null 2>&1
out=$(python3 - "$TMP/bad.pb.gz" <<'PY'
import gzip, sys
data = gzip.open(sys.argv[1]).read()
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
i, strings = 0, []
while i < len(data):  # Profile's top-level fields; string_table is field 6
    key, i = varint(data, i)
    if key & 7 == 0: _, i = varint(data, i)
    elif key & 7 == 2:
        n, i = varint(data, i)
        if key >> 3 == 6: strings.append(data[i:i + n])
        i += n
    elif key & 7 == 1: i += 8
    elif key & 7 == 5: i += 4
valid = 0
for s in strings:
    try: s.decode("utf-8"); valid += 1
    except UnicodeDecodeError: print("invalid:", s)
print(valid, len(strings), any("w\ufffd\ufffdload" in s.decode("utf-8", "replace") for s in strings))
PY
)
like "$out" "^([0-9]+) \1 True$" "a program named with bytes that are not UTF-8: every string of its pprof is valid UTF-8, the name with U+FFFD ($out)"

# Bad input: a clear message, nothing run.
echo "not a profile" >"$TMP/bad.pb.gz"
out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD spin 10" --diff-base "$TMP/bad.pb.gz" 2>&1); rc=$?
ok $(( rc != 0 ? 0 : 1 )) "--diff-base on a file that is no profile fails"
like "$out" "profile.lua: --diff-base .*bad.pb.gz: pprof: not a pprof profile" "and says why"
out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD spin 10" --diff-base "$TMP/none.pb.gz" 2>&1)
like "$out" "none.pb.gz: No such file or directory" "a missing base is named"
out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD spin 10" --pprof "$TMP/x.pb.gz" --labels pid,cpu 2>&1)
like "$out" "unknown label 'cpu' \(pid, tid, comm, cgroup\)" "an unknown label is refused with the known ones"

# A decompression bomb as the base: 1 MiB of gzip inflating to 1 GiB is
# refused at the cap, with a small peak RSS, before the command runs.
# (made by repeating one flushed deflate block of a MiB of zeros: gzip
# would take seconds to squeeze the GiB)
python3 - "$TMP/bomb.pb.gz" <<'PY'
import struct, sys, zlib
z = bytes(1 << 20)
c = zlib.compressobj(9, zlib.DEFLATED, -15)
first = c.compress(z) + c.flush(zlib.Z_FULL_FLUSH)
again = c.compress(z) + c.flush(zlib.Z_FULL_FLUSH)  # the same bytes for every later MiB
crc = 0
for _ in range(1024):
    crc = zlib.crc32(z, crc)
with open(sys.argv[1], "wb") as f:
    f.write(b"\x1f\x8b\x08\0\0\0\0\0\0\xff" + first + again * 1023 + c.flush() +
            struct.pack("<II", crc, (1 << 30) & 0xffffffff))
PY
out=$("$PERFSCRIPT" -e 'local t, err = require("pprof").read("'"$TMP/bomb.pb.gz"'")
local f = io.open("/proc/self/status"); local st = f:read("a"); f:close()
print(t, err, st:match("VmHWM:%s*(%d+)"))' 2>&1)
like "$out" "^nil	.*bomb.pb.gz: pprof: the profile inflates to more than 64 MiB" "a base that inflates past 64 MiB is refused"
rss=$(awk '{ print $NF }' <<<"$out")
ok $(( rss < 200000 ? 0 : 1 )) "and reading it peaks at ${rss} kB, not the GiB it inflates to"
out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD spin 10" --diff-base "$TMP/bomb.pb.gz" 2>&1); rc=$?
like "$rc $out" "^1 .*profile.lua: --diff-base .*inflates to more than 64 MiB" "profile.lua --diff-base refuses it, exit 1"
# A valid profile of 60 MiB of one-frame samples in 92 KB of gzip: read
# within a cap in bytes (it took 4.7 GB), and samples pprof counts as one
# are one table; the same profile with 100000 of them reads whole.
python3 - "$TMP" <<'PY'
import gzip, sys
def profile(n):
    sample = b"\x12\x06\x0a\x01\x01\x12\x01\x01"  # location_id [1], value [1]
    head = b"\x0a\x04\x08\x01\x10\x02"              # sample_type {type 1, unit 2}
    loc = b"\x22\x02\x08\x01"                          # location {id 1}
    strings = b"".join(b"\x32" + bytes([len(x)]) + x for x in (b"", b"samples", b"count"))
    return head + sample * n + loc + strings
open(sys.argv[1] + "/tiny.pb.gz", "wb").write(gzip.compress(profile(60 * 1024 * 1024 // 8), 9))
open(sys.argv[1] + "/small.pb.gz", "wb").write(gzip.compress(profile(100000), 9))
PY
out=$("$PERFSCRIPT" -e 'local pprof = require("pprof")
local t, err = pprof.read("'"$TMP/tiny.pb.gz"'")
local s, serr = pprof.read("'"$TMP/small.pb.gz"'")
local f = io.open("/proc/self/status"); local st = f:read("a"); f:close()
print(t, err, s and #s.sample, s and pprof.flat_total(s), serr, st:match("VmHWM:%s*(%d+)"))' 2>&1)
like "$out" "^nil	.*tiny.pb.gz: pprof: the profile needs more than 128 MiB to read \(60 MiB of protobuf\): it holds too many samples	1	100000	nil	" \
	"60 MiB of tiny samples: refused at the cap in bytes; 100000 of them read as one sample of 100000"
rss=$(awk '{ print $NF }' <<<"$out")
ok $(( rss < 400000 ? 0 : 1 )) "and reading both peaks at ${rss} kB, not the 4.7 GB it took"

# Results that cannot be written: an error and exit 1, never an empty file
# and exit 0. Paths that cannot be opened fail before the command runs.
for o in --pprof --folded; do
	out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD spin 10" $o /dev/full 2>&1); rc=$?
	like "$rc $out" "^1 .*profile.lua: cannot write /dev/full: No space left on device" "profile.lua $o /dev/full: the full disk is reported, exit 1"
	t0=$(date +%s%N)
	out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD spin 3000" $o /nonexistent/x 2>&1); rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	like "$rc $out" "^1 .*profile.lua: $o /nonexistent/x: No such file or directory" "profile.lua $o into a missing folder fails"
	ok $(( ms < 2000 ? 0 : 1 )) "before the 3 s command runs (${ms} ms)"
done
out=$("$PERFSCRIPT" "$EX/bpf_profile.lua" -c "$WORKLOAD spin 10" --folded /dev/full 2>&1); rc=$?
like "$rc $out" "^1 .*bpf_profile.lua: cannot write /dev/full: No space left on device" "bpf_profile.lua to /dev/full: reported, exit 1"
for o in --version --help; do
	out=$("$PERFSCRIPT" $o 2>&1 >/dev/full); rc=$?
	is "$rc $out" "1 perfscript: cannot write to standard output: No space left on device" "perfscript $o >/dev/full: reported, exit 1"
done

# --switch-output on a full disk: a window that cannot be written is said,
# removed and counted, and the run goes on (it ended at the first ENOSPC,
# and said "N samples in FILE" of a file it had failed to write).
if need_root && mkdir -p "$TMP/small" && mount -t tmpfs -o size=256k tmpfs "$TMP/small"; then
	head -c 250000 /dev/zero >"$TMP/small/filler" 2>/dev/null
	"$PERFSCRIPT" "$EX/profile.lua" -a -T 3 --switch-output 0.4 --pprof "$TMP/small/p.pb.gz" >/dev/null 2>"$TMP/full.err" &
	full=$!
	wait_for "$TMP/full.err" 'cannot write' 5 && rm -f "$TMP/small/filler"
	wait $full; rc=$?
	err=$(cat "$TMP/full.err")
	umount "$TMP/small"
	like "$err" "profile.lua: cannot write .*No space left on device: its [0-9]+ samples are lost \(1 of 1 windows so far\)" \
		"--switch-output on a full disk: the window is said to be lost, and counted"
	like "$err" $'lost[^\n]*\n(.*\n)*profile.lua: [0-9]+ samples in ' "... and the run goes on: a later window is written once there is room"
	# (a note of perfscript's own, on throttling under load, may follow it)
	like "$rc $err" $'^1 .*\nprofile.lua: [0-9]+ of [0-9]+ windows could not be written(\n|$)' "... and the end says how many were lost, exit 1"
else
	for d in "a lost window is counted" "the run goes on" "the end says how many"; do
		skip "needs root to mount a small tmpfs" "--switch-output on a full disk: $d"
	done
fi

# --switch-output SECS: a profile per window, FILE.YYYYMMDDHHMMSSCC as
# perf record --switch-output names its dumps, each read by go tool pprof,
# the windows' samples adding up to what the tool said it wrote
mkdir -p "$TMP/switch"
"$PERFSCRIPT" examples/profile.lua -a -T 2.5 --switch-output 1 --pprof "$TMP/switch/p.pb.gz" \
	--folded "$TMP/switch/p.folded" >/dev/null 2>"$TMP/switch.err"
n=$(ls "$TMP"/switch/p.pb.gz.* 2>/dev/null | grep -cE '\.pb\.gz\.[0-9]{16}$')
ok $(( !(n >= 3 && n <= 4) )) "--switch-output 1 over 2.5 s: $n pprof files named by their windows' starts"
is "$(ls "$TMP"/switch/p.folded.* 2>/dev/null | wc -l)" "$n" "... and as many folded files"
said=$(awk '/^profile.lua: [0-9]+ samples in .*pb\.gz/ { s += $2 } END { print s + 0 }' "$TMP/switch.err")
read_n=0
for f in "$TMP"/switch/p.pb.gz.*; do
	read_n=$(( read_n + $(pprof_tool -raw "$f" 2>/dev/null | awk '/^Samples:/ { on = 1; next } on && /^ +[0-9]+ +[0-9]+: / { s += $1 } /^Locations/ { on = 0 } END { print s + 0 }') ))
done
ok $(( !(read_n > 0 && read_n == said) )) "go tool pprof reads every window: $read_n samples, as many as profile.lua said it wrote ($said)"
# a continuous profile names functions from symbol tables (the build id
# lets a backend add lines); --dwarf-lines reads lines and inline frames
for o in "" --dwarf-lines; do
	rm -f "$TMP"/cont.pb.gz.*
	"$PERFSCRIPT" examples/profile.lua -c "$B/inline 300" --switch-output 5 --pprof "$TMP/cont.pb.gz" $o >/dev/null 2>&1
	m=$(pprof_tool -raw "$TMP"/cont.pb.gz.* 2>/dev/null | grep -E "^1: 0x.* $B/inline ")
	if [[ -z $o ]]; then
		like "$m" '[0-9a-f]{40} \[FN\]$' "--switch-output: functions only by default, the build id for lines ($m)"
	else
		like "$m" '[0-9a-f]{40} \[FN\]\[FL\]\[LN\]' "--switch-output --dwarf-lines: files and lines ($m)"
	fi
done
like "$("$PERFSCRIPT" examples/profile.lua -c true --no-dwarf-lines --inline 2>&1)" \
	"--inline needs DWARF lines: drop --no-dwarf-lines" "--no-dwarf-lines with --inline: refused, saying why"
like "$("$PERFSCRIPT" examples/profile.lua -c true --no-dwarf-lines --dwarf-lines 2>&1)" \
	"--dwarf-lines and --no-dwarf-lines: give one" "--dwarf-lines with --no-dwarf-lines: refused"
like "$("$PERFSCRIPT" examples/profile.lua -a -T 1 --switch-output 1 2>&1)" "switch-output writes --pprof, --otlp, --folded or --svg files" \
	"--switch-output without a file to write: refused, saying what to give"
like "$("$PERFSCRIPT" examples/profile.lua -a -T 1 --switch-output 0.01 --pprof "$TMP/x.pb.gz" 2>&1)" \
	"switch-output wants a number from 0.1 to 86400 \(SECS\), got '0.01'" "--switch-output under 0.1 s: refused"
like "$("$PERFSCRIPT" examples/profile.lua -a -T 1 --switch-output 1 --pprof "$TMP/x.pb.gz" --diff-base "$TMP/x.pb.gz" 2>&1)" \
	"switch-output and --diff-base do not go together" "--switch-output with --diff-base: refused"
like "$("$PERFSCRIPT" examples/profile.lua -a -T 1 --symbols-budget 0.5 2>&1)" "symbols-budget wants a number of at least 1 \(MIB\)" \
	"--symbols-budget under 1 MiB: refused"
"$PERFSCRIPT" examples/profile.lua -T 0.5 --symbols-budget 2 --pprof "$TMP/small.pb.gz" -c "$WORKLOAD spin 400" >/dev/null 2>&1
like "$(pprof_tool -top "$TMP/small.pb.gz" 2>&1)" "hot_spin|spin" "--symbols-budget 2: a 2 MiB symbolizer still names the profile"
done_testing
