build-tsan/obj/event/sysfs.o: runtime/event/sysfs.c runtime/base/array.h \
 runtime/base/cpus.h runtime/event/event.h runtime/base/suggest.h \
 bindings/perfscript.h
runtime/base/array.h:
runtime/base/cpus.h:
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
