build-tsan/obj/loop/http_serve.o: runtime/loop/http_serve.c \
 runtime/loop/http.h bindings/perfscript.h
runtime/loop/http.h:
bindings/perfscript.h:
