build-tsan/obj/loop/loop.o: runtime/loop/loop.c runtime/base/array.h \
 bindings/perfscript.h
runtime/base/array.h:
bindings/perfscript.h:
