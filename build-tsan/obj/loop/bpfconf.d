build-tsan/obj/loop/bpfconf.o: runtime/loop/bpfconf.c \
 runtime/base/array.h runtime/loop/internal.h runtime/base/pidmap.h \
 bindings/perfscript.h
runtime/base/array.h:
runtime/loop/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
