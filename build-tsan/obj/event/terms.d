build-tsan/obj/event/terms.o: runtime/event/terms.c runtime/base/regs.h \
 runtime/event/event.h runtime/base/suggest.h bindings/perfscript.h
runtime/base/regs.h:
runtime/event/event.h:
runtime/base/suggest.h:
bindings/perfscript.h:
