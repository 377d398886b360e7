# bedtop - reservation-aware headroom for AWS Bedrock routes.
# Sources are picked up by wildcard: adding a module is adding a file.

PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR   = $(PREFIX)/bin
MANDIR   = $(PREFIX)/share/man
DATADIR  = $(PREFIX)/share/bedtop

CC      ?= cc
PKGS     = ncursesw libcurl openssl libcjson expat zlib cairo fontconfig
INIH_CFLAGS := $(shell pkg-config --cflags inih 2>/dev/null)
INIH_LIBS   := $(shell pkg-config --libs inih 2>/dev/null || echo -linih)
PKG_CFLAGS  := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS    := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lncursesw -ltinfo -lcurl -lssl -lcrypto -lcjson -lexpat -lz -lcairo -lfontconfig)

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.1.0)
WARN     = -Wall -Wextra -Wpedantic -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# A truncated snprintf is a bug (a message cut mid-word): everything is built with
# -Wformat-truncation. Size the buffer for the longest text, build the message in a
# bt_buf, or cut it visibly (bt_strlcpy_cut, bt_fmt_cut: "..."), never silence it.
CFLAGS  ?= -O2 -g
# Hardening as Debian's hardening=+all builds: fortified libc calls, stack protector,
# position-independent executable, full RELRO. _FORTIFY_SOURCE needs optimisation, so
# an -O0 build (CFLAGS=-O0) leaves it out rather than warn.
HARDEN_CFLAGS  = $(if $(filter -O0,$(CFLAGS)),,-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2) \
                 -fstack-protector-strong -fPIE
HARDEN_LDFLAGS = -pie -Wl,-z,relro,-z,now
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) $(HARDEN_CFLAGS) $(CFLAGS) \
             -I. $(PKG_CFLAGS) $(INIH_CFLAGS) -DBEDTOP_VERSION='"$(VERSION)"' \
             -DBEDTOP_DATADIR='"$(DATADIR)"' -MMD -MP
LDLIBS   = $(PKG_LIBS) $(INIH_LIBS) -lm

B       ?= build
LIB_SRC  = $(sort $(wildcard core/*.c io/*.c render/*.c collectors/*.c aws/*.c net/*.c tui/*.c app/*.c))
LIB_OBJ  = $(LIB_SRC:%.c=$(B)/%.o)
TEST_SRC = $(sort $(wildcard tests/unit/test_*.c))
TEST_BIN = $(TEST_SRC:tests/unit/%.c=$(B)/tests/%)
BENCH_BIN = $(B)/bench/bench_drv # t_bench_smoke runs it (TESTBIN/../bench)
TEST_OBJ = $(B)/tests/tap.o

.PHONY: all check check-run test-deps build-deps test asan valgrind valgrind-run help fuzz fuzz-smoke fuzz-long fuzz-targets bench demo install uninstall clean deps lint manlint
all: bedtop

# One line per target a person types; `make help` prints them.
help:
	@echo 'bedtop $(VERSION): make TARGET'
	@echo '  all (default)  build ./bedtop'
	@echo '  demo           install what is missing, build, run the simulated dashboard (DEMO_ARGS)'
	@echo '  check          install what the tests need, build, run every suite and the lint'
	@echo '                 (TEST_JOBS=N in parallel, TEST_TIMEOUT=S per suite)'
	@echo '  tests          build the unit test binaries; tests/run NAME runs the suites matching NAME'
	@echo '  asan           the suites under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)'
	@echo '  valgrind       the unit tests under valgrind'
	@echo '  fuzz           build the libFuzzer targets with clang (build-fuzz/)'
	@echo '  fuzz-smoke     every fuzz target for a fixed number of runs (part of check)'
	@echo '  fuzz-long      every fuzz target for FUZZ_TIME seconds (FUZZ_ONLY="a b" to pick)'
	@echo '  bench          timings against the references in BENCHMARKS.md (BENCH_ARGS=--quick)'
	@echo '  lint           banned functions, the arrows between source folders, no circle inside one'
	@echo '  manlint        mandoc -Tlint on the manual pages'
	@echo '  deps           install the Debian build packages (BEDTOP_TEST_DEPS=1: and the test ones)'
	@echo '  install        install binary, man pages, data and themes (PREFIX=$(PREFIX), DESTDIR)'
	@echo '  uninstall      remove what install put there'
	@echo '  clean          remove build outputs'

bedtop: $(B)/bedtop
	cp $< $@.tmp && mv -f $@.tmp $@

$(B)/bedtop: $(B)/main.o $(B)/libbedtop.a
	$(CC) $(ALL_CFLAGS) $(HARDEN_LDFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/libbedtop.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/tests/%: tests/unit/%.c $(TEST_OBJ) $(B)/libbedtop.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(HARDEN_LDFLAGS) $(LDFLAGS) -o $@ $< $(TEST_OBJ) $(B)/libbedtop.a $(LDLIBS)

$(B)/tests/tap.o: tests/tap.c tests/tap.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

tests: $(TEST_BIN)

# Everything that tests behaviour; tests/run prints the final "N passed, N failed,
# N skipped" line. What the suites need is installed first (scripts/deps, as root or
# with sudo; otherwise it names the missing packages and stops), then make runs again
# so the pkg-config flags are read after the install: on a fresh machine `make check`
# alone works. A check that cannot run is a skip, and CI=true fails it.
check: test-deps
	@$(MAKE) --no-print-directory check-run

check-run: bedtop $(TEST_BIN) $(BENCH_BIN) lint
	BEDTOP=$(CURDIR)/$(B)/bedtop TESTBIN=$(CURDIR)/$(B)/tests tests/run

test-deps:
	@BEDTOP_TEST_DEPS=1 scripts/deps --quiet || { echo "check: test dependencies missing (see above; BEDTOP_TEST_DEPS=1 scripts/deps as root installs them)" >&2; exit 1; }

build-deps:
	@scripts/deps --quiet

# Same tests under AddressSanitizer + UndefinedBehaviorSanitizer, in a separate build dir.
# -fsanitize=undefined leaves out float-cast-overflow (a double beyond the integer's range
# converted: issue 37's "cloudwatch_lag": 1e300); gcc and clang both take it by name.
ASAN_SAN = -fsanitize=address,undefined,float-cast-overflow
asan: test-deps
	$(MAKE) B=build-asan CFLAGS="-O1 -g $(ASAN_SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    LDFLAGS="$(ASAN_SAN)" build-asan/bedtop $(patsubst $(B)/%,build-asan/%,$(TEST_BIN) $(BENCH_BIN))
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	    BEDTOP=$(CURDIR)/build-asan/bedtop TESTBIN=$(CURDIR)/build-asan/tests tests/run

valgrind: test-deps
	@$(MAKE) --no-print-directory valgrind-run

valgrind-run: bedtop $(TEST_BIN) $(BENCH_BIN)
	VALGRIND=1 BEDTOP=$(CURDIR)/$(B)/bedtop TESTBIN=$(CURDIR)/$(B)/tests tests/run

# libFuzzer targets (tests/fuzz/fuzz_*.c), one per parser of outside input, under
# ASan+UBSan. The library is rebuilt with clang into build-fuzz/ with
# -fsanitize=fuzzer-no-link so its code is instrumented for coverage (no tui/: no parser there).
FUZZ_CC   ?= clang
FUZZ_SAN   = -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_SRC   = $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN   = $(FUZZ_SRC:tests/fuzz/%.c=$(B)/%)
FUZZ_TIME ?= 600

fuzz:
	@command -v $(FUZZ_CC) >/dev/null || { echo "fuzz: $(FUZZ_CC) not found (scripts/deps installs clang)" >&2; exit 1; }
	$(MAKE) --no-print-directory B=build-fuzz CC=$(FUZZ_CC) WARN="$(WARN) -Wno-unknown-warning-option" \
	    LIB_SRC="$(sort $(wildcard core/*.c io/*.c render/*.c collectors/*.c aws/*.c net/*.c))" \
	    CFLAGS="-O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN)" fuzz-targets

fuzz-targets: $(FUZZ_BIN)

$(B)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(B)/libbedtop.a
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< $(B)/libbedtop.a $(LDLIBS)

# Each target a fixed number of runs from a fixed seed over its corpus (part of check).
fuzz-smoke:
	BEDTOP_SRCDIR=$(CURDIR) bash tests/suites/t_fuzz_smoke.sh

# On demand: each target for FUZZ_TIME seconds; new inputs go to build-fuzz/corpus/.
# FUZZ_ONLY="config time" limits it to those targets.
fuzz-long: fuzz
	BEDTOP_SRCDIR=$(CURDIR) FUZZ_TIME=$(FUZZ_TIME) bash tests/fuzz/long.sh

# Benchmarks: timings, so never part of check. tests/bench/bench.py prints one line per
# figure with its reference and ratio and rewrites BENCHMARKS.md's table; BENCH_ARGS=--quick
# for a shorter run.
BENCH_ARGS ?=
bench: $(B)/bedtop $(B)/bench/bench_drv
	python3 tests/bench/bench.py --bedtop $(CURDIR)/$(B)/bedtop --drv $(CURDIR)/$(B)/bench/bench_drv $(BENCH_ARGS)

$(B)/bench/%: tests/bench/%.c $(B)/libbedtop.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(HARDEN_LDFLAGS) $(LDFLAGS) -o $@ $< $(B)/libbedtop.a $(LDLIBS)

# The banned-function list (curl's habit) and the one-way dependency rule of DESIGN.md.
# the circle check reads the objects (nm): build them first
lint: $(LIB_OBJ)
	@BEDTOP_OBJ=$(CURDIR)/$(B) scripts/lint

manlint:
	@for m in man/*.[0-9]; do mandoc -Tlint -W warning $$m || exit 1; done

# The demo's 30-minute story at 10x: every warning within three minutes.
DEMO_ARGS ?= --demo-speed 10
demo: build-deps
	@$(MAKE) --no-print-directory bedtop
	./bedtop --demo $(DEMO_ARGS)

deps:
	scripts/deps

# PREFIX is compiled in (BEDTOP_DATADIR, where the data files are found): objects are
# rebuilt when it or VERSION changes, so `make install PREFIX=/usr` after a plain `make`
# installs a binary that finds /usr/share/bedtop.
$(B)/build-vars: FORCE
	@mkdir -p $(B)
	@echo '$(DATADIR) $(VERSION)' | cmp -s - $@ || echo '$(DATADIR) $(VERSION)' > $@
$(LIB_OBJ) $(B)/main.o: $(B)/build-vars
FORCE:

install: bedtop
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(DATADIR)/themes $(DESTDIR)$(DATADIR)
	install -m 755 bedtop $(DESTDIR)$(BINDIR)/bedtop
	install -m 644 man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 man/*.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 themes/*.theme $(DESTDIR)$(DATADIR)/themes/ 2>/dev/null || true
	install -m 644 data/* $(DESTDIR)$(DATADIR)/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/bedtop $(DESTDIR)$(MANDIR)/man1/bedtop.1 \
	    $(DESTDIR)$(MANDIR)/man5/bedtop.conf.5 $(DESTDIR)$(MANDIR)/man5/bedtop-recording.5
	rm -rf $(DESTDIR)$(DATADIR)

clean:
	rm -rf build build-asan build-fuzz bedtop

-include $(LIB_OBJ:.o=.d) $(B)/main.d
