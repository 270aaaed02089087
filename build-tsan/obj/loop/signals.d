build-tsan/obj/loop/signals.o: runtime/loop/signals.c \
 runtime/loop/internal.h runtime/base/pidmap.h bindings/perfscript.h
runtime/loop/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
