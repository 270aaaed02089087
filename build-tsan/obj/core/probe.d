build-tsan/obj/core/probe.o: runtime/core/probe.c runtime/core/internal.h \
 bindings/perfscript.h runtime/core/sampler.h runtime/core/view.h \
 runtime/symbols/resolve.h
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
runtime/core/view.h:
runtime/symbols/resolve.h:
