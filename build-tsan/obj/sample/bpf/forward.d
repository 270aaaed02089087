build-tsan/obj/sample/bpf/forward.o: runtime/sample/bpf/forward.c \
 runtime/sample/bpf/internal.h runtime/sample/bpf/ps_bpf.h \
 runtime/sample/sampler.h runtime/core/internal.h bindings/perfscript.h \
 runtime/core/sampler.h build-tsan/bpf/ps_sample.skel.h
runtime/sample/bpf/internal.h:
runtime/sample/bpf/ps_bpf.h:
runtime/sample/sampler.h:
runtime/core/internal.h:
bindings/perfscript.h:
runtime/core/sampler.h:
build-tsan/bpf/ps_sample.skel.h:
