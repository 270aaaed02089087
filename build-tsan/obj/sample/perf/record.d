build-tsan/obj/sample/perf/record.o: runtime/sample/perf/record.c \
 runtime/base/perf.h runtime/sample/perf/record.h bindings/perfscript.h
runtime/base/perf.h:
runtime/sample/perf/record.h:
bindings/perfscript.h:
