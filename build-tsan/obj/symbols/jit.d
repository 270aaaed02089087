build-tsan/obj/symbols/jit.o: runtime/symbols/jit.c runtime/base/array.h \
 runtime/symbols/internal.h runtime/base/pidmap.h bindings/perfscript.h \
 runtime/symbols/resolve.h
runtime/base/array.h:
runtime/symbols/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
runtime/symbols/resolve.h:
