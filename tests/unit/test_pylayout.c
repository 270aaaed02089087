/*
 * test_pylayout.c: the table of CPython layouts the Python walker reads
 * (symbols/python.c). With no argument, checks of its shape; with --dump,
 * one line per version, "3.N field=offset ...", which tests/e2e/python.sh
 * compares with what each installed CPython's own headers say
 * (tests/progs/pyoffsets.c). The table is the library's, not the Lua API's.
 */
#include <string.h>

#include "symbols/python.h"
#include "tap.h"

#define FIELDS(X)                                                                                  \
	X(runtime_head)                                                                            \
	X(interp_threads)                                                                          \
	X(ts_next)                                                                                 \
	X(ts_thread_id)                                                                            \
	X(ts_frame)                                                                                \
	X(cframe_frame)                                                                            \
	X(f_back)                                                                                  \
	X(f_code)                                                                                  \
	X(f_at)                                                                                    \
	X(f_entry)                                                                                 \
	X(f_owner)                                                                                 \
	X(at_size)                                                                                 \
	X(co_name)                                                                                 \
	X(co_qualname)                                                                             \
	X(co_filename)                                                                             \
	X(co_firstlineno)                                                                          \
	X(co_linetable)                                                                            \
	X(co_code)                                                                                 \
	X(ascii_size)                                                                              \
	X(compact_size)

static void dump(const struct ps_py_layout *l, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		printf("3.%d", l[i].minor);
#define PRINT(f) printf(" " #f "=%d", (int)l[i].f);
		FIELDS(PRINT)
#undef PRINT
		putchar('\n');
	}
}

int main(int argc, char **argv)
{
	size_t n = 0;
	const struct ps_py_layout *l = ps_python__layouts(&n);

	if (argc > 1 && !strcmp(argv[1], "--dump")) {
		dump(l, n);
		return 0;
	}
	tap_ok(n >= 4, "the table has CPython 3.10 to 3.13 at least (%zu versions)", n);
	for (size_t i = 0; i < n; i++) {
		tap_ok(i == 0 || l[i].minor > l[i - 1].minor, "3.%d: after the version before it",
		       l[i].minor);
		tap_ok(l[i].runtime_head > 0 && l[i].f_code >= 0 && l[i].co_name > 0 &&
			   l[i].co_filename > 0,
		       "3.%d: the fields every walk reads are set", l[i].minor);
	}
	return tap_done();
}
