build-tsan/obj/sample/deliver.o: runtime/sample/deliver.c \
 runtime/sample/sampler.h runtime/core/view.h runtime/core/sampler.h \
 bindings/perfscript.h
runtime/sample/sampler.h:
runtime/core/view.h:
runtime/core/sampler.h:
bindings/perfscript.h:
