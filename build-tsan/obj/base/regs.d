build-tsan/obj/base/regs.o: runtime/base/regs.c runtime/base/regs.h \
 bindings/perfscript.h
runtime/base/regs.h:
bindings/perfscript.h:
