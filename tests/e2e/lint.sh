# lint.sh: luacheck over every Lua file perfscript ships (examples, tapsets,
# specs), with the globals perfscript defines (.luacheckrc).
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
if ! command -v luacheck >/dev/null; then
	skip "luacheck is not installed (make deps installs lua-check)" "luacheck"
	done_testing; exit
fi
for f in examples/*.lua tapsets/*.lua tests/spec/*.lua tests/busted.lua; do
	[[ -e $f ]] || continue
	out=$(luacheck --no-color -q "$f" 2>&1); ok $? "luacheck $f"
	[[ -n $out ]] && printf '%s\n' "$out" | sed 's/^/# /'
done
done_testing
