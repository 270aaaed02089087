build-tsan/obj/loop/driver.o: runtime/loop/driver.c runtime/base/advice.h \
 runtime/loop/internal.h runtime/base/pidmap.h bindings/perfscript.h
runtime/base/advice.h:
runtime/loop/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
