# fnbox — see README.md. `make` builds build/fnbox; `make test` runs every test.
CC       ?= cc
BUILD    ?= build
PKGS     := libseccomp jansson nettle fuse3
CSTD     := -std=gnu11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
            -Wno-unused-parameter -Wvla -Wpointer-arith
HARDEN   := -fstack-protector-strong -D_FORTIFY_SOURCE=3 -fPIC
OPT      ?= -O2 -g
SAN      ?=
# CFLAGS/LDFLAGS from the command line or environment are added last, never replace ours.
ALL_CFLAGS  = $(CSTD) $(WARN) $(HARDEN) $(OPT) $(SAN) -fvisibility=hidden -Iinclude -Isrc \
              $(shell pkg-config --cflags $(PKGS)) $(CFLAGS)
ALL_LDFLAGS = -Wl,-z,relro -Wl,-z,now $(SAN) $(LDFLAGS)
LDLIBS   += $(shell pkg-config --libs $(PKGS))

LIB_SRC  := $(sort $(wildcard src/util/*.c src/request/*.c src/core/*.c src/lang/*.c src/sandbox/*.c src/fs/*.c src/net/*.c))
LIB_ASM  := src/harness/embed.S
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
# The HTTP server (`fnbox serve`) is in the fnbox binary only: libfnbox.a's users do not get it. It loads
# libmicrohttpd when it starts (src/server/http/mhd.c), so that no other fnbox process pays for loading it and
# GnuTLS: only its headers are needed to build. Its unit tests link the server's archive (tests/unit/server/).
MHD_PKG  := libmicrohttpd
SERVER_SRC := $(sort $(wildcard src/server/http/*.c src/server/mcp/*.c))
SERVER_ASM := src/server/http/openapi_embed.S
SERVER_OBJ := $(SERVER_SRC:%.c=$(BUILD)/%.o) $(SERVER_ASM:%.S=$(BUILD)/%.o)
SERVER_LIBS = -ldl
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(LIB_ASM:%.S=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
HARNESS  := $(wildcard src/harness/*.py src/harness/*.js src/harness/*.rb src/harness/*.php src/harness/*.c \
              src/harness/*.h src/harness/*.hpp)

# The library is also a shared object: the objects are -fPIC and -fvisibility=hidden already, so it exports
# exactly include/fnbox.h's FNBOX_API functions (the embedded harnesses are .hidden too). Its soname changes
# with the major version; fnbox_call_options.size lets a minor version add fields without a new one.
VERSION  := $(shell sed -n 's/^\#define FNBOX_VERSION "\(.*\)"/\1/p' include/fnbox.h)
SONAME   := libfnbox.so.$(firstword $(subst ., ,$(VERSION)))
SHLIB    := $(BUILD)/libfnbox.so.$(VERSION)

UNIT_SRC := $(sort $(wildcard tests/unit/*/test_*.c tests/unit/*/*/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all clean test unit integration sanitize lint bench bench-overhead install uninstall
# The C API's benchmark drivers and example are built with everything else, so that an API change that breaks
# them shows.
BENCH_BIN := $(BUILD)/bench/bench_warm
EXAMPLE_BIN := $(BUILD)/examples/c/call
all: $(BUILD)/fnbox $(BUILD)/libfnbox.a $(SHLIB) $(BENCH_BIN) $(EXAMPLE_BIN)

$(BUILD)/libfnbox.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(SHLIB): $(LIB_OBJ)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined -o $@ $^ $(LDLIBS)

$(BUILD)/libfnbox_server.a: $(SERVER_OBJ)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(BUILD)/fnbox: $(CLI_OBJ) $(BUILD)/libfnbox_server.a $(BUILD)/libfnbox.a
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libfnbox_server.a $(BUILD)/libfnbox.a $(LDLIBS) \
		$(SERVER_LIBS)

$(SERVER_OBJ): ALL_CFLAGS += $(shell pkg-config --cflags $(MHD_PKG))

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# The seccomp filter is compiled at build time: tools/seccomp_gen (built from its own copy of seccomp.c,
# without the embedded program) prints it, and the library's seccomp.o includes the result.
GEN_DEPS := $(BUILD)/gen/seccomp.o $(BUILD)/src/util/error.o $(BUILD)/src/util/buf.o $(BUILD)/src/util/fd.o \
            $(BUILD)/src/util/defences.o
$(BUILD)/gen/seccomp.o: src/sandbox/seccomp.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<
$(BUILD)/gen/seccomp_gen: tools/seccomp_gen.c $(GEN_DEPS)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/gen/seccomp_filter.inc: $(BUILD)/gen/seccomp_gen
	$< > $@.tmp && mv $@.tmp $@
$(BUILD)/src/sandbox/seccomp.o: src/sandbox/seccomp.c $(BUILD)/gen/seccomp_filter.inc
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DFB_SECCOMP_EMBEDDED -I$(BUILD)/gen -MMD -MP -c -o $@ $<

# The Python harness's bytecode, compiled at build time by the interpreter the sandbox starts: a call then
# loads it instead of compiling 1,000 lines (~2.5 ms of every cold call). Without that interpreter the file
# is empty and every call compiles the source, as the loader also does when the running interpreter's
# bytecode version is another (src/lang/python.c).
PYTHON_RUNTIME ?= /usr/bin/python3
$(BUILD)/gen/python_harness.bin: src/harness/python_harness.py tools/harness_bytecode.py
	@mkdir -p $(@D)
	if [ -x $(PYTHON_RUNTIME) ]; then $(PYTHON_RUNTIME) -I -S tools/harness_bytecode.py $< $@; else : > $@; fi

$(BUILD)/src/harness/embed.o: src/harness/embed.S $(HARNESS) $(BUILD)/gen/python_harness.bin
	@mkdir -p $(@D)
	$(CC) -DFB_PYTHON_BYTECODE='"$(BUILD)/gen/python_harness.bin"' -c -o $@ $<

# docs/openapi.yaml as compact JSON, embedded in the server for GET /v1/openapi.json (python3-yaml).
$(BUILD)/gen/openapi.json: docs/openapi.yaml
	@mkdir -p $(@D)
	python3 -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1], encoding="utf-8")), \
		open(sys.argv[2], "w", encoding="utf-8"), ensure_ascii=False, separators=(",", ":"))' $< $@

$(BUILD)/src/server/http/openapi_embed.o: src/server/http/openapi_embed.S $(BUILD)/gen/openapi.json
	@mkdir -p $(@D)
	$(CC) -DFB_OPENAPI_JSON='"$(BUILD)/gen/openapi.json"' -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libfnbox.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libfnbox.a $(LDLIBS) -lcmocka

# The server's pure parts (router, tokens, admission, metrics...), from its archive.
$(BUILD)/tests/server/%: tests/unit/server/%.c $(BUILD)/libfnbox_server.a $(BUILD)/libfnbox.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(shell pkg-config --cflags $(MHD_PKG)) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libfnbox_server.a \
		$(BUILD)/libfnbox.a $(LDLIBS) $(SERVER_LIBS) -lcmocka

# The scanners' output for the oracle test (tests/integration/test_infer_oracle.py); not a unit test itself.
ORACLE_BIN := $(BUILD)/tests/oracle/sigdump
$(ORACLE_BIN): tests/integration/oracle/sigdump.c $(BUILD)/libfnbox.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libfnbox.a $(LDLIBS)

unit: $(UNIT_BIN) $(ORACLE_BIN)

# The README's test command: unit + integration + security, normal and ASan/UBSan builds.
test: all unit
	scripts/test.sh

sanitize:
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=all" all unit

lint:
	scripts/lint.sh

$(BUILD)/bench/sandbox_overhead: bench/sandbox_overhead.c $(BUILD)/libfnbox.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libfnbox.a $(LDLIBS)

# bench/bench_warm.py's driver: warm, cold and C calls and sustained load through the C API.
$(BUILD)/bench/bench_warm: bench/bench_warm.c $(BUILD)/libfnbox.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libfnbox.a $(LDLIBS)

# examples/c/call.c, as a user builds it against the installed header (<fnbox.h>).
$(EXAMPLE_BIN): examples/c/call.c include/fnbox.h $(BUILD)/libfnbox.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libfnbox.a $(LDLIBS)

