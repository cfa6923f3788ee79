# hookit: the one entry point.
#   make            build everything into build/
#   make check      build and run every test; ends with "N passed, N failed"
#   make demo       profile the bundled example and print its call tree
#   make bench      benchmarks, side by side (never part of make check)
#   make conformance  the conformance corpus: exact trees against a reference
#   make install    PREFIX=/usr/local DESTDIR=
#   make deps       install missing Debian packages
#   make check-arm64  build for arm64 (cross) and run the core, report and
#                   lifecycle tests under qemu-user

comma   := ,
PREFIX  ?= /usr/local
DESTDIR ?=
VERSION := 0.1.0

CC      ?= gcc
# B=DIR builds elsewhere (several builds of one tree side by side).  An
# absolute path inside the tree is made relative, so that the dependency
# files of every build name objects the same way.
B       ?= build
override B := $(patsubst $(CURDIR)/%,%,$(abspath $(B)))
O       := $(B)/obj

WARN    := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -fPIC -fvisibility=hidden \
             -fno-instrument-functions -Iinclude -I. -DHOOKIT_VERSION='"$(VERSION)"' \
             -DHOOKIT_PLUGIN_DIR='"$(PREFIX)/lib/hookit"'
# SANITIZE=address,undefined (or thread) builds the libraries and tools with
# sanitizers (docs/testing.md).  No recovery: any UBSan finding is an error.
ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_LDFLAGS := -fsanitize=$(SANITIZE)
endif
LDFLAGS ?=
ALL_LDFLAGS = $(LDFLAGS) $(SAN_LDFLAGS)

# ---- components ------------------------------------------------------------
# common/: the low-level primitives (clock, spinlock, pages) every library
# links or includes, one home each (docs/design.md, "Shared primitives").
COMMON_SRC    := $(wildcard common/*.c)
LIFECYCLE_SRC := $(wildcard lifecycle/*.c)
HOOKIT_SRC    := $(wildcard hookit/*.c)
A2N_SRC       := $(wildcard a2n/*.c)
PROFILE_SRC   := $(wildcard profile/*.c)
TOOLS_SRC     := $(wildcard tools/*.c)
PLUGINS       := $(notdir $(wildcard profiler/*))

obj = $(patsubst %.c,$(O)/%.o,$(1))

# Under TSan, the part of libhookit that runs before TSan is set up is left
# uninstrumented (docs/reliability.md): the lifecycle layer and the malloc,
# I/O and MPI wrappers (TSan's own start-up calls the interposed malloc, mmap
# and sigaction, where TSan's entry hooks crash), init.c (it calls
# __tsan_init for hooks that run in constructors before libtsan's) and the
# hooks (jprof reads the hooks' frame layout, which TSan's entry hooks
# change).  The plugins, the profile library, a2n and the tools are
# instrumented.
ifneq ($(filter thread,$(subst $(comma), ,$(SANITIZE))),)
TSAN_EARLY_SRC := $(COMMON_SRC) $(LIFECYCLE_SRC) $(filter hookit/alloc.c hookit/io_% hookit/mpi_% hookit/rebind.c hookit/hooks.c hookit/init.c,$(HOOKIT_SRC))
$(patsubst %.c,$(O)/%.o,$(TSAN_EARLY_SRC)): ALL_CFLAGS += -fno-sanitize=thread
endif

# The JDK's jvmti.h for libjprof's JVMTI agent (profiler/jprof/frames/jvmti.c), from
# the javac on PATH; without a JDK that file compiles to a stub.
JDK_HOME ?= $(patsubst %/bin/javac,%,$(realpath $(shell command -v javac 2>/dev/null)))
JNI_CFLAGS := $(if $(wildcard $(JDK_HOME)/include/jvmti.h),-I$(JDK_HOME)/include -I$(JDK_HOME)/include/linux)
$(O)/profiler/jprof/frames/jvmti.o: ALL_CFLAGS += $(JNI_CFLAGS)

LIBHOOKIT_SO := $(B)/lib/libhookit.so
LIBHOOKIT_A  := $(B)/lib/libhookit.a
LIBA2N_A     := $(B)/lib/liba2n.a
LIBPROFILE_A := $(O)/libprofile.a
PLUGIN_SOS   := $(foreach p,$(PLUGINS),$(B)/lib/hookit/lib$(p).so)
# Static archives of the plugins, for `hookit link` (the profiler linked in).
PLUGIN_AS    := $(foreach p,$(PLUGINS),$(B)/lib/hookit/lib$(p).a)
HOOKIT_BIN   := $(B)/bin/hookit

.PHONY: all check demo bench bench-advise bench-remedies install uninstall deps clean
all: $(LIBHOOKIT_SO) $(LIBHOOKIT_A) $(LIBA2N_A) $(PLUGIN_SOS) $(PLUGIN_AS) $(HOOKIT_BIN) examples

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# The static variant (libhookit.a, `hookit link`): same sources, -DHOOKIT_STATIC
# selects ld --wrap wrappers and the statically linked profiler.
$(O)/static/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DHOOKIT_STATIC -MMD -MP -c $< -o $@

-include $(shell find $(O) -name '*.d' 2>/dev/null)

# libhookit: hooks + lifecycle.  Never links libbfd (see design.md).
$(LIBHOOKIT_SO): $(call obj,$(HOOKIT_SRC) $(LIFECYCLE_SRC) $(COMMON_SRC))
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libhookit.so -Wl,-z,nodelete $(ALL_LDFLAGS) -o $@ $^ -ldl -lpthread

sobj = $(patsubst %.c,$(O)/static/%.o,$(1))
$(LIBHOOKIT_A): $(call sobj,$(HOOKIT_SRC) $(LIFECYCLE_SRC) $(COMMON_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBA2N_A): $(call obj,$(A2N_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBPROFILE_A): $(call obj,$(PROFILE_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Each folder profiler/NAME becomes the plugin lib/hookit/libNAME.so, from
# its sources and those of its subfolders (libjprof's are one per concern,
# docs/design.md).  Its objects are reached through a pattern rule, which
# would make them intermediate: kept, so that a second make rebuilds nothing.
.SECONDARY:
.SECONDEXPANSION:
$(B)/lib/hookit/lib%.so: $$(call obj,$$(wildcard profiler/$$*/*.c profiler/$$*/*/*.c) $(COMMON_SRC)) $(LIBA2N_A) $(LIBPROFILE_A)
	@mkdir -p $(dir $@)
	$(CC) -shared $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIBPROFILE_A) $(LIBA2N_A) -lbfd -lz -ldl -lpthread

$(B)/lib/hookit/lib%.a: $$(call obj,$$(wildcard profiler/$$*/*.c profiler/$$*/*/*.c) $(COMMON_SRC)) $(LIBA2N_A) $(LIBPROFILE_A)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $(filter %.o,$^) $(call obj,$(PROFILE_SRC))

$(HOOKIT_BIN): $(call obj,$(TOOLS_SRC)) $(LIBPROFILE_A) $(LIBA2N_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(LIBPROFILE_A) $(LIBA2N_A) -lbfd -lz -ldl -lm

# ---- examples ----------------------------------------------------------------
EXAMPLE_APP := $(B)/examples/primes
.PHONY: examples
examples: $(EXAMPLE_APP) $(B)/examples/libcount.so

$(EXAMPLE_APP): examples/primes.c $(LIBHOOKIT_SO)
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -finstrument-functions -Iinclude -o $@ $< -L$(B)/lib -lhookit -Wl,-rpath,'$$ORIGIN/../lib'

$(B)/examples/libcount.so: examples/count_plugin.c include/hookit/profiler.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -g -Wall -fPIC -shared -Iinclude -o $@ $<

demo: deps all
	@echo "== running $(EXAMPLE_APP) (built with -finstrument-functions -lhookit)"
	@rm -rf $(B)/demo && mkdir -p $(B)/demo
	cd $(B)/demo && HOOKIT_OUTPUT=. ../examples/primes 20000
	$(HOOKIT_BIN) report $(B)/demo/hookit.primes.*.prof

# ---- tests -------------------------------------------------------------------
# make check first builds an ASan+UBSan variant into $(B)-asan and runs the
# unit and tool tests against it (docs/testing.md), then the whole suite; the
# last line counts both.  SANITIZE_CHECK=0 leaves the variant out (the
# default when TESTS selects tests or SANITIZE is given).
SANITIZE_CHECK ?= $(if $(TESTS)$(SANITIZE),0,1)
SANITIZE_CHECK_TESTS ?= a2n/ tools/ reports/ core/test_calls core/test_threads \
                        core/test_bad_input reliability/test_faults reliability/test_security
SAN_B       := $(B)-asan
SAN_SUMMARY := $(abspath $(B))/check-asan.json
# the variant's build runs 2 jobs unless make was given -j already
SAN_JOBS     = $(if $(filter -j%,$(MAKEFLAGS)),,-j2)
.PHONY: check-libs check-asan
# What the tests of the sanitized variant use (no static archives).
check-libs: $(LIBHOOKIT_SO) $(LIBA2N_A) $(LIBPROFILE_A) $(PLUGIN_SOS) $(HOOKIT_BIN)
check-asan: deps
	@rm -f $(SAN_SUMMARY)
	@$(MAKE) --no-print-directory $(SAN_JOBS) B=$(SAN_B) SANITIZE=address,undefined check-libs
	@echo "== make check, part 1: the ASan+UBSan variant ($(SAN_B)) with the unit and tool tests"
	@mkdir -p $(B) && HOOKIT_BUILD_DIR=$(abspath $(SAN_B)) HOOKIT_SANITIZE=address,undefined \
	  python3 tests/run --label asan+ubsan --summary-out $(SAN_SUMMARY) $(SANITIZE_CHECK_TESTS) \
	  || true
	@echo "== make check, part 2: the whole suite ($(B))"

check: deps all $(if $(filter 1,$(SANITIZE_CHECK)),check-asan)
	@HOOKIT_BUILD_DIR=$(abspath $(B)) HOOKIT_SANITIZE=$(SANITIZE) python3 tests/run \
	  $(if $(filter 1,$(SANITIZE_CHECK)),--summary-in $(SAN_SUMMARY)) $(TESTS)

# The conformance corpus (docs/conformance.md): hookit's tree against a
# reference, path by path, over the whole build matrix and real third-party
# code fetched at test time.  make check runs its quick subset.
.PHONY: conformance
conformance: deps all
	@HOOKIT_BUILD_DIR=$(abspath $(B)) python3 tests/conformance/run $(CONFORMANCE)

# arm64 (docs/testing.md): the whole build with Debian's cross compiler into
# $(ARM64_B), and the core, report and lifecycle tests run under qemu-user.
# The target's libbfd comes from libbinutils:arm64 through a link made in the
# build directory: binutils-dev:arm64, which carries the libbfd.so link,
# cannot be installed beside the host's binutils, and its headers are the
# host's, byte for byte.
ARM64_B      ?= $(B)-arm64
ARM64_CC     ?= aarch64-linux-gnu-gcc
ARM64_LIBDIR := /usr/lib/aarch64-linux-gnu
ARM64_TESTS  ?= core/ reports/ lifecycle/
.PHONY: arm64 check-arm64
arm64:
	@mkdir -p $(ARM64_B)/cross-lib
	@bfd=$$(ls $(ARM64_LIBDIR)/libbfd-*.so 2>/dev/null | head -1); \
	  [ -n "$$bfd" ] || { echo "make arm64: no $(ARM64_LIBDIR)/libbfd-*.so (libbinutils:arm64; make deps)" >&2; exit 1; }; \
	  ln -sfn "$$bfd" $(ARM64_B)/cross-lib/libbfd.so
	@$(MAKE) --no-print-directory $(SAN_JOBS) B=$(ARM64_B) CC=$(ARM64_CC) \
	  LDFLAGS="$(LDFLAGS) -L$(abspath $(ARM64_B))/cross-lib" all

check-arm64: deps arm64
	@HOOKIT_BUILD_DIR=$(abspath $(ARM64_B)) HOOKIT_TARGET=aarch64 python3 tests/run \
	  $(or $(TESTS),$(ARM64_TESTS))

# Reliability (docs/reliability.md): fuzzing, stress, static analysis.
FUZZ_SECONDS ?= 60
.PHONY: fuzz stress lint
fuzz:
	@HOOKIT_BUILD_DIR=$(abspath $(B)) tests/fuzz/run --seconds $(FUZZ_SECONDS) -j2 $(FUZZ_TARGETS)

stress: deps all
	@HOOKIT_BUILD_DIR=$(abspath $(B)) HOOKIT_SANITIZE=$(SANITIZE) python3 tests/run --stress $(TESTS)

lint:
	@scripts/lint.sh

bench: all
	@HOOKIT_BUILD_DIR=$(abspath $(B)) bench/run

# hookit advise end to end on zstd and SQLite (docs/cost.md); not in bench
bench-advise: all
	@HOOKIT_BUILD_DIR=$(abspath $(B)) bench/advise

# run-time filters (advise's lists) and throttling on the same builds (docs/cost.md)
bench-remedies: all
	@HOOKIT_BUILD_DIR=$(abspath $(B)) bench/advise --remedies

# ---- install -----------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/hookit \
	  $(DESTDIR)$(PREFIX)/include/hookit $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	  $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/doc/hookit/docs \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 755 $(HOOKIT_BIN) $(DESTDIR)$(PREFIX)/bin/hookit
	install -m 755 $(LIBHOOKIT_SO) $(DESTDIR)$(PREFIX)/lib/libhookit.so
	install -m 644 $(LIBHOOKIT_A) $(LIBA2N_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(PLUGIN_SOS) $(DESTDIR)$(PREFIX)/lib/hookit/
	install -m 644 $(PLUGIN_AS) $(DESTDIR)$(PREFIX)/lib/hookit/
	install -m 644 include/hookit/*.h $(DESTDIR)$(PREFIX)/include/hookit/
	test ! -f include/monitor.h || install -m 644 include/monitor.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' hookit.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/hookit.pc
	install -m 644 docs/hookit.1 $(DESTDIR)$(PREFIX)/share/man/man1/hookit.1
	install -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/hookit/README.md
	install -m 644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/hookit/docs/
	install -m 644 tools/hookit-completion.bash \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/hookit

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/bin/hookit $(DESTDIR)$(PREFIX)/lib/libhookit.* \
	  $(DESTDIR)$(PREFIX)/lib/liba2n.a $(DESTDIR)$(PREFIX)/lib/hookit \
	  $(DESTDIR)$(PREFIX)/include/hookit $(DESTDIR)$(PREFIX)/lib/pkgconfig/hookit.pc \
	  $(DESTDIR)$(PREFIX)/share/man/man1/hookit.1 $(DESTDIR)$(PREFIX)/share/doc/hookit \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions/hookit

# ---- dependencies ------------------------------------------------------------
deps:
	@scripts/deps.sh

clean:
	rm -rf $(B)
