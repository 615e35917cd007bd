# Smriti -- plain Makefile over pkg-config (see README.md).
#
#   make               build/smriti (lean CLI) and build/smriti-full (everything)
#   make test          unit tests and end-to-end tests
#   make SANITIZE=1    the same under AddressSanitizer + UBSan, in build-asan/
#   make FUZZ=1 fuzz   the libFuzzer targets of fuzz/ (clang, ASan + UBSan), in
#                      build-fuzz/; run them with scripts/fuzz
#   make install       both binaries, the man page, shell completion, the systemd
#                      unit and the docs under PREFIX (/usr/local), with DESTDIR
#
# The lean binary links only SQLite, jansson and nettle so that an agent's
# `smriti head` starts fast; smriti-full adds libmicrohttpd, libcurl and libpq.

CC      ?= cc
SANITIZE ?= 0
FUZZ    ?= 0

ifeq ($(FUZZ),1)
# libFuzzer comes with Debian's clang (libclang-rt-dev); every object is
# built with its coverage hooks and the sanitizers, and only the targets
# link libFuzzer's main.
CC      = clang
BUILD   ?= build-fuzz
OPT     ?= -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
           -fno-sanitize-recover=all
else ifeq ($(SANITIZE),1)
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
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE $(WARN) $(OPT) -Isrc $(shell pkg-config --cflags $(FULL_PKGS)) \
             $(CPPFLAGS) $(CFLAGS)
LDFLAGS_ALL = $(OPT) -Wl,--as-needed $(LDFLAGS)
# The lean binary is linked statically, C library included: loading and
# relocating shared objects at every start cost ~0.7 ms of a ~5 ms `head`,
# and the dynamic loader alone (libc, libm) about a fifth of what was left
# (perf, `bench/peers.sh`'s cold read).  A static glibc cannot use NSS
# safely (getpwuid, getaddrinfo and the like load modules at run time: a
# uid without a passwd entry crashed it), so the lean code makes no such
# call, and the link fails if one creeps in (no __nss_ symbol may be linked
# in).  The linker's warning about SQLite's unused extension loader
# (dlopen) is expected.  AddressSanitizer and valgrind need a dynamic
# binary: SANITIZE=1 keeps one, and LEAN_STATIC=0 links the lean binary
# dynamically (docs/testing.md, "valgrind").
LEAN_STATIC ?= $(if $(filter 1,$(SANITIZE)),0,1)
ifeq ($(SANITIZE),1)
CORE_LIBS = -Wl,-Bstatic $(shell pkg-config --libs $(CORE_PKGS)) -Wl,-Bdynamic \
            $(filter-out $(shell pkg-config --libs $(CORE_PKGS)),$(shell pkg-config --libs --static $(CORE_PKGS))) -lm
else ifeq ($(LEAN_STATIC),0)
CORE_LIBS = $(shell pkg-config --libs $(CORE_PKGS)) -lm -lpthread
else
CORE_LIBS = -static $(shell pkg-config --libs $(CORE_PKGS)) -lm -lpthread
endif
FULL_LIBS = $(shell pkg-config --libs $(FULL_PKGS)) -lpthread -lm
# smriti-full's allocator: mimalloc (Debian's libmimalloc) in place of
# glibc's malloc, linked ahead of the other libraries so its malloc is the
# one every library calls.  A server write allocates and frees a few
# thousand small blocks on 32 threads; mimalloc's per-thread pages took
# 5-9% off the server's CPU per write at 32 writers (bench/group_commit.sh)
# and add nothing to a start.  gperftools' tcmalloc took 13% off but loads
# libstdc++, 2 ms more at every start of a PostgreSQL CLI call.  The
# sanitizers bring their own allocator: SANITIZE=1 keeps glibc's, and
# MALLOC=libc does so for any build.
MALLOC ?= $(if $(filter 1,$(SANITIZE)),libc,mimalloc)
MALLOC_LIBS = $(if $(filter mimalloc,$(MALLOC)),-lmimalloc)

# Code every binary carries: utilities, the pure domain, the core
# operations, the SQLite store, the local CLI commands and the MCP stdio
# server (so an agent host starting `smriti mcp` pays the lean start-up).
CORE_SRC = $(wildcard src/util/*.c src/domain/*.c src/ops/*.c src/cli/*.c src/mcp/*.c) \
           src/store/store.c src/store/index.c src/store/group.c src/store/sqlite.c \
           src/store/store_auth.c src/store/sql.c src/store/rows.c \
           src/store/trace.c src/store/content.c src/store/head_memo.c
LEAN_SRC = src/store/backends_lean.c
# Only in smriti-full: providers, the HTTP server (with MCP over HTTP),
# PostgreSQL, the chat runtime and the commands that need them.
FULL_SRC = $(wildcard src/provider/*.c src/http/*.c src/ops/full/*.c \
             src/cli/full/*.c src/store/full/*.c)
LEAN_ONLY = src/cli/lean.c src/ops/builtins_lean.c
# The web UI's sources (text in git) become one generated C file in the
# build directory, made by a host-side tool (tools/embed.c, which also
# compresses each file with brotli and gzip); no Node.js.
UI_SRC  = $(sort $(wildcard src/ui/*.html src/ui/*.css src/ui/*.js src/ui/*.svg) \
            $(wildcard src/ui/vendor/*.mjs))
UI_GEN  = $(BUILD)/gen/ui_assets.c
# The operations' declarations (JSON, src/ops/decl/) are built into every
# binary the same way, as plain bytes (src/util/embedded.h).
DECL_SRC = $(sort $(wildcard src/ops/decl/*.json))
DECL_GEN = $(BUILD)/gen/decl_files.c
# ... and indexed by operation and by schema (tools/decl_index.c), so a
# process parses only the declarations it uses.
DECL_INDEX = $(BUILD)/gen/decl_index.c
HOST_CC ?= cc

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
CORE_OBJ = $(call obj,$(filter-out $(LEAN_ONLY),$(CORE_SRC))) $(BUILD)/obj/gen/decl_files.o \
           $(BUILD)/obj/gen/decl_index.o
LEAN_OBJ = $(CORE_OBJ) $(call obj,$(LEAN_SRC) $(LEAN_ONLY))
FULL_OBJ = $(CORE_OBJ) $(call obj,$(FULL_SRC)) $(BUILD)/obj/gen/ui_assets.o

TEST_SRC = $(wildcard tests/unit/*.c)
TEST_OBJ = $(call obj,$(TEST_SRC))
# unit tests link everything but the CLI transport
LIB_OBJ  = $(filter-out $(BUILD)/obj/src/cli/%,$(FULL_OBJ))

all: $(BUILD)/smriti $(BUILD)/smriti-full

$(BUILD)/smriti: $(LEAN_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(CORE_LIBS)
ifeq ($(LEAN_STATIC),1)
	@if nm $@ | grep -q ' [TtWw] __nss_'; then \
		echo "$@: static glibc's NSS is linked in (getpwuid, getaddrinfo, ...);" \
		     "the lean binary must not call it (see the Makefile)" >&2; rm -f $@; exit 1; fi
endif

$(BUILD)/smriti-full: $(FULL_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(MALLOC_LIBS) $(FULL_LIBS)

$(BUILD)/unit-tests: $(TEST_OBJ) $(LIB_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(FULL_LIBS)

# bench/NAME_bench.c -> $(BUILD)/bench-NAME, linked like the unit tests
$(BUILD)/bench-%: $(BUILD)/obj/bench/%_bench.o $(LIB_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(FULL_LIBS)

# fuzz/NAME.c -> $(BUILD)/fuzz-NAME (make FUZZ=1; see docs/testing.md)
FUZZ_TARGETS = $(patsubst fuzz/%.c,%,$(wildcard fuzz/*.c))
$(BUILD)/fuzz-%: $(BUILD)/obj/fuzz/%.o $(LIB_OBJ)
	$(CC) $(LDFLAGS_ALL) -fsanitize=fuzzer -o $@ $^ $(FULL_LIBS)

fuzz: $(addprefix $(BUILD)/fuzz-,$(FUZZ_TARGETS))

$(BUILD)/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(HOST_CC) -std=c11 -O2 -Wall -Wextra -Werror -o $@ $< -lbrotlienc -lz

$(UI_GEN): $(BUILD)/embed $(UI_SRC)
	@mkdir -p $(dir $@)
	$(BUILD)/embed $@ $(UI_SRC)

$(BUILD)/obj/gen/ui_assets.o: $(UI_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(DECL_GEN): $(BUILD)/embed $(DECL_SRC)
	@mkdir -p $(dir $@)
	$(BUILD)/embed --plain $@ $(DECL_SRC)

$(BUILD)/obj/gen/decl_files.o: $(DECL_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/decl_index: tools/decl_index.c
	@mkdir -p $(dir $@)
	$(HOST_CC) -std=c11 -O2 -Wall -Wextra -Werror -o $@ $< -ljansson

$(DECL_INDEX): $(BUILD)/decl_index $(DECL_SRC)
	@mkdir -p $(dir $@)
	$(BUILD)/decl_index $@ $(DECL_SRC)

$(BUILD)/obj/gen/decl_index.o: $(DECL_INDEX)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

# ---- installation ----
# smriti-full goes to PREFIX/libexec/smriti, where the lean smriti looks for
# it (../libexec/smriti from its own directory: see src/cli/main.c).  The
# Debian package is this layout under /usr (debian/rules).
PREFIX         ?= /usr/local
SYSCONFDIR     ?= /etc
MANDIR         ?= $(PREFIX)/share/man
DOCDIR         ?= $(PREFIX)/share/doc/smriti
BASHCOMPDIR    ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR     ?= $(PREFIX)/share/zsh/site-functions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR    ?= $(PREFIX)/lib/sysusers.d
VERSION := $(shell sed -n 's/^\#define SMRITI_VERSION "\(.*\)"$$/\1/p' src/version.h)

# the man page, rendered from its scdoc source (needs scdoc)
$(BUILD)/smriti.1: docs/man/smriti.1.scd src/version.h
	@mkdir -p $(dir $@)
	sed 's/@VERSION@/$(VERSION)/' $< | scdoc > $@

man: $(BUILD)/smriti.1

# The environment file may hold provider keys, so it is root's alone, and
# an existing one (the operator's) is kept.
install: all $(BUILD)/smriti.1
	install -D -m 0755 $(BUILD)/smriti $(DESTDIR)$(PREFIX)/bin/smriti
	install -D -m 0755 $(BUILD)/smriti-full $(DESTDIR)$(PREFIX)/libexec/smriti/smriti-full
	install -D -m 0644 $(BUILD)/smriti.1 $(DESTDIR)$(MANDIR)/man1/smriti.1
	install -D -m 0644 dist/smriti.bash $(DESTDIR)$(BASHCOMPDIR)/smriti
	install -D -m 0644 dist/_smriti $(DESTDIR)$(ZSHCOMPDIR)/_smriti
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    dist/smriti.service.in > $(DESTDIR)$(SYSTEMDUNITDIR)/smriti.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/smriti.service
	install -D -m 0644 dist/smriti.sysusers $(DESTDIR)$(SYSUSERSDIR)/smriti.conf
	install -D -m 0644 README.md $(DESTDIR)$(DOCDIR)/README.md
	install -d $(DESTDIR)$(DOCDIR)/docs
	install -m 0644 docs/*.md $(DESTDIR)$(DOCDIR)/docs/
	test -e $(DESTDIR)$(SYSCONFDIR)/default/smriti || \
	    install -D -m 0600 dist/smriti.default $(DESTDIR)$(SYSCONFDIR)/default/smriti

# Removes what install put there, except the environment file and the data.
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/smriti $(DESTDIR)$(PREFIX)/libexec/smriti/smriti-full \
	      $(DESTDIR)$(MANDIR)/man1/smriti.1 $(DESTDIR)$(BASHCOMPDIR)/smriti \
	      $(DESTDIR)$(ZSHCOMPDIR)/_smriti $(DESTDIR)$(SYSTEMDUNITDIR)/smriti.service \
	      $(DESTDIR)$(SYSUSERSDIR)/smriti.conf
	rm -rf $(DESTDIR)$(DOCDIR)
	-rmdir $(DESTDIR)$(PREFIX)/libexec/smriti

unit: $(BUILD)/unit-tests
	$(BUILD)/unit-tests

test: all $(BUILD)/unit-tests
	$(BUILD)/unit-tests
	SMRITI_BUILD=$(BUILD) node --test --test-concurrency=2 tests/js/*.test.mjs tests/fake-provider/*.test.mjs

clean:
	rm -rf build build-asan build-fuzz

bench: all $(BUILD)/bench-commit
	bench/cli.sh

.PHONY: all man install uninstall unit test bench clean fuzz
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
