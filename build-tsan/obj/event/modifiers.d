build-tsan/obj/event/modifiers.o: runtime/event/modifiers.c \
 runtime/event/event.h runtime/base/suggest.h bindings/perfscript.h
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
