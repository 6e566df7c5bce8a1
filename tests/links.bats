#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Symbolic links on the way to a file retry writes (--report, --metrics,
# the CI files): followed only as the kernel's protected_symlinks would
# allow, even where the system turns it off (issue 26).  The trap: a
# user, nobody, makes a link in a sticky world-writable directory to a
# file only root may write, and root runs retry at it.
load helpers/common

BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-60}

setup() {
	in_test_dir
	unset GITHUB_ACTIONS GITLAB_CI GITHUB_STEP_SUMMARY GITHUB_OUTPUT \
	    RETRY_ATTEMPT
}

teardown() {
	kill_later
	if [ -n "${shared:-}" ]; then
		rm -rf "$shared"
	fi
	if [ -n "${sysctl_was:-}" ]; then
		echo "$sysctl_was" >/proc/sys/fs/protected_symlinks
	fi
}

# trap_set: as root, a directory that nobody can reach ($shared, 0755)
# with a sticky world-writable one in it ($sticky, like /tmp), the file
# $precious that only root may write, and nobody's link $sticky/job.json
# to it.  Skips where nothing can run a command as nobody.
trap_set() {
	need_root_and_nobody "to be the victim"
	as_nobody true || skip "nothing here can run a command as nobody"
	# Out of the test's own directory, which nobody may not search.
	shared=$(mktemp -d /tmp/retry-links.XXXXXX)
	chmod 755 "$shared"
	sticky=$shared/sticky
	mkdir -m 1777 "$sticky"
	precious=$shared/precious
	echo precious >"$precious"
	chmod 600 "$precious"
	as_nobody ln -s "$precious" "$sticky/job.json"
	[ "$(owner_of "$sticky/job.json")" = nobody ]
	refused="a symbolic link owned by user 'nobody' (uid $(id -u nobody)) in a directory that is sticky and world-writable, not followed"
}

# protected_symlinks VALUE: sets fs.protected_symlinks for this test (put
# back in teardown), or skips saying why it cannot.
protected_symlinks() {
	local f=/proc/sys/fs/protected_symlinks
	[ -r "$f" ] || skip "no $f: not Linux"
	sysctl_was=$(cat "$f")
	if ! (echo "$1" >"$f") 2>/dev/null; then
		sysctl_was=
		skip "cannot set $f here (a namespace that does not own it)"
	fi
	[ "$(cat "$f")" = "$1" ]
}

# refuses_trap: --report and --metrics at nobody's link: 125, one line
# naming the link and its owner, nothing run, the target untouched;
# GITHUB_OUTPUT and GITHUB_STEP_SUMMARY: one warning each, the status
# what it was, the target untouched.
refuses_trap() {
	run -125 --separate-stderr "$RETRY" --report "$sticky/job.json" \
	    touch ran
	expect_stderr "retry: --report '$sticky/job.json': $refused"
	run -125 --separate-stderr "$RETRY" --metrics "$sticky/job.json" \
	    touch ran
	expect_stderr "retry: --metrics '$sticky/job.json': $refused"
	[ ! -e ran ]
	run -3 --separate-stderr env GITHUB_ACTIONS=true \
	    GITHUB_STEP_SUMMARY="$sticky/job.json" \
	    GITHUB_OUTPUT="$sticky/job.json" "$RETRY" -q -n 1 sh -c 'exit 3'
	[ "$(grep '^retry:' <<<"$stderr")" = "retry: GITHUB_STEP_SUMMARY '$sticky/job.json': $refused
retry: GITHUB_OUTPUT '$sticky/job.json': $refused" ]
	[ "$(cat "$precious")" = precious ]
	[ -L "$sticky/job.json" ]
	[ -z "$(ls "$shared" | grep -v -e '^precious$' -e '^sticky$')" ]
	[ "$(ls "$sticky")" = job.json ]
}

@test "another user's link in a sticky world-writable directory is not followed, whatever protected_symlinks is" {
	trap_set
	refuses_trap
}

@test "... with fs.protected_symlinks 0, where the kernel would follow it" {
	trap_set
	protected_symlinks 0
	refuses_trap
}

@test "... with fs.protected_symlinks 1, where the kernel refuses it too: retry still says why in one line" {
	trap_set
	protected_symlinks 1
	refuses_trap
}

@test "a link further on the way, or a directory link, of another user's in a sticky directory is refused and named" {
	trap_set
	# Root's own link to nobody's link.
	ln -s "$sticky/job.json" mine.json
	run -125 --separate-stderr "$RETRY" --report mine.json touch ran
	expect_stderr "retry: --report 'mine.json': on the way, '$sticky/job.json' is $refused"
	# nobody's link to a directory that only root may write, above the file.
	mkdir -m 700 "$shared/rootdir"
	as_nobody ln -s "$shared/rootdir" "$sticky/d"
	run -125 --separate-stderr "$RETRY" --metrics "$sticky/d/job.prom" \
	    touch ran
	expect_stderr "retry: --metrics '$sticky/d/job.prom': on the way, '$sticky/d' is $refused"
	[ ! -e ran ]
	[ -z "$(ls "$shared/rootdir")" ]
	[ "$(cat "$precious")" = precious ]
}

@test "a link that appears while the command runs is refused at the end: one warning, the status kept, the target untouched" {
	trap_set
	nobody_runs_retry
	run -0 --separate-stderr "$RETRY" --report "$sticky/late.json" \
	    --metrics "$sticky/late.prom" sh -c '
		for f in late.json late.prom; do
			setpriv --reuid=nobody --regid="$(id -g nobody)" \
			    --clear-groups ln -s "$1" "$2/$f" 2>/dev/null ||
			    runuser -u nobody -- ln -s "$1" "$2/$f"
		done' sh "$precious" "$sticky"
	[ "$(owner_of "$sticky/late.json")" = nobody ]
	[ "$(grep '^retry:' <<<"$stderr")" = "retry: --metrics '$sticky/late.prom': $refused
retry: --report '$sticky/late.json': $refused" ] ||
	[ "$(grep '^retry:' <<<"$stderr")" = "retry: --report '$sticky/late.json': $refused
retry: --metrics '$sticky/late.prom': $refused" ]
	[ "$(cat "$precious")" = precious ]
	[ "$(ls "$sticky" | sort)" = "job.json
late.json
late.prom" ]
}

@test "an allowed link to a regular file: the file is replaced whole, beside itself, and the link stays" {
	trap_set
	# Root's own link in the sticky directory, as the kernel allows.
	echo old >target
	ln -s "$PWD/target" "$sticky/mine.json"
	local before
	before=$(ls -i target | awk '{ print $1 }')
	run -0 "$RETRY" --report "$sticky/mine.json" true
	[ -L "$sticky/mine.json" ]
	[ "$(readlink "$sticky/mine.json")" = "$PWD/target" ]
	grep -q '"outcome": "success"' target
	[ "$(ls -i target | awk '{ print $1 }')" != "$before" ]
	[ "$(mode_of target)" = 600 ]
	[ "$(ls "$sticky" | sort)" = "job.json
mine.json" ]
	# nobody's link in a directory that is not sticky and world-writable:
	# only root could have put it there.
	mkdir -m 755 plain
	echo old >metrics-target
	ln -s "$PWD/metrics-target" plain/job.prom
	chown -h nobody plain/job.prom
	run -0 "$RETRY" --metrics plain/job.prom true
	[ -L plain/job.prom ]
	grep -q '^retry_exit_status{job="job"} 0$' metrics-target
	[ "$(ls plain)" = job.prom ]
	# The CI files are appended to, through the link.
	: >summary
	: >outputs
	ln -s "$PWD/summary" "$sticky/summary"
	ln -s "$PWD/outputs" plain/outputs
	chown -h nobody plain/outputs
	run -0 --separate-stderr env GITHUB_ACTIONS=true \
	    GITHUB_STEP_SUMMARY="$sticky/summary" \
	    GITHUB_OUTPUT="$PWD/plain/outputs" "$RETRY" -q true
	[ "$(grep -c '^retry:' <<<"$stderr")" -eq 0 ]
	grep -q '^| command | attempts | outcome | time |$' summary
	grep -qx 'outcome=success' outputs
}

@test "/dev/stdout, /dev/fd/N and a process substitution still take the report; --metrics cannot replace a descriptor" {
	run -0 --separate-stderr "$RETRY" --report /dev/stdout true
	[[ $output == *'"outcome": "success"'* ]]
	[ "$stderr" = "" ]
	run -0 --separate-stderr sh -c '"$0" --report /dev/fd/5 true 5>&1' \
	    "$RETRY"
	[[ $output == *'"outcome": "success"'* ]]
	run -0 "$RETRY" --report >(cat >got) true
	wait_for_text got '"outcome": "success"'
	# A descriptor's file is the descriptor's, whatever its link's text
	# says: written through it, never replaced by a file beside it.
	echo old >out
	local before
	before=$(ls -i out | awk '{ print $1 }')
	"$RETRY" --report /dev/stdout true >out
	grep -q '"outcome": "success"' out
	[ "$(ls -i out | awk '{ print $1 }')" = "$before" ]
	[ "$(ls | grep -c '^out')" -eq 1 ]
	run -125 --separate-stderr sh -c '"$0" --metrics /dev/stdout touch ran >out' "$RETRY"
	expect_stderr "retry: --metrics '/dev/stdout': leads to a file descriptor, which cannot be replaced"
	[ ! -e ran ]
	[ -c /dev/null ] && [ -L /dev/stdout ]
}

@test "stricter than the kernel: another user's link in that user's own directory is not followed by root" {
	need_root_and_nobody
	cd "$BATS_TEST_TMPDIR"
	mkdir -m 755 theirs
	echo precious >precious
	chmod 600 precious
	ln -s "$PWD/precious" theirs/job.json
	chown nobody theirs
	chown -h nobody theirs/job.json
	run -125 --separate-stderr "$RETRY" --report theirs/job.json touch ran
	[ "$stderr" = "retry: --report 'theirs/job.json': a symbolic link owned by user 'nobody' (uid $(id -u nobody)) in a directory that user owns, not followed" ]
	[ ! -e ran ]
	[ "$(cat precious)" = precious ]
}
