build-tsan/obj/event/tpformat.o: runtime/event/tpformat.c \
 runtime/event/event.h runtime/base/suggest.h bindings/perfscript.h
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
