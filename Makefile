# SPDX-License-Identifier: ISC
# retry: make builds ./retry, make test runs the bats suite, make install
# and make uninstall (PREFIX, DESTDIR, the directories below) copy and
# remove what a package holds; make clean.  The rest are one line each,
# calling a script of tests/check/ whose header says what it checks: check
# (CI: every check-* but -load, -musl, -release; then fuzz), check-load
# (ROUNDS=5), fuzz (FUZZTIME=60), deps (as root), dist, distcheck, release
# (SIGN=minisign MINISIGN_KEY=FILE), check-release; bench (QUICK=1).
VERSION = 0.4.0

# CC, CFLAGS, CPPFLAGS and LDFLAGS are the user's, from the environment or
# the command line.  bmake's sys.mk sets CFLAGS, so our -O2 -g is not
# "CFLAGS ?=" but comes first (an -O or -g0 in CFLAGS wins); and it empties
# LDFLAGS, so the environment's is taken back (a command-line one wins).
CC ?= cc
DEFAULT_CFLAGS = -O2 -g
LDFLAGS != printf '%s' "$${LDFLAGS-}"
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
# The man pages, by section: the tool, the files it writes, its shared state.
MAN1 = retry.1
MAN5 = retry-formats.5
MAN7 = retry-circuit.7
# Where each shell looks by default; fish's is /etc whatever PREFIX says
# (HACKING.md, Installing and packaging, says why and what packages set).
SYSCONFDIR ?= /etc
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(SYSCONFDIR)/fish/completions

# Ours, kept apart so that a user's CFLAGS cannot drop them.  compat.h,
# included first by every .c file, picks the feature macros per platform.
RETRY_CFLAGS = -std=c99 -Wall -Wextra -Wpedantic
RETRY_CPPFLAGS = -DVERSION=\"$(VERSION)\"

SRCS = retry.c say.c gate.c outcome.c proc.c msg.c clock.c parse.c \
	options.c backoff.c relay.c match.c find.c fd.c report.c circuit.c \
	breaker.c env.c random.c sha256.c url.c redis.c route.c store.c \
	outfile.c path.c metrics.c hooks.c cron.c spool.c ci.c names.c \
	envfile.c job.c notify.c trace.c
HDRS = compat.h common.h shared.h gate.h relay.h match.h find.h circuit.h redis.h route.h store.h

# How every program here is compiled: ours, then the user's flags.
COMPILE = $(CC) $(RETRY_CFLAGS) $(RETRY_CPPFLAGS) $(CPPFLAGS) \
	$(DEFAULT_CFLAGS) $(CFLAGS)

.PHONY: all test install uninstall clean check check-build check-static \
	check-valgrind check-sanitize check-musl check-busybox check-portable \
	check-load fuzz deps dist distcheck release check-release bench \
	bench-helpers bench-store bench-rules static

all: retry
retry: $(SRCS) $(HDRS) Makefile
	$(COMPILE) -o $@ $(SRCS) $(LDFLAGS)

# BATS=/path/to/bats: that bats; RETRY_NO_FETCH=1: never fetch one.
RUNBATS = env BATS='$(BATS)' sh tests/run-bats

# The tests' own small programs: a pseudo-terminal driver for the
# job-control tests, and in place of GNU date, env and procps ps, perl and
# python: a clock, a signal-state launcher, a process-state probe, ...
TESTPROGS = tests/helpers/ptyrun tests/helpers/clock-now \
	tests/helpers/with-signals tests/helpers/proc-state \
	tests/helpers/how-ended tests/helpers/socket-stdin \
	tests/helpers/hold-lock tests/helpers/rename-race \
	tests/helpers/slow-proxy tests/helpers/breaker-test \
	tests/helpers/http-answer tests/helpers/hint-parse \
	tests/helpers/ping-server tests/helpers/notify-listen \
	tests/helpers/attempt-probe

# One rule for them all (bmake has no pattern rules of this kind): each
# is its one source file.
$(TESTPROGS): $(TESTPROGS:=.c) tests/helpers/signal-names.h \
	tests/helpers/serve.h compat.h \
	breaker.c shared.h parse.c common.h
	$(COMPILE) -o $@ $@.c $(LDFLAGS)

test: retry $(TESTPROGS)
	@$(RUNBATS) tests

# The longer checks: each a script of tests/check/, told here what it may
# need under names outside retry's RETRY_*, which the suite counts in a
# command's environment.  OUR_CPPFLAGS has quotes in it, for the shell.
SCRIPTS = .ci/run tests/run-bats tests/check/* bench/run.sh \
	tests/helpers/flaky tests/helpers/catch-signal \
	tests/helpers/count-runs bench/store.sh bench/herd-rules.sh \
	bench/downstream.sh bench/lib.sh
FUZZERS = tests/fuzz/duration tests/fuzz/codes tests/fuzz/options \
	tests/fuzz/pattern tests/fuzz/hint tests/fuzz/envfile tests/fuzz/find
CHECKENV = CC='$(CC)' BATS='$(BATS)' SRCS='$(SRCS)' HDRS='$(HDRS)' \
	TESTPROGS='$(TESTPROGS)' FUZZERS='$(FUZZERS)' SCRIPTS='$(SCRIPTS)' \
	OUR_CFLAGS='$(RETRY_CFLAGS)' OUR_CPPFLAGS="$(RETRY_CPPFLAGS)" \
	DEFAULT_CFLAGS='$(DEFAULT_CFLAGS)' MUSLCC='$(MUSLCC)' \
	FUZZCC='$(FUZZCC)' FUZZTIME='$(FUZZTIME)'
# $(MAKE) itself in a line would make GNU make run it even under make -n.
THISMAKE = $(MAKE)
check: check-build check-static check-valgrind check-sanitize \
	check-busybox check-portable
	TEST_LONG_RUN=10000 $(RUNBATS) -f 'thousands of attempts' \
		tests/hostile.bats
	$(MAKE) fuzz FUZZTIME=30
check-build: ; @$(CHECKENV) sh tests/check/build.sh
check-static: ; @$(CHECKENV) sh tests/check/static.sh
check-valgrind: retry ; sh tests/check/valgrind.sh
check-sanitize: $(TESTPROGS) ; @$(CHECKENV) sh tests/check/sanitize.sh
check-musl: $(TESTPROGS) ; @$(CHECKENV) sh tests/check/musl.sh
check-busybox: retry $(TESTPROGS) ; sh tests/check/busybox-run $(RUNBATS) tests
check-portable: ; @$(CHECKENV) sh tests/check/portable.sh
check-load: retry $(TESTPROGS) ; @BATS='$(BATS)' ROUNDS='$(ROUNDS)' sh tests/check/load.sh
fuzz: ; @$(CHECKENV) sh tests/check/fuzz.sh
deps: ; @$(CHECKENV) sh tests/check/deps.sh
dist: ; @VERSION='$(VERSION)' sh tests/check/dist.sh
distcheck: dist ; @VERSION='$(VERSION)' MAKE='$(THISMAKE)' BATS='$(BATS)' \
	sh tests/check/distcheck.sh
release: ; @$(CHECKENV) VERSION='$(VERSION)' MAKE='$(THISMAKE)' \
	sh tests/check/release.sh
check-release: $(TESTPROGS) ; @$(CHECKENV) VERSION='$(VERSION)' \
	sh tests/check/release-check.sh

# bench/ (bench/RESULTS.md); QUICK=1, a short run whose results go to
# $$TMPDIR.  Its helpers are compiled as retry is.
BENCH_ONE = bench/stamp bench/floor bench/linematch
BENCH_TWO = bench/spawn bench/latency bench/herd bench/crowd bench/oversleep \
	bench/grow
BENCH_HELPERS = $(BENCH_ONE) $(BENCH_TWO)
# make static: ./retry-static, musl's or glibc's (see its script).
static: ; @$(CHECKENV) sh tests/check/build-static.sh
bench: retry static tests/helpers/ptyrun tests/helpers/attempt-probe \
	$(BENCH_HELPERS)
	QUICK=$(QUICK) sh bench/run.sh
bench-helpers: $(BENCH_HELPERS)
$(BENCH_ONE): $(BENCH_ONE:=.c) compat.h
	$(COMPILE) -o $@ $@.c $(LDFLAGS)
$(BENCH_TWO): $(BENCH_TWO:=.c) bench/common.c bench/bench.h compat.h
	$(COMPILE) -o $@ $@.c bench/common.c $(LDFLAGS)
# What --store costs (bench/store.sh, which bench/run.sh runs too).
bench-store: retry tests/helpers/slow-proxy
	QUICK=$(QUICK) sh bench/store.sh \
		$$([ "$(QUICK)" = 1 ] || echo bench/RESULTS.md)
# The calls a downstream sees under --trip's and --budget's rules
# (bench/herd-rules.sh, which bench/run.sh runs too).
bench-rules: retry
	QUICK=$(QUICK) sh bench/herd-rules.sh \
		$$([ "$(QUICK)" = 1 ] || echo bench/RESULTS.md)

# umask 022: install -d makes the directories on the way with the umask.
# uninstall leaves the directories, which others may share.
install: retry
	umask 022 && install -d -m 755 $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 755 retry $(DESTDIR)$(BINDIR)/retry
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/$(MAN1)
	install -m 644 $(MAN5) $(DESTDIR)$(MANDIR)/man5/$(MAN5)
	install -m 644 $(MAN7) $(DESTDIR)$(MANDIR)/man7/$(MAN7)
	install -m 644 completions/retry.bash $(DESTDIR)$(BASHCOMPDIR)/retry
	install -m 644 completions/_retry $(DESTDIR)$(ZSHCOMPDIR)/_retry
	install -m 644 completions/retry.fish \
		$(DESTDIR)$(FISHCOMPDIR)/retry.fish

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/retry $(DESTDIR)$(MANDIR)/man1/$(MAN1) \
		$(DESTDIR)$(MANDIR)/man5/$(MAN5) $(DESTDIR)$(MANDIR)/man7/$(MAN7) \
		$(DESTDIR)$(BASHCOMPDIR)/retry $(DESTDIR)$(ZSHCOMPDIR)/_retry \
		$(DESTDIR)$(FISHCOMPDIR)/retry.fish

DIST = retry-$(VERSION)
clean:
	rm -f retry retry-sanitize retry-musl retry-static $(TESTPROGS) $(FUZZERS) $(BENCH_HELPERS)
	rm -rf tests/fuzz/work $(DIST) $(DIST).tar.gz release
