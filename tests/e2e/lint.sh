# lint.sh: luacheck over every Lua file perfscript ships (examples, tapsets,
# specs), with the globals perfscript defines (.luacheckrc); the C sources
# against .clang-format; the layers of runtime/ (tests/layers.sh); file and
# function sizes (tests/sizes.sh).
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
if command -v clang-format >/dev/null; then
	out=$(clang-format --dry-run --Werror runtime/*/*.[ch] runtime/*/*/*.[ch] bindings/*.h 2>&1)
	ok $? "the C sources follow .clang-format (clang-format -i to fix)"
	[[ -n $out ]] && printf '%s\n' "$out" | head -20 | sed 's/^/# /'
else
	skip "clang-format is not installed (make deps installs it)" "C layout"
fi
out=$(tests/layers.sh build 2>&1); ok $? "no include or call goes from a lower layer of runtime/ to a higher one"
printf '%s\n' "$out" | sed 's/^/# /'
out=$(tests/sizes.sh 2>&1); ok $? "no runtime/ C file over 500 lines, no function over 80"
printf '%s\n' "$out" | sed 's/^/# /'
out=$(tests/sizes.sh 400 60 2>&1); [[ $out == *"sizes: runtime/"*"()"* && $out == *" lines (at most 400"* ]]
ok $? "tests/sizes.sh names the file and the function over a limit (checked at 400 and 60)"
if ! command -v luacheck >/dev/null; then
	skip "luacheck is not installed (make deps installs lua-check)" "luacheck"
	done_testing; exit
fi
files=(examples/*.lua tapsets/*.lua tests/spec/*.lua tests/busted.lua)
out=$(luacheck --no-color -q "${files[@]}" 2>&1); ok $? "luacheck: ${#files[@]} Lua files (examples, tapsets, specs)"
[[ -n $out ]] && printf '%s\n' "$out" | sed 's/^/# /'
done_testing
