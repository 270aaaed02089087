build-tsan/obj/base/advice.o: runtime/base/advice.c runtime/base/advice.h
runtime/base/advice.h:
