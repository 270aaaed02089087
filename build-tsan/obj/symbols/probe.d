build-tsan/obj/symbols/probe.o: runtime/symbols/probe.c \
 runtime/base/suggest.h runtime/symbols/internal.h runtime/base/pidmap.h \
 bindings/perfscript.h runtime/symbols/resolve.h
runtime/base/suggest.h:
runtime/symbols/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
runtime/symbols/resolve.h:
