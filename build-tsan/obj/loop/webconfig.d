build-tsan/obj/loop/webconfig.o: runtime/loop/webconfig.c \
 runtime/loop/http.h bindings/perfscript.h
runtime/loop/http.h:
bindings/perfscript.h:
