build-tsan/obj/base/text.o: runtime/base/text.c bindings/perfscript.h
bindings/perfscript.h:
