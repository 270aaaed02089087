build-tsan/obj/sample/perf/ring.o: runtime/sample/perf/ring.c \
 runtime/sample/perf/ring.h
runtime/sample/perf/ring.h:
