build-tsan/obj/core/target.o: runtime/core/target.c runtime/base/array.h \
 runtime/base/cgroup.h runtime/base/cpus.h runtime/core/internal.h \
 bindings/perfscript.h runtime/core/sampler.h runtime/core/view.h
runtime/base/array.h:
runtime/base/cgroup.h:
runtime/base/cpus.h:
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
runtime/core/view.h:
