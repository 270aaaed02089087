build-tsan/obj/symbols/maps.o: runtime/symbols/maps.c \
 runtime/symbols/internal.h runtime/base/pidmap.h bindings/perfscript.h \
 runtime/symbols/resolve.h
runtime/symbols/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
runtime/symbols/resolve.h:
