# aisim - GNU Makefile.
#
#   make              optimised build: build/aisim, build/libaisim.a, build/aisim-sdtcp-real
#   make demo         install missing Debian packages, build, run the demo
#   make test         install missing packages, build and run the whole suite
#   make test SAN=1   the same with AddressSanitizer + UndefinedBehaviorSanitizer
#   make bench        reference benchmarks (events/s, sim-s per wall-s, peak memory)
#   make fuzz FUZZ_SECONDS=60   libFuzzer on the scenario loader (clang)
#   make fuzz-run FUZZ_SECONDS=60  libFuzzer running accepted scenarios (bounded)
#   make ns3-compare  aisim against ns-3 3.37 on net/leafspine-websearch and net/spray-permutation
#                     (installs ns3; minutes of CPU; not part of `make test`)
#   make DEBUG=1      -O0 build
#   make shared       build/libaisim.so (objects built again with -fPIC in build/pic)
#   make install PREFIX=/usr/local [DESTDIR=]   the binary, libaisim.a, libaisim.so
#                     (soname libaisim.so.MAJOR), the headers, aisim.pc, the
#                     built-in examples and data (share/aisim) and aisim(1)
#
# Everything except src/cli/main.c goes into libaisim.a; the CLI, the tests,
# the benchmarks and the fuzzer link the same objects.

# The version is the embedding API's (include/aisim/aisim.h): one place.
VERSION := $(shell sed -n 's/^\#define AISIM_VERSION_STRING "\(.*\)"/\1/p' include/aisim/aisim.h)
SOVER   := $(firstword $(subst ., ,$(VERSION)))
# Parallel by default (a sub-make inherits the jobserver instead).
ifeq ($(MAKELEVEL)$(filter -j% j%,$(MAKEFLAGS)),0)
  MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif
# V=1 shows the full commands.
Q := $(if $(filter 1,$(V)),,@)
CC      ?= cc
PKGS    := yaml-0.1 jansson openblas zlib libpcap ipopt fftw3
LIBS_EXTRA := -lglpk -lm

WARN    := -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
           -Wpointer-arith -Wformat=2 -Wno-format-nonliteral
CSTD    := -std=c11 -D_DEFAULT_SOURCE
OPT     := -O2 -g
BUILD   := build

ifeq ($(DEBUG),1)
  OPT   := -O0 -g
  BUILD := build-debug
endif
ifeq ($(SAN),1)
  OPT   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
           -fno-sanitize-recover=all
  BUILD := build-san
  LDSAN := -fsanitize=address,undefined
endif
ifeq ($(WERROR),1)
  WARN  += -Werror
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS  += $(CSTD) $(OPT) $(WARN) -Iinclude -Isrc $(PKG_CFLAGS) \
           -DAISIM_VERSION='"$(VERSION)"' -DAISIM_SRCDIR='"$(CURDIR)"' -MMD -MP
LDLIBS  := $(PKG_LIBS) $(LIBS_EXTRA)
# Open MPI (libopenmpi-dev) when present: `mpirun -n N aisim sweep` shares
# a sweep's points among ranks (src/cli/sweep_mpi.c); absent, that says so.
ifeq ($(shell pkg-config --exists ompi-c 2>/dev/null && echo yes),yes)
  MPI_CFLAGS := -DAISIM_MPI $(shell pkg-config --cflags ompi-c)
  LDLIBS     += $(shell pkg-config --libs ompi-c)
endif
LDFLAGS += $(LDSAN)

LIB_SRC  := $(filter-out src/cli/main.c src/real/sdtcp/bin/%,$(shell find src -name '*.c' | sort))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/examples.o
EXAMPLES := $(shell find examples -name '*.yaml' | sort)
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
TESTS    := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(sort $(wildcard bench/*.c))

# aisim-sdtcp-real (docs/sdtcp.md, "Running it for real"): its own program, so
# that only it links libnetfilter_queue and libmnl.
SDR_SRC := $(sort $(wildcard src/real/sdtcp/bin/*.c))
SDR_LIBS := $(shell pkg-config --libs libnetfilter_queue libmnl 2>/dev/null)
$(BUILD)/aisim-sdtcp-real: $(SDR_SRC:%.c=$(BUILD)/%.o) $(BUILD)/libaisim.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $^ $(SDR_LIBS) $(LDLIBS) -o $@

.PHONY: all deps demo test bench fuzz fuzz-run clean golden-update ns3-compare shared install
all: $(BUILD)/aisim $(BUILD)/aisim-sdtcp-real

deps:
	@scripts/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# The example scenarios are embedded in the binary (aisim list / run NAME).
$(BUILD)/embed: scripts/embed.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 $< -o $@
$(BUILD)/gen/examples.c: $(BUILD)/embed $(EXAMPLES)
	@mkdir -p $(dir $@)
	$(Q)$(BUILD)/embed $(EXAMPLES) > $@
$(BUILD)/gen/examples.o: $(BUILD)/gen/examples.c
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/src/cli/sweep_mpi.o $(BUILD)/tests/test_sweep_mpi: CFLAGS += $(MPI_CFLAGS)

$(BUILD)/libaisim.a: $(LIB_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

$(BUILD)/aisim: $(BUILD)/src/cli/main.o $(BUILD)/libaisim.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libaisim.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(CFLAGS) $(shell pkg-config --cflags cmocka) $(LDFLAGS) $< \
	    $(BUILD)/libaisim.a $(LDLIBS) $(shell pkg-config --libs cmocka) -o $@

# ---- the shared library and installation -------------------------------
# The static library and the binary keep position-dependent code (no cost on
# the hot path); libaisim.so has its own -fPIC objects.
PIC_OBJ := $(LIB_OBJ:$(BUILD)/%.o=$(BUILD)/pic/%.o)
$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC -fPIC $<")
	$(Q)$(CC) $(CFLAGS) -fPIC -c $< -o $@
$(BUILD)/pic/gen/examples.o: $(BUILD)/gen/examples.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -fPIC -c $< -o $@
$(BUILD)/pic/src/cli/sweep_mpi.o: CFLAGS += $(MPI_CFLAGS)
$(BUILD)/libaisim.so.$(VERSION): $(PIC_OBJ)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libaisim.so.$(SOVER) $(LDFLAGS) $^ $(LDLIBS) -o $@
shared: $(BUILD)/libaisim.so.$(VERSION)
FORCE:

PREFIX  ?= /usr/local
$(BUILD)/aisim.1: $(BUILD)/aisim scripts/man.sh
	$(Q)scripts/man.sh $(BUILD)/aisim > $@
# pkg-config: dynamic linking needs -laisim only; --static adds what libaisim.a needs.
$(BUILD)/aisim.pc: Makefile include/aisim/aisim.h FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$${prefix}/include' 'libdir=$${prefix}/lib' '' \
	    'Name: aisim' 'Description: deterministic simulator for cloud and edge AI infrastructure' \
	    'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -laisim' \
	    'Requires.private: $(PKGS)' 'Libs.private: $(LIBS_EXTRA)' > $@
install: $(BUILD)/aisim $(BUILD)/libaisim.a $(BUILD)/libaisim.so.$(VERSION) $(BUILD)/aisim.1 \
         $(BUILD)/aisim.pc
	$(Q)set -e; D='$(DESTDIR)$(PREFIX)'; \
	install -d "$$D/bin" "$$D/lib/pkgconfig" "$$D/include/aisim" "$$D/share/man/man1" \
	    "$$D/share/aisim"; \
	install -m 755 $(BUILD)/aisim "$$D/bin/aisim"; \
	install -m 644 $(BUILD)/libaisim.a "$$D/lib/libaisim.a"; \
	install -m 755 $(BUILD)/libaisim.so.$(VERSION) "$$D/lib/libaisim.so.$(VERSION)"; \
	ln -sf libaisim.so.$(VERSION) "$$D/lib/libaisim.so.$(SOVER)"; \
	ln -sf libaisim.so.$(SOVER) "$$D/lib/libaisim.so"; \
	install -m 644 include/aisim/*.h "$$D/include/aisim/"; \
	install -m 644 $(BUILD)/aisim.pc "$$D/lib/pkgconfig/aisim.pc"; \
	install -m 644 $(BUILD)/aisim.1 "$$D/share/man/man1/aisim.1"; \
	rm -rf "$$D/share/aisim/examples" "$$D/share/aisim/data"; \
	cp -R examples data "$$D/share/aisim/"; \
	echo "installed aisim $(VERSION) under $$D"

demo: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/aisim demo

# make test VALGRIND=1: every test program under valgrind's memcheck (errors
# and definite leaks fail the program; about 30x slower than a plain run).
VALGRIND_CMD := valgrind -q --error-exitcode=97 --leak-check=full \
                --errors-for-leak-kinds=definite --track-origins=yes
test: deps
	@$(if $(VALGRIND),scripts/deps.sh valgrind)
	@scripts/deps.sh tshark || echo "tshark could not be installed: test_pcap skips its decoding tests"
	@$(MAKE) --no-print-directory $(BUILD)/aisim $(BUILD)/aisim-sdtcp-real $(TESTS)
	@AISIM=$(BUILD)/aisim RUNNER="$(if $(VALGRIND),$(VALGRIND_CMD))" tests/run.sh $(TESTS)

bench: deps
	@$(MAKE) --no-print-directory all
	$(BUILD)/aisim bench

# ---- fuzzing (clang + libFuzzer) ----------------------------------------
FUZZ_SECONDS ?= 60
FUZZ_BUILD := build-fuzz
FUZZ_CFLAGS := $(CSTD) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
               -Iinclude -Isrc \
               $(PKG_CFLAGS) -DAISIM_VERSION='"$(VERSION)"'
# $(call fuzz_target,NAME,EXTRA_FLAGS,CORPUS_DIRS): builds
# tests/fuzz/fuzz_NAME.c with libFuzzer and runs it for FUZZ_SECONDS on its
# own corpus, the seeds, CORPUS_DIRS and the bad-scenario corpus.  Fork
# mode (one child at a time) with out-of-memory and time-outs logged and
# skipped: a mutant that asks for a huge but valid network (a fat-tree of
# k = 200) is an answer, not a finding, and must not end the campaign; a
# crash, a sanitizer report, a leak or an error without a message still
# does.  The log is build-fuzz/fuzz_NAME.log; the last line printed is the
# executions and executions per second.
# The run stops starting jobs FUZZ_MARGIN seconds before FUZZ_SECONDS, so
# that the last job and the wrap-up end within the limit.
define fuzz_target
	@scripts/deps.sh fuzz
	@mkdir -p $(FUZZ_BUILD)/corpus-$(1)
	@$(MAKE) --no-print-directory $(BUILD)/gen/examples.c $(FUZZ_BUILD)/fuzz_$(1)
	@echo "fuzz_$(1): $(FUZZ_SECONDS) s, log in $(FUZZ_BUILD)/fuzz_$(1).log"
	@t=$$(($(FUZZ_SECONDS) > 2 * $(FUZZ_MARGIN) ? $(FUZZ_SECONDS) - $(FUZZ_MARGIN) : \
	       $(FUZZ_SECONDS))); \
	$(FUZZ_BUILD)/fuzz_$(1) -max_total_time=$$t -max_len=4096 \
	    -dict=tests/fuzz/yaml.dict -timeout=10 -rss_limit_mb=2048 $(2) \
	    -fork=1 -ignore_ooms=1 -ignore_timeouts=1 \
	    $(FUZZ_BUILD)/corpus-$(1) tests/fuzz/seeds $(3) tests/scenarios/bad \
	    > $(FUZZ_BUILD)/fuzz_$(1).log 2>&1; rc=$$?; \
	    tail -n 5 $(FUZZ_BUILD)/fuzz_$(1).log; \
	    scripts/fuzz_stats.sh $(FUZZ_BUILD)/fuzz_$(1).log $(1); exit $$rc
endef

FUZZ_MARGIN := 10
FUZZ_HDRS := $(shell find include src tests/fuzz -name '*.h')
$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_SRC) $(FUZZ_HDRS) $(BUILD)/gen/examples.c
	@mkdir -p $(FUZZ_BUILD)
	clang $(FUZZ_CFLAGS) $< $(LIB_SRC) $(BUILD)/gen/examples.c $(LDLIBS) -o $@

# Examples built to need more than a fuzzing input may spend (a 100,000-GPU
# fabric: 1.3 GB and seconds of set-up even without the sanitizers) are
# left out of both corpora; their small versions run in the suite.
FUZZ_SKIP := examples/ai/allreduce-100k-flow.yaml
FUZZ_EXAMPLES := $(filter-out $(FUZZ_SKIP),$(EXAMPLES))

# copies the corpus examples into build-fuzz/examples, one file each (their
# data paths, ../../data/..., resolve as from examples/core, the base
# directory the targets give every input)
define fuzz_examples
	@rm -rf $(FUZZ_BUILD)/examples && mkdir -p $(FUZZ_BUILD)/examples
	@for f in $(FUZZ_EXAMPLES); do \
	    cp $$f $(FUZZ_BUILD)/examples/$$(echo $$f | tr / _); done
endef

# The scenario loader: parse, --set, bind, configure, emit.
fuzz:
	$(fuzz_examples)
	$(call fuzz_target,scenario,,$(FUZZ_BUILD)/examples)

# What loads, run: each accepted scenario is configured and run within a
# work budget (sim_poll: the loops of long single events and set-up poll
# it), for at most 20,000 events, 1 s of simulated time and 0.25 s of wall
# clock, and reported (tests/fuzz/fuzz_run.c; docs/reliability.md).
fuzz-run:
	$(fuzz_examples)
	$(call fuzz_target,run,-malloc_limit_mb=1024,$(FUZZ_BUILD)/examples)

clean:
	rm -rf build build-debug build-san build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# make ns3-compare NS3_OUT=DIR; LOADS, DURATION, SEED, NS3_ARGS, SPRAY_STOP from the
# environment (docs/ns3-comparison.md).
NS3_OUT ?= out/ns3-compare
ns3-compare:
	scripts/ns3-compare.sh $(NS3_OUT)

# Rewrites the expected messages of tests/scenarios/bad/*.yaml and the
# whole-run references tests/golden/*.txt (tests/unit/test_golden.c); review
# the diff: every changed line is a changed message or result.
golden-update: all $(BUILD)/tests/test_golden
	AISIM=$(BUILD)/aisim tests/scenarios/update-expect.sh
	AISIM_GOLDEN_UPDATE=1 $(BUILD)/tests/test_golden
