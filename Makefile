# fnbox — see README.md. `make` builds build/fnbox; `make test` runs every test.
CC       ?= cc
BUILD    ?= build
PKGS     := libseccomp jansson
CSTD     := -std=gnu11 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
            -Wno-unused-parameter -Wvla -Wpointer-arith
HARDEN   := -fstack-protector-strong -D_FORTIFY_SOURCE=3 -fPIC
CFLAGS   ?= -O2 -g
CFLAGS   += $(CSTD) $(WARN) $(HARDEN) -fvisibility=hidden -Iinclude -Isrc $(shell pkg-config --cflags $(PKGS))
LDFLAGS  += -Wl,-z,relro -Wl,-z,now
LDLIBS   += $(shell pkg-config --libs $(PKGS))

LIB_SRC  := $(sort $(wildcard src/util/*.c src/core/*.c src/lang/*.c src/sandbox/*.c))
LIB_ASM  := src/harness/embed.S
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(LIB_ASM:%.S=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
HARNESS  := $(wildcard src/harness/*.py src/harness/*.js)

UNIT_SRC := $(sort $(wildcard tests/unit/*/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all clean test unit integration sanitize lint
all: $(BUILD)/fnbox $(BUILD)/libfnbox.a

$(BUILD)/libfnbox.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(BUILD)/fnbox: $(CLI_OBJ) $(BUILD)/libfnbox.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libfnbox.a $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/src/harness/embed.o: src/harness/embed.S $(HARNESS)
	@mkdir -p $(@D)
	$(CC) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libfnbox.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libfnbox.a $(LDLIBS) -lcmocka

unit: $(UNIT_BIN)

# The README's test command: unit + integration + security, normal and ASan/UBSan builds.
test: all unit
	scripts/test.sh

sanitize:
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		LDFLAGS="-fsanitize=address,undefined" all unit

lint:
	scripts/lint.sh

clean:
	rm -rf build build-asan

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
