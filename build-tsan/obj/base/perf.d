build-tsan/obj/base/perf.o: runtime/base/perf.c runtime/base/perf.h
runtime/base/perf.h:
