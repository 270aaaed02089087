build-tsan/obj/event/names.o: runtime/event/names.c runtime/event/event.h \
 runtime/base/suggest.h bindings/perfscript.h
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
