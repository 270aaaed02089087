build-tsan/obj/core/attr.o: runtime/core/attr.c runtime/core/internal.h \
 bindings/perfscript.h runtime/core/sampler.h runtime/core/view.h
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
runtime/core/view.h:
