build-tsan/obj/sample/order.o: runtime/sample/order.c \
 runtime/base/array.h runtime/sample/sampler.h runtime/core/view.h \
 runtime/core/sampler.h bindings/perfscript.h
runtime/base/array.h:
runtime/sample/sampler.h:
runtime/core/view.h:
runtime/core/sampler.h:
bindings/perfscript.h:
