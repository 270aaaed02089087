build-tsan/obj/base/cpus.o: runtime/base/cpus.c runtime/base/cpus.h
runtime/base/cpus.h:
