build-tsan/tests/test_loop: tests/unit/test_loop.c bindings/perfscript.h \
 tests/unit/session_util.h tests/unit/tap.h
bindings/perfscript.h:
tests/unit/session_util.h:
tests/unit/tap.h:
