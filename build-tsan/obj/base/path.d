build-tsan/obj/base/path.o: runtime/base/path.c runtime/base/path.h
runtime/base/path.h:
