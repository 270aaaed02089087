build-tsan/obj/symbols/lookup.o: runtime/symbols/lookup.c \
 runtime/base/suggest.h runtime/symbols/internal.h runtime/base/pidmap.h \
 bindings/perfscript.h runtime/symbols/resolve.h
runtime/base/suggest.h:
runtime/symbols/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
runtime/symbols/resolve.h:
