build-tsan/obj/base/suggest.o: runtime/base/suggest.c \
 runtime/base/suggest.h
runtime/base/suggest.h:
