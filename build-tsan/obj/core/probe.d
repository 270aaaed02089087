build-tsan/obj/core/probe.o: runtime/core/probe.c runtime/core/internal.h \
 bindings/perfscript.h runtime/core/sampler.h runtime/symbols/internal.h \
 runtime/base/pidmap.h
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
runtime/symbols/internal.h:
runtime/base/pidmap.h:
