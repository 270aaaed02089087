# paths.sh: require loads only what the user asked for. The search path is
# -I, PERFSCRIPT_PATH, the tapsets of the build or install tree the binary
# is in (when only root or the user can write there), the configured
# PREFIX's, and Lua's own path without the current directory.
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
planted='return "planted"'
try='local ok, v = pcall(require, "planted"); print(ok and v or "not found")'

# A copy of the binary in a directory of its own: nothing one level up is
# searched, and a tapsets/ beside it that others may write is not trusted.
mkdir -p "$TMP/x" "$TMP/tapsets" "$TMP/share/perfscript/tapsets" "$TMP/cwd/perfscript"
cp "$PERFSCRIPT" "$TMP/x/perfscript"
printf '%s\n' "$planted" >"$TMP/tapsets/planted.lua"
out=$("$TMP/x/perfscript" -e "$try" 2>&1)
is "$out" "not found" "a binary in DIR/x does not load DIR/tapsets (one level up)"
printf '%s\n' "$planted" >"$TMP/share/perfscript/tapsets/planted.lua"
chmod 777 "$TMP/share"
out=$("$TMP/x/perfscript" -e "$try" 2>&1)
is "$out" "not found" "../share/perfscript/tapsets under a directory anyone may write is not searched"
chmod 755 "$TMP/share"
out=$("$TMP/x/perfscript" -e "$try" 2>&1)
is "$out" "planted" "../share/perfscript/tapsets of an install tree is searched"
rm -r "$TMP/share"
mkdir -p "$TMP/x/tapsets"; printf '%s\n' "$planted" >"$TMP/x/tapsets/planted.lua"
chmod 777 "$TMP/x/tapsets"
out=$("$TMP/x/perfscript" -e "$try" 2>&1)
is "$out" "not found" "a world-writable tapsets/ beside the binary is not searched"
chmod 755 "$TMP/x/tapsets"
out=$("$TMP/x/perfscript" -e "$try" 2>&1)
is "$out" "planted" "tapsets/ beside the binary (a build tree) is searched"

# The current directory only when named.
printf '%s\n' "$planted" >"$TMP/cwd/planted.lua"
out=$(cd "$TMP/cwd" && "$PERFSCRIPT" -e "$try" 2>&1)
is "$out" "not found" "./NAME.lua is not loaded from the current directory"
out=$(cd "$TMP/cwd" && "$PERFSCRIPT" -I . -e "$try" 2>&1)
is "$out" "planted" "-I . names the current directory"
out=$(cd "$TMP/cwd" && PERFSCRIPT_PATH=. "$PERFSCRIPT" -e "$try" 2>&1)
is "$out" "planted" "PERFSCRIPT_PATH=. names it too"
out=$(cd "$TMP/cwd" && LUA_PATH='./?.lua' "$PERFSCRIPT" -e "$try" 2>&1)
is "$out" "planted" "a LUA_PATH the user set is kept as it is"

# Under LuaJIT the stats tapset uses only the C summary mode perfscript
# registers, never a perfscript/stats_core.lua found on the path.
if command -v luajit >/dev/null; then
	printf 'error("planted stats_core loaded")\n' >"$TMP/cwd/perfscript/stats_core.lua"
	out=$(cd "$TMP/cwd" && LUA_PATH="$ROOT/tapsets/?.lua;;" luajit -e \
		'local s = require "stats"; print(s._core)' 2>&1)
	is "$out" "false" "LuaJIT: require 'stats' does not load ./perfscript/stats_core.lua"
else
	skip "luajit is not installed (make deps installs it)" "LuaJIT: require 'stats'"
fi

# A tapset that is not found says why the script's directory was not
# searched and how to add one.
mkdir -p "$TMP/mine"; echo 'return 1' >"$TMP/mine/mytapset.lua"; echo 'require "mytapset"' >"$TMP/mine/s.lua"
out=$(cd "$TMP/mine" && "$PERFSCRIPT" s.lua 2>&1)
like "$out" "module 'mytapset' not found:.*does not search the current directory nor the script's own: add a directory with -I DIR" \
	"a tapset beside the script: the message says it is not searched and what adds it"
out=$(cd "$TMP/mine" && "$PERFSCRIPT" -I . s.lua 2>&1); ok $? "-I . then finds it"
done_testing
