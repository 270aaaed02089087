build-tsan/obj/event/pfm.o: runtime/event/pfm.c runtime/base/array.h \
 runtime/event/event.h runtime/base/suggest.h bindings/perfscript.h
runtime/base/array.h:
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
