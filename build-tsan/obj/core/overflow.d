build-tsan/obj/core/overflow.o: runtime/core/overflow.c \
 runtime/base/perf.h bindings/perfscript.h
runtime/base/perf.h:
bindings/perfscript.h:
