build-tsan/obj/base/pidmap.o: runtime/base/pidmap.c runtime/base/pidmap.h
runtime/base/pidmap.h:
