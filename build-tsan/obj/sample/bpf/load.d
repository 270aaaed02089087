build-tsan/obj/sample/bpf/load.o: runtime/sample/bpf/load.c \
 runtime/base/perf.h runtime/base/cpus.h runtime/sample/bpf/internal.h \
 runtime/sample/bpf/ps_bpf.h runtime/sample/sampler.h \
 runtime/core/internal.h bindings/perfscript.h runtime/core/sampler.h \
 build-tsan/bpf/ps_sample.skel.h
runtime/base/perf.h:
runtime/base/cpus.h:
runtime/sample/bpf/internal.h:
runtime/sample/bpf/ps_bpf.h:
runtime/sample/sampler.h:
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
build-tsan/bpf/ps_sample.skel.h:
