build-tsan/obj/event/event.o: runtime/event/event.c runtime/base/array.h \
 runtime/event/event.h runtime/base/suggest.h bindings/perfscript.h
runtime/base/array.h:
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
