build-tsan/tests/test_region: tests/unit/test_region.c \
 bindings/perfscript.h tests/unit/tap.h
bindings/perfscript.h:
tests/unit/tap.h:
