build-tsan/obj/event/list.o: runtime/event/list.c runtime/base/perf.h \
 runtime/base/array.h runtime/event/event.h runtime/base/suggest.h \
 bindings/perfscript.h
runtime/base/perf.h:
runtime/base/array.h:
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
