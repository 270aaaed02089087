build-tsan/obj/core/explain.o: runtime/core/explain.c \
 runtime/base/advice.h runtime/base/cpus.h runtime/core/internal.h \
 bindings/perfscript.h runtime/core/sampler.h runtime/core/view.h
runtime/base/advice.h:
runtime/base/cpus.h:
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
runtime/core/view.h:
