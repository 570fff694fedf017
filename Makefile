# gpufleet - plain GNU make, no configure step.
#
#   make            build build/gpufleet
#   make demo       install missing packages, build, run the main job
#   make check      install missing packages, run every test (plain gcc,
#                   clang ASan+UBSan and TSan builds); ends with
#                   "N passed, N failed, N skipped"
#   make bench      benchmarks; each figure is a "BENCH name value unit" line
#   make evidence   rerun every claim of docs/evidence.md beside its figure
#   make DEVELOPER=1   warnings are errors (CI sets CI=true, same effect)
#   make SANITIZE=address,undefined   sanitizer build in build-san/
#   make SANITIZE=thread B=build-tsan tsan-build   the threaded tests under
#                   -fsanitize=thread
#   make V=1        show the compiler command lines

CC ?= cc
PKG_CONFIG ?= pkg-config
SANITIZE ?=
ifeq ($(CI),true)
DEVELOPER = 1
endif

# Debug builds (the sanitizer build, or DEBUG=1) run the consistency
# checkers of the stateful modules as they go (GF_DEBUG).
ifneq ($(SANITIZE)$(DEBUG),)
GF_DEBUG = 1
else
GF_DEBUG = 0
endif

ifeq ($(SANITIZE),)
B ?= build
OPT ?= -O2 -D_FORTIFY_SOURCE=2 -fstack-protector-strong
else
B ?= build-san
# -g1: line tables, all a sanitizer's report needs (a third less compile
# time under TSan than -g)
OPT ?= -O1 -g1 -fsanitize=$(SANITIZE) -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
endif

WARN = -std=c17 -Wall -Wextra -Wpedantic -Wshadow -Wconversion \
	-Wno-sign-conversion -Wstrict-prototypes -Wmissing-prototypes \
	-Wold-style-definition -Wvla -Wformat=2 -Wimplicit-fallthrough \
	-Wundef -Wwrite-strings -Wcast-qual -Wpointer-arith \
	-Wnull-dereference -Wredundant-decls
ifdef DEVELOPER
WARN += -Werror
endif

HWLOC_CFLAGS := $(shell $(PKG_CONFIG) --cflags hwloc 2>/dev/null)
HWLOC_LIBS := $(shell $(PKG_CONFIG) --libs hwloc 2>/dev/null)
CMOCKA_LIBS := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)
YAML_LIBS := $(shell $(PKG_CONFIG) --libs yaml-0.1 2>/dev/null)
# GnuTLS: libmicrohttpd's TLS, and reading a client certificate's check
# (src/server/tls.c)
MHD_LIBS := $(shell $(PKG_CONFIG) --libs libmicrohttpd gnutls 2>/dev/null)
JANSSON_LIBS := $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null)
CURL_LIBS := $(shell $(PKG_CONFIG) --libs libcurl 2>/dev/null)
XML_CFLAGS := $(shell $(PKG_CONFIG) --cflags libxml-2.0 2>/dev/null)
XML_LIBS := $(shell $(PKG_CONFIG) --libs libxml-2.0 2>/dev/null)
STORE_CFLAGS := $(shell $(PKG_CONFIG) --cflags sqlite3 libpq 2>/dev/null)
STORE_LIBS := $(shell $(PKG_CONFIG) --libs sqlite3 libpq 2>/dev/null)

CPPFLAGS += -Iinclude -Isrc -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
	-DGF_DEBUG=$(GF_DEBUG)
CFLAGS += -g $(OPT) $(WARN) -MMD -MP $(HWLOC_CFLAGS) $(XML_CFLAGS) \
	$(STORE_CFLAGS)
LDFLAGS += $(if $(SANITIZE),-fsanitize=$(SANITIZE))
# lld links the ~90 test binaries of each tree in a third of ld.bfd's
# CPU (ASan's the most: make check links them three times); gold where
# lld is absent (scripts/install-deps.sh installs lld)
LDFLAGS += $(if $(shell command -v ld.lld 2>/dev/null),-fuse-ld=lld,-fuse-ld=gold)
LIBS = $(HWLOC_LIBS) $(XML_LIBS) $(YAML_LIBS) $(MHD_LIBS) $(JANSSON_LIBS) \
	$(CURL_LIBS) $(STORE_LIBS) -lglpk -ldl -lpthread -lm
