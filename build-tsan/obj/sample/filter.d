build-tsan/obj/sample/filter.o: runtime/sample/filter.c \
 runtime/sample/sampler.h runtime/core/internal.h bindings/perfscript.h \
 runtime/core/sampler.h
runtime/sample/sampler.h:
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
