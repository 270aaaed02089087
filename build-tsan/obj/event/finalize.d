build-tsan/obj/event/finalize.o: runtime/event/finalize.c \
 runtime/event/event.h runtime/base/suggest.h bindings/perfscript.h
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