# The gpufleet binary links only what every command uses.  libpq,
# libcurl, GLPK, libxml2, libmicrohttpd and GnuTLS (with the 40 libraries
# they bring) are opened by the adapter that needs them, on first use
# (src/util/dynlib.h): linked, they cost every process about 20 ms of
# CPU at start.  Tests and benches link them all: some call them too.
SQLITE_LIBS := $(shell $(PKG_CONFIG) --libs sqlite3 2>/dev/null)
BIN_LIBS = $(HWLOC_LIBS) $(YAML_LIBS) $(JANSSON_LIBS) $(SQLITE_LIBS) \
	-ldl -lpthread -lm

# Slurm's headers (libslurm-dev): the SPANK plugin is built where they are
# (rules below, docs/slurm.md).
SLURM_SPANK_H := $(wildcard /usr/include/slurm/spank.h)
ifneq ($(SLURM_SPANK_H),)
SLURM_SONAME := $(shell objdump -p $$($(CC) -print-file-name=libslurm.so) \
	2>/dev/null | sed -n 's/^ *SONAME *//p')
$(B)/src/slurm/slurm_api.o: CPPFLAGS += -DGF_HAVE_SLURM=1 \
	-DGF_SLURM_SONAME='"$(if $(SLURM_SONAME),$(SLURM_SONAME),libslurm.so)"'
SPANK_SO = $(B)/spank_gpufleet.so
endif

# The rooms, floor by floor (docs/INTERNALS.md): util; the pure core
# (node model, placement, MIG); the adapters around it; commands on top.
LIB_SRC = $(wildcard src/util/*.c src/core/*/*.c src/topo/*.c \
	src/telemetry/*.c src/mig/*.c src/trace/*.c src/sim/*.c src/server/*.c \
	src/store/*.c src/nodeproto/*.c src/controller/*.c src/agent/*.c \
	src/autoscale/*.c \
	src/chargeback/*.c src/slurm/*.c src/k8s/*.c)
CLI_SRC = $(wildcard src/cli/*.c)
LIB_OBJ = $(LIB_SRC:%.c=$(B)/%.o)
CLI_OBJ = $(CLI_SRC:%.c=$(B)/%.o)
UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNIT_BIN = $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
TOOL_SRC = $(wildcard tests/tools/*.c)
TOOL_BIN = $(TOOL_SRC:tests/tools/%.c=$(B)/tests/%)
BENCH_SRC = $(wildcard bench/*.c)
BENCH_BIN = $(BENCH_SRC:bench/%.c=$(B)/bench/%)
FAKE_NVML = $(B)/fake-nvml/libnvidia-ml.so.1
FAKE_NVML_OLD = $(B)/fake-nvml-old/libnvidia-ml.so.1

.PHONY: all deps demo check test bench evidence format lint clean
all: $(B)/gpufleet $(SPANK_SO)

ifeq ($(V),1)
Q =
else
Q = @
endif

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

# Made anew, never updated in place: ar keeps the members of renamed or
# removed sources, and a build would link their old code.
$(B)/libgpufleet.a: $(LIB_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(B)/gpufleet: $(CLI_OBJ) $(B)/libgpufleet.a
	$(Q)$(CC) $(LDFLAGS) $^ $(BIN_LIBS) -o $@

$(B)/tests/%: tests/unit/%.c $(B)/libgpufleet.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Isrc $(LDFLAGS) $< $(B)/libgpufleet.a \
		$(CMOCKA_LIBS) $(LIBS) -o $@

# The CLI's option layer (src/cli/options.c) is tested with the CLI's
# objects, which are not in the library (main.o left out).
$(B)/tests/test_cli_options: tests/unit/test_cli_options.c \
		$(filter-out %/main.o,$(CLI_OBJ)) $(B)/libgpufleet.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Isrc $(LDFLAGS) $^ $(CMOCKA_LIBS) \
		$(LIBS) -o $@

$(B)/tests/%: tests/tools/%.c $(B)/libgpufleet.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Isrc $(LDFLAGS) $< $(B)/libgpufleet.a \
		$(LIBS) -o $@

# A bench is bench/NAME.c, with the files of bench/NAME/ when it has more
# than one (their headers included as "NAME/x.h").
.SECONDEXPANSION:
$(B)/bench/%: bench/%.c $$(wildcard bench/$$*/*.c bench/$$*/*.h) \
		$(B)/libgpufleet.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Isrc -Ibench $(LDFLAGS) $< \
		$(wildcard bench/$*/*.c) $(B)/libgpufleet.a $(LIBS) -o $@

# The fake NVML is a plain shared object; never sanitized (it is loaded
# into sanitized binaries, whose runtime covers it).
FAKE_NVML_SRC = tests/fake_nvml/fake_nvml.c tests/fake_nvml/telemetry.c \
	tests/fake_nvml/costs.c tests/fake_nvml/json_fixture.c \
	tests/fake_nvml/mig.c
$(FAKE_NVML): $(FAKE_NVML_SRC) tests/fake_nvml/fake.h src/topo/nvml_api.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) -std=c17 -O1 -g -Wall -Wextra -fPIC -shared \
		-D_POSIX_C_SOURCE=200809L -Isrc -Wl,-soname,libnvidia-ml.so.1 \
		$(FAKE_NVML_SRC) $(JANSSON_LIBS) -o $@

# A driver with only the required entry points (for test_nvml_old).
$(FAKE_NVML_OLD): tests/fake_nvml/old_driver.c src/topo/nvml_api.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) -std=c17 -O1 -g -Wall -Wextra -fPIC -shared -Isrc \
		-Wl,-soname,libnvidia-ml.so.1 $< -o $@

# Slurm (docs/slurm.md).  With libslurm-dev installed: the SPANK plugin
# $(B)/spank_gpufleet.so, and `gpufleet slurm advise` opening libslurm at
# run time by the soname its header belongs to.  The plugin is loaded
# into srun and slurmstepd, so it is never sanitized (like the fake
# NVML) and links position-independent copies of the library objects it
# uses (the bind planner and the node sources: one copy of the logic),
# exporting only the SPANK symbols (spank.map).
SPANK_SRC = src/slurm/spank/spank_gpufleet.c
SPANK_LIB_SRC = $(wildcard src/util/*.c src/core/node/*.c) \
	src/topo/hwloc_load.c src/topo/source.c src/topo/nvml.c \
	src/topo/this_system.c \
	src/topo/nccl_xml.c src/slurm/gres.c src/slurm/taskbind.c
SPANK_OBJ = $(SPANK_LIB_SRC:%.c=$(B)/pic/%.o)
PIC_CFLAGS = -g -O2 -fPIC -fvisibility=hidden $(WARN) -MMD -MP \
	$(HWLOC_CFLAGS) $(XML_CFLAGS)

$(B)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CPPFLAGS) $(PIC_CFLAGS) -c $< -o $@

# an archive, so that only the objects the plugin reaches are linked
$(B)/pic/libgpufleet-pic.a: $(SPANK_OBJ)
	$(Q)$(AR) rcs $@ $^

$(B)/spank_gpufleet.so: $(SPANK_SRC) src/slurm/spank/spank.map \
	$(B)/pic/libgpufleet-pic.a
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) -g -O2 -fPIC $(WARN) $(HWLOC_CFLAGS) -shared \
		-Wl,--version-script=src/slurm/spank/spank.map \
		$(SPANK_SRC) $(B)/pic/libgpufleet-pic.a $(HWLOC_LIBS) \
		-ldl -o $@

# Fuzzing (docs/fuzzing.md): a libFuzzer harness per input surface,
# tests/fuzz/fuzz_NAME.c, its corpus in tests/fuzz/corpus/NAME/.  The
# sanitizer tree links each with replay.c (every corpus file once, run by
# tests/run-all.sh); `make fuzz` builds them with clang's libFuzzer in
# build-fuzz/ and runs each for FUZZ_SECONDS over its corpus.
FUZZ_SRC = $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES = $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
FUZZ_REPLAY = $(FUZZ_NAMES:%=$(B)/tests/fuzz/replay_%)
FUZZ_SECONDS ?= 10

$(B)/tests/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c \
	tests/fuzz/fuzz.h $(B)/libgpufleet.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CPPFLAGS) $(filter-out -MMD -MP,$(CFLAGS)) -Itests/fuzz \
		$(LDFLAGS) $< tests/fuzz/replay.c $(B)/libgpufleet.a $(LIBS) -o $@

build-fuzz/fuzz/%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h \
	build-fuzz/libgpufleet.a
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)clang $(CPPFLAGS) -g -O1 -fno-omit-frame-pointer $(WARN) \
		$(HWLOC_CFLAGS) $(XML_CFLAGS) -Itests/fuzz \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$< build-fuzz/libgpufleet.a $(LIBS) -o $@

# first the library, instrumented for coverage (fuzzer-no-link) and
# sanitized, in its own tree; then the harnesses
.PHONY: fuzz fuzz-build fuzz-harnesses
fuzz-build:
	@command -v clang >/dev/null || { echo "make fuzz needs clang" \
		"(scripts/install-deps.sh)"; exit 1; }
	@$(MAKE) --no-print-directory CC=clang B=build-fuzz \
		SANITIZE=address,undefined OPT="-O1 -fno-omit-frame-pointer \
		-fsanitize=address,undefined,fuzzer-no-link \
		-fno-sanitize-recover=all" build-fuzz/libgpufleet.a
	@$(MAKE) --no-print-directory fuzz-harnesses
fuzz-harnesses: $(FUZZ_NAMES:%=build-fuzz/fuzz/%)
fuzz: fuzz-build
	@sh tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_NAMES)

tests-build: $(B)/gpufleet $(UNIT_BIN) $(TOOL_BIN) $(FAKE_NVML) \
	$(FAKE_NVML_OLD) $(SPANK_SO) \
	$(if $(SANITIZE),$(FUZZ_REPLAY))

deps:
	@sh scripts/install-deps.sh

# The README's first command: the main job on built-in defaults.
demo: deps
	@$(MAKE) --no-print-directory all
	@$(B)/gpufleet demo

# The README's second command: every test on each tree it builds: plain
# (gcc -O2), clang with ASan+UBSan (its warnings are errors in CI too;
# clang's UBSan sees what gcc's does not, such as an offset applied to a
# NULL pointer, and ASan is the same runtime in both compilers), and
# ThreadSanitizer (gcc) on the library and the unit tests that start
# threads (TSAN_TESTS).  Without clang the sanitizer tree is gcc's
# (build-san).  No tree is built that is not also run.  tests/run-all.sh
# runs the tests of every tree side by side (JOBS at once: twice the
# CPUs, as most tests wait on sockets, disks and daemons); CONTRIBUTING.md
# ("Tests") says what runs in which tree.
SAN_CC = $(if $(shell command -v clang),clang,$(CC))
SAN_TREE = $(if $(shell command -v clang),build-clang,build-san)
CHECK_TREES = $(B) $(SAN_TREE) build-tsan
# (only suites that start threads: test_serve_config starts none, and
# spent 15 s of CPU there for nothing)
TSAN_TESTS = test_server test_serve_api test_serve_nodes \
	test_k8s_serve test_replay_serve test_tls test_store
# The trees build with every CPU unless make was given its own -j.
CHECK_J = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2))
check: deps
	@$(MAKE) $(CHECK_J) --no-print-directory tests-build
	@$(MAKE) $(CHECK_J) --no-print-directory CC=$(SAN_CC) B=$(SAN_TREE) \
		SANITIZE=address,undefined tests-build
	@$(MAKE) $(CHECK_J) --no-print-directory SANITIZE=thread B=build-tsan \
		tsan-build
	@sh tests/run-all.sh $(CHECK_TREES)

# the ThreadSanitizer tree: the library and the threaded unit tests only
# (make SANITIZE=thread B=build-tsan tsan-build)
tsan-build: $(TSAN_TESTS:%=$(B)/tests/%)

test: tests-build
	@sh tests/run-all.sh $(B)

bench: deps
	@$(MAKE) --no-print-directory all $(BENCH_BIN)
	@sh bench/run.sh $(B)

# the claims of docs/evidence.md, rerun (EVIDENCE_LONG=1 adds the long
# ones, EVIDENCE_ONLY=E1,E5 picks some)
evidence: deps
	@$(MAKE) --no-print-directory all $(BENCH_BIN) $(FAKE_NVML)
	@sh scripts/evidence.sh $(B)

format:
	clang-format -i $(LIB_SRC) $(CLI_SRC) $(UNIT_SRC) $(TOOL_SRC) \
		$(BENCH_SRC) $(wildcard bench/*/*.[ch]) tests/fake_nvml/*.c \
		tests/unit/*.h \
		$(wildcard src/*/*.h src/*/*/*.h include/gpufleet/*.h)

lint:
	clang-format --dry-run -Werror $$(find src include tests bench -name '*.[ch]')
	cppcheck -q --error-exitcode=1 --enable=warning,performance,portability \
		--inline-suppr -DGF_DEBUG=1 -Iinclude -Isrc src

clean:
	rm -rf build build-san build-clang build-tsan build-fuzz

.PHONY: tests-build tsan-build
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(SPANK_OBJ:.o=.d)

# make install: the binary, the systemd units of the agent and the
# controller (generated from dist/systemd/*.in) and the example
# environment files of dist/default/, which are installed only where
# absent and removed by uninstall only while unchanged (docs/install.md).
#   make && sudo make install                       under /usr/local
#   make install PREFIX=/usr DESTDIR=/tmp/pkg       a package's tree
# SYSCONFDIR is /etc for PREFIX=/usr, else $(PREFIX)/etc.  Install never
# builds into another tree: it takes $(B)/gpufleet (make -o $(B)/gpufleet
# install takes it as it is).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALL ?= install
INSTALL_UNITS = gpufleet-agent.service gpufleet-serve.service
INSTALL_ENVS = gpufleet-agent gpufleet-serve
INSTALL_SED = sed -e 's|@BINDIR@|$(BINDIR)|g' \
	-e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'

.PHONY: install uninstall
install: $(B)/gpufleet
	$(Q)$(INSTALL) -d -m 0755 "$(DESTDIR)$(BINDIR)" \
		"$(DESTDIR)$(SYSTEMDUNITDIR)" "$(DESTDIR)$(SYSCONFDIR)/default"
	@echo "  INSTALL $(DESTDIR)$(BINDIR)/gpufleet"
	$(Q)$(INSTALL) -m 0755 $(B)/gpufleet "$(DESTDIR)$(BINDIR)/gpufleet"
	$(Q)for u in $(INSTALL_UNITS); do \
		f="$(DESTDIR)$(SYSTEMDUNITDIR)/$$u"; \
		echo "  INSTALL $$f"; \
		$(INSTALL_SED) dist/systemd/$$u.in >"$$f.tmp" && \
		chmod 0644 "$$f.tmp" && mv -f "$$f.tmp" "$$f" || exit 1; \
	done
	$(Q)for e in $(INSTALL_ENVS); do \
		f="$(DESTDIR)$(SYSCONFDIR)/default/$$e"; \
		if [ -e "$$f" ]; then echo "  KEEP    $$f (exists)"; continue; fi; \
		echo "  INSTALL $$f"; \
		$(INSTALL_SED) dist/default/$$e >"$$f.tmp" && \
		chmod 0644 "$$f.tmp" && mv -f "$$f.tmp" "$$f" || exit 1; \
	done

uninstall:
	$(Q)for f in "$(DESTDIR)$(BINDIR)/gpufleet" \
		$(INSTALL_UNITS:%="$(DESTDIR)$(SYSTEMDUNITDIR)/%"); do \
		[ -e "$$f" ] || continue; echo "  RM      $$f"; rm -f "$$f"; \
	done
	$(Q)for e in $(INSTALL_ENVS); do \
		f="$(DESTDIR)$(SYSCONFDIR)/default/$$e"; \
		[ -e "$$f" ] || continue; \
		if $(INSTALL_SED) dist/default/$$e | cmp -s - "$$f"; then \
			echo "  RM      $$f"; rm -f "$$f"; \
		else echo "  KEEP    $$f (edited)"; fi; \
	done
