build-tsan/obj/event/breakpoint.o: runtime/event/breakpoint.c \
 runtime/event/event.h runtime/base/suggest.h bindings/perfscript.h
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
