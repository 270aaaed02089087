build-tsan/obj/event/probe.o: runtime/event/probe.c runtime/event/event.h \
 runtime/base/suggest.h bindings/perfscript.h
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
