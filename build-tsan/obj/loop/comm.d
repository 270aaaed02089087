build-tsan/obj/loop/comm.o: runtime/loop/comm.c runtime/loop/internal.h \
 runtime/base/pidmap.h bindings/perfscript.h
runtime/loop/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