bench-overhead: $(BUILD)/bench/sandbox_overhead
	$(BUILD)/bench/sandbox_overhead 200

bench: all bench-overhead
	bench/bench_cold.py
	bench/bench_mount.py
	bench/bench_large.py
	bench/bench_serve.py
	bench/bench_session.py
	bench/bench_mcp.py
	bench/bench_warm.py
	bench/bench_output.py
	bench/bench_matplotlib.py
	bench/bench_walk.py
	bench/bench_env_warm.py

clean:
	rm -rf build build-asan

# ---- make install / make uninstall (GNU conventions: PREFIX, DESTDIR, BINDIR, LIBDIR, INCLUDEDIR) ----
# The binary, the header, the library (static and shared) and two pkg-config files: fnbox.pc links the
# shared library (`pkg-config --cflags --libs fnbox`), fnbox-static.pc the archive
# (`pkg-config --cflags --libs fnbox-static`: with both installed, fnbox.pc's -lfnbox would pick the .so
# even under --static). The .pc files name the directories given here, relative to ${prefix} where they
# are under PREFIX. uninstall removes exactly these files (directories stay: others may own them).
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL      ?= install
# Run after installing a shared library straight into the system (no DESTDIR), as root, so that the loader's
# cache knows it; LDCONFIG=: skips it.
LDCONFIG     ?= ldconfig
PC_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@PKGS@|$(PKGS)|' \
               -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|' \
               -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|'
INSTALLED_FILES = $(BINDIR)/fnbox $(INCLUDEDIR)/fnbox.h $(LIBDIR)/libfnbox.a $(LIBDIR)/libfnbox.so.$(VERSION) \
                  $(LIBDIR)/$(SONAME) $(LIBDIR)/libfnbox.so $(PKGCONFIGDIR)/fnbox.pc $(PKGCONFIGDIR)/fnbox-static.pc

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 755 $(BUILD)/fnbox $(DESTDIR)$(BINDIR)/fnbox
	$(INSTALL) -m 644 include/fnbox.h $(DESTDIR)$(INCLUDEDIR)/fnbox.h
	$(INSTALL) -m 644 $(BUILD)/libfnbox.a $(DESTDIR)$(LIBDIR)/libfnbox.a
	$(INSTALL) -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/libfnbox.so.$(VERSION)
	ln -sf libfnbox.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libfnbox.so
	$(PC_SUBST) tools/fnbox.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/fnbox.pc
	$(PC_SUBST) tools/fnbox-static.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/fnbox-static.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/fnbox.pc $(DESTDIR)$(PKGCONFIGDIR)/fnbox-static.pc
	if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then $(LDCONFIG); fi

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED_FILES))

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(SERVER_OBJ:.o=.d) $(BUILD)/gen/seccomp.d

# ---- fuzzing: libFuzzer targets in tests/fuzz/ (clang, ASan + UBSan); see tests/fuzz/README.md ----
# `make fuzz` builds them into build-fuzz/ and runs each for FUZZ_SECONDS (scripts/fuzz.sh).
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 20
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_SRC     := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_BUILD)/fuzz/%)
.PHONY: fuzz fuzz-build fuzz-clean

# A separate make: the library is rebuilt with clang and coverage instrumentation; FORTIFY is off so that
# ASan, not glibc's checks, reports an overflow.
fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) FUZZ_BUILD=$(FUZZ_BUILD) CC=clang OPT="-O1 -g" \
		SAN="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" CFLAGS="$(CFLAGS) -U_FORTIFY_SOURCE" $(FUZZ_BIN)

# The whole library, as `make` builds it; the linker takes only the objects a target reaches.
$(FUZZ_BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_common.h $(FUZZ_BUILD)/libfnbox.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $(ALL_LDFLAGS) -o $@ $< $(FUZZ_BUILD)/libfnbox.a $(LDLIBS)

fuzz:
	scripts/fuzz.sh $(FUZZ_SECONDS)

fuzz-clean:
	rm -rf $(FUZZ_BUILD)
