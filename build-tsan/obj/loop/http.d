build-tsan/obj/loop/http.o: runtime/loop/http.c runtime/loop/http.h \
 bindings/perfscript.h
runtime/loop/http.h:
bindings/perfscript.h:
