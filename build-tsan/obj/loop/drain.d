build-tsan/obj/loop/drain.o: runtime/loop/drain.c runtime/loop/internal.h \
 runtime/base/pidmap.h bindings/perfscript.h
runtime/loop/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
