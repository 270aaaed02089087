build-tsan/obj/sample/perf/backend.o: runtime/sample/perf/backend.c \
 runtime/base/perf.h runtime/base/array.h runtime/base/cpus.h \
 runtime/sample/perf/record.h bindings/perfscript.h \
 runtime/sample/perf/ring.h runtime/sample/sampler.h runtime/core/view.h \
 runtime/core/sampler.h
runtime/base/perf.h:
runtime/base/array.h:
runtime/base/cpus.h:
runtime/sample/perf/record.h:
bindings/perfscript.h:
runtime/sample/perf/ring.h:
runtime/sample/sampler.h:
runtime/core/view.h:
runtime/core/sampler.h:
