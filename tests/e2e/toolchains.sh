# toolchains.sh: names and stacks of programs other toolchains build, each
# built here from tests/progs: C linked by lld (clang's and many
# distributions' linker, which packs the end of one segment and the start
# of the next into one file page), a GNU-ld program calling a library lld
# linked, and Rust as rustc builds it (rust-lld, v0 names for std), PLT
# stubs of GNU ld and lld, Go's source lines in pprof profiles, and Go's
# stacks from Debian's Go 1.19 and the newest Go. With
# DWARF stacks, at least 99% of the hot function's samples reach main
# through the known chain, every name readable (no _R or 17h...E hash
# names).
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
P=$ROOT/tests/progs
PROFILE=("$PERFSCRIPT" "$ROOT/examples/profile.lua")
CC=${CC:-cc}

share() { # folded-file leaf path -> "with total": samples ending in leaf, and with path in them
	awk -v leaf="$2" -v path="$3" '{
		n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		if (s !~ (";" leaf "$")) next
		total += n; if (index(s, path)) with += n
	} END { print with + 0, total + 0 }' "$1"
}
check() { # name folded leaf path
	local with total
	read -r with total < <(share "$2" "$3" "$4")
	ok $(( total >= 100 && with * 100 >= total * 99 ? 0 : 1 )) \
		"$1: $with of $total samples of $3 reach main through $4 (>= 99%)"
}

if ! command -v ld.lld >/dev/null; then
	skip "lld is not installed (Debian's lld)" "C linked by lld"
	skip "lld is not installed (Debian's lld)" "a GNU-ld program on an lld library"
else
	"$CC" -O2 -g -fomit-frame-pointer -fuse-ld=lld -o "$TMP/chain-lld" "$P/chain.c"
	readelf -lW "$TMP/chain-lld" | awk '$1 == "LOAD" { n++ } END { exit n < 2 }'
	"${PROFILE[@]}" -c "$TMP/chain-lld 600" --call-graph dwarf --folded "$TMP/c.folded" >/dev/null 2>&1
	check "C linked by lld" "$TMP/c.folded" chain_leaf "main;chain_outer;chain_middle;chain_leaf"
	"$CC" -O2 -g -fomit-frame-pointer -shared -fPIC -fuse-ld=lld -Wl,-soname,libhot.so \
		-o "$TMP/libhot.so" "$P/libhot.c"
	"$CC" -O2 -g -fomit-frame-pointer -o "$TMP/usehot" "$P/usehot.c" -L"$TMP" -lhot '-Wl,-rpath,$ORIGIN'
	"${PROFILE[@]}" -c "$TMP/usehot 600" --call-graph dwarf --folded "$TMP/h.folded" >/dev/null 2>&1
	read -r with total < <(share "$TMP/h.folded" "hidden_work" "main;hot_lib_entry;hidden_work")
	ok $(( total >= 100 && with * 100 >= total * 99 ? 0 : 1 )) \
		"a GNU-ld program on an lld library: $with of $total samples in the library reach main (>= 99%)"
fi

if ! command -v rustc >/dev/null; then
	skip "rustc is not installed" "Rust (rust-lld, v0 names)"
	skip "rustc is not installed" "Rust names demangled"
else
	rustc -C opt-level=2 -g -o "$TMP/rchain" "$P/rchain.rs" 2>"$TMP/rustc.err"
	"${PROFILE[@]}" -c "$TMP/rchain 600" --call-graph dwarf --folded "$TMP/r.folded" --top 30 >"$TMP/r.top" 2>&1
	check "Rust as rustc links it" "$TMP/r.folded" "rchain::hot_leaf" \
		"main;std::rt::lang_start_internal;"
	read -r with total < <(share "$TMP/r.folded" "rchain::hot_leaf" \
		"rchain::main;rchain::outer;rchain::Worker::middle;rchain::inner_generic;rchain::hot_leaf")
	ok $(( total > 0 && with * 100 >= total * 99 ? 0 : 1 )) "Rust: the chain is named frame by frame ($with of $total)"
	bad=$(cat "$TMP/r.folded" "$TMP/r.top" | grep -cE '(^|;| )_R[A-Za-z0-9_]+|17h[0-9a-f]{16}E')
	is "$bad" 0 "Rust: no v0 (_R...) or legacy hash (17h...E) name in any row or frame"
fi
# PLT stubs are named "func@plt", from the relocation each one jumps
# through, in every layout: GNU ld's lazy .plt, -z now, IBT's .plt.sec, and
# lld's .plt (perf 6.1 charges them to _init or a hex address).
"$CC" -O2 -shared -fPIC -DSTEP_LIB -o "$TMP/libstep.so" "$P/pltcall.c"
for v in "GNU ld:" "GNU ld -z now:-Wl,-z,now" "GNU ld, IBT .plt.sec:-fcf-protection=full -Wl,-z,ibtplt" "lld:-fuse-ld=lld"; do
	name=${v%%:*}
	if [[ $name == lld ]] && ! command -v ld.lld >/dev/null; then
		skip "lld is not installed (Debian's lld)" "PLT stubs of lld"; continue
	fi
	# shellcheck disable=SC2086 # the flags are words
	"$CC" -O2 ${v#*:} -o "$TMP/pltcall" "$P/pltcall.c" -L"$TMP" -lstep '-Wl,-rpath,$ORIGIN'
	out=$("${PROFILE[@]}" -c "$TMP/pltcall 300" --top 5 2>&1)
	total=$(sed -n 's/^\([0-9]*\) samples of.*/\1/p' <<<"$out")
	plt=$(awk '$4 == "step@plt" { print $1 }' <<<"$out")
	# (its share varies with the machine: 6-40% here; a row at all is the point)
	ok $(( total > 0 && ${plt:-0} * 50 >= total ? 0 : 1 )) "$name: the PLT stub is a row of its own, step@plt (${plt:-0} of $total samples)"
done

# Go writes no .debug_aranges: source lines come from its units' ranges.
if ! command -v go >/dev/null; then
	skip "go is not installed (golang-go)" "Go source lines"
	skip "go is not installed (golang-go)" "Go source lines in pprof"
	skip "go is not installed (golang-go)" "Go source lines as perf's"
else
	(cd "$TMP" && cp "$P/gohot/main.go" . && GOFLAGS=-mod=mod GOCACHE="$ROOT/build/go-cache" go build -o gohot main.go)
	"${PROFILE[@]}" -c "$TMP/gohot 500" --lines --top 5 --pprof "$TMP/go.pb.gz" >"$TMP/go.top" 2>&1
	mapfile -t rows < <(sed -n 's/^ *[0-9]\+ \+[0-9.]\+%  \[[.k]\] //p' "$TMP/go.top")
	like "${rows[0]} ${rows[1]}" "^main\.go:1[67] main\.go:1[67]$" "Go: --lines names the loop's lines, main.go:16 and 17 (${rows[*]:0:2})"
	# the same rows from the pprof profile, as go tool pprof -lines reads it
	# rows of 5 samples or more: pprof drops nodes of the smallest counts
	ours=$(sed -n 's/^ *\([0-9]\+\) \+[0-9.]\+%  \[\.\] \(.*\.go:[0-9]*\)$/\1 \2/p' "$TMP/go.top" | awk '$1 >= 5')
	theirs=$(HOME=$TMP PPROF_TMPDIR=$TMP pprof_tool -lines -top -sample_index=samples "$TMP/go.pb.gz" 2>/dev/null |
		awk '/flat%/ { r = 1; next } r && $NF ~ /\.go:[0-9]+$/ && $1 >= 5 { n = split($NF, p, "/"); print $1, p[n] }' | head -n "$(wc -l <<<"$ours")")
	is "$theirs" "$ours" "Go: go tool pprof -lines -top gives profile.lua --lines' file:line rows"
	# perf's hottest address, named by LLVM's DWARF reader: binutils 2.40
	# (perf report --sort srcline, addr2line) reads Go 1.26's DWARF 5 line
	# tables as "go.go:0"
	a2l=$(command -v llvm-addr2line || command -v /usr/lib/llvm-*/bin/llvm-addr2line | tail -1)
	if [[ -n $a2l ]] && command -v perf >/dev/null && perf record -q -F 999 -o "$TMP/go.data" "$TMP/gohot" 500 >/dev/null 2>&1; then
		ip=$(perf script -i "$TMP/go.data" --comms gohot -F ip 2>/dev/null | sort | uniq -c | sort -rn | awk '{ print $2; exit }')
		top=$("$a2l" -e "$TMP/gohot" "0x$ip" | sed 's|.*/||')
		diag "perf report --sort srcline says $(perf report -i "$TMP/go.data" --stdio --sort srcline 2>/dev/null | awk '!/^#/ && NF { print $2; exit }')"
		like "${rows[0]} ${rows[1]}" "(^| )$top( |$)" "Go: the line of perf's hottest address ($ip: $top, llvm-addr2line) is one of perfscript's top two"
	else
		skip "perf or llvm-addr2line is not installed, or perf cannot sample" "Go source lines as perf's"
	fi
fi
# Go's stacks with DWARF, from Debian's Go 1.19 and the newest Go: a
# goroutine's outermost return address is runtime.goexit's first byte
# plus one (newproc puts it there), so a caller stepped back twice (the
# unwinder's frames were, once more by the profile) fell in the padding
# before it, "gohot+0x5ce1f" (perf 6.1 unwinds only main.hot here).
for gobin in /usr/lib/go-1.19/bin/go "$(command -v go)"; do
	if [[ ! -x $gobin ]]; then
		skip "no Go at ${gobin:-go} (golang-go)" "Go stacks with DWARF"; continue
	fi
	v=$("$gobin" env GOVERSION)
	(cd "$TMP" && mkdir -p "$v" && cp "$P/gohot/main.go" "$v/" && cd "$v" &&
		GOFLAGS=-mod=mod GOCACHE="$ROOT/build/go-cache" "$gobin" build -o gohot main.go)
	"${PROFILE[@]}" -c "$TMP/$v/gohot 400" --call-graph dwarf --folded "$TMP/$v.folded" >/dev/null 2>&1
	check "$v, DWARF" "$TMP/$v.folded" main.hot "gohot;runtime.goexit.abi0;runtime.main;main.main;main.hot"
done
# Go compresses its DWARF: to find .debug_frame, libdw inflated every debug
# section into each process's unwinder (a 30 MB Go program: 20 MB, for
# each of its processes); the unwinders read a view with .debug_frame
# alone, inflated once (symbols/cfi.c). Six times the tests' OTLP
# receiver (a 30 MB Go program) starting beside gohot, each unwound
# through .debug_frame (the stacks above say it is read): the session's
# peak RSS was 32.7 MB, 9.5 MB with the view.
RECV=$ROOT/build/tests/otlp_receiver
if [[ -n ${v-} && -x $TMP/$v/gohot && -x $RECV ]] && readelf -SW "$RECV" | grep -q ' \.debug_frame .* C '; then
	cat >"$TMP/gomem.lua" <<'EOF'
c = perfmon.counter("cpu-clock/freq=199,call-graph=dwarf/")
probe(c, function(s) s:packed() end)
probe("end", function()
  local f = io.open("/proc/self/status"); local st = f:read("a"); f:close()
  print("peak", st:match("VmHWM:%s*(%d+)"))
end)
EOF
	peak=$("$PERFSCRIPT" -c "sh -c 'for i in 1 2 3 4 5 6; do $RECV 0 >/dev/null & p=\$!; $TMP/$v/gohot 300; kill \$p; done; wait'" \
		"$TMP/gomem.lua" 2>&1 |
		awk '$1 == "peak" { print $2 }')
	ok $(( ${peak:-99999} < 20 * 1024 ? 0 : 1 )) \
		"$v: DWARF stacks of twelve Go processes (compressed DWARF) in a session of ${peak:-?} KB at its peak (under 20 MB; 32.7 MB when libdw inflated every debug section)"
else
	skip "no build/tests/otlp_receiver, or its .debug_frame is not compressed" "unwinding Go programs without inflating their DWARF"
fi
done_testing
