# memory.sh: a session's memory stays bounded however many processes come
# and go. A profile-like script (sampling task-clock, naming each sample's
# command) watches 4000 and then 14000 short-lived processes; the second
# session's peak RSS may not exceed the first's by more than 1.5 MB (it grew
# by about 0.45 KB per process before: 4.4 MB for the 10000 more).
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

script='c = perfmon.counter("task-clock/freq=499/")
local names = 0
probe("perfmon.sample(c)", function(s) if s.comm ~= "" then names = names + 1 end end)
probe("end", function()
  for l in io.lines("/proc/self/status") do
    local kb = l:match("^VmHWM:%s+(%d+)")
    if kb then print(kb, perfmon.symbols().exited) end
  end
end)'
peak() { "$PERFSCRIPT" -e "$script" -c "$WORKLOAD forks $1" 2>"$TMP/err"; }
read -r small _ < <(peak 4000)
read -r big all < <(peak 14000) # all: the exited processes kept, for the budget's check below
[[ $small =~ ^[0-9]+$ && $big =~ ^[0-9]+$ ]]
ok $? "both sessions report their peak RSS ($small KB, $big KB; $(head -c 200 "$TMP/err"))"
(( big <= small + 1536 ))
ok $? "10000 more processes grow the peak RSS by at most 1.5 MB (by $(( big - small )) KB)"

# Exited processes count in the budget, which alone bounds them: the
# 14000 above keep the last 4096 (and older ones a sample named) under
# the default budget; 6000 under 1 MiB keep what fits after a trim (the
# ones no sample named go first, then files, then the oldest sampled ones).
kept='c = perfmon.counter("task-clock/freq=999/")
perfmon.symbols(1048576)
probe("perfmon.sample(c)", function(s) local _ = s.sym end)
probe("end", function() perfmon.trim(); local st = perfmon.symbols(); print(st.exited, st.bytes, st.budget) end)'
read -r few fbytes fbudget < <("$PERFSCRIPT" -e "$kept" -c "$WORKLOAD forks 6000" 2>"$TMP/err")
ok $(( ${all:-0} >= 4096 && ${few:-99999} < 4096 && ${fbytes:-99999999} <= ${fbudget:-0} ? 0 : 1 )) \
	"a 1 MiB budget bounds the exited processes kept: ${few:-?} of 6000 in ${fbytes:-?} bytes; ${all:-?} of 14000 under the default budget"
out=$("$PERFSCRIPT" -e 'print(pcall(perfmon.symbols, { exited = 20 })); print(pcall(perfmon.symbols, { budget = 10 }))' 2>&1)
like "$out" "perfmon.symbols: unknown field 'exited' \(budget, lines" "perfmon.symbols{exited = 20}: refused, naming the fields it takes"
like "$out" "perfmon.symbols: budget wants at least 1 MiB" "perfmon.symbols{budget = 10}: refused, saying what it wants"

# A process's DWARF unwinder (its Dwfl, a few hundred KB of parsed call
# frame information) goes when the process exits: 80 short processes in a
# row never hold more than a few at once, and none is left at the end (it
# was 64, the cap, both times: an agent under exec churn held 3 MB more).
unw='c = perfmon.counter("task-clock/freq=999,call-graph=dwarf/")
local most, stacks = 0, 0
probe("perfmon.sample(c)", function(s)
  if #s.callchain > 1 then stacks = stacks + 1 end
  most = math.max(most, perfmon.symbols().unwinders)
end)
probe("end", function() print(stacks > 0, most, perfmon.symbols().unwinders) end)'
read -r unwound most left < <("$PERFSCRIPT" -e "$unw" \
	-c "sh -c 'for i in \$(seq 80); do $ROOT/build/tests/chain 10 >/dev/null; done'" 2>"$TMP/err")
[[ $unwound == true ]] && ((${most:-99} <= 3 && ${left:-99} == 0))
ok $? \
	"unwinders go with their processes: 80 in a row held at most 3 at once ($most) and 0 at the end ($left; unwound: $unwound)"

# perfmon.trim(): after a large table went (a profile's window), the free
# pages between the blocks still in use go back to the system; a garbage
# collection alone keeps them (111 MB against 65 MB here).
out=$("$PERFSCRIPT" -e '
local function rss()
  for l in io.lines("/proc/self/status") do
    local kb = l:match("^VmRSS:%s+(%d+)")
    if kb then return tonumber(kb) * 1024 end
  end
end
local t, keep = {}, {}
for i = 1, 1e6 do t[i] = { i, i + 1 } end
for i = 64, 1e6, 64 do keep[#keep + 1] = t[i] end
t = nil
collectgarbage("collect")
local gc = rss()
local trimmed = perfmon.trim()
print(gc // 1048576, trimmed // 1048576, math.abs(rss() - trimmed) < 1048576, #keep)' 2>&1)
read -r gc trimmed same _ <<<"$out"
[[ $same == true ]] && ((${trimmed:-999} + 30 <= ${gc:-0}))
ok $? \
	"perfmon.trim() gives freed heap back: RSS $gc MB after a collection, $trimmed MB after the trim, which it returns ($out)"
out=$("$PERFSCRIPT" -e 'print(math.type(perfmon.trim()))
perfmon.trim("pages")' 2>&1)
[[ $out == $'integer\n'* && $out == *'perfmon.trim() takes no argument: the symbolizer gives back its pages by itself'* ]]
ok $? "perfmon.trim() takes no argument, and says why when given one ($out)"

# The kernel's symbols: 8 bytes a text symbol (one per address) and its
# name, plus at most 512 KB of the rest; 16-byte entries (before) took 0.8
# MB more than that here. A function's padding symbol ("__pfx_NAME", 16
# bytes before NAME, on kernels built with function padding) keeps no name
# of its own (1.6 MB here), and is still named.
if [[ $(awk '$1 != "0000000000000000" { print; exit }' /proc/kallsyms) ]]; then
	read -r n bytes < <(awk '$2 ~ /^[tTwW]$/ { n++; if ($3 !~ /^__pfx_/) b += length($3) + 1 } END { print n, b }' /proc/kallsyms)
	pfx=$(awk '$2 ~ /^[tT]$/ && $3 ~ /^__pfx_[a-z]/ && $4 == "" { print $1, $3; exit }' /proc/kallsyms)
	if [[ -n $pfx ]]; then
		read -r addr name <<<"$pfx"
		is "$("$PERFSCRIPT" -e "print(perfmon.symbolize(0, 0x$addr + 2, true))" 2>&1)" \
			"$name+0x2	[kernel.kallsyms]	$name" "a padding symbol is named: $name+0x2"
	else
		skip "this kernel has no __pfx_ padding symbols" "a padding symbol is named"
	fi
	read -r before after < <("$PERFSCRIPT" -e 'local a = perfmon.trim()
perfmon.symbolize(0, 0xffffffff81000000, true)
print(a, perfmon.trim())' 2>&1)
	grew=$(( ${after:-0} - ${before:-0} ))
	ok $(( !(grew > 0 && grew <= bytes + n * 10 + 524288) )) \
		"the kernel's $n text symbols take $grew bytes of RSS, at most their names ($bytes) + 10 bytes each + 512 KB"
else
	skip "kernel addresses are hidden here (kptr_restrict)" "the kernel's symbols' memory"
fi

# libpfm4's tables (2 MB of relocated pointers, 1 MB of it dirty) are
# mapped only once a vendor event name is asked for.
maps='local function pfm()
  for l in io.lines("/proc/self/maps") do if l:find("libpfm", 1, true) then return true end end
  return false
end
local before = pfm()
perfmon.counter("INST_RETIRED.ANY")
print(before, pfm())'
is "$("$PERFSCRIPT" -e "$maps" 2>/dev/null)" "$(printf 'false\ttrue')" \
	"libpfm4 is loaded at the first vendor event name, not at start-up"

# The DWARF of a file whose debug file has compressed sections (Debian's
# libc6-dbg): what libdw decompressed counts in the symbolizer's bytes, and
# the compressed file bytes it read are given back (they were 3.7 MB of
# the agent's RSS, counted nowhere).
libc=$(awk '/libc\.so/ { print $6; exit }' /proc/self/maps)
bid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ { print $3 }')
dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
if [[ -n $bid && -r $dbg ]] && readelf -SW "$dbg" 2>/dev/null | grep -q ' \.debug_info .* C '; then
	out=$("$PERFSCRIPT" -e '
local lo
for l in io.lines("/proc/self/maps") do
  if l:match("libc%.so") and l:match("r%-xp") then lo = tonumber(l:match("^(%x+)"), 16) break end
end
local pid = tonumber(io.open("/proc/self/stat"):read("l"):match("^(%d+)"))
local m = perfmon.mapping(pid, lo + 0x30000)
local kb, here = 0, false
for l in io.lines("/proc/self/smaps") do
  if l:match("^%x+%-%x+ ") then here = l:match("%.debug$") ~= nil
  elseif here and l:match("^Rss:") then kb = kb + tonumber(l:match("(%d+)")) end
end
print(m.has_lines, perfmon.symbols().bytes >= 4 * 1024 * 1024, kb < 1024, perfmon.symbols().bytes)')
	is "$(cut -f1-3 <<<"$out")" "$(printf 'true\ttrue\ttrue')" "libc's compressed DWARF: lines found, its decompressed sections in the budget's bytes, the file's bytes given back"
	# what every debug section inflates to, and the location lists alone
	# (no lookup reads them, so they are never inflated: 1.4 MB of libc's)
	all=0 loc=0
	objcopy --decompress-debug-sections "$dbg" "$TMP/dbg" 2>/dev/null
	while read -r name size; do
		all=$((all + 0x$size))
		[[ $name == .debug_loc || $name == .debug_loclists ]] && loc=$((loc + 0x$size))
	done < <(readelf -SW "$TMP/dbg" 2>/dev/null |
		sed -nE 's/.*\] (\.debug_[a-z_]+) +PROGBITS +[0-9a-f]+ [0-9a-f]+ ([0-9a-f]+) .*/\1 \2/p')
	held=$(cut -f4 <<<"$out")
	ok $(( !(${loc:-0} > 0 && ${held:-0} > 0 && held < all) )) \
		"libc's location lists are not inflated: the symbolizer holds $held bytes, less than the $all its debug sections inflate to ($loc of location lists)"
	# the scripts below start where libc's code lies: pid, lo, hi
	libc_text='local pid = tonumber(io.open("/proc/self/stat"):read("l"):match("^(%d+)"))
local lo, hi
for l in io.lines("/proc/self/maps") do
  local a, b = l:match("^(%x+)%-(%x+) r%-xp .*libc%.so")
  if a then lo, hi = tonumber(a, 16), tonumber(b, 16) end
end
'
	# what libdw holds for each unit it parsed (line tables, 16 MB of
	# libc's) is counted too: naming addresses all over libc grows the RSS
	# by what the budget sees (it saw an eighth of it before)
	out=$("$PERFSCRIPT" -e "$libc_text"'
perfmon.frames(pid, lo + 0x30000)
local rss, bytes = perfmon.trim(), perfmon.symbols().bytes
for a = lo, hi - 1, 997 do perfmon.frames(pid, a) end
print(perfmon.trim() - rss, perfmon.symbols().bytes - bytes)')
	read -r grew counted <<<"$out"
	ok $(( !(${grew:-0} > 4000000 && ${counted:-0} * 10 >= grew * 8) )) \
		"the units libdw parsed are in the budget: naming libc all over grew RSS by ${grew:-?} bytes, the symbolizer's bytes by ${counted:-?}"
	# a burst of reads within one second trims at once past the budget,
	# not at the next second (it reached 24.9 MB under a 12 MiB budget)
	out=$("$PERFSCRIPT" -e "$libc_text"'
perfmon.symbols(12 * 1024 * 1024)
local most = 0
for a = lo, hi - 1, 997 do
  perfmon.frames(pid, a)
  most = math.max(most, perfmon.symbols().bytes)
end
print(most, perfmon.symbols().evictions)')
	read -r most evictions <<<"$out"
	ok $(( !(${most:-999999999} <= (15 << 20) && ${evictions:-0} >= 1) )) \
		"a 12 MiB budget holds within 3 MiB of it while libc is named all over in well under a second (at most ${most:-?} bytes, ${evictions:-?} evictions)"
	# lines = false: names from the symbol tables alone, no DWARF held
	out=$("$PERFSCRIPT" -e "$libc_text"'
local a = lo + 0x30000
local function show()
  local f = perfmon.frames(pid, a)
  return ("%s:%s:%s:%d"):format(#f, tostring(f[#f].file ~= nil), tostring(perfmon.mapping(pid, a).has_lines),
                                perfmon.symbols().bytes // 1048576)
end
local with = show()
local off = perfmon.symbols { lines = false }.lines
local without = show()
perfmon.symbols { lines = true }
print(with, off, without, show(), pcall(perfmon.symbols, { lines = 1 }))')
	like "$out" $'^[0-9]+:true:true:([4-9]|[1-9][0-9])\tfalse\t1:false:false:0\t[0-9]+:true:true:([4-9]|[1-9][0-9])\tfalse\t.*lines wants true or false' \
		"perfmon.symbols{lines = false}: one frame without a file, no lines, the DWARF given back; lines = true reads it again; a non-boolean is refused ($out)"
else
	skip "libc has no debug file with compressed sections here (libc6-dbg)" "DWARF memory counted and given back"
	skip "libc has no debug file with compressed sections here (libc6-dbg)" "perfmon.symbols{lines = false}"
	skip "libc has no debug file with compressed sections here (libc6-dbg)" "a burst trims at once"
	skip "libc has no debug file with compressed sections here (libc6-dbg)" "libdw's parsed units counted"
fi
# A large library's symbol table: its names are copied, so the pages of
# its symbol and hash tables go back (libLLVM's took 16.6 MB of the
# budget, 4 MB with them given back).
LLVM=$ROOT/build/tests/llvmloop
"$LLVM" 20 5 >"$TMP/llvm.out" 2>&1 &
llvm=$!
# the Lua that finds pid (arg[1]) and its libLLVM text mapping, lo..hi
LLVM_TEXT='
local pid = tonumber(arg[1])
local lo, hi
for l in io.lines("/proc/" .. pid .. "/maps") do
  local a, b = l:match("^(%x+)%-(%x+) r%-xp .*libLLVM")
  if a then lo, hi = tonumber(a, 16), tonumber(b, 16) end
end
'
if wait_for "$TMP/llvm.out" '^llvmloop: running' 10; then
	out=$("$PERFSCRIPT" -e "$LLVM_TEXT"'
local b0 = perfmon.symbols().bytes
local named = 0
for a = lo, hi - 1, 65537 do
  if not perfmon.symbolize(pid, a):match("^libLLVM") then named = named + 1 end
end
print(named, perfmon.symbols().bytes - b0)' -- "$llvm")
	read -r named grew <<<"$out"
	ok $(( !(${named:-0} > 100 && ${grew:-999999999} < (8 << 20)) )) \
		"libLLVM's symbols: ${named:-?} addresses named for ${grew:-?} bytes of the budget (under 8 MiB)"
	# perfmon.trim() forgets the names cached per address past 1 MiB (a
	# whole-host agent's grew by 1.6 KB a second, its long tail of
	# addresses): all of them go, and each is named the same again
	out=$("$PERFSCRIPT" -e "$LLVM_TEXT"'
perfmon.symbolize(pid, lo)
perfmon.trim()
local b0, names, n, same = perfmon.symbols().bytes, {}, 0, 0
for a = lo, hi - 1, 4099 do names[a], n = perfmon.symbolize(pid, a), n + 1 end
local b1 = perfmon.symbols().bytes
perfmon.trim()
local b2 = perfmon.symbols().bytes
for a, name in pairs(names) do if perfmon.symbolize(pid, a) == name then same = same + 1 end end
print(n, b1 - b0, b2 - b0, same)' -- "$llvm")
	read -r n grew kept same <<<"$out"
	ok $(( ${grew:-0} >= 1048576 && ${kept:-1048576} < 65536 && ${same:-0} == ${n:-1} ? 0 : 1 )) \
		"perfmon.trim() forgets ${grew:-?} bytes of names cached for ${n:-?} addresses (${kept:-?} left); all ${same:-?} named the same again"
	# perfmon.trim() gives the pages unwinding read (CFI) back to the page
	# cache; stacks unwind as deep after it, the pages read again
	out=$("$PERFSCRIPT" -p "$llvm" -e '
c = perfmon.counter("task-clock/freq=999,call-graph=dwarf/")
local n, frames, half, before, after = 0, { 0, 0 }, 1
probe("perfmon.sample(c)", function(s) n = n + 1; frames[half] = frames[half] + #s.callchain end)
probe("timer.ms(1000)", function()
  if half == 2 then return exit() end
  before = perfmon.symbols().bytes
  perfmon.trim()
  after = perfmon.symbols().bytes
  frames[1], n, half = frames[1] / math.max(n, 1), 0, 2
end)
probe("end", function() print(before, after, frames[1], frames[2] / math.max(n, 1)) end)' 2>&1)
	read -r before after deep1 deep2 <<<"$out"
	awk -v b="${before:-0}" -v a="${after:-0}" -v d1="${deep1:-0}" -v d2="${deep2:-0}" \
		'BEGIN { exit !(b - a >= 1048576 && d1 >= 5 && d2 >= d1 * 0.8) }'
	ok $? "perfmon.trim() gives the unwinders' file pages back (${before:-?} -> ${after:-?} bytes), stacks as deep after it (${deep1:-?} -> ${deep2:-?} frames) ($out)"
	# the symbolizer's own upkeep, with no call from the script: every 2 s
	# the pages unwinding read only once go back to the page cache (the
	# first time all of them), those read again since stay
	out=$("$PERFSCRIPT" -p "$llvm" -e '
c = perfmon.counter("task-clock/freq=999,call-graph=dwarf/")
local n, frames, held, k = 0, 0, {}, 0
probe("perfmon.sample(c)", function(s) n, frames = n + 1, frames + #s.callchain end)
probe("timer.ms(250)", function()
  k = k + 1
  held[k] = perfmon.symbols().bytes
  if k == 20 then exit() end
end)
probe("end", function()
  local most, drop = 0, 0
  for i = 2, #held do
    most = math.max(most, held[i - 1])
    drop = math.max(drop, most - held[i])
  end
  print(drop, held[#held], n, frames / math.max(n, 1))
end)' 2>&1)
	read -r drop last n deep <<<"$out"
	awk -v dr="${drop:-0}" -v l="${last:-0}" -v n="${n:-0}" -v d="${deep:-0}" \
		'BEGIN { exit !(dr >= 1048576 && l >= 65536 && n >= 20 && d >= 5) }'
	ok $? "the symbolizer gives back the pages unwinding read once by itself (${drop:-?} bytes at once, ${last:-?} held at the end; ${n:-?} stacks of ${deep:-?} frames) ($out)"
	# unwinding reads a file's headers and CFI, not its symbol table: that
	# is read when an address in it is first named (every file a sampled
	# process mapped was read whole before: 4.7 MB for llvmloop's, 3 MiB
	# for 60 curl and python runs' libraries that no name was asked of)
	out=$("$PERFSCRIPT" -p "$llvm" -e '
c = perfmon.counter("task-clock/freq=999,call-graph=dwarf/")
local n, frames, addrs = 0, 0, {}
probe("perfmon.sample(c)", function(s)
  n, frames = n + 1, frames + #s.callchain
  for _, a in ipairs(s.callchain) do addrs[a] = s.pid end
end)
probe("timer.ms(700)", exit)
probe("end", function()
  local rss = perfmon.trim()
  local unwound, named = perfmon.symbols().bytes, 0
  for a, pid in pairs(addrs) do
    if perfmon.symbolize(pid, a):match("^[%a_][%w_:]*") then named = named + 1 end
  end
  perfmon.trim()
  print(n, frames / math.max(n, 1), unwound, perfmon.symbols().bytes, named, rss)
end)' 2>&1)
	read -r n deep unwound named_bytes named rss <<<"$out"
	awk -v n="${n:-0}" -v d="${deep:-0}" -v u="${unwound:-1e12}" -v b="${named_bytes:-0}" -v k="${named:-0}" \
		'BEGIN { exit !(n >= 5 && d >= 5 && u < 1048576 && b >= 2097152 && k >= 5) }'
	ok $? "unwinding reads no symbol table: ${unwound:-?} bytes held after ${n:-?} stacks of ${deep:-?} frames; ${named_bytes:-?} once ${named:-?} addresses are named ($out)"
	# libLLVM's .eh_frame_hdr section follows its .eh_frame (LLVM's own
	# layout): libdw then parsed and kept every FDE of it (7.5 MB of RSS, 160 us a
	# stack) instead of using the header's search table (symbols/cfi.c)
	ok $(( ${rss:-1000000000} < 10000000 ? 0 : 1 )) \
		"libLLVM's stacks unwind through its .eh_frame_hdr table: RSS ${rss:-?} bytes after them (under 10 MB; 12.4 MB with every FDE parsed)"
else
	skip "no libLLVM here ($(head -c 100 "$TMP/llvm.out"))" "a large library's symbol table"
	skip "no libLLVM here ($(head -c 100 "$TMP/llvm.out"))" "perfmon.trim() forgets cached names"
	skip "no libLLVM here ($(head -c 100 "$TMP/llvm.out"))" "perfmon.trim() gives file pages back"
	skip "no libLLVM here ($(head -c 100 "$TMP/llvm.out"))" "perfmon.trim(\"pages\") keeps pages read again"
	skip "no libLLVM here ($(head -c 100 "$TMP/llvm.out"))" "unwinding reads no symbol table"
	skip "no libLLVM here ($(head -c 100 "$TMP/llvm.out"))" "libLLVM's .eh_frame_hdr table"
fi
kill "$llvm" 2>/dev/null
wait "$llvm" 2>/dev/null
done_testing
