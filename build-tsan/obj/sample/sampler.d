build-tsan/obj/sample/sampler.o: runtime/sample/sampler.c \
 runtime/base/array.h runtime/base/cpus.h runtime/event/event.h \
 runtime/base/suggest.h bindings/perfscript.h runtime/sample/sampler.h \
 runtime/core/internal.h runtime/core/sampler.h
runtime/base/array.h:
runtime/base/cpus.h:
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
runtime/sample/sampler.h:
runtime/core/internal.h:
runtime/core/sampler.h:
