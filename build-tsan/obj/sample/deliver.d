build-tsan/obj/sample/deliver.o: runtime/sample/deliver.c \
 runtime/sample/sampler.h runtime/core/internal.h bindings/perfscript.h \
 runtime/core/sampler.h
runtime/sample/sampler.h:
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
