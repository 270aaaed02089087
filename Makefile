# perfscript: build, test, demo and install. `make V=1` shows the commands.
.DELETE_ON_ERROR:
.SUFFIXES:

PREFIX    ?= /usr/local
DESTDIR   ?=
BUILD     ?= build
BIN       ?= perfscript
CC        ?= cc
LUA_CFLAGS := $(shell pkg-config --cflags lua5.4 2>/dev/null || echo -I/usr/include/lua5.4)
LUA_LIBS   := $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4)

WARN      := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror
CFLAGS    ?= -O2 -g
# Paths inside the binary are relative to the tree: no build directory in it.
PREFIX_MAP := -ffile-prefix-map=$(CURDIR)=.
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(PREFIX_MAP) -Ibindings -Iruntime \
	-DPS_TAPSET_DIR='"$(PREFIX)/share/perfscript/tapsets"' \
	-DPS_MHD_SONAME='"$(or $(MHD_SONAME),libmicrohttpd.so.12)"' \
	-DPS_GNUTLS_SONAME='"$(or $(GNUTLS_SONAME),libgnutls.so.30)"' \
	-DPS_PFM_SONAME='"$(or $(PFM_SONAME),libpfm.so.4)"'
LDFLAGS   ?=
# The layers of runtime/, lowest first (README.md, "Layout"): no file may
# include or call into a layer above its own (make lint checks both).
# libperfscript is everything below lua/; the symbolizer reads ELF and DWARF
# with elfutils, the in-kernel path loads its programs with libbpf, vendor
# event names come from libpfm4, opened with dlopen by its soname at the
# first vendor name (event/pfm_lib.c), as the loop's HTTP listener,
# libmicrohttpd, is when a listener is made (loop/http.c).
CORE_LAYERS := base event symbols core sample sample/perf sample/bpf session loop
CORE_LIBS := -ldw -lelf -lbpf -liberty -ldl -lyaml -lcrypt -lz
MHD_SONAME := $(shell objdump -p "$$($(CC) -print-file-name=libmicrohttpd.so)" 2>/dev/null | awk '$$1 == "SONAME" { print $$2 }')
GNUTLS_SONAME := $(shell objdump -p "$$($(CC) -print-file-name=libgnutls.so)" 2>/dev/null | awk '$$1 == "SONAME" { print $$2 }')
PFM_SONAME := $(shell objdump -p "$$($(CC) -print-file-name=libpfm.so)" 2>/dev/null | awk '$$1 == "SONAME" { print $$2 }')
# BPF programs (runtime/sample/bpf/*.bpf.c): clang to BPF objects, bpftool to skeletons.
CLANG     ?= clang
BPFTOOL   ?= bpftool
BPF_ARCH  := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
BPF_SRCS  := $(wildcard runtime/sample/bpf/*.bpf.c)
BPF_SKELS := $(BPF_SRCS:runtime/sample/bpf/%.bpf.c=$(BUILD)/bpf/%.skel.h)

# Debian packages of DESIGN.md section 4, and what the tests compare against.
# What building and running need (make demo, make install)...
DEPS_BUILD := gcc make pkg-config liblua5.4-dev lua5.4 libbpf-dev bpftool clang llvm \
	libelf-dev zlib1g-dev libdw-dev libpfm4-dev libedit-dev \
	libprotobuf-c-dev protobuf-c-compiler libmicrohttpd-dev libyaml-dev libcrypt-dev libiberty-dev libdebuginfod-dev \
	libcurl4-openssl-dev libsnappy-dev
# ...and what the tests use besides (make check): the LuaJIT binding's
# runtime, busted and luacheck, and the peers perfscript is compared with.
DEPS_TEST := luajit libluajit-5.1-dev lua-busted lua-check linux-perf util-linux procps tmux g++ \
	clang-format systemtap-sdt-dev golang-go prometheus curl bpftrace strace openssl python3 \
	python3-dev \
	linux-libc-dev-arm64-cross lld debuginfod libclang-rt-14-dev nodejs
# ...and what only the benchmarks compare with (make bench).
DEPS_BENCH := bpfcc-tools postgresql

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-7s %s\n' '$(1)' '$(2)'
endif

CORE_SRCS := $(foreach d,$(CORE_LAYERS),$(filter-out %.bpf.c,$(wildcard runtime/$(d)/*.c)))
LUA_SRCS  := $(wildcard runtime/lua/*.c)
CLI_SRCS  := $(wildcard runtime/cli/*.c)
CORE_OBJS := $(CORE_SRCS:runtime/%.c=$(BUILD)/obj/%.o)
# pprof (lua/pprof*.c), remote write (lua/remote_write.c) and OTLP
# profiles (lua/otlp.c): protoc-c
# generates the message code from the schemas lua/*.proto into $(BUILD)/gen,
# outside obj/ (the layer check reads obj/ only); zlib compresses pprof.
PROTOS    := $(wildcard runtime/lua/*.proto)
GEN_SRCS  := $(PROTOS:runtime/lua/%.proto=$(BUILD)/gen/%.pb-c.c)
GEN_OBJS  := $(GEN_SRCS:.c=.o)
LUA_LAYER_LIBS := -lprotobuf-c -lz
# The core is compiled once, position-independent, for both the static
# library the binary links and the shared one (-fno-semantic-interposition:
# calls inside it inline and bind as an executable's would).
PIC_OBJS  := $(CORE_OBJS)
LUA_OBJS  := $(LUA_SRCS:runtime/%.c=$(BUILD)/obj/%.o)
CLI_OBJS  := $(CLI_SRCS:runtime/%.c=$(BUILD)/obj/%.o)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
# Real programs for the stack and symbol tests (tests/progs/), built as
# distributions build: -O2, no frame pointers; libhot.so is stripped.
PROGS     := $(addprefix $(BUILD)/tests/,chain clockspin cxxprog inline jit usehot libhot.so manystacks offcpu llvmloop threadnames runqwait reuse usdtargs deep libreuse_a.so libreuse_b.so)
PROG_CFLAGS := -O2 -g -fomit-frame-pointer
HELPERS   := $(BUILD)/tests/workload $(PROGS) $(BUILD)/tests/pprof $(BUILD)/tests/otlp_receiver \
	     $(BUILD)/tests/py-spy $(BUILD)/tests/libasyncProfiler.so

.PHONY: all deps check demo install clean asan lint bench
all: $(BIN) $(BUILD)/libperfscript.so

$(BIN): $(CLI_OBJS) $(LUA_OBJS) $(GEN_OBJS) $(BUILD)/libperfscript.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LUA_LIBS) -ledit $(LUA_LAYER_LIBS) $(CORE_LIBS) -lm -ldl

# `ar q`: objects of different layers may share a base name (core/read.o).
$(BUILD)/libperfscript.a: $(CORE_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar qcs $@ $^

# It exports exactly what bindings/perfscript.h declares, each function in
# the node of the release that added it (bindings/libperfscript.map;
# tests/e2e/ffi.sh compares the header, the map and nm -D).
$(BUILD)/libperfscript.so: $(PIC_OBJS) bindings/libperfscript.map
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared $(LDFLAGS) -Wl,-soname,libperfscript.so.0 \
		-Wl,--version-script,bindings/libperfscript.map -o $@ $(PIC_OBJS) $(CORE_LIBS)

$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: runtime/lua/%.proto
	$(call msg,PROTOC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)protoc-c --proto_path=runtime/lua --c_out=$(BUILD)/gen $<

.PRECIOUS: $(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h

# Generated code: built with our flags but without the warnings it was not written for.
$(BUILD)/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c
	$(call msg,CC,$<)
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE $(CFLAGS) $(PREFIX_MAP) -I$(BUILD)/gen -c -o $@ $<

PROTO_USERS := $(addprefix $(BUILD)/obj/lua/,pprof.o pprof_decode.o remote_write.o otlp.o otlp_dict.o otlp_pprof.o)
$(PROTO_USERS): $(GEN_SRCS:.c=.h)
$(PROTO_USERS): ALL_CFLAGS += -I$(BUILD)/gen

# Header dependencies are tracked per object (-MMD).
DEPFLAGS = -MMD -MP
$(BUILD)/obj/lua/%.o $(BUILD)/obj/cli/%.o: ALL_CFLAGS += $(LUA_CFLAGS)

$(CORE_OBJS): ALL_CFLAGS += -fPIC -fno-semantic-interposition

$(BUILD)/obj/%.o: runtime/%.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/tests/test_%: tests/unit/test_%.c $(BUILD)/libperfscript.a
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Itests/unit -o $@ $< $(BUILD)/libperfscript.a $(CORE_LIBS) -lm

# sys/sdt.h gives the workload its USDT markers: installed later (make
# check's deps-test), it is newer than the workload, which is built again.
$(BUILD)/tests/workload: tests/workload.c $(wildcard /usr/include/sys/sdt.h)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=c11 -D_GNU_SOURCE -O1 -g -fno-omit-frame-pointer -fno-inline $(WARN) -pthread -o $@ $<

# pprof, the tests' reference reader, built once: the newest
# github.com/google/pprof the Go module proxy serves (what go tool pprof
# becomes at Go's next release), pinned; Go's own cmd/pprof where the
# proxy is out of reach. The user's GOCACHE keeps it across clean clones
# (a fresh one compiled it again each time: 38 s of the build's 52); the
# build's own where Go has no cache (no HOME). Without Go there is none,
# and the suites that need it say so.
PPROF_VERSION := v0.0.0-20261118010117-084b33a85f63
$(BUILD)/tests/pprof:
	$(Q)mkdir -p $(@D)
	$(Q)if command -v go >/dev/null; then \
		cache=$$(go env GOCACHE 2>/dev/null); [ -n "$$cache" ] && [ "$$cache" != off ] || \
		cache=$(CURDIR)/$(BUILD)/go-cache; \
		echo "  GO      github.com/google/pprof@$(PPROF_VERSION)"; \
		GOCACHE=$$cache GOFLAGS= GOBIN=$(CURDIR)/$(@D) go install github.com/google/pprof@$(PPROF_VERSION) || \
		{ echo "  GO      cmd/pprof (the module proxy has no github.com/google/pprof)"; \
		  GOCACHE=$$cache GOFLAGS= go build -o $@ cmd/pprof; }; fi

# The OpenTelemetry Collector's OTLP receiver, the reference reader of the
# profiles perfscript sends over OTLP (tests/peers/otlp_receiver): the
# Collector's modules from the Go module proxy at the release go.sum pins,
# built in the user's GOCACHE as pprof is (42 s the first time, 1 s after).
OTLP_PEER := $(wildcard tests/peers/otlp_receiver/*.go tests/peers/otlp_receiver/go.*)
$(BUILD)/tests/otlp_receiver: $(OTLP_PEER)
	$(Q)mkdir -p $(@D)
	$(Q)if command -v go >/dev/null; then echo "  GO      otlp_receiver"; \
		cache=$$(go env GOCACHE 2>/dev/null); [ -n "$$cache" ] && [ "$$cache" != off ] || \
		cache=$(CURDIR)/$(BUILD)/go-cache; cd tests/peers/otlp_receiver && \
		GOCACHE=$$cache GOFLAGS=-buildvcs=false go build -o $(CURDIR)/$@ .; fi

# py-spy, the reference profile.lua --python is compared with
# (tests/e2e/pyspy.sh): the binary its PyPI wheel carries, pinned; none
# where PyPI is out of reach (the suite says so). Kept between runs.
PYSPY_VERSION := 0.4.3
$(BUILD)/tests/py-spy:
	$(Q)mkdir -p $(@D)
	$(Q)w=$(CURDIR)/$(BUILD)/py-spy-wheel; rm -rf $$w; \
	if python3 -m pip download -q --no-deps --only-binary=:all: -d $$w py-spy==$(PYSPY_VERSION) >/dev/null 2>&1; then \
		echo "  PIP     py-spy $(PYSPY_VERSION)"; \
		python3 -c 'import glob, sys, zipfile; z = zipfile.ZipFile(glob.glob(sys.argv[1] + "/*.whl")[0]); \
			n = [m for m in z.namelist() if m.endswith("/scripts/py-spy")][0]; \
			open(sys.argv[2], "wb").write(z.read(n))' $$w $@ && chmod +x $@; \
	else echo "  PIP     py-spy: PyPI out of reach, tests/e2e/pyspy.sh will skip"; fi

# async-profiler, the reference profile.lua's Java frames are compared
# with (tests/e2e/asprof.sh): the agent library of Maven Central's
# tools.profiler:async-profiler linux-x64 jar, pinned; none where Maven
# Central is out of reach (the suite says so). Kept between runs.
ASPROF_VERSION := 4.6
ASPROF_JAR := https://repo1.maven.org/maven2/tools/profiler/async-profiler/$(ASPROF_VERSION)/async-profiler-$(ASPROF_VERSION)-linux-x64.jar
$(BUILD)/tests/libasyncProfiler.so:
	$(Q)mkdir -p $(@D)
	$(Q)if curl -sfL --max-time 60 -o $@.jar $(ASPROF_JAR); then \
		echo "  MAVEN   async-profiler $(ASPROF_VERSION)"; \
		python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); \
			open(sys.argv[2], "wb").write(z.read("linux-x64/libasyncProfiler.so"))' $@.jar $@; \
		rm -f $@.jar; \
	else rm -f $@.jar; echo "  MAVEN   async-profiler: Maven Central out of reach, tests/e2e/asprof.sh will skip"; fi

$(BUILD)/tests/%: tests/progs/%.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(PROG_CFLAGS) -o $@ $<

$(BUILD)/tests/manystacks: tests/progs/manystacks.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g -fno-omit-frame-pointer -o $@ $<

$(BUILD)/tests/offcpu: tests/progs/offcpu.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O1 -g -fno-omit-frame-pointer -pthread -o $@ $<

$(BUILD)/tests/llvmloop: tests/progs/llvmloop.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 $(WARN) -o $@ $< -ldl

$(BUILD)/tests/cxxprog: tests/progs/cxxprog.cc
	$(call msg,CXX,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -std=c++17 $(PROG_CFLAGS) -o $@ $<

$(BUILD)/tests/libhot.so: tests/progs/libhot.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(PROG_CFLAGS) -shared -fPIC -Wl,-soname,libhot.so -o $@ $<
	$(Q)strip --strip-all $@

$(BUILD)/tests/libreuse_%.so: tests/progs/reuselib.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(PROG_CFLAGS) -shared -fPIC -DLEAF=$*_leaf -o $@ $<

$(BUILD)/tests/reuse: tests/progs/reuse.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 $(PROG_CFLAGS) -o $@ $< -ldl

$(BUILD)/tests/usehot: tests/progs/usehot.c $(BUILD)/tests/libhot.so
	$(call msg,CC,$<)
	$(Q)$(CC) -std=gnu11 $(PROG_CFLAGS) -o $@ $< -L$(BUILD)/tests -lhot '-Wl,-rpath,$$ORIGIN'

$(BUILD)/bpf/%.bpf.o: runtime/sample/bpf/%.bpf.c runtime/sample/bpf/ps_bpf.h $(wildcard runtime/sample/bpf/*.bpf.h)
	$(call msg,BPF,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -target bpf -g -O2 -D__TARGET_ARCH_$(BPF_ARCH) $(PREFIX_MAP) \
		$(if $(MULTIARCH),-I/usr/include/$(MULTIARCH)) -Iruntime/sample/bpf -c -o $@ $<

$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GENSKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# The loader includes the skeletons (the BPF objects embedded in them).
BPF_LOADER := $(patsubst runtime/%.c,%.o,$(wildcard runtime/sample/bpf/*.c))
BPF_LOADER := $(filter-out %.bpf.o,$(BPF_LOADER))
BPF_LOADER := $(addprefix $(BUILD)/obj/,$(BPF_LOADER))
$(BPF_LOADER): ALL_CFLAGS += -I$(BUILD)/bpf
$(BPF_LOADER): $(BPF_SKELS)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# Install what is missing (as root, from Debian's archive only).
# Install what is missing (as root, from Debian's archive only). Without
# root, missing build packages stop here with their names; missing test
# peers only mean their checks are skipped, each saying why.
define install_missing
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "make: not root, cannot install:" $$missing >&2; \
			[ "$(2)" = test ] && echo "make: the checks that need them will be skipped" >&2 || exit 2; \
		else \
			echo "  DEPS    installing:" $$missing; \
			apt-get update -qq >/dev/null && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
		fi; \
	fi
endef

deps:
	$(call install_missing,$(DEPS_BUILD),build)
deps-test: deps
	$(call install_missing,$(DEPS_TEST),test)
	@# go tool pprof is built at its first use (minutes on a fresh machine):
	@# once here, not inside a test that times a profile
	@command -v go >/dev/null && go tool pprof -h >/dev/null 2>&1 || true
deps-bench: deps-test
	$(call install_missing,$(DEPS_BENCH),bench)
.PHONY: deps deps-test deps-bench

tests-bin: all $(UNIT_BINS) $(HELPERS)
.PHONY: tests-bin

NPROC := $(shell nproc 2>/dev/null || echo 2)

check: deps-test
	@$(MAKE) --no-print-directory -j$(NPROC) tests-bin
	@tests/run

# The slow suites (tests/slow): the sanitizer builds (ASan/UBSan/LSan over
# the CLI suites, ThreadSanitizer over the threaded C tests) and the
# fuzzers. CI runs them after `make check`.
check-slow: deps-test
	@$(MAKE) --no-print-directory -j$(NPROC) tests-bin
	@tests/run --slow
.PHONY: check-slow

# The fleet in a box alone (tests/slow/fleet.sh, also in check-slow): four
# agents in network namespaces pushing to a Collector and a Prometheus.
check-fleet: deps-test
	@$(MAKE) --no-print-directory -j$(NPROC) tests-bin
	@tests/run --slow slow_fleet
.PHONY: check-fleet

# what the README and docs/guide.md run: the workload, build/tests/offcpu
demo: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all $(BUILD)/tests/workload $(BUILD)/tests/offcpu
	./perfscript examples/counters.lua -c '$(BUILD)/tests/workload pages 20000'

bench: deps-bench
	@$(MAKE) --no-print-directory all $(HELPERS)
	@bench/run

# A sanitizer build beside the normal one: build-asan/perfscript and tests.
# `make asan && PERFSCRIPT=$PWD/build-asan/perfscript tests/run` runs the suite on it.
asan:
	$(MAKE) BUILD=build-asan BIN=build-asan/perfscript \
		CFLAGS='-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer' \
		LDFLAGS='-fsanitize=address,undefined' all

# ThreadSanitizer builds of the C tests of what threads share (regions,
# overflow signals, the loop, the HTTP listener): build-tsan/tests/test_*.
# tests/slow/tsan.sh runs them. TSan does not model atomic_thread_fence;
# the ring code's fences are paired with atomics it does model.
TSAN_TESTS := region overflow loop http threads
tsan:
	$(Q)$(MAKE) --no-print-directory BUILD=build-tsan BIN=build-tsan/perfscript \
		CFLAGS='-O1 -g -fsanitize=thread -Wno-tsan' \
		$(TSAN_TESTS:%=build-tsan/tests/test_%)
.PHONY: tsan

# The event-string fuzzer (libFuzzer, ASan, UBSan): `make fuzz` builds it
# and runs it from the seed corpus for FUZZ_SECONDS (default 60), or for
# FUZZ_RUNS executions when set. New inputs go to build/fuzz/corpus.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_RUNS    ?=
FUZZ_SRCS    := $(wildcard runtime/event/*.c runtime/base/*.c)
$(BUILD)/fuzz/fuzz_event: tests/fuzz/fuzz_event.c $(FUZZ_SRCS) $(wildcard runtime/event/*.h bindings/*.h)
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -Ibindings -Iruntime -o $@ $< $(FUZZ_SRCS) -ldl

# The ring and record fuzzer: synthetic ring images through the sample path's parsers.
RING_FUZZ_SRCS := runtime/sample/perf/ring.c runtime/sample/perf/record.c $(wildcard runtime/base/*.c)
$(BUILD)/fuzz/fuzz_ring: tests/fuzz/fuzz_ring.c $(RING_FUZZ_SRCS) $(wildcard runtime/sample/perf/*.h runtime/base/*.h) bindings/perfscript.h
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -Ibindings -Iruntime -o $@ $< $(RING_FUZZ_SRCS)

# The web configuration fuzzer: the YAML a root listener's access rests on.
WEB_FUZZ_SRCS := runtime/loop/webconfig.c runtime/loop/webtls.c runtime/loop/auth.c
$(BUILD)/fuzz/fuzz_webconfig: tests/fuzz/fuzz_webconfig.c $(WEB_FUZZ_SRCS) runtime/loop/http.h
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -DPS_GNUTLS_SONAME='"$(or $(GNUTLS_SONAME),libgnutls.so.30)"' \
		-Ibindings -Iruntime -o $@ $< $(WEB_FUZZ_SRCS) -lyaml -lcrypt -ldl

# The CPython code-object fuzzer: memory images as a hostile process shapes them.
PY_FUZZ_SRCS := runtime/symbols/python.c runtime/symbols/python_code.c runtime/base/pidmap.c
$(BUILD)/fuzz/fuzz_pycode: tests/fuzz/fuzz_pycode.c $(PY_FUZZ_SRCS) $(wildcard runtime/symbols/*.h)
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -Ibindings -Iruntime -o $@ $< $(PY_FUZZ_SRCS)

fuzz: $(BUILD)/fuzz/fuzz_event $(BUILD)/fuzz/fuzz_ring $(BUILD)/fuzz/fuzz_webconfig $(BUILD)/fuzz/fuzz_pycode
	$(Q)mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/corpus-ring $(BUILD)/fuzz/corpus-webconfig \
		$(BUILD)/fuzz/corpus-pycode
	$(BUILD)/fuzz/fuzz_event $(BUILD)/fuzz/corpus tests/fuzz/corpus/event -timeout=10 \
		$(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS))
	$(BUILD)/fuzz/fuzz_ring $(BUILD)/fuzz/corpus-ring -timeout=10 \
		$(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS))
	$(BUILD)/fuzz/fuzz_webconfig $(BUILD)/fuzz/corpus-webconfig tests/fuzz/corpus/webconfig -timeout=10 \
		$(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS))
	$(BUILD)/fuzz/fuzz_pycode $(BUILD)/fuzz/corpus-pycode tests/fuzz/corpus/pycode -timeout=10 \
		$(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS))
.PHONY: fuzz

# The BPF programs build for arm64 too (its UAPI headers: Debian's
# linux-libc-dev-arm64-cross), though the tests run where we are.
bpf-arm64: $(BPF_SRCS) runtime/sample/bpf/ps_bpf.h $(wildcard runtime/sample/bpf/*.bpf.h)
	$(call msg,BPF,arm64)
	$(Q)mkdir -p $(BUILD)/bpf-arm64
	$(Q)for f in $(BPF_SRCS); do $(CLANG) -target bpf -g -O2 -D__TARGET_ARCH_arm64 \
		-I/usr/aarch64-linux-gnu/include -Iruntime/sample/bpf -c -o $(BUILD)/bpf-arm64/$$(basename $$f .c).o $$f || exit 1; done
.PHONY: bpf-arm64

# Lua style, C layout (.clang-format), the layers of runtime/
# (tests/layers.sh), sizes, and the BPF programs' arm64 build.
lint: all bpf-arm64
	luacheck --no-color -q tapsets examples tests/spec
	clang-format --dry-run --Werror $(wildcard runtime/*/*.[ch] runtime/*/*/*.[ch] bindings/*.h)
	tests/layers.sh $(BUILD)
	tests/sizes.sh

VERSION := $(shell sed -n 's/^\#define PS_VERSION "\(.*\)"/\1/p' bindings/perfscript.h)

# The install tree: the binary, the library with its header and a
# pkg-config file (relocatable: its prefix is where the file is), the
# tapsets, the examples, the man page and the LuaJIT binding (which finds
# the library of its own tree).
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include \
		$(DESTDIR)$(PREFIX)/share/perfscript/tapsets $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/share/perfscript/examples \
		$(DESTDIR)$(PREFIX)/share/doc/perfscript
	printf '%s\n' 'prefix=$${pcfiledir}/../..' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
		'Name: perfscript' 'Description: perf_event counters, regions and sampling from C' \
		'Version: $(VERSION)' 'Libs: -L$${libdir} -lperfscript' 'Cflags: -I$${includedir}' \
		>$(DESTDIR)$(PREFIX)/lib/pkgconfig/perfscript.pc
	install -m 644 examples/*.lua examples/*.c examples/*.service $(DESTDIR)$(PREFIX)/share/perfscript/examples/
	install -m 755 perfscript $(DESTDIR)$(PREFIX)/bin/perfscript
	install -m 755 examples/perfscript-agent $(DESTDIR)$(PREFIX)/bin/perfscript-agent
	install -m 644 $(BUILD)/libperfscript.so $(DESTDIR)$(PREFIX)/lib/libperfscript.so.0
	ln -sf libperfscript.so.0 $(DESTDIR)$(PREFIX)/lib/libperfscript.so
	install -m 644 bindings/perfscript.h $(DESTDIR)$(PREFIX)/include/perfscript.h
	for f in tapsets/*.lua; do [ -e "$$f" ] && install -m 644 "$$f" $(DESTDIR)$(PREFIX)/share/perfscript/tapsets/; done; true
	install -m 644 docs/perfscript.1 $(DESTDIR)$(PREFIX)/share/man/man1/perfscript.1
	install -m 644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/perfscript/
	install -d $(DESTDIR)$(PREFIX)/share/lua/5.1
	install -m 644 bindings/perfscript.lua $(DESTDIR)$(PREFIX)/share/lua/5.1/perfscript.lua

clean:
	rm -rf $(BUILD) build-asan build-tsan perfscript
