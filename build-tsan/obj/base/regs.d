build-tsan/obj/base/regs.o: runtime/base/regs.c bindings/perfscript.h
bindings/perfscript.h:
