build-tsan/obj/sample/bpf/aggregate.o: runtime/sample/bpf/aggregate.c \
 runtime/base/array.h runtime/sample/bpf/internal.h runtime/base/pidmap.h \
 runtime/sample/bpf/ps_bpf.h runtime/sample/sampler.h runtime/core/view.h \
 runtime/core/sampler.h bindings/perfscript.h \
 build-tsan/bpf/ps_sample.skel.h
runtime/base/array.h:
runtime/sample/bpf/internal.h:
runtime/base/pidmap.h:
runtime/sample/bpf/ps_bpf.h:
runtime/sample/sampler.h:
runtime/core/view.h:
runtime/core/sampler.h:
bindings/perfscript.h:
build-tsan/bpf/ps_sample.skel.h:
