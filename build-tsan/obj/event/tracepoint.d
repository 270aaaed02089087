build-tsan/obj/event/tracepoint.o: runtime/event/tracepoint.c \
 runtime/base/array.h runtime/event/event.h runtime/base/suggest.h \
 bindings/perfscript.h
runtime/base/array.h:
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
