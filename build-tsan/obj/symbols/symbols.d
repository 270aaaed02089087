build-tsan/obj/symbols/symbols.o: runtime/symbols/symbols.c \
 runtime/symbols/internal.h runtime/base/pidmap.h bindings/perfscript.h \
 runtime/symbols/resolve.h runtime/symbols/python.h
runtime/symbols/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
runtime/symbols/resolve.h:
runtime/symbols/python.h:
