build-tsan/obj/core/breakpoint.o: runtime/core/breakpoint.c \
 runtime/base/advice.h runtime/base/path.h runtime/core/internal.h \
 bindings/perfscript.h runtime/core/sampler.h runtime/core/view.h \
 runtime/symbols/resolve.h
runtime/base/advice.h:
runtime/base/path.h:
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
runtime/core/view.h:
runtime/symbols/resolve.h:
