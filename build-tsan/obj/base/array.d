build-tsan/obj/base/array.o: runtime/base/array.c runtime/base/array.h
runtime/base/array.h:
