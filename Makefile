# Smriti -- plain Makefile over pkg-config (see README.md).
#
#   make               build/smriti (lean CLI) and build/smriti-full (everything)
#   make test          unit tests and end-to-end tests
#   make SANITIZE=1    the same under AddressSanitizer + UBSan, in build-asan/
#
# The lean binary links only SQLite, jansson and nettle so that an agent's
# `smriti head` starts fast; smriti-full adds libmicrohttpd, libcurl and libpq.

CC      ?= cc
SANITIZE ?= 0

ifeq ($(SANITIZE),1)
BUILD   ?= build-asan
OPT     ?= -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD   ?= build
OPT     ?= -O2 -g
endif

WARN    = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
          -Wpointer-arith -Wformat=2 -Wvla -Wno-missing-field-initializers
CORE_PKGS = sqlite3 jansson nettle
FULL_PKGS = $(CORE_PKGS) libmicrohttpd libcurl libpq
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE $(WARN) $(OPT) -Isrc $(shell pkg-config --cflags $(FULL_PKGS)) $(CFLAGS)
LDFLAGS_ALL = $(OPT) -Wl,--as-needed $(LDFLAGS)
# The lean binary links Debian's static archives of its three libraries:
# resolving shared objects at every start costs ~0.7 ms of a ~5 ms `head`.
CORE_LIBS = -Wl,-Bstatic $(shell pkg-config --libs $(CORE_PKGS)) -Wl,-Bdynamic \
            $(filter-out $(shell pkg-config --libs $(CORE_PKGS)),$(shell pkg-config --libs --static $(CORE_PKGS)))
FULL_LIBS = $(shell pkg-config --libs $(FULL_PKGS)) -lpthread

# Code every binary carries: utilities, the pure domain, the core
# operations, the SQLite store, the local CLI commands and the MCP stdio
# server (so an agent host starting `smriti mcp` pays the lean start-up).
CORE_SRC = $(wildcard src/util/*.c src/domain/*.c src/ops/*.c src/cli/*.c src/mcp/*.c) \
           src/store/store.c src/store/sqlite.c
LEAN_SRC = src/store/backends_lean.c
# Only in smriti-full: providers, the HTTP server (with MCP over HTTP),
# PostgreSQL, the chat runtime and the commands that need them.
FULL_SRC = $(wildcard src/provider/*.c src/http/*.c src/ops/runtime/*.c \
             src/cli/full/*.c src/store/full/*.c)
LEAN_ONLY = src/cli/lean.c
# The web UI's sources (text in git) become one generated C file in the
# build directory, made by a host-side tool (tools/embed.c); no Node.js.
UI_SRC  = $(sort $(wildcard src/ui/*.html src/ui/*.css src/ui/*.js src/ui/*.svg) \
            $(wildcard src/ui/vendor/*.mjs))
UI_GEN  = $(BUILD)/gen/ui_assets.c
HOST_CC ?= cc

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
CORE_OBJ = $(call obj,$(filter-out $(LEAN_ONLY),$(CORE_SRC)))
LEAN_OBJ = $(CORE_OBJ) $(call obj,$(LEAN_SRC) $(LEAN_ONLY))
FULL_OBJ = $(CORE_OBJ) $(call obj,$(FULL_SRC)) $(BUILD)/obj/gen/ui_assets.o

TEST_SRC = $(wildcard tests/unit/*.c)
TEST_OBJ = $(call obj,$(TEST_SRC))
# unit tests link everything but the CLI transport
LIB_OBJ  = $(filter-out $(BUILD)/obj/src/cli/%,$(FULL_OBJ))

all: $(BUILD)/smriti $(BUILD)/smriti-full

$(BUILD)/smriti: $(LEAN_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(CORE_LIBS)

$(BUILD)/smriti-full: $(FULL_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(FULL_LIBS)

$(BUILD)/unit-tests: $(TEST_OBJ) $(LIB_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(FULL_LIBS)

# bench/NAME_bench.c -> $(BUILD)/bench-NAME, linked like the unit tests
$(BUILD)/bench-%: $(BUILD)/obj/bench/%_bench.o $(LIB_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(FULL_LIBS)

$(BUILD)/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(HOST_CC) -std=c11 -O2 -Wall -Wextra -Werror -o $@ $<

$(UI_GEN): $(BUILD)/embed $(UI_SRC)
	@mkdir -p $(dir $@)
	$(BUILD)/embed $@ $(UI_SRC)

$(BUILD)/obj/gen/ui_assets.o: $(UI_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

unit: $(BUILD)/unit-tests
	$(BUILD)/unit-tests

test: all $(BUILD)/unit-tests
	$(BUILD)/unit-tests
	SMRITI_BUILD=$(BUILD) node --test --test-concurrency=2 tests/js/ tests/fake-provider/

clean:
	rm -rf build build-asan

bench: all $(BUILD)/bench-commit
	bench/cli.sh

.PHONY: all unit test bench clean
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
