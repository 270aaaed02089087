# install.sh: `make install` lays out binary, library, header and man page,
# and a C program builds against the installed header and library and counts.
source "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1

make -s install PREFIX=/usr DESTDIR="$TMP/root" >"$TMP/install.log" 2>&1; ok $? "make install DESTDIR=... succeeds"
for f in bin/perfscript lib/libperfscript.so lib/libperfscript.so.0 include/perfscript.h \
	share/man/man1/perfscript.1 share/lua/5.1/perfscript.lua; do
	[[ -e $TMP/root/usr/$f ]]; ok $? "installs $f"
done
out=$("$TMP/root/usr/bin/perfscript" --version); like "$out" "^perfscript " "the installed binary runs"
# the docs --help and the man page point to are installed where they say
for f in guide.md events.md api.md tapsets.md README.md; do
	[[ -s $TMP/root/usr/share/doc/perfscript/$f ]]; ok $? "installs share/doc/perfscript/$f"
done
like "$("$TMP/root/usr/bin/perfscript" --help)" "Docs: $TMP/root/usr/bin/../share/doc/perfscript/guide.md" "--help names the installed guide, where the tree was put"
like "$(grep -c 'share/doc/perfscript' "$TMP/root/usr/share/man/man1/perfscript.1")" "^[1-9]" "the man page names the installed docs"
[[ -f $TMP/root/usr/share/perfscript/tapsets/stats.lua ]]; ok $? "installs the tapsets"
out=$(cd / && "$TMP/root/usr/bin/perfscript" -e 'print(package.searchpath("stats", package.path))')
is "$out" "$TMP/root/usr/bin/../share/perfscript/tapsets/stats.lua" \
	"the installed binary finds its tapsets wherever the tree was put"

cat >"$TMP/client.c" <<'C'
#include <perfscript.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	struct ps_target_opts t = { .sz = sizeof(t), .kind = PS_TARGET_SELF };
	struct ps_session *s = ps_session__new(&t);
	struct ps_event_error err;
	struct ps_value v;
	char msg[512];
	ps_handle h;

	if (!s || ps_session__allocate(s, "page-faults,task-clock", &h, 1, &err) != -ENOSPC)
		return 2;
	if (ps_session__allocate(s, "task-clock:u", &h, 1, &err) != 1)
		return 3;
	if (ps_session__open(s, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "%s\n", msg);
		return 4;
	}
	for (volatile int i = 0; i < 1000000; i++)
		;
	ps_session__read(s, h, &v);
	printf("%s %d\n", ps_session__name(s, h), v.value > 0);
	ps_session__free(s);
	return 0;
}
C
sed -i '1i #include <errno.h>' "$TMP/client.c"
if cc -std=c11 -I"$TMP/root/usr/include" -o "$TMP/client" "$TMP/client.c" -L"$TMP/root/usr/lib" -lperfscript \
	2>"$TMP/cc.log"; then
	ok 0 "a C program compiles and links against the installed header and libperfscript.so"
	out=$(LD_LIBRARY_PATH="$TMP/root/usr/lib" "$TMP/client" 2>&1)
	is "$out" "task-clock:u 1" "the C program counts through libperfscript.so"
else
	ok 1 "a C program compiles and links against the installed header and libperfscript.so"
	sed 's/^/# /' "$TMP/cc.log"
fi

# An install in a prefix of its own, as a user without root makes one:
# pkg-config builds the shipped C example against it, plain luajit loads
# the binding and its library with nothing but LUA_PATH, and the installed
# examples run.
P=$TMP/opt/ps
make -s install PREFIX=/opt/ps DESTDIR="$TMP" >"$TMP/install2.log" 2>&1; ok $? "make install PREFIX=/opt/ps DESTDIR=..."
export PKG_CONFIG_PATH=$P/lib/pkgconfig
is "$(pkg-config --modversion perfscript 2>&1)" "$(sed -n 's/^#define PS_VERSION "\(.*\)"/\1/p' bindings/perfscript.h)" \
	"pkg-config knows perfscript and its version"
# shellcheck disable=SC2046 # pkg-config's flags are words
if cc -o "$TMP/regions" "$P/share/perfscript/examples/regions.c" $(pkg-config --cflags --libs perfscript) \
	-Wl,-rpath,"$(pkg-config --variable=libdir perfscript)" 2>"$TMP/cc2.log"; then
	ok 0 "examples/regions.c builds with pkg-config --cflags --libs perfscript"
	out=$(PERFSCRIPT_EVENTS=task-clock PERFSCRIPT_REPORT=csv "$TMP/regions" 2>&1)
	like "$out" "task-clock" "and runs against the installed library, reporting its regions"
else
	ok 1 "examples/regions.c builds with pkg-config --cflags --libs perfscript"
	sed 's/^/# /' "$TMP/cc2.log"
	skip "it did not build" "the pkg-config build runs"
fi
if command -v luajit >/dev/null; then
	out=$(cd / && env -u PERFSCRIPT_LIB LUA_PATH="$P/share/lua/5.1/?.lua;;" luajit -e '
local perfscript = require "perfscript"
local counts = perfscript.measure("task-clock", function() for i = 1, 1e6 do end end)
print(counts["task-clock"] > 0)' 2>&1)
	is "$out" true "plain luajit loads the installed binding, which finds its library (no PERFSCRIPT_LIB)"
else
	skip "luajit is not installed (make check installs it)" "the installed LuaJIT binding"
fi
out=$("$P/bin/perfscript" "$P/share/perfscript/examples/hello.lua" 2>&1)
like "$out" "hello from perfscript" "an installed example runs from share/perfscript/examples"
like "$(cat "$P/share/man/man1/perfscript.1")" "share/perfscript/examples" "the man page says where the examples are"
# the agent is a command of its own, from the same tree
out=$("$P/bin/perfscript-agent" --help 2>&1)
like "$out" "^usage: perfscript -a examples/agent.lua --listen" "perfscript-agent --help: the agent's usage"
if need_root; then
	"$P/bin/perfscript-agent" --listen 127.0.0.1:0 >"$TMP/agent.out" 2>&1 &
	agent=$!
	line=$(wait_line "$TMP/agent.out" '^listening on ')
	like "$line" "^listening on http://127.0.0.1:[0-9]+/ " "the installed perfscript-agent serves ($(head -c 120 "$TMP/agent.out"))"
	kill "$agent" 2>/dev/null; wait "$agent" 2>/dev/null
else
	skip "needs root (the agent samples the whole host)" "the installed perfscript-agent serves"
fi
like "$(grep '^ExecStart=' "$P/share/perfscript/examples/perfscript-agent.service")" "^ExecStart=/usr/local/bin/perfscript-agent --listen " \
	"the systemd unit runs perfscript-agent"

# make demo installs what building and running need, make check the peers.
# (--no-print-directory: under `make check` this make is a sub-make)
demo=$(make -n --no-print-directory demo 2>/dev/null | grep -m1 'missing=')
like "$demo" "libbpf-dev" "make demo installs the build's packages"
peers=$(for p in bpftrace prometheus golang-go linux-perf lua-busted g++; do [[ " ${demo//;/ } " == *" $p "* ]] && echo "$p"; done)
is "$peers" "" "make demo installs no test peer (bpftrace, prometheus, golang-go, linux-perf, busted, g++)"
like "$(make -n --no-print-directory check 2>/dev/null | grep 'missing=')" "golang-go prometheus .*bpftrace" "make check installs them"
# The quiet build's line for an object is one line, and the core is
# compiled once, position-independent, for both libraries.
out=$(make -n -B build/obj/base/text.o 2>/dev/null | grep '^printf' | sh)
is "$out" "  CC      runtime/base/text.c" "the quiet build says the file on one line, no stray line"
like "$(make -n -B build/obj/base/text.o 2>/dev/null | grep -- ' -c ')" "-fPIC -fno-semantic-interposition" \
	"a core object is built once, for the static and the shared library alike"
ok $(( $(make -n -B build/libperfscript.so 2>/dev/null | grep -c ' -c .*runtime/base/text.c') == 1 ? 0 : 1 )) \
	"the shared library compiles no second copy of it"
done_testing
