build-tsan/obj/event/access.o: runtime/event/access.c \
 runtime/event/event.h runtime/base/suggest.h bindings/perfscript.h
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
