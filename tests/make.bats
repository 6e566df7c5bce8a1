#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The Makefile under GNU make and bmake: the user's flags win, install
# gives the same modes under any umask and puts each file where its tool
# looks, uninstall removes what install copied.
load helpers/common

TOP=$BATS_TEST_DIRNAME/..
# Run by make (make test, make distcheck), the tests would pass on its
# flags to the makes they run, in GNU make's form, which bmake misreads;
# and the BATS of make test BATS=... (as distcheck runs it) to run-bats.
unset MAKEFLAGS MFLAGS MAKELEVEL BATS

# The make programs here: GNU make (or whatever "make" is), and bmake.
makes() {
	command -v make >/dev/null && echo make
	command -v bmake >/dev/null && echo bmake
	return 0
}

# compile_line MAKE [VAR=VALUE...]: the command that MAKE would run to
# build retry from a copy of the sources, where nothing is built yet.
compile_line() {
	local make=$1 dir=$BATS_TEST_TMPDIR/src
	shift
	rm -rf "$dir"
	mkdir "$dir"
	cp "$TOP"/*.c "$TOP"/*.h "$TOP"/Makefile "$dir"/
	(cd "$dir" && "$make" -n retry "$@") | grep -- ' -o retry '
}

@test "make and bmake build with -O2 -g and our warnings by default" {
	local m line
	for m in $(makes); do
		line=$(unset CC CFLAGS CPPFLAGS LDFLAGS; compile_line "$m")
		matches "$line" ' -Wall -Wextra -Wpedantic .* -O2 -g'
	done
}

@test "make and bmake honour CC, CFLAGS, CPPFLAGS and LDFLAGS from the environment and the command line" {
	local m line
	for m in $(makes); do
		line=$(CC=mycc CFLAGS=-O0 CPPFLAGS=-DENV_CPP LDFLAGS=-static \
		    compile_line "$m")
		# Ours first, the user's after, so that the user's -O wins.
		matches "$line" '^mycc .*-Wall .*-DENV_CPP .*-O2 -g.* -O0 .* -static$'
		line=$(compile_line "$m" CC=othercc CFLAGS=-Os \
		    CPPFLAGS=-DCMD_CPP LDFLAGS=-s)
		matches "$line" '^othercc .*-Wall .*-DCMD_CPP .*-O2 -g.* -Os .* -s$'
	done
}

@test "make -n and bmake -n of the checks, fuzz, deps, dist, distcheck, release and check-release print each one's script of tests/check/ and run nothing" {
	local m dir=$BATS_TEST_TMPDIR/src s
	mkdir "$dir"
	cp -R "$TOP"/*.c "$TOP"/*.h "$TOP"/Makefile "$TOP"/tests "$dir"/
	touch "$BATS_TEST_TMPDIR/copied"
	for m in $(makes); do
		# GNU make runs a line with $(MAKE) in it even under -n.
		run -0 "$m" -n -C "$dir" check-build check-static check-valgrind \
		    check-sanitize check-musl check-busybox check-portable \
		    check-load fuzz deps dist distcheck release check-release
		for s in build static valgrind sanitize musl portable load fuzz \
		    deps dist distcheck release release-check; do
			[[ $output == *"sh tests/check/$s.sh"* ]] ||
		    { echo "$m -n: no tests/check/$s.sh"; false; }
		done
		[[ $output == *"sh tests/check/busybox-run "* ]]
		[ -z "$(find "$dir" -newer "$BATS_TEST_TMPDIR/copied")" ]
	done
}

# outside_bats COMMAND ...: COMMAND in the environment of a shell outside
# bats (none of the BATS_ variables and functions that this bats exports,
# its libexec off PATH), so that it can run a bats of its own.
outside_bats() {
	local d dirs path=
	IFS=: read -ra dirs <<<"$PATH"
	for d in "${dirs[@]}"; do
		[ "$d" = "${BATS_LIBEXEC:-}" ] || path=${path:+$path:}$d
	done
	env -i HOME="$HOME" PATH="$path" TMPDIR="${TMPDIR:-/tmp}" "$@"
}

@test "check-load: a CPU hog on each core, ROUNDS rounds, each said; fails if one does, and stops the hogs by their pids" {
	local t=$BATS_TEST_TMPDIR pids p
	# A test that fails in round 2 only, as a flaky one would.
	printf '@test "flaky" {\n\techo x >>"%s"\n\t[ "$(wc -l <"%s")" -ne 2 ]\n}\n' \
	    "$t/runs" "$t/runs" >"$t/flaky.bats"
	run -1 outside_bats ROUNDS=3 sh "$TOP/tests/check/load.sh" \
	    "$t/flaky.bats" 3>&-
	echo "$output"
	matches "${lines[0]}" '^check-load: [0-9]+ CPU hogs \(yes >/dev/null, pids( [0-9]+)+; pinned to cores:(( [0-9]+)+| none)\); 3 rounds of: run-bats .*/flaky\.bats$'
	matches "${lines[1]}" '^check-load: round 1/3: passed in [0-9]+s, load average [0-9.]+$'
	matches "${lines[2]}" '^check-load: round 2/3: FAILED \(status 1\) in [0-9]+s, load average [0-9.]+; its failures:$'
	[ "${lines[3]}" = "not ok 1 flaky" ]
	[ "${lines[-2]:0:29}" = "check-load: round 3/3: passed" ]
	[ "${lines[-1]}" = "check-load: 1 of 3 rounds failed" ]
	[ "$(wc -l <"$t/runs")" -eq 3 ]
	# One hog per core this test may use, and none left running.
	pids=${lines[0]#*pids }
	pids=${pids%%;*}
	[ "$(wc -w <<<"$pids")" -eq "$(getconf _NPROCESSORS_ONLN)" ]
	for p in $pids; do
		gone "$p"
	done
	run -0 outside_bats ROUNDS=1 sh "$TOP/tests/check/load.sh" \
	    "$t/flaky.bats" 3>&-
	[ "${lines[-1]}" = "check-load: every round passed (ROUNDS=1)" ]
	for r in x 0 -1 07; do
		run -2 env ROUNDS="$r" sh "$TOP/tests/check/load.sh" "$t/flaky.bats"
		[ "$output" = "check-load: ROUNDS=$r: give the number of rounds, 1 or more" ]
	done
}

# check_modes DIR: under DIR, directories and retry are 0755, the rest
# 0644 (find -perm without "-" is an exact match).
check_modes() {
	local bad
	bad=$(find "$1" \( -type d ! -perm 755 \) -o \
	    \( -type f -name retry -path '*/bin/*' ! -perm 755 \) -o \
	    \( -type f ! -path '*/bin/*' ! -perm 644 \))
	[ -z "$bad" ] && return
	echo "wrong modes:"
	ls -ld $bad
	return 1
}

@test "make install under umask 077: the files where each tool looks, 0755 and 0644; make uninstall removes them" {
	local m dest tree=$BATS_TEST_TMPDIR/tree
	# A copy: a build under umask 077 in the tree would leave a retry
	# that the tests run as nobody cannot execute.
	mkdir "$tree"
	cp -R "$TOP"/*.c "$TOP"/*.h "$TOP"/Makefile "$TOP"/retry.1 \
	    "$TOP"/retry-formats.5 "$TOP"/retry-circuit.7 "$TOP"/completions \
	    "$tree"/
	for m in $(makes); do
		dest=$BATS_TEST_TMPDIR/$m
		run -0 sh -c 'umask 077 && "$@"' sh "$m" -s -C "$tree" \
		    install DESTDIR="$dest"
		[ "$(cd "$dest" && find . -type f | sort)" = "$(printf '%s\n' \
		    ./etc/fish/completions/retry.fish \
		    ./usr/local/bin/retry \
		    ./usr/local/share/bash-completion/completions/retry \
		    ./usr/local/share/man/man1/retry.1 \
		    ./usr/local/share/man/man5/retry-formats.5 \
		    ./usr/local/share/man/man7/retry-circuit.7 \
		    ./usr/local/share/zsh/site-functions/_retry)" ]
		check_modes "$dest"
		cmp "$TOP/retry.1" "$dest/usr/local/share/man/man1/retry.1"
		cmp "$TOP/retry-formats.5" \
		    "$dest/usr/local/share/man/man5/retry-formats.5"
		cmp "$TOP/retry-circuit.7" \
		    "$dest/usr/local/share/man/man7/retry-circuit.7"
		cmp "$TOP/completions/_retry" \
		    "$dest/usr/local/share/zsh/site-functions/_retry"
		"$dest/usr/local/bin/retry" --version
		run -0 "$m" -s -C "$tree" uninstall DESTDIR="$dest"
		[ -z "$(find "$dest" ! -type d)" ]
	done
}

@test "make install for a package: PREFIX, and each directory variable moves its file alone" {
	local dest=$BATS_TEST_TMPDIR/pkg
	run -0 make -s -C "$TOP" install DESTDIR="$dest" PREFIX=/usr \
	    ZSHCOMPDIR=/usr/share/zsh/vendor-completions \
	    FISHCOMPDIR=/usr/share/fish/vendor_completions.d
	[ "$(cd "$dest" && find . -type f | sort)" = "$(printf '%s\n' \
	    ./usr/bin/retry \
	    ./usr/share/bash-completion/completions/retry \
	    ./usr/share/fish/vendor_completions.d/retry.fish \
	    ./usr/share/man/man1/retry.1 \
	    ./usr/share/man/man5/retry-formats.5 \
	    ./usr/share/man/man7/retry-circuit.7 \
	    ./usr/share/zsh/vendor-completions/_retry)" ]
	run -0 make -s -C "$TOP" uninstall DESTDIR="$dest" PREFIX=/usr \
	    ZSHCOMPDIR=/usr/share/zsh/vendor-completions \
	    FISHCOMPDIR=/usr/share/fish/vendor_completions.d
	[ -z "$(find "$dest" -type f)" ]

	dest=$BATS_TEST_TMPDIR/opt
	run -0 make -s -C "$TOP" install DESTDIR="$dest" BINDIR=/opt/bin \
	    MANDIR=/opt/man BASHCOMPDIR=/opt/bash SYSCONFDIR=/opt/etc
	[ "$(cd "$dest" && find . -type f | sort)" = "$(printf '%s\n' \
	    ./opt/bash/retry \
	    ./opt/bin/retry \
	    ./opt/etc/fish/completions/retry.fish \
	    ./opt/man/man1/retry.1 \
	    ./opt/man/man5/retry-formats.5 \
	    ./opt/man/man7/retry-circuit.7 \
	    ./usr/local/share/zsh/site-functions/_retry)" ]
}

# shell_dirs SHELL: the directories a new interactive zsh ($fpath) or fish
# ($fish_complete_path) searches for completions, one a line, with a clean
# HOME and no XDG variables, as at a console or over ssh.
shell_dirs() {
	local home=$BATS_TEST_TMPDIR/home-$1
	mkdir -p "$home"
	: >"$home/.zshrc"	# no zsh-newuser-install
	case $1 in
	zsh)
		env -i HOME="$home" PATH="$PATH" TERM=dumb \
		    zsh -i -c 'print -rl -- $fpath' </dev/null 2>/dev/null ;;
	fish)
		env -i HOME="$home" PATH="$PATH" TERM=dumb \
		    fish -c 'printf "%s\n" $fish_complete_path' </dev/null ;;
	esac
}

@test "a default make install puts the zsh and fish completions in a directory that zsh and fish search" {
	local dest=$BATS_TEST_TMPDIR/root sh file found
	run -0 make -s -C "$TOP" install DESTDIR="$dest"
	for sh in zsh fish; do
		command -v "$sh" >/dev/null || continue
		file=_retry
		[ "$sh" = zsh ] || file=retry.fish
		found=
		while IFS= read -r dir; do
			[ -f "$dest$dir/$file" ] && found=$dir
		done < <(shell_dirs "$sh")
		[ -n "$found" ] || { echo "$sh: $file is in no directory it searches"; false; }
	done
}

# complete_in SHELL...: at a pseudo-terminal, a new interactive SHELL with
# an empty HOME types "retry --ji", Tab and Return: the completion must
# have made it "retry --jitter", which retry answers with its message for
# a missing value.  The prompt of root ends in "# ".  zsh completes only
# after compinit, which Debian's zshrc leaves to the user's (its
# newuser.zshrc.recommended has it).
complete_in() {
	local home=$TEST_TMP/home.$1
	mkdir "$home"
	echo 'autoload -Uz compinit && compinit' >"$home/.zshrc"
	env -i HOME="$home" TERM=xterm PATH=/usr/local/bin:/usr/bin:/bin \
	    "$TEST_DIR/helpers/ptyrun" -t 20000 -o '# ' -i 'retry --ji\011' \
	    -i '\n' -o "option '--jitter' needs a value" -i 'exit 0\n' -- "$@"
}

@test "after a default make install as root, a new bash, zsh and fish complete 'retry --ji' to --jitter" {
	[ "$(id -u)" -eq 0 ] || skip "needs root, for a mount namespace"
	command -v unshare >/dev/null || skip "unshare is not installed"
	for d in /usr/local/bin /usr/local/share /etc/fish/completions; do
		[ -d "$d" ] || skip "$d is missing"
	done
	unshare --mount true 2>/dev/null || skip "no mount namespace here"
	export -f complete_in
	export TEST_TMP=$BATS_TEST_TMPDIR TEST_DIR=$BATS_TEST_DIRNAME
	# In a mount namespace of its own, an empty /usr/local/bin,
	# /usr/local/share and /etc/fish/completions: the real ones are left
	# alone.
	run unshare --mount bash -c '
		set -e
		for d in /usr/local/bin /usr/local/share /etc/fish/completions; do
			mount -t tmpfs -o mode=755 tmpfs "$d"
		done
		make -s -C "$1" install >/dev/null
		for sh in "bash --login -i" "zsh -i" "fish -i"; do
			command -v "${sh%% *}" >/dev/null || continue
			echo "== $sh"
			complete_in $sh >/dev/null 2>"$TEST_TMP/err" || {
				cat "$TEST_TMP/err"; exit 1; }
		done' bash "$TOP"
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "make test BATS=/path/to/bats runs that bats on tests/" {
	local fake=$BATS_TEST_TMPDIR/fake-bats
	printf '#!/bin/sh\necho "$@" >"%s"\n' "$BATS_TEST_TMPDIR/ran" >"$fake"
	chmod +x "$fake"
	run -0 make -s -C "$TOP" test BATS="$fake"
	[ "$(cat "$BATS_TEST_TMPDIR/ran")" = tests ]
}

# dispositions_bats: a fake bats ($fake) that writes the SIGINT and SIGQUIT
# dispositions its children get to "dispositions", as bash's trap -p
# shows them (empty: both at their defaults).
dispositions_bats() {
	fake=$BATS_TEST_TMPDIR/fake-bats
	printf '#!/bin/sh\nbash -c "trap -p INT QUIT" >"%s"\n' \
	    "$BATS_TEST_TMPDIR/dispositions" >"$fake"
	chmod +x "$fake"
}

@test "run-bats started with SIGINT and SIGQUIT ignored (nohup, a background job) runs bats with their default actions, and says so" {
	local fake said="ignored from the start (nohup, a background job): the suite runs with the default actions restored"
	dispositions_bats
	run -0 with-signals -i INT -i QUIT env BATS="$fake" \
	    sh "$TOP/tests/run-bats" tests/terminal.bats
	[ "$output" = "run-bats: SIGINT and SIGQUIT $said" ]
	[ ! -s "$BATS_TEST_TMPDIR/dispositions" ]
	run -0 with-signals -d INT -i QUIT env BATS="$fake" \
	    sh "$TOP/tests/run-bats" tests/terminal.bats
	[ "$output" = "run-bats: SIGQUIT $said" ]
	[ ! -s "$BATS_TEST_TMPDIR/dispositions" ]
	# Neither ignored: not a word.
	run -0 with-signals -d INT -d QUIT env BATS="$fake" \
	    sh "$TOP/tests/run-bats" tests/terminal.bats
	[ "$output" = "" ]
	[ ! -s "$BATS_TEST_TMPDIR/dispositions" ]
}

@test "with SIGINT ignored and no with-signals to restore it, run-bats says so and need_keyboard_signals skips, saying why" {
	local fake t=$BATS_TEST_TMPDIR
	dispositions_bats
	mkdir -p "$t/tree/tests"
	cp "$TOP/tests/run-bats" "$t/tree/tests/"
	run -0 with-signals -i INT env BATS="$fake" \
	    sh "$t/tree/tests/run-bats" tests/terminal.bats
	[ "$output" = "run-bats: SIGINT ignored from the start (nohup, a background job), and tests/helpers/with-signals (built by make test) is not there to restore them: the tests that need them skip" ]
	[ "$(cat "$t/dispositions")" = "trap -- '' SIGINT" ]
	# What such a test says, from common.bash with bats' skip stood in.
	run -0 with-signals -i INT bash -c '
		bats_require_minimum_version() { :; }
		skip() { echo "skip: $1"; exit 0; }
		. "$0"
		need_keyboard_signals
		echo not skipped' "$TOP/tests/helpers/common.bash"
	[ "$output" = "skip: SIGINT ignored from the start (nohup, a background job), and retry keeps an ignored signal ignored: run the suite through tests/run-bats, which restores the default actions" ]
	run -0 with-signals -d INT -d QUIT bash -c '
		bats_require_minimum_version() { :; }
		skip() { echo "skip: $1"; exit 0; }
		. "$0"
		need_keyboard_signals
		echo not skipped' "$TOP/tests/helpers/common.bash"
	[ "$output" = "not skipped" ]
}

# no_bats_tree: a copy of run-bats where no bats is installed or fetched
# yet, and a PATH of sh, dirname and an npm and apt-get that only leave a
# mark in $BATS_TEST_TMPDIR/fetched.
no_bats_tree() {
	local t=$BATS_TEST_TMPDIR tool
	mkdir -p "$t/tree/tests" "$t/bin"
	cp "$TOP/tests/run-bats" "$t/tree/tests/"
	for tool in sh dirname; do
		ln -s "$(command -v "$tool")" "$t/bin/$tool"
	done
	for tool in npm apt-get; do
		printf '#!/bin/sh\necho %s >>"%s"\n' "$tool" "$t/fetched" \
		    >"$t/bin/$tool"
		chmod +x "$t/bin/$tool"
	done
}

@test "RETRY_NO_FETCH=1: run-bats installs nothing and says what to do" {
	no_bats_tree
	run -1 env PATH="$BATS_TEST_TMPDIR/bin" RETRY_NO_FETCH=1 \
	    sh "$BATS_TEST_TMPDIR/tree/tests/run-bats" tests
	[ "$output" = "run-bats: bats is not installed, and RETRY_NO_FETCH is set: install bats-core, or give its path: make test BATS=/path/to/bats" ]
	[ ! -e "$BATS_TEST_TMPDIR/fetched" ]
	# Without it, the same tree fetches (a fake npm: no bats to run), and
	# says in one line that what npm brought does not run.
	run -1 env PATH="$BATS_TEST_TMPDIR/bin" \
	    sh "$BATS_TEST_TMPDIR/tree/tests/run-bats" tests
	[ "$(cat "$BATS_TEST_TMPDIR/fetched")" = npm ]
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} == "run-bats: bats is not installed; getting bats@"* ]]
	matches "${lines[1]}" '^run-bats: npm installed bats@[0-9.]+ into .*/tree/\.deps, but no bats there runs: remove .*/tree/\.deps and try again, or install bats-core \(apt-get install bats\)$'
}

@test "run-bats: an npm that fails to fetch bats gives one line saying what to do, and a failing status" {
	no_bats_tree
	printf '#!/bin/sh\nexit 1\n' >"$BATS_TEST_TMPDIR/bin/npm"
	run -1 env PATH="$BATS_TEST_TMPDIR/bin" \
	    sh "$BATS_TEST_TMPDIR/tree/tests/run-bats" tests
	[ "${#lines[@]}" -eq 2 ]
	matches "${lines[1]}" '^run-bats: npm could not install bats@[0-9.]+ \(see above\): install bats-core \(apt-get install bats\), or give its path: make test BATS=/path/to/bats$'
}

# path_without_bats DIR: fills DIR with links to every program on PATH
# but bats, as on a machine where bats is not installed.
path_without_bats() {
	local d f
	mkdir -p "$1"
	for d in $(echo "$PATH" | tr : ' '); do
		for f in "$d"/*; do
			[ -x "$f" ] && [ ! -d "$f" ] || continue
			[ "${f##*/}" = bats ] && continue
			[ -e "$1/${f##*/}" ] || ln -s "$f" "$1/${f##*/}"
		done
	done
}

@test "run-bats on a machine without bats fetches bats-core from npm and runs a test file with it" {
	command -v npm >/dev/null ||
	    skip "npm is not installed: the fetch path needs it"
	local t=$BATS_TEST_TMPDIR
	mkdir -p "$t/tree/tests"
	cp "$TOP/tests/run-bats" "$t/tree/tests/"
	printf '@test "one" {\n\t[ 1 -eq 1 ]\n}\n' >"$t/tree/tests/one.bats"
	path_without_bats "$t/bin"
	run env PATH="$t/bin" \
	    sh "$t/tree/tests/run-bats" "$t/tree/tests/one.bats"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ ${lines[0]} == "run-bats: bats is not installed; getting bats@"* ]]
	matches "$output" 'ok 1 one'
	# The second run finds what the first fetched and fetches nothing.
	run -0 env PATH="$t/bin" sh "$t/tree/tests/run-bats" --locate
	[[ $output == "$t/tree/.deps/node_modules/"* ]]
}

# srcs: the SRCS of the Makefile, one a line.
srcs() {
	awk '/^SRCS = / { on = 1; sub(/^SRCS = /, "") }
	    on { line = $0; sub(/\\$/, "", line); print line }
	    on && !/\\$/ { exit }' "$TOP/Makefile" | tr -s ' \t' '\n' | grep .
}

@test "a plain run, retry -n2 -- false, executes code in at most 12 .c files: a feature that is off is never called (issue 30)" {
	command -v gcc >/dev/null && command -v gcov >/dev/null ||
	    skip "no gcc and gcov, which measure it"
	local dir=$BATS_TEST_TMPDIR/cov c ran=() n
	mkdir "$dir"
	cp "$TOP"/*.c "$TOP"/*.h "$dir"/
	cd "$dir"
	# fork for vfork: a vfork child's exec writes out the parent's counts,
	# and the parent's own at its exit would then be lost.
	for c in $(srcs); do
		gcc --coverage -O0 -Dvfork=fork -DVERSION='"test"' -c "$c"
	done
	gcc --coverage -o retry ./*.o
	# As at a terminal: no stdio that holds data to replay or count.
	run -1 env -i PATH=/usr/bin:/bin sh -c \
	    './retry -n2 -b 1ms -- false </dev/null >/dev/null 2>&1'
	for c in $(srcs); do
		n=$(gcov -n "$c" 2>/dev/null | awk -F'[:%]' \
		    '/^Lines executed/ { print ($2 > 0); exit }')
		[ "$n" = 1 ] && ran+=("$c")
	done
	echo "${#ran[@]} ran: ${ran[*]}"
	[ "${#ran[@]}" -ge 8 ]	# the count works: these must run
	[ "${#ran[@]}" -le 12 ]
}

@test "make release refuses, in one line and before it writes anything, a version that NEWS has no entry for" {
	local tree=$BATS_TEST_TMPDIR/tree
	mkdir -p "$tree/tests/check"
	cp "$TOP/tests/check/release.sh" "$tree/tests/check/"
	printf '1.0.0 (2026-01-01)\n==================\n\n- first.\n' >"$tree/NEWS"
	VERSION=1.0.1 run -1 --separate-stderr sh "$tree/tests/check/release.sh"
	[ "$stderr" = "make release: NEWS has no entry for 1.0.1: add a heading '1.0.1 (YYYY-MM-DD)' underlined with '='" ]
	[ ! -e "$tree/release" ]
	# The heading's text alone is not an entry: it must be underlined.
	printf '1.0.1 (2026-02-01)\n\n1.0.0 (2026-01-01)\n==================\n' >"$tree/NEWS"
	VERSION=1.0.1 run -1 --separate-stderr sh "$tree/tests/check/release.sh"
	[[ "$stderr" == "make release: NEWS has no entry for 1.0.1:"* ]]
	# "unreleased" will do, but not for a signed release.
	printf '1.0.1 (unreleased)\n==================\n' >"$tree/NEWS"
	SIGN=minisign MINISIGN_KEY=$tree/NEWS ZIG=$tree/tests/check/release.sh \
	    VERSION=1.0.1 run -1 --separate-stderr sh "$tree/tests/check/release.sh"
	[ "$stderr" = "make release: NEWS calls 1.0.1 unreleased: date its heading, '1.0.1 (YYYY-MM-DD)', before a signed release" ]
	[ ! -e "$tree/release" ]
	# With the entry, it goes on to what it needs next.
	printf '1.0.1 (2026-02-01)\n==================\n' >"$tree/NEWS"
	ZIG=$tree/no-zig VERSION=1.0.1 run -1 --separate-stderr sh "$tree/tests/check/release.sh"
	[ "$stderr" = "make release: no zig at $tree/no-zig: make deps (or ZIG=/path/to/zig)" ]
}
