build-tsan/obj/core/control.o: runtime/core/control.c \
 runtime/core/internal.h bindings/perfscript.h runtime/core/sampler.h \
 runtime/core/view.h
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
runtime/core/view.h:
