build-tsan/obj/core/region.o: runtime/core/region.c runtime/base/perf.h \
 runtime/core/internal.h bindings/perfscript.h runtime/core/sampler.h \
 runtime/core/view.h runtime/core/region.h
runtime/base/perf.h:
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
runtime/core/view.h:
runtime/core/region.h:
