build-tsan/obj/symbols/unwind.o: runtime/symbols/unwind.c \
 runtime/base/regs.h runtime/symbols/internal.h runtime/base/pidmap.h \
 bindings/perfscript.h runtime/symbols/resolve.h
runtime/base/regs.h:
runtime/symbols/internal.h:
runtime/base/pidmap.h:
bindings/perfscript.h:
runtime/symbols/resolve.h:
