build-tsan/obj/base/strerror.o: runtime/base/strerror.c \
 bindings/perfscript.h
bindings/perfscript.h:
