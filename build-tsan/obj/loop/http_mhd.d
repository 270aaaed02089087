build-tsan/obj/loop/http_mhd.o: runtime/loop/http_mhd.c \
 runtime/loop/http.h bindings/perfscript.h
runtime/loop/http.h:
bindings/perfscript.h:
