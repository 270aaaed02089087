build-tsan/obj/sample/bpf/forward.o: runtime/sample/bpf/forward.c \
 runtime/base/regs.h runtime/sample/bpf/internal.h runtime/base/pidmap.h \
 runtime/sample/bpf/ps_bpf.h runtime/sample/sampler.h runtime/core/view.h \
 runtime/core/sampler.h bindings/perfscript.h \
 build-tsan/bpf/ps_sample.skel.h
runtime/base/regs.h:
runtime/sample/bpf/internal.h:
runtime/base/pidmap.h:
runtime/sample/bpf/ps_bpf.h:
runtime/sample/sampler.h:
runtime/core/view.h:
runtime/core/sampler.h:
bindings/perfscript.h:
build-tsan/bpf/ps_sample.skel.h:
