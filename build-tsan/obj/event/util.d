build-tsan/obj/event/util.o: runtime/event/util.c runtime/event/event.h \
 runtime/base/suggest.h bindings/perfscript.h
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
