build-tsan/obj/core/clock.o: runtime/core/clock.c runtime/base/perf.h \
 bindings/perfscript.h
runtime/base/perf.h:
bindings/perfscript.h:
