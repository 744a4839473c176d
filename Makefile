# tsync top-level Makefile.
#
# Sources are discovered by directory, sub-folders included, so adding a
# module (or a sub-folder) means adding files, not editing this file:
#   common/**.c proto/**.c      -> $(B)/libtsync.a   (shared, no main)
#   host/**.c  (minus main.c)   -> $(B)/libhost.a
#   agent/**.c (minus main.c)   -> $(B)/libagent.a
#   host/main.c, agent/main.c   -> $(B)/tsync-host, $(B)/tsync-agent
#   plugin/plugin_*.c           -> $(B)/plugin_*.so  (libtraceevent plugins)
#   tests/unit/**/test_*.c      -> $(B)/tests/**/test_* (one cmocka binary
#                                  each; tests/unit mirrors the source tree)
#   tests/helpers/*.c           -> $(B)/helpers/*     (programs tests use)
#   tests/shim/*.c              -> $(B)/shim/*.so     (LD_PRELOAD shims tests use)
#   tests/bench/bench_*.c       -> $(B)/bench/bench_* (run by `make bench`;
#                                  bench_lib.c is linked into each)
#   tests/fuzz/fuzz_*.c         -> $(B)/fuzz/fuzz_*   (libFuzzer, clang)
#   tests/e2e/*.sh              -> run by `make check` after the unit tests
#
# B selects the build directory, so sanitizer builds live beside the normal
# one: `make check-asan` is `make B=build-asan SAN=1 check`.

B        ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
BINDIR   ?= $(PREFIX)/bin
SBINDIR  ?= $(PREFIX)/sbin
MANDIR   ?= $(PREFIX)/share/man
LIBDIR   ?= $(PREFIX)/lib/$(shell gcc -print-multiarch 2>/dev/null)
# libtraceevent searches only its own compiled-in plugin directory (Debian:
# /usr/lib/<multiarch>/traceevent/plugins), whatever PREFIX is.
TEP_LIBDIR := $(shell pkg-config --variable=libdir libtraceevent 2>/dev/null)
PLUGINDIR ?= $(or $(TEP_LIBDIR),$(LIBDIR))/traceevent/plugins
UNITDIR  ?= /lib/systemd/system
FUZZ_TIME ?= 30

# make predefines CC=cc, so `CC ?= gcc` would never apply: gcc unless CC
# was given on the command line or in the environment (CC=clang works).
ifeq ($(origin CC),default)
CC       = gcc
endif
PKGS      = libtracefs libtraceevent
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
TEST_CFLAGS := $(shell pkg-config --cflags cmocka libtracecmd 2>/dev/null)
TEST_LIBS   := $(shell pkg-config --libs cmocka libtracecmd 2>/dev/null)
CRYPTO_LIBS := $(shell pkg-config --libs libcrypto 2>/dev/null)
# trace.dat version 7 compression (common/tracedat/tracedat_zip.c), as trace-cmd's
ZIP_LIBS    := $(shell pkg-config --libs libzstd zlib 2>/dev/null)
# tsync-host's JSON output (host/cmd/json_out.c); the agent does not link it
JSON_CFLAGS := $(shell pkg-config --cflags json-c 2>/dev/null)
JSON_LIBS   := $(shell pkg-config --libs json-c 2>/dev/null)

WARN     = -Wall -Wextra -Wshadow -Wmissing-prototypes -Werror
CFLAGS  ?= -O2 -g
# Hardening, as passt and chrony build: stack protector, PIE programs (the
# plugin is -fPIC -shared instead), and _FORTIFY_SOURCE, which needs the
# optimizer (with -O0 glibc warns, and -Werror would fail) and is left out
# of sanitizer builds, whose interceptors it would bypass.
HARDEN   = -fstack-protector-strong
ifeq ($(SAN),1)
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
else ifneq ($(filter -O -O1 -O2 -O3 -Os -Og -Ofast,$(CFLAGS)),)
HARDEN  += -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2
endif
PIE_CFLAGS  = -fPIE
PIE_LDFLAGS = -pie
ALL_CFLAGS = $(CFLAGS) $(WARN) $(HARDEN) -std=gnu11 -D_GNU_SOURCE -pthread -MMD -MP \
	     -I. $(PKG_CFLAGS) $(JSON_CFLAGS)
LIBS     = $(PKG_LIBS) $(CRYPTO_LIBS) $(ZIP_LIBS) -pthread -lm
# what links libhost.a: tsync-host and the tests' programs
HOST_LIBS = $(JSON_LIBS) $(LIBS)

# srcs DIRS PATTERN: the files under DIRS (sub-folders too) named PATTERN
srcs = $(sort $(shell find $(1) -name '$(2)' -type f 2>/dev/null))
LIB_SRC   := $(call srcs,common proto,*.c)
HOST_SRC  := $(filter-out host/main.c,$(call srcs,host,*.c))
AGENT_SRC := $(filter-out agent/main.c,$(call srcs,agent,*.c))
PLUGIN_SRC := $(wildcard plugin/plugin_*.c)
UNIT_SRC  := $(call srcs,tests/unit,test_*.c)
HELPER_SRC := $(wildcard tests/helpers/*.c)
SHIM_SRC  := $(wildcard tests/shim/*.c)
BENCH_LIB := tests/bench/bench_lib.c
BENCH_SRC := $(filter-out $(BENCH_LIB),$(wildcard tests/bench/bench_*.c))
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))

LIBTSYNC  = $(B)/libtsync.a
LIBHOST   = $(B)/libhost.a
LIBAGENT  = $(B)/libagent.a
PROGS     = $(B)/tsync-agent $(B)/tsync-host
PLUGINS   = $(patsubst plugin/%.c,$(B)/%.so,$(PLUGIN_SRC))
UNITS     = $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
HELPERS   = $(patsubst tests/helpers/%.c,$(B)/helpers/%,$(HELPER_SRC)) \
	    $(patsubst tests/shim/%.c,$(B)/shim/%.so,$(SHIM_SRC))
BENCHES   = $(patsubst tests/bench/%.c,$(B)/bench/%,$(BENCH_SRC))
FUZZERS   = $(patsubst tests/fuzz/%.c,$(B)/fuzz/%,$(FUZZ_SRC))
ALL_LIBS  = $(LIBHOST) $(LIBAGENT) $(LIBTSYNC)

.PHONY: all check check-unit check-asan check-valgrind fuzz bench demo \
	install install-user-plugin clean doc lint deps check-vm check-viewer
.DEFAULT_GOAL := all

all: $(PROGS) $(PLUGINS)

deps: deps-build

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PIE_CFLAGS) -c -o $@ $<

$(B)/obj/plugin/%.o: plugin/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<

$(B)/obj/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(PIE_CFLAGS) $(TEST_CFLAGS) -c -o $@ $<

$(LIBTSYNC): $(call obj,$(LIB_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(LIBHOST): $(call obj,$(HOST_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(LIBAGENT): $(call obj,$(AGENT_SRC))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Each program links its own layer and the shared one, never the other
# program's: tsync-host does not link libagent.a nor the reverse.
$(B)/tsync-host: $(call obj,host/main.c) $(LIBHOST) $(LIBTSYNC)
	$(CC) $(LDFLAGS) $(PIE_LDFLAGS) -o $@ $< $(LIBHOST) $(LIBTSYNC) $(HOST_LIBS)
$(B)/tsync-agent: $(call obj,agent/main.c) $(LIBAGENT) $(LIBTSYNC)
	$(CC) $(LDFLAGS) $(PIE_LDFLAGS) -o $@ $< $(LIBAGENT) $(LIBTSYNC) $(LIBS)

# The objects that only pattern rules ask for (plugin, tests, helpers,
# benchmarks) would be deleted as intermediates and rebuilt by every make.
.SECONDARY: $(call obj,$(PLUGIN_SRC) $(UNIT_SRC) $(HELPER_SRC) $(BENCH_SRC) $(BENCH_LIB))

$(B)/%.so: $(B)/obj/plugin/%.o
	$(CC) $(LDFLAGS) -shared -o $@ $< $(PKG_LIBS)

$(B)/tests/%: $(B)/obj/tests/unit/%.o $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(PIE_LDFLAGS) -o $@ $< $(ALL_LIBS) $(TEST_LIBS) $(HOST_LIBS) -ldl
$(B)/helpers/%: $(B)/obj/tests/helpers/%.o $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(PIE_LDFLAGS) -o $@ $< $(ALL_LIBS) $(TEST_LIBS) $(HOST_LIBS) -ldl
# never with the sanitizers: the shims are preloaded into programs built
# without them (Debian's trace-cmd)
$(B)/shim/%.so: tests/shim/%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g $(WARN) -fstack-protector-strong -std=gnu11 -fPIC -shared -o $@ $< -ldl
$(B)/bench/%: $(B)/obj/tests/bench/%.o $(call obj,$(BENCH_LIB)) $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(PIE_LDFLAGS) -o $@ $< $(call obj,$(BENCH_LIB)) $(ALL_LIBS) \
		$(TEST_LIBS) $(HOST_LIBS) -ldl

# libFuzzer targets: the pure code (common/ proto/ and the pure host/plugin
# parsers a target names) rebuilt with clang and the fuzzer sanitizers.
FUZZ_CC     = clang
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	      -fno-sanitize-recover=all -std=gnu11 -D_GNU_SOURCE -I. $(PKG_CFLAGS) $(JSON_CFLAGS)
$(B)/fuzz/%: tests/fuzz/%.c $(LIB_SRC) $(HOST_SRC) $(AGENT_SRC) $(PLUGIN_SRC)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(LIB_SRC) $(HOST_SRC) $(AGENT_SRC) \
		$(PKG_LIBS) $(CRYPTO_LIBS) $(ZIP_LIBS) $(JSON_LIBS) -pthread -lm

build-tests: all $(UNITS) $(HELPERS)

check: deps-test
	$(MAKE) build-tests
	B=$(B) tests/run-tests.sh $(UNITS)
	$(if $(filter 1,$(SAN)),,$(MAKE) fuzz FUZZ_TIME=$(FUZZ_TIME))

check-unit: build-tests
	B=$(B) E2E=0 tests/run-tests.sh $(UNITS)

# Full malloc stacks so that tests/lsan.supp can name the library leak it
# suppresses (libtracecmd has no frame pointers).
check-asan:
	ASAN_OPTIONS=fast_unwind_on_malloc=0 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
		$(MAKE) B=build-asan SAN=1 check

# test_splice is left out: it asserts stall timings (a ~200 ms stall or
# none) that valgrind's slowdown breaks; check-asan covers its memory.
VALGRIND_UNITS = $(filter-out %/test_splice,$(UNITS))
check-valgrind: build-tests
	B=$(B) VALGRIND=1 E2E=0 tests/run-tests.sh $(VALGRIND_UNITS)

fuzz: $(FUZZERS)
	@B=$(B) FUZZ_TIME=$(FUZZ_TIME) tests/fuzz/run-fuzz.sh $(FUZZERS)

bench: all $(BENCHES) $(HELPERS)
	@for b in $(BENCHES); do echo "== $$b"; B=$(B) $$b || exit 1; done

demo: deps-build
	$(MAKE) all
	B=$(B) scripts/demo

check-vm: deps-vm all $(HELPERS) static
	B=$(B) tests/vm/run-vm-tests.sh

# KernelShark opens the files of a recording, headless (tests/viewer/).
check-viewer: deps-viewer all
	B=$(B) tests/viewer/kernelshark.sh

install: all install-plugin
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(PLUGINDIR)
	install -m 755 $(B)/tsync-host $(DESTDIR)$(BINDIR)/tsync-host
	install -m 755 $(B)/tsync-agent $(DESTDIR)$(SBINDIR)/tsync-agent
	@if [ -f Documentation/Makefile.inc ]; then $(MAKE) -f Documentation/Makefile.inc install-doc B=$(B) DESTDIR=$(DESTDIR) MANDIR=$(MANDIR) UNITDIR=$(UNITDIR) SBINDIR=$(SBINDIR); fi

install-user-plugin: $(PLUGINS)
	install -d $(HOME)/.local/lib/traceevent/plugins
	$(if $(PLUGINS),install -m 644 $(PLUGINS) $(HOME)/.local/lib/traceevent/plugins/)

doc:
	@if [ -f Documentation/Makefile.inc ]; then $(MAKE) -f Documentation/Makefile.inc doc B=$(B); fi

lint:
	scripts/lint

clean:
	rm -rf build build-asan $(B)

# --- dependencies, packages, static agent, uninstall (scripts/install-deps,
# debian/) ---

# Root runs `scripts/install-deps SET` first so that each target works on a
# fresh machine with only what it needs (`make demo` no test tools, only
# `make check-vm` a kernel package); others are told what is missing by
# the compiler or the test.
DEPS_TARGETS = $(addprefix deps-,run build doc deb test analysis vm tcmd-new viewer all)
.PHONY: $(DEPS_TARGETS)
$(DEPS_TARGETS):
	@if [ "$$(id -u)" = 0 ]; then scripts/install-deps $(@:deps-%=%); fi

# The plugin goes into libtraceevent's system directory, and a link to it
# into its tsync-last/ subdirectory: when the plugin is loaded there before
# Debian's plugin_function.so, it asks libtraceevent to load it once more
# from tsync-last/ after every other directory (plugin/plugin_tsync.c).
install-plugin: $(PLUGINS)
	install -d $(DESTDIR)$(PLUGINDIR)/tsync-last
	$(foreach p,$(PLUGINS),install -m 644 $(p) $(DESTDIR)$(PLUGINDIR)/ && \
		ln -sf ../$(notdir $(p)) $(DESTDIR)$(PLUGINDIR)/tsync-last/$(notdir $(p));)

# Self-contained programs for guests that have none of the libraries
# (README "A static agent for guests without a compiler"): linked with -static against the .a files that
# Debian's libtracefs-dev, libtraceevent-dev, libssl-dev and libjson-c-dev ship. The
# linker warns that getaddrinfo and dlopen in a static program need glibc's
# own NSS modules at run time: numeric addresses need none, and neither
# program loads plugins. `make static-agent` builds the agent;
# $(B)/static/tsync-host is for the VM tests, whose guest has no libraries.
STATIC_LIBS := $(shell pkg-config --static --libs libtracefs libtraceevent libcrypto libzstd zlib json-c 2>/dev/null)
$(B)/static/tsync-%: $(B)/obj/%/main.o $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -static -o $@ $< $(ALL_LIBS) $(STATIC_LIBS) -pthread -lm
# (the packages first, then the build: prerequisites may run in parallel)
static-agent: deps-build
	$(MAKE) $(B)/static/tsync-agent
static: deps-build
	$(MAKE) $(B)/static/tsync-agent $(B)/static/tsync-host
.PHONY: static-agent static

# trace-cmd 3.4 from source into $(B)/tcmd-new/prefix, for the benchmarks
# that compare with it (optional: they fall back to Debian's 3.1.6).
tcmd-new: deps-tcmd-new
	B=$(B) scripts/build-tcmd-new
.PHONY: tcmd-new

# Debian packages (debian/, built with dpkg-buildpackage): $(B)/deb/*.deb.
deb: deps-deb
	B=$(B) scripts/build-deb
.PHONY: deb

# Removes what `make install` installed; give it the same PREFIX, DESTDIR
# and directories. (A unit enabled with systemctl: disable it first.)
MAN_PAGES = $(patsubst Documentation/%.txt,%,$(wildcard Documentation/*.[1-8].txt))
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/tsync-host $(DESTDIR)$(SBINDIR)/tsync-agent
	rm -f $(foreach p,$(notdir $(PLUGINS)),$(DESTDIR)$(PLUGINDIR)/$(p) \
		$(DESTDIR)$(PLUGINDIR)/tsync-last/$(p))
	rmdir $(DESTDIR)$(PLUGINDIR)/tsync-last 2>/dev/null || true
	rm -f $(foreach m,$(MAN_PAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(m))
	rm -f $(addprefix $(DESTDIR)$(UNITDIR)/,$(notdir $(wildcard contrib/*.service contrib/*.socket)))
.PHONY: uninstall

# Prints libtraceevent's system plugin directory (for tests and packaging).
print-plugindir:
	@echo $(PLUGINDIR)
.PHONY: install-plugin print-plugindir

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
