build-tsan/obj/sample/order.o: runtime/sample/order.c \
 runtime/base/array.h runtime/sample/sampler.h runtime/core/internal.h \
 bindings/perfscript.h runtime/core/sampler.h
runtime/base/array.h:
runtime/sample/sampler.h:
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
