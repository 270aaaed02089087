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
out=$(tests/layers.sh build 2>&1); ok $? "no include or call goes from a lower layer of runtime/ to a higher one or a sibling"
like "$out" "layers: ok \([0-9]{2,} objects\)" "the layer check saw the objects ($out)"
printf '%s\n' "$out" | sed 's/^/# /'
# The layer check names what it guards against, on a tree of seeded
# violations (a fence that is not tested is not trusted).
seed=$TMP/seed
mkdir -p "$seed"/runtime/{base,event,core,sample/perf,sample/bpf,loop,lua} "$seed/build/obj"
echo 'int ps_lua_thing(void) { return 1; }' >"$seed/runtime/lua/thing.c"
echo 'int ps_lua_thing(void); int ps_core_up(void) { return ps_lua_thing(); }' >"$seed/runtime/core/up.c"
echo 'int ps_bpf_x(void) { return 2; }' >"$seed/runtime/sample/bpf/x.c"
echo 'int ps_bpf_x(void); int ps_perf_y(void) { return ps_bpf_x(); }' >"$seed/runtime/sample/perf/y.c"
echo 'void lua_pushnil(void *L); void ps_base_l(void *L) { lua_pushnil(L); }' >"$seed/runtime/base/l.c"
echo '#include <loop/internal.h>' >"$seed/runtime/event/inc.c"
echo '#include <lua.h>' >"$seed/runtime/core/lua_in_core.h"
echo '#include "event/internal.h"' >"$seed/runtime/core/peek.c"
: >"$seed/runtime/event/internal.h"
: >"$seed/runtime/loop/internal.h"
for c in lua/thing core/up sample/bpf/x sample/perf/y base/l; do
	mkdir -p "$seed/build/obj/$(dirname $c)"
	cc -c -o "$seed/build/obj/$c.o" "$seed/runtime/$c.c"
done
cc -shared -fPIC -o "$seed/build/libperfscript.so" "$seed/runtime/base/l.c" 2>/dev/null
out=$(tests/layers.sh "$seed/build" "$seed" 2>&1); rc=$?
ok $(( rc != 0 ? 0 : 1 )) "tests/layers.sh fails on seeded violations"
like "$out" "runtime/core/up.c calls ps_lua_thing, defined in runtime/lua/thing.c \(a higher layer, lua\)" "it names an upward call"
like "$out" "runtime/sample/perf/y.c calls ps_bpf_x, defined in runtime/sample/bpf/x.c \(a sibling layer, sample/bpf\)" \
	"it names a call between the sibling backends"
like "$out" "runtime/base/l.c calls lua_pushnil: Lua belongs to lua/ and cli/ only" "it names a Lua call below lua/"
like "$out" "runtime/event/inc.c: includes \"loop/internal.h\" from a higher layer \(loop\)" "it names an upward <...> include"
like "$out" "runtime/core/peek.c: includes \"event/internal.h\", the private header of event/" "it names a lower layer's private header used from above"
like "$out" "runtime/core/lua_in_core.h: includes <lua.h>: Lua belongs to lua/ and cli/ only" "it names lua.h included below lua/"
like "$out" "libperfscript.so imports lua_pushnil: the library must know nothing of Lua" "it names a Lua import of the library"
out=$(tests/sizes.sh 2>&1); ok $? "no runtime/ C file over 500 lines, no function over 80"
is "$(strings perfscript build/libperfscript.so | grep -c "$PWD")" 0 "no build path ($PWD) inside perfscript or libperfscript.so"
if [[ -d /usr/aarch64-linux-gnu/include/asm ]]; then
	out=$(make -s bpf-arm64 2>&1); ok $? "the BPF programs build for arm64 too"
	[[ -n $out ]] && printf '%s\n' "$out" | head -10 | sed 's/^/# /'
else
	skip "no arm64 UAPI headers (Debian's linux-libc-dev-arm64-cross)" "the BPF programs build for arm64"
fi
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
