build-tsan/obj/symbols/cache.o: runtime/symbols/cache.c \
 runtime/symbols/internal.h runtime/base/pidmap.h bindings/perfscript.h \
 runtime/symbols/resolve.h
runtime/symbols/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
runtime/symbols/resolve.h:
