# flame.sh: flame graphs as files (the flame tapset, profile.lua --svg,
# offcpu.lua --svg). Each file is read back as XML (tests/e2e/flame_dom.py:
# it must parse), its frames' widths are held to the profile's own
# figures, and its script runs in node against a small stand-in for the
# browser's DOM (tests/e2e/flame_dom.js): a click zooms, a search says
# the share it matched, a hover says a frame's value. Names from the
# profiled processes stay text: a command named "<i>x</i>&" is escaped.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
EX=examples
nl=$'\n'
dom() { python3 tests/e2e/flame_dom.py "$1"; }
# the width of frame NAME (the first one so named) in file F, in px
width() { dom "$1" | python3 -c 'import json, sys; d = json.load(sys.stdin)
print(next((f["rect"]["width"] for f in d["frames"] if f["name"] == sys.argv[1]), 0))' "$2"; }
js() { # file act arg
	dom "$1" | node tests/e2e/flame_dom.js "$2" "$3"
}

# The tapset alone: widths by value, names escaped, bad bytes replaced.
"$PERFSCRIPT" -e 'local flame = require "flame"
local svg = flame.svg("app;main;work 75\napp;main;idle 25\n", { title = "t<1>", width = 1020 })
assert(require("pprof").save(arg[1], svg))
print(flame.escape("a<b>&\"c\x01\xff"))' "$TMP/t.svg" >"$TMP/t.out" 2>&1
is "$(cat "$TMP/t.out")" 'a&lt;b&gt;&amp;&quot;c??' "flame.escape: markup escaped, a control byte and invalid UTF-8 replaced"
dom "$TMP/t.svg" >/dev/null; ok $? "flame.svg: well-formed XML"
is "$(width "$TMP/t.svg" work)" "749.5" "a frame's width is its share of the width (75% of 1000 px, less its gap)"
is "$(width "$TMP/t.svg" app)" "999.5" "the root frame spans it all"
like "$(cat "$TMP/t.svg")" "t&lt;1&gt;" "the title escaped"

# A differential graph ("stack base new" lines, as pprof.diff_folded and
# difffolded.pl write them): sized by the new profile, the frame whose
# share grew red, the one that shrank blue, unchanged ones white.
"$PERFSCRIPT" -e 'assert(require("pprof").save(arg[1], require("flame").svg("app;main;work 50 75\napp;main;idle 50 25\n")))' "$TMP/d.svg"
fills=$(dom "$TMP/d.svg" | python3 -c 'import json, sys
print(" ".join(f["name"] + "=" + f["rect"]["fill"] for f in json.load(sys.stdin)["frames"]))')
is "$fills" "app=rgb(255,255,255) main=rgb(255,255,255) idle=rgb(55,55,255) work=rgb(255,55,55)" \
	"a differential graph: work grew (red), idle shrank (blue), the rest unchanged (white)"
if command -v node >/dev/null; then
	is "$(js "$TMP/d.svg" hover work)" "work (75 samples, 75.00%; base 50, 50.00%; +25.00 points)" \
		"... its hover says both shares and the change"
else
	skip "node is not installed (make check installs nodejs)" "a differential graph's hover"
fi

# profile.lua --svg: a spinning workload's samples, nearly all in hot_spin
out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD spin 300" --svg "$TMP/p.svg" 2>&1)
n=$(awk '/ samples of cpu-clock/ { print $1; exit }' <<<"$out")
total=$(dom "$TMP/p.svg" | python3 -c 'import json, sys; print(json.load(sys.stdin)["root"]["data-total"])')
is "$total" "${n:-?}" "profile.lua --svg: the graph's total is the samples the report counts ($n)"
awk -v w="$(width "$TMP/p.svg" hot_spin)" 'BEGIN { exit !(w >= 0.9 * 1180) }'
ok $? "... hot_spin spans at least 90% of it"
like "$(grep -c '<script' "$TMP/p.svg")" "^1$" "... one script, its own: nothing is fetched"
unlike "$(cat "$TMP/p.svg")" "https?://[^\"]*\.(js|css)|xlink:href|<image" "... no external file, font or script"
# with --switch-output, a graph per window, each a whole file
"$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD spin 2200" --switch-output 1 --svg "$TMP/sw.svg" >"$TMP/sw.out" 2>&1
n=0 good=0
for f in "$TMP"/sw.svg.*; do
	[[ -e $f ]] || continue
	n=$((n + 1))
	dom "$f" >/dev/null && good=$((good + 1))
done
ok $(( n >= 2 && good == n ? 0 : 1 )) "--switch-output 1 --svg: a graph per window ($good of $n whole)"

# with --diff-base, against an earlier profile: the base's samples are its
"$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD spin 200" --pprof "$TMP/base.pb.gz" >"$TMP/base.out" 2>&1
nb=$(awk '/ samples of cpu-clock/ { print $1; exit }' "$TMP/base.out")
"$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD spin 200" --diff-base "$TMP/base.pb.gz" --svg "$TMP/d2.svg" >/dev/null 2>&1
bt=$(dom "$TMP/d2.svg" | python3 -c 'import json, sys; print(json.load(sys.stdin)["root"].get("data-base-total"))')
is "$bt" "${nb:-?}" "profile.lua --diff-base --svg: a differential graph whose base is the earlier run's $nb samples"
out=$("$PERFSCRIPT" "$EX/profile.lua" -c "$WORKLOAD spin 100" --svg "$TMP/nodir/p.svg" 2>&1)
rc=$?
is "$rc" 1 "--svg into a missing directory: exit 1"
like "$out" "nodir" "... naming the file"

# offcpu.lua --svg: microseconds; the reader's second is a quarter
W=build/tests/offcpu
if need_root && [[ -r /sys/kernel/btf/vmlinux ]]; then
	tracefs_mount
	"$PERFSCRIPT" "$EX/offcpu.lua" -c "$W" --svg "$TMP/o.svg" --folded "$TMP/o.folded" >/dev/null 2>&1
	unit=$(dom "$TMP/o.svg" | python3 -c 'import json, sys; print(json.load(sys.stdin)["root"]["data-unit"])')
	is "$unit" "us" "offcpu.lua --svg: values in microseconds"
	# the reader's share of all the waits, by the run's own folded lines
	share=$(awk '{ t += $NF } /^reader;/ { r += $NF } END { printf "%.2f", 100 * r / t }' "$TMP/o.folded")
	awk -v w="$(width "$TMP/o.svg" reader)" -v s="$share" 'BEGIN { d = w / 1180 * 100 - s; exit !(d > -0.2 && d < 0.2) }'
	ok $? "... the reader's frame is its share of the waits ($(width "$TMP/o.svg" reader) px, $share%)"
	if command -v node >/dev/null; then
		# (the stacks through pipe_read, by the folded lines: the reader
		# waits there, and, on a loaded machine, a little elsewhere too)
		piped=$(awk '{ t += $NF } /pipe_read/ { r += $NF } END { printf "%.2f", 100 * r / t }' "$TMP/o.folded")
		got=$(js "$TMP/o.svg" search pipe_read)
		is "$got" "Matched: $piped%" "a search for pipe_read matches the share of the stacks through it"
		like "$(js "$TMP/o.svg" hover reader)" "^reader \([0-9,]+ us, $share%\)$" "a hover says the frame's value and share"
		zoomed=$(js "$TMP/o.svg" zoom reader)
		like "$zoomed" "(^|$nl)reader 10\.0 1179\.5" "a click on the reader zooms: it spans the width"
		unlike "$zoomed" "^sleeper " "... and the other threads are hidden"
		like "$zoomed" "unzoom 1" "... and Reset zoom shows"
	else
		skip "node is not installed (make check installs nodejs)" "the graph's script: search, hover, zoom"
	fi
	# wallclock.lua --svg: every thread's whole life, in microseconds
	"$PERFSCRIPT" "$EX/wallclock.lua" -c "$W" --svg "$TMP/w.svg" --csv "$TMP/w.csv" >/dev/null 2>&1
	total=$(dom "$TMP/w.svg" | python3 -c 'import json, sys; print(json.load(sys.stdin)["root"]["data-total"])')
	life=$(awk -F, 'NR > 1 { s += $3 } END { printf "%d", s / 1000 }' "$TMP/w.csv")
	# (each stack's sum is whole microseconds: up to one less per stack)
	stacks=$(dom "$TMP/w.svg" | python3 -c 'import json, sys
print(sum(1 for f in json.load(sys.stdin)["frames"] if f["g"]["data-d"] != "1"))')
	awk -v t="${total:-0}" -v l="${life:-1}" -v n="$stacks" 'BEGIN { d = l - t; exit !(d >= -1 && d <= n + 1) }'
	ok $? "wallclock.lua --svg: the graph's total is the threads' lifetimes ($total us, the CSV's $life)"
	# bpf_profile.lua --svg: the samples counted in the kernel
	out=$("$PERFSCRIPT" "$EX/bpf_profile.lua" -c "$WORKLOAD spin 300" --svg "$TMP/b.svg" 2>&1)
	n=$(awk '/ samples in / { print $1; exit }' <<<"$out")
	total=$(dom "$TMP/b.svg" | python3 -c 'import json, sys; print(json.load(sys.stdin)["root"]["data-total"])')
	is "$total" "${n:-?}" "bpf_profile.lua --svg: the graph's total is the samples it counted ($n)"
	tracefs_restore
else
	skip "offcpu.lua needs root and BTF" "offcpu.lua --svg"
	skip "wallclock.lua and bpf_profile.lua need root and BPF" "wallclock.lua and bpf_profile.lua --svg"
fi

# A command whose name is markup shows as text (the tapset's test above
# covers & and quotes, which -c's shell would take).
cp "$WORKLOAD" "$TMP/<b>x"
"$PERFSCRIPT" "$EX/profile.lua" -c "'$TMP/<b>x' spin 200" --svg "$TMP/h.svg" >/dev/null 2>&1
names=$(dom "$TMP/h.svg" | python3 -c 'import json, sys
print("\n".join(f["name"] for f in json.load(sys.stdin)["frames"]))')
like "$names" "(^|$nl)<b>x($nl|$)" "a command named <b>x is a frame of that name, read back as text"
unlike "$(cat "$TMP/h.svg")" "<b>" "... and no <b> element is in the file"
done_testing
