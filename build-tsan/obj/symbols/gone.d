build-tsan/obj/symbols/gone.o: runtime/symbols/gone.c \
 runtime/symbols/internal.h runtime/base/pidmap.h bindings/perfscript.h \
 runtime/symbols/resolve.h
runtime/symbols/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
runtime/symbols/resolve.h:
