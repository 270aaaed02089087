build-tsan/obj/loop/loop.o: runtime/loop/loop.c runtime/base/array.h \
 runtime/loop/internal.h runtime/base/pidmap.h bindings/perfscript.h
runtime/base/array.h:
runtime/loop/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
