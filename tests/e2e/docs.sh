# docs.sh: the docs are checked by machine. Every Lua function perfscript
# registers (globals, the perfmon module, counter and group methods) and
# every command-line option must appear in docs/.
source "$(dirname "$0")/lib.sh"
DOCS=$(cd "$(dirname "$0")/../../docs" && pwd)

names=$("$PERFSCRIPT" -e '
local std = {}
for n in ("assert collectgarbage dofile error getmetatable ipairs load loadfile next pairs pcall print rawequal rawget rawlen rawset require select setmetatable tonumber tostring type xpcall warn"):gmatch("%S+") do std[n] = true end
local out = {}
for k, v in pairs(_G) do
  if type(v) == "function" and not std[k] then out[#out + 1] = k end
end
for k, v in pairs(perfmon) do
  if type(v) == "function" then out[#out + 1] = "perfmon." .. k end
end
local reg = debug.getregistry()
for _, mt in ipairs({ "perfscript.counter", "perfscript.group", "perfscript.aggregate", "perfscript.overflow" }) do
  for k in pairs(reg[mt].__index) do out[#out + 1] = (mt:match("%.(%w+)$")) .. ":" .. k end
end
table.sort(out)
print(table.concat(out, "\n"))')
ok $? "perfscript lists its registered functions"
n=0
for name in $names; do
	n=$((n + 1))
	grep -qF "\`$name" "$DOCS/api.md"; ok $? "docs/api.md documents $name"
done
ok $(( n >= 20 ? 0 : 1 )) "found the registered functions ($n)"

# Every probe point of the table of probe kinds (perfmon.points()).
points=$("$PERFSCRIPT" -e 'print(table.concat(perfmon.points(), "\n"))')
ok $? "perfscript lists its probe points"
n=0
for p in $points; do
	n=$((n + 1))
	grep -qF "\`$p\`" "$DOCS/api.md"; ok $? "docs/api.md documents probe point $p"
done
ok $(( n >= 10 ? 0 : 1 )) "found the probe points ($n)"

for opt in -e -c -p -a -C -G -T -b -I -o -v -l -i --describe --json --version --help --backend --no-demangle --debuginfod-wait --no-children; do
	grep -qE -- "(^|[^a-z-])$opt([^a-z-]|$)" "$DOCS/guide.md" "$DOCS/perfscript.1"; ok $? "docs describe option $opt"
done
for f in guide.md events.md api.md perfscript.1; do
	[[ -s $DOCS/$f ]]; ok $? "docs/$f exists"
done
if command -v man >/dev/null; then
	out=$(MANWIDTH=80 man -l "$DOCS/perfscript.1" 2>&1 | head -5); like "$out" "perfscript" "perfscript.1 renders with man"
else
	skip "man is not installed" "perfscript.1 renders with man"
fi

# Every public function of every tapset module is in docs/tapsets.md.
TAPSETS=$(cd "$(dirname "$0")/../../tapsets" && pwd)
mods=$(cd "$TAPSETS" && ls -- *.lua 2>/dev/null | sed 's/\.lua$//')
if [[ -n $mods ]]; then
	tnames=$("$PERFSCRIPT" -e '
local out = {}
for mod in (...):gmatch("%S+") do
  for k, v in pairs(require(mod)) do
    if type(v) == "function" and not k:match("^_") then out[#out + 1] = mod .. "." .. k end
  end
end
table.sort(out)
print(table.concat(out, "\n"))' -- "$mods")
	ok $? "perfscript lists the tapsets' functions"
	n=0
	for name in $tnames; do
		n=$((n + 1))
		grep -qF "\`$name" "$DOCS/tapsets.md"; ok $? "docs/tapsets.md documents $name"
	done
	ok $(( n >= 20 ? 0 : 1 )) "found the tapsets' functions ($n)"
fi

# docs/architecture.md lists every file of each layer of runtime/ and every
# tapset: held to the tree, both ways.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
for dir in base event symbols core sample sample/perf sample/bpf session loop lua cli tapsets; do
	listed=$(awk -v d="- $dir:" 'index($0, d) == 1 { sub(/^- [^:]*: /, ""); print }' "$DOCS/architecture.md" | tr ' ' '\n' | sort)
	src=$ROOT/runtime/$dir; [[ $dir == tapsets ]] && src=$ROOT/tapsets
	real=$(cd "$src" && find . -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' -o -name '*.lua' \) | sed 's|^\./||' | sort)
	is "$listed" "$real" "docs/architecture.md lists the files of $dir as they are"
done

# The dynamic probe forms -l lists are in events.md and the man page; the
# sample's fields and methods for tracepoints and probes are in api.md.
forms=$("$PERFSCRIPT" -l 2>/dev/null | awk '/^pmu\/(kprobe|uprobe):/ { p = 1; next } /^[^ ]/ { p = 0 } p && $1 ~ /:/ { print $1 }')
if [[ -d /sys/bus/event_source/devices/uprobe || -d /sys/bus/event_source/devices/kprobe ]]; then
	like "$forms" "uprobe:PATH:SYMBOL|kprobe:SYMBOL" "-l lists the probe forms a user can write"
	for f in $forms; do
		grep -qF "\`$f\`" "$DOCS/events.md"; ok $? "docs/events.md documents the probe form $f"
		grep -qF "${f//-/\\-}" "$DOCS/perfscript.1"; ok $? "perfscript.1 names the probe form $f"
	done
else
	skip "this kernel has no kprobe or uprobe PMU" "the probe forms are documented"
fi
for f in args raw retval; do grep -qF "| \`$f\` |" "$DOCS/api.md"; ok $? "docs/api.md documents the sample field $f"; done
for m in "arg(n)" "user_string(addr)" "kernel_string(addr)"; do
	grep -qF "\`sample:$m\`" "$DOCS/api.md"; ok $? "docs/api.md documents sample:$m"
done

# The complete tapset of "Writing a tapset" runs as documented: its first
# Lua block is hits.lua, the second the script, the plain block the output.
awk '/^## Writing a tapset/ { w = 1; next } !w { next } /^## / { exit }
	/^```lua$/ { n++; f = n == 1 ? "hits.lua" : "top.lua"; next }
	/^```$/ { if (f) f = ""; else if (o) o = 0; else if (n == 2) o = 1; next }
	f { print > (dir "/" f) } o { print > (dir "/want") }' dir="$TMP" "$DOCS/tapsets.md"
mkdir -p "$TMP/tapsetdir"; mv "$TMP/hits.lua" "$TMP/tapsetdir/" 2>/dev/null
if need_root; then
	out=$("$PERFSCRIPT" -I "$TMP/tapsetdir" "$TMP/top.lua" -c "$WORKLOAD getppid 500" 2>&1)
	is "$out" "$(cat "$TMP/want" 2>/dev/null)" "docs/tapsets.md: the tapset of 'Writing a tapset' prints what the page shows"
else
	skip "syscall tracepoints need root" "the tapset of 'Writing a tapset'"
fi
done_testing
