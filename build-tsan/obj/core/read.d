build-tsan/obj/core/read.o: runtime/core/read.c runtime/base/perf.h \
 runtime/core/internal.h bindings/perfscript.h runtime/core/sampler.h \
 runtime/core/view.h
runtime/base/perf.h:
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
runtime/core/view.h:
