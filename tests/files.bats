#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# What retry does to the file system: nothing for a run whose attempts
# write no hint, never a failure for want of a usable $TMPDIR, and nothing
# left behind by a run killed with SIGKILL, not even a running attempt.
load helpers/common
load helpers/assert

BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-60}

setup() {
	cd "$BATS_TEST_TMPDIR"
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	mkdir "$TMPDIR"
	unset XDG_RUNTIME_DIR
	hints=$TMPDIR/retry-$(id -u)
}

need_strace() {
	[ -z "${TEST_SANITIZED:-}" ] ||
	    skip "LeakSanitizer does not run under ptrace, and makes calls of its own"
	command -v strace >/dev/null 2>&1 || skip "no strace"
	strace -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
}

# changes TRACE: the system calls of retry's own process (not its
# attempts') in the strace -f output TRACE that make or remove a file.
changes() {
	local pid
	pid=$(head -n 1 "$1" | awk '{ print $1 }')
	grep -E "^$pid +" "$1" |
	    grep -E ' (mkdir|mkdirat|rmdir|unlink|unlinkat|rename|renameat2?|link|linkat|symlink|symlinkat|mknod|mknodat|creat)\(|O_CREAT|O_TMPFILE' || true
}

@test "a run whose attempts write no hint makes and removes no file (strace)" {
	need_strace
	"$RETRY" -n 1 true	# the private directory is made once, here
	strace -f -e trace=%file -o trace1 "$RETRY" -n 2 -- true
	strace -f -e trace=%file -o trace2 "$RETRY" -n 3 -b 1ms -- false || true
	cat trace2
	[ -z "$(changes trace1)" ]
	[ -z "$(changes trace2)" ]
	# After each failed attempt, the last too (its hint may be a 4xx to
	# name), one look for a hint, which is not there; at the end, one more
	# (a stat) for what an attempt not read may have left.
	local pid
	pid=$(head -n 1 trace2 | awk '{ print $1 }')
	[ "$(grep -cE "^$pid +openat\([0-9]+, \"[0-9]+-[0-9a-f]{16}\".* = -1 ENOENT" trace2)" -eq 3 ]
	[ "$(grep -cE "^$pid +newfstatat\([0-9]+, \"[0-9]+-[0-9a-f]{16}\".* = -1 ENOENT" trace2)" -eq 1 ]
}

@test "one draw of the kernel's randomness, no /dev/urandom, no /dev/tty" {
	need_strace
	strace -f -e trace=getrandom,openat -o trace "$RETRY" -n 1 -- true
	cat trace
	! grep -q /dev/urandom trace || false
	! grep -q /dev/tty trace || false
	# glibc's malloc draws its own 8 bytes (GRND_NONBLOCK); retry's one
	# call is the rest: the seed, the key, the nonce, the CI tokens', the
	# run's ID and its trace's IDs (--trace).
	[ "$(grep -cE 'getrandom\(.*, [0-9]+, 0\)' trace)" -eq 1 ]
	grep -qE 'getrandom\(.*, 96, 0\) = 96' trace
}

@test "a missing TMPDIR, or one that is a file: the command runs; hints are off and -v says why, once" {
	local bad
	for bad in "$BATS_TEST_TMPDIR/none" "$BATS_TEST_TMPDIR/afile"; do
		touch "$BATS_TEST_TMPDIR/afile"
		TMPDIR=$bad run -0 --separate-stderr "$RETRY" -v -n 2 -b 1ms \
		    sh -c 'echo ran; echo "${RETRY_AFTER_FILE-unset}"; [ "$RETRY_ATTEMPT" = 2 ]'
		[ "$output" = "ran
unset
ran
unset" ]
		[ "$(grep -c 'Retry-After hints are off' <<<"$stderr")" -eq 1 ]
		matches "${stderr_lines[1]}" "^retry: Retry-After hints are off: $bad/retry-$(id -u): (No such file or directory|not a directory)$"
	done
	# An inherited RETRY_AFTER_FILE is not passed on as if it were ours.
	RETRY_AFTER_FILE=/tmp/outer TMPDIR=$BATS_TEST_TMPDIR/none run -0 \
	    --separate-stderr "$RETRY" sh -c 'echo "${RETRY_AFTER_FILE-unset}"'
	[ "$output" = unset ]
}

@test "a read-only TMPDIR (an unprivileged user): the command runs" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run as another user"
	id nobody >/dev/null 2>&1 || skip "no user nobody"
	nobody_runs_retry
	chmod 755 "$BATS_TEST_TMPDIR" "$TMPDIR"
	run -0 --separate-stderr as_nobody env TMPDIR="$TMPDIR" "$RETRY" -v echo ran
	[ "$output" = ran ]
	[[ $stderr == *"Retry-After hints are off: $TMPDIR/retry-$(id -u nobody): Permission denied"* ]]
	# -I, -O and --report need a writable place: one line, 125, nothing run.
	run -125 --separate-stderr as_nobody env TMPDIR="$TMPDIR" "$RETRY" -O echo ran
	[ "$output" = "" ]
	expect_stderr "retry: --buffer-stdout needs a temporary file in $TMPDIR: Permission denied"
}

@test "a full TMPDIR (a small tmpfs): the command runs" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to mount a tmpfs"
	mkdir full
	mount -t tmpfs -o size=16k,nr_inodes=4 tmpfs full 2>/dev/null ||
	    skip "cannot mount a tmpfs here"
	# Fill it up, inodes and blocks.
	dd if=/dev/zero of=full/fill bs=4k count=100 2>/dev/null || true
	touch full/a full/b full/c 2>/dev/null || true
	rc=0
	TMPDIR=$PWD/full "$RETRY" -v sh -c 'echo ran' >out 2>err || rc=$?
	umount full
	cat err
	[ "$rc" -eq 0 ]
	[ "$(cat out)" = ran ]
	grep -q 'Retry-After hints are off' err
}

@test "with TMPDIR unusable, a hint is still honoured where the channel is on (\$XDG_RUNTIME_DIR)" {
	export XDG_RUNTIME_DIR=$BATS_TEST_TMPDIR/run
	mkdir -m 700 "$XDG_RUNTIME_DIR"
	TMPDIR=$BATS_TEST_TMPDIR/none run -0 --separate-stderr "$RETRY" -n 2 -b 10s \
	    sh -c '[ "$RETRY_ATTEMPT" = 2 ] || { echo 20ms >"$RETRY_AFTER_FILE"; exit 1; }'
	matches "${stderr_lines[0]}" '^retry: attempt 1/2 failed with exit 1; next in 0\.02[0-2]s \(Retry-After 0\.020s\)$'
}

@test "a private directory that another user owns, or open to others, is not used" {
	mkdir -m 777 "$hints"
	run -0 --separate-stderr "$RETRY" -v sh -c 'echo "${RETRY_AFTER_FILE-unset}"'
	[ "$output" = unset ]
	[[ $stderr == *"Retry-After hints are off: $hints: open to other users (not mode 0700)"* ]]
	rmdir "$hints"
	ln -s "$BATS_TEST_TMPDIR" "$hints"
	run -0 --separate-stderr "$RETRY" -v sh -c 'echo "${RETRY_AFTER_FILE-unset}"'
	[ "$output" = unset ]
	[[ $stderr == *"Retry-After hints are off: $hints: not a directory"* ]]
	rm "$hints"
	if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
		mkdir -m 700 "$hints"
		chown nobody "$hints"
		run -0 --separate-stderr "$RETRY" -v sh -c 'echo "${RETRY_AFTER_FILE-unset}"'
		[ "$output" = unset ]
		[[ $stderr == *"Retry-After hints are off: $hints: belongs to another user"* ]]
	fi
}

@test "an attempt dies with retry, even when retry is killed with SIGKILL (Linux)" {
	[ "$(uname -s)" = Linux ] || skip "PR_SET_PDEATHSIG is Linux's"
	"$RETRY" sh -c 'echo $$ >pid; exec sleep 30' 3>&- &
	local pid=$!
	wait_for pid
	kill -KILL "$pid"
	wait "$pid" || true
	gone "$(cat pid)"
}

# A run to kill: a hint now and then, a failed attempt, a delay, a long
# attempt; with --report, -O or -I in some.  Its attempts run "sleep" with
# a mark of this test in the name of the argument, so that any left over
# can be found.
killable() {
	local i=$1 opts=()
	case $((i % 4)) in
	1) opts=(--report "rep/r$i.json") ;;
	2) opts=(-O --report "rep/r$i.json") ;;
	3) opts=(-I) ;;
	esac
	echo in | "$RETRY" "${opts[@]}" -n 3 -b 40ms -j full sh -c '
		[ $((RETRY_ATTEMPT + $1)) -gt 2 ] && echo 30ms >"$RETRY_AFTER_FILE"
		[ "$RETRY_ATTEMPT" = 1 ] && exit 1
		exec sleep 5.'"$MARK"'' sh "$((i % 2))" >/dev/null 2>&1
}

@test "50 runs killed with SIGKILL at random moments leave nothing: no file, no temporary report, no attempt" {
	[ "$(uname -s)" = Linux ] || skip "attempts outlive a killed retry where there is no PR_SET_PDEATHSIG"
	export MARK=$$$RANDOM
	mkdir rep
	"$RETRY" -n 1 true
	local i pids=() batch
	for batch in 0 1 2 3 4; do
		pids=()
		for i in $(seq $((batch * 10)) $((batch * 10 + 9))); do
			killable "$i" 3>&- &
			pids+=($!)
		done
		for i in "${pids[@]}"; do
			# During the first attempt, the delay or the second attempt.
			sleep "0.0$((RANDOM % 10))"
			pkill -KILL -P "$i" -x retry 2>/dev/null || true
		done
		for i in "${pids[@]}"; do
			wait "$i" || true
		done
	done
	sleep 0.2
	# No attempt still running.
	! pgrep -f "sleep 5.$MARK" || false
	# Nothing in TMPDIR but the private directory; no temporary report.
	[ "$(ls -A "$TMPDIR")" = "retry-$(id -u)" ]
	[ -z "$(ls rep | grep -v '^r[0-9]*\.json$')" ]
	# Hints that killed runs left are removed by the next run that uses one.
	"$RETRY" -n 2 -b 1ms sh -c '[ "$RETRY_ATTEMPT" = 2 ] ||
		{ echo 1ms >"$RETRY_AFTER_FILE"; exit 1; }'
	[ -z "$(ls -A "$hints")" ]
}

# name_of N: a file name of N bytes.
name_of() {
	printf "%${1}s" '' | tr ' ' n
}

@test "--report and --metrics: a name too long for its temporary file (NAME.retry-PID past NAME_MAX) is refused at the start, 125, nothing run" {
	local n name opt
	for opt in --report --metrics; do
		for n in 240 246 250 255; do
			name=$(name_of "$n")
			rm -f ran
			if [ "$n" -le 241 ]; then
				# 241 bytes + ".retry-" + 7 digits (Linux's
				# longest PID) = 255: run, and written.
				run -0 --separate-stderr "$RETRY" -n 1 \
				    "$opt" "$name" touch ran
				[ "$stderr" = "" ]
				[ -e ran ]
				[ -s "$name" ]
			else
				run -125 --separate-stderr "$RETRY" -n 1 \
				    "$opt" "$name" touch ran
				[ "$stderr" = "retry: $opt '$name': name too long: $n bytes, and 14 more for the temporary file's .retry-PID, pass the 255 that its directory takes; use a name of at most 241 bytes" ]
				[ ! -e ran ]
				[ ! -e "$name" ]
			fi
			rm -f "$name"
		done
	done
	# Through a link, the name it leads to is the one that counts.
	ln -s "$(name_of 246)" short
	run -125 --separate-stderr "$RETRY" --metrics short touch ran
	[ "$stderr" = "retry: --metrics 'short': name '$(name_of 246)' (where it leads) too long: 246 bytes, and 14 more for the temporary file's .retry-PID, pass the 255 that its directory takes; use a name of at most 241 bytes" ]
	[ ! -e ran ]
	# Written in place, a device has no temporary file: any name will do.
	run -0 "$RETRY" --report /dev/null true
}
