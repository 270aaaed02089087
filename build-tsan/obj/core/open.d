build-tsan/obj/core/open.o: runtime/core/open.c runtime/base/perf.h \
 runtime/core/internal.h bindings/perfscript.h runtime/core/sampler.h \
 runtime/core/view.h
runtime/base/perf.h:
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
runtime/core/view.h:
