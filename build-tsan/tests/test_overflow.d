build-tsan/tests/test_overflow: tests/unit/test_overflow.c \
 bindings/perfscript.h tests/unit/session_util.h tests/unit/tap.h
bindings/perfscript.h:
tests/unit/session_util.h:
tests/unit/tap.h:
