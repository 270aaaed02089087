build-tsan/tests/test_http: tests/unit/test_http.c bindings/perfscript.h \
 tests/unit/tap.h
bindings/perfscript.h:
tests/unit/tap.h:
