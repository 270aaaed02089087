build-tsan/obj/event/pmu.o: runtime/event/pmu.c runtime/event/event.h \
 runtime/base/suggest.h bindings/perfscript.h
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
