build-tsan/obj/sample/filter.o: runtime/sample/filter.c \
 runtime/sample/sampler.h runtime/core/view.h runtime/core/sampler.h \
 bindings/perfscript.h
runtime/sample/sampler.h:
runtime/core/view.h:
runtime/core/sampler.h:
bindings/perfscript.h:
