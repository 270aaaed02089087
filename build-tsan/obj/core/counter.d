build-tsan/obj/core/counter.o: runtime/core/counter.c \
 runtime/base/array.h runtime/core/internal.h bindings/perfscript.h \
 runtime/core/sampler.h runtime/core/view.h
runtime/base/array.h:
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
runtime/core/view.h:
