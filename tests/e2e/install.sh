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
done_testing
