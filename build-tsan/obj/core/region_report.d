build-tsan/obj/core/region_report.o: runtime/core/region_report.c \
 runtime/core/region.h bindings/perfscript.h
runtime/core/region.h:
bindings/perfscript.h:
