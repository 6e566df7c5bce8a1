#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Time and process control: the deadline, --timeout, --signal and
# --kill-after, signals sent to retry, what a child inherits, process
# groups and reaping.  Times are tens of milliseconds; the bounds are
# generous, for a loaded machine with two cores.

load helpers/common
load helpers/assert

# A test that hangs fails instead of stopping the whole suite.
BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-20}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# Whatever a failed test left running: retry (how.pid), an attempt's
# group (catch-signal's got.ready, a "pid" file).  Only processes that
# still run the program named, so that a reused pid is never hit.
teardown() {
	kill_if how.pid "$RETRY "
	kill_if got.ready catch-signal -group
	kill_if pid 'trap "" TERM' -group
	kill_if pid 'sleep 9'
}

# kill_if FILE WORD [-group]: SIGKILL the pids listed in FILE (the group
# each leads, with -group) if their command line holds WORD.
kill_if() {
	local p
	[ -s "$1" ] || return 0
	for p in $(cat "$1"); do
		case $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") in
		*"$2"*)
			if [ "${3-}" = -group ]; then
				kill -KILL -- "-$p" 2>/dev/null || true
			fi
			kill -KILL "$p" 2>/dev/null || true
			;;
		esac
	done
}

# Starts retry in the background with every signal at its default (a
# background job of a script starts with SIGINT and SIGQUIT ignored, and
# retry rightly keeps such signals ignored), under how-ended, which records
# in "how" the way retry ended and retry's pid in how.pid.  Sets $bg to the
# pid of how-ended.  stderr goes to the file "err".
start_retry() {
	rm -f how how.pid
	how-ended how with-signals -D "$RETRY" "$@" 2>err 3>&- &
	bg=$!
	wait_for_text how.pid '^[0-9]+$'
	rpid=$(cat how.pid)
}

# finish: waits, at most 5 s, for the background retry to end; sets $rc to
# its status.  Should it hang, kills it and its attempt (catch-signal's
# group).
finish() {
	local n=0
	until [ -s how ]; do
		if [ "$n" -ge 500 ]; then
			echo "retry (pid $rpid) has not ended after 5 s"
			kill -KILL "$rpid" 2>/dev/null || true
			if [ -s got.ready ]; then
				kill -KILL -- "-$(head -n 1 got.ready)" 2>/dev/null || true
			fi
			wait "$bg" || true
			return 1
		fi
		sleep 0.01
		n=$((n + 1))
	done
	rc=0
	wait "$bg" || rc=$?
}

# cpu_ticks PID: user plus system time of PID so far, in clock ticks.
cpu_ticks() {
	local f
	read -r -a f <"/proc/$1/stat"
	# Fields 14 and 15; comm, field 2, has no spaces for the programs here.
	echo $((f[13] + f[14]))
}

@test "--deadline cuts a long delay short; the status is the last attempt's" {
	local t0
	t0=$(now_ms)
	run -3 --separate-stderr "$RETRY" -b 10s -D 0.3 flaky st 10 3
	within "$t0" 0 1999
	[ "$(attempts st)" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	matches "$stderr" \
	    '^retry: attempt 1/5 failed with exit 3; giving up: a delay of ([0-9]+\.[0-9]{3})s would pass the deadline$'
	in_band "${BASH_REMATCH[1]}" 5000 10000
}

@test "--deadline lets the delays that fit run, and stops before one that does not" {
	local t0
	t0=$(now_ms)
	# Delays 100 and 200 ms end before 650 ms; the third, 400 ms, would
	# not, since the third attempt starts after 300 ms.
	run -1 --separate-stderr "$RETRY" -j none -b 100ms -D 0.65 flaky st 10
	within "$t0" 300 1999
	[ "$(attempts st)" -eq 3 ]
	expect_stderr "retry: attempt 1/5 failed with exit 1; next in 0.100s
retry: attempt 2/5 failed with exit 1; next in 0.200s
retry: attempt 3/5 failed with exit 1; giving up: a delay of 0.400s would pass the deadline"
}

@test "an attempt timed out before the deadline, then no time for a delay: 124" {
	# Equal jitter: the delay is at least 0.5 s, more than is left.
	run -124 --separate-stderr "$RETRY" -T 0.1 -D 0.4 -b 1s sh -c 'echo x >>st; sleep 5'
	[ "$(attempts st)" -eq 1 ]
	matches "$stderr" \
	    '^retry: attempt 1/5 timed out after 0\.100s; giving up: a delay of (0\.[5-9][0-9]{2}|1\.000)s would pass the deadline$'
}

@test "an attempt still running at the deadline is stopped: 124, and no attempt follows" {
	local t0 opts
	for opts in "-D 0.2" "-D 0.2 -T 10s"; do
		rm -f st
		t0=$(now_ms)
		# shellcheck disable=SC2086
		run -124 --separate-stderr "$RETRY" $opts -b 1ms \
		    sh -c 'echo x >>st; sleep 5; echo late >>st'
		within "$t0" 180 1999
		[ "$(attempts st)" -eq 1 ]
		expect_stderr "retry: attempt 1/5 timed out at the deadline; giving up"
	done
}

@test "--timeout stops a long attempt; it is retried by default, and 124 ends the run" {
	local t0
	t0=$(now_ms)
	run -124 --separate-stderr "$RETRY" -n 2 -T 0.1 -j none -b 10ms \
	    sh -c 'echo x >>st; sleep 5; echo late >>st'
	within "$t0" 200 1999
	[ "$(attempts st)" -eq 2 ]
	expect_stderr "retry: attempt 1/2 timed out after 0.100s; next in 0.010s
retry: attempt 2/2 timed out after 0.100s; giving up: no attempts left"
}

@test "--timeout: an attempt that ends in time ends the run with its own status" {
	run -0 --separate-stderr "$RETRY" -T 0.3 -j none -b 10ms \
	    sh -c 'echo x >>st; [ "$(wc -l <st)" -ge 2 ] || sleep 5'
	[ "$(attempts st)" -eq 2 ]
	expect_stderr "retry: attempt 1/5 timed out after 0.300s; next in 0.010s"
	rm -f st
	run -124 --separate-stderr "$RETRY" -T 0.1 --stop-on 124 -b 1ms \
	    sh -c 'echo x >>st; sleep 5'
	[ "$(attempts st)" -eq 1 ]
	expect_stderr "retry: attempt 1/5 timed out after 0.100s; giving up: status 124 is not retryable"
}

@test "--timeout kills the attempt's grandchildren too" {
	run -124 --separate-stderr "$RETRY" -n 1 -T 0.2 \
	    sh -c 'sleep 9 & echo $! >pid; wait'
	[ -s pid ]
	gone "$(cat pid)"
	expect_stderr "retry: attempt 1/1 timed out after 0.200s; giving up: no attempts left"
}

@test "nothing of a stopped attempt outlives it, not even what ignores the signal" {
	local t0
	t0=$(now_ms)
	# The shell dies of SIGTERM at once; its child ignores SIGTERM.  retry
	# must not leave it behind, nor wait the 10 s of --kill-after for it.
	run -124 --separate-stderr "$RETRY" -n 1 -T 0.1 \
	    sh -c '(trap "" TERM; exec sleep 9) & echo $! >pid; wait'
	within "$t0" 80 1999
	[ -s pid ]
	gone "$(cat pid)"
}

@test "--kill-after: an attempt that ignores the stop signal gets SIGKILL after it" {
	local t0
	t0=$(now_ms)
	# The ignored SIGTERM is inherited by each sleep as well.
	run -124 --separate-stderr "$RETRY" -n 1 -T 0.1 -k 0.3 \
	    sh -c 'trap "" TERM; echo $$ >pid; i=0; while [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done'
	within "$t0" 380 2499
	gone "$(cat pid)"
	expect_stderr "retry: attempt 1/1 timed out after 0.100s; giving up: no attempts left"
	# -k 0: SIGKILL right away.
	rm -f pid
	t0=$(now_ms)
	run -124 --separate-stderr "$RETRY" -n 1 -T 0.1 -k 0 \
	    sh -c 'trap "" TERM; echo $$ >pid; i=0; while [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done'
	within "$t0" 80 1499
	gone "$(cat pid)"
}

@test "--signal is the signal an attempt gets when it times out, by name or number" {
	local sig
	for sig in INT 2 SIGINT sigint; do
		rm -f got got.ready
		run -124 --separate-stderr with-signals -D "$RETRY" -n 1 \
		    -T 0.3 -s "$sig" catch-signal got
		expect_file got INT
		expect_stderr "retry: attempt 1/1 timed out after 0.300s; giving up: no attempts left"
	done
	rm -f got got.ready
	run -124 with-signals -D "$RETRY" -n 1 -T 0.3 --signal=USR1 \
	    catch-signal got
	expect_file got USR1
	# By default, SIGTERM.
	rm -f got got.ready
	run -124 with-signals -D "$RETRY" -n 1 -T 0.3 catch-signal got
	expect_file got TERM
}

@test "--signal INT at a timeout is a timeout, not an interruption: retried, 124" {
	run -124 --separate-stderr how-ended how with-signals -D "$RETRY" -n 2 \
	    -T 0.1 -s INT -j none -b 1ms sh -c 'echo x >>st; sleep 5'
	expect_file how "exit 124"
	[ "$(attempts st)" -eq 2 ]
	expect_stderr "retry: attempt 1/2 timed out after 0.100s; next in 0.001s
retry: attempt 2/2 timed out after 0.100s; giving up: no attempts left"
}

@test "SIGTERM during a delay ends retry at once, by SIGTERM, with no further attempt" {
	local t0
	start_retry -j none -b 10s flaky st 5
	wait_for_text err 'next in'
	t0=$(now_ms)
	kill -TERM "$rpid"
	finish
	within "$t0" 0 999
	[ "$rc" -eq 143 ]
	[ "$(kill -l "$rc")" = TERM ]
	expect_file how "signal TERM"
	[ "$(attempts st)" -eq 1 ]
	expect_file err "retry: attempt 1/5 failed with exit 1; next in 10.000s
retry: attempt 1/5 failed with exit 1; giving up: interrupted by SIGTERM"
}

@test "SIGINT, SIGHUP, SIGQUIT and the other forwarded signals during a delay end retry at once, by that signal" {
	local sig t0
	for sig in INT HUP QUIT ALRM USR1 USR2 PROF VTALRM XCPU XFSZ IO; do
		rm -f st
		start_retry -j none -b 10s flaky st 5
		wait_for_text err 'next in'
		t0=$(now_ms)
		kill -s "$sig" "$rpid"
		finish
		within "$t0" 0 999
		[ "$(kill -l "$rc")" = "$sig" ]
		expect_file how "signal $sig"
		[ "$(attempts st)" -eq 1 ]
		expect_file err "retry: attempt 1/5 failed with exit 1; next in 10.000s
retry: attempt 1/5 failed with exit 1; giving up: interrupted by SIG$sig"
	done
}

@test "SIGTERM during an attempt reaches the child; nothing is retried; retry dies of SIGTERM" {
	local t0
	start_retry -b 1ms catch-signal got
	wait_for_text got.ready '^[0-9]+$'
	t0=$(now_ms)
	# Only retry's pid: the child is in a group of its own.
	kill -TERM "$rpid"
	finish
	within "$t0" 0 999
	[ "$rc" -eq 143 ]
	expect_file how "signal TERM"
	expect_file got TERM
	[ "$(attempts got.ready)" -eq 1 ]
	expect_file err "retry: attempt 1/5 failed with exit 3; giving up: interrupted by SIGTERM"
}

@test "SIGINT, SIGHUP, SIGQUIT and the other forwarded signals during an attempt reach the child likewise" {
	local sig
	for sig in INT HUP QUIT ALRM USR1 USR2 PROF VTALRM XCPU XFSZ IO; do
		rm -f got got.ready
		start_retry -b 1ms catch-signal got
		wait_for_text got.ready '^[0-9]+$'
		kill -s "$sig" "$rpid"
		finish
		[ "$(kill -l "$rc")" = "$sig" ]
		expect_file how "signal $sig"
		expect_file got "$sig"
		[ "$(attempts got.ready)" -eq 1 ]
		expect_file err "retry: attempt 1/5 failed with exit 3; giving up: interrupted by SIG$sig"
	done
}

@test "a signal that reaches retry just as the attempt ends is not lost" {
	# It was lost 1 run in 5: the end of the attempt was seen first and the
	# signal stayed pending until exit(0).
	local i
	# The child signals retry and exits at once: the signal and the end of
	# the attempt arrive together.  retry must still die of the signal.
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		run how-ended how with-signals -D "$RETRY" -n 1 \
		    sh -c 'kill -TERM $PPID; exit 0'
		expect_file how "signal TERM"
	done
}

@test "a child that dies of SIGINT or SIGQUIT is not retried; retry dies of it too" {
	local sig
	for sig in INT QUIT; do
		rm -f st
		run --separate-stderr how-ended how with-signals -D "$RETRY" -b 1ms \
		    sh -c "echo x >>st; exec kill -s $sig \$\$"
		[ "$(kill -l "$status")" = "$sig" ]
		expect_file how "signal $sig"
		[ "$(attempts st)" -eq 1 ]
		expect_stderr "retry: attempt 1/5 killed by SIG$sig; giving up: interrupted"
	done
}

@test "a child that dies of another signal: retried, then exit 128+S, not death" {
	run -143 --separate-stderr how-ended how "$RETRY" -n 2 -j none -b 1ms \
	    sh -c 'echo x >>st; kill -TERM $$'
	expect_file how "exit 143"
	[ "$(attempts st)" -eq 2 ]
	expect_stderr "retry: attempt 1/2 killed by SIGTERM; next in 0.001s
retry: attempt 2/2 killed by SIGTERM; giving up: no attempts left"
}

@test "SIGHUP ignored when retry starts (nohup) stays ignored in the child" {
	local ign
	run -0 --separate-stderr sh -c 'trap "" HUP; exec "$0" -n 1 grep "^SigIgn:" /proc/self/status' \
	    "$RETRY"
	ign=${output#SigIgn:}
	ign=${ign//[[:space:]]/}
	echo "SigIgn: $ign"
	[ $((16#$ign & 1)) -eq 1 ]	# bit 0: SIGHUP
	[ "$stderr" = "" ]
}

@test "a SIGHUP that retry was started ignoring does not interrupt it" {
	rm -f how how.pid
	(trap '' HUP; exec how-ended how "$RETRY" -n 2 -j none -b 0.3s flaky st 5) 2>err 3>&- &
	bg=$!
	wait_for_text err 'next in'
	kill -HUP "$(cat how.pid)"
	finish
	[ "$rc" -eq 1 ]
	expect_file how "exit 1"
	[ "$(attempts st)" -eq 2 ]
}

@test "a signal that retry was started blocking stays blocked: it neither interrupts nor reaches the attempt" {
	rm -f how how.pid
	how-ended how with-signals -D -b USR1 \
	    "$RETRY" -n 2 -j none -b 0.3s flaky st 5 2>err 3>&- &
	bg=$!
	wait_for_text err 'next in'
	kill -USR1 "$(cat how.pid)"
	finish
	[ "$rc" -eq 1 ]
	expect_file how "exit 1"
	[ "$(attempts st)" -eq 2 ]
}

@test "a closed stderr does not kill retry: the status still tells" {
	# The reader is gone long before the first message (after 100 ms):
	# writing it raises SIGPIPE, which must not end retry.
	{ with-signals -D "$RETRY" -n 3 -j none -b 10ms \
	    sh -c 'sleep 0.1; echo x >>st; exit 3' || echo $? >rc; } 2>&1 | true
	expect_file rc 3
	[ "$(attempts st)" -eq 3 ]
}

# visible_signals: the SigBlk and SigIgn lines of /proc/PID/status on
# stdin, without glibc's two internal signals (32 and 33, below SIGRTMIN),
# which glibc's posix_spawn() leaves ignored in the child and which no
# application can use.
visible_signals() {
	local name hex
	while read -r name hex; do
		case $name in
		SigIgn:) hex=$(printf '%016x' $((0x$hex & ~0x180000000))) ;;
		esac
		printf '%s\t%s\n' "$name" "$hex"
	done
}

@test "the child starts with the signal dispositions and mask retry started with" {
	local want blk ign
	# All at their defaults: retry's own blocked and ignored signals must
	# not show through (SIGPIPE, SIGCHLD and the forwarded ones).
	want=$(with-signals -D grep -E '^Sig(Blk|Ign):' /proc/self/status |
	    visible_signals)
	run -0 with-signals -D "$RETRY" -n 1 grep -E '^Sig(Blk|Ign):' /proc/self/status
	# (Compared with what the same env gives a command directly: a mask
	# blocked by whatever started the suite is inherited by both.)
	[ "$(visible_signals <<<"$output")" = "$want" ]
	# Something blocked and something ignored from the start: kept.
	want=$(with-signals -D -b USR1 -i PIPE \
	    grep -E '^Sig(Blk|Ign):' /proc/self/status | visible_signals)
	run -0 with-signals -D -b USR1 -i PIPE \
	    "$RETRY" -n 1 grep -E '^Sig(Blk|Ign):' /proc/self/status
	[ "$(visible_signals <<<"$output")" = "$want" ]
	# USR1 (bit 9) blocked and PIPE (bit 12) ignored, as they were given.
	blk=$(sed -n 's/^SigBlk:\t//p' <<<"$output")
	ign=$(sed -n 's/^SigIgn:\t//p' <<<"$output")
	[ $(( 0x$blk & 0x200 )) -ne 0 ]
	[ $(( 0x$ign & 0x1000 )) -ne 0 ]
}

@test "retry started with SIGCHLD ignored still waits for its attempts, which start with it ignored" {
	local ign
	run -0 --separate-stderr with-signals -i CHLD "$RETRY" -j none -b 1ms flaky st 2
	[ "$(attempts st)" -eq 3 ]
	expect_stderr "retry: attempt 1/5 failed with exit 1; next in 0.001s
retry: attempt 2/5 failed with exit 1; next in 0.002s"
	run -0 with-signals -i CHLD "$RETRY" -n 1 grep '^SigIgn:' /proc/self/status
	ign=$(sed -n 's/^SigIgn:\t//p' <<<"$output")
	[ $(( 0x$ign & 0x10000 )) -ne 0 ]	# bit 16: SIGCHLD
}

@test "a script without '#!' runs through sh, as execvp() runs it" {
	printf 'echo "ran $#" >>st\nexit 3\n' >nobang
	chmod 755 nobang
	run -3 --separate-stderr "$RETRY" -n 2 -b 1ms ./nobang a b
	[ "$(cat st)" = "$(printf 'ran 2\nran 2')" ]
}

@test "the child gets only the descriptors its caller opened" {
	local want
	# ls lists the descriptor it reads the directory with as well; it is
	# the same one in both runs if, and only if, nothing else leaked.
	want=$(sh -c 'ls /proc/self/fd' 5</dev/null | sort -n | tr '\n' ' ')
	[[ " $want" == *" 0 1 2 "* && $want == *" 5 "* ]]
	# Also with each option that makes retry open files of its own.
	local opts
	for opts in '' '--report r.json' '-I -O --on-output x --stop-on-output y' \
	    '--circuit leak --budget 5/1m'; do
		rm -f fds.*
		# shellcheck disable=SC2086
		echo in | RETRY_STATE_DIR=$PWD/state "$RETRY" $opts -n 2 -j none -b 1ms \
		    sh -c 'ls /proc/self/fd >fds.$RETRY_ATTEMPT; exit 1' 5</dev/null 2>/dev/null ||
		    [ $? -eq 1 ]
		echo "options: $opts"
		[ "$(sort -n fds.1 | tr '\n' ' ')" = "$want" ]
		[ "$(sort -n fds.2 | tr '\n' ' ')" = "$want" ]
	done
}

@test "retry reaps each attempt: no zombie while it sleeps" {
	start_retry -j none -b 10s flaky st 5
	wait_for_text err 'next in'
	[ "$(attempts st)" -eq 1 ]
	run proc-state -c "$rpid"
	echo "children of retry: $output"
	[ "$output" = "" ]
	kill -TERM "$rpid"
	finish
	[ "$rc" -eq 143 ]
}

@test "each attempt runs in a process group of its own, not retry's" {
	run -1 "$RETRY" -n 2 -j none -b 1ms \
	    sh -c 'echo $$ $(proc-state $$ pgid) $(proc-state $PPID pgid) >>groups; exit 1'
	local pid pgid rgroup first=
	while read -r pid pgid rgroup; do
		echo "attempt $pid: group $pgid; retry's group $rgroup"
		[ "$pgid" -eq "$pid" ]
		[ "$pgid" -ne "$rgroup" ]
		[ "$pgid" != "$first" ]
		first=$pgid
	done <groups
	[ "$(attempts groups)" -eq 2 ]
}

@test "retries started in the same instant draw different delays" {
	local i pids=() delays=()
	# A band of a million milliseconds, as the messages show them: four
	# fair draws meet in it once in some 170 000 runs (in 1 s, once in 170).
	for i in 1 2 3 4; do
		"$RETRY" -v -n 2 -j full -b 1000s -c 1000s false 2>"err$i" 3>&- &
		pids+=($!)
	done
	for i in 1 2 3 4; do
		wait_for_text "err$i" '^retry: drew '
		matches "$(grep '^retry: drew ' "err$i")" '^retry: drew ([0-9.]+)s from \[0\.000s, 1000\.000s\]'
		delays+=("${BASH_REMATCH[1]}")
		kill -TERM "${pids[i - 1]}" 2>/dev/null || true
	done
	for i in "${pids[@]}"; do
		wait "$i" || true
	done
	echo "delays: ${delays[*]}"
	[ "$(printf '%s\n' "${delays[@]}" | sort -u | wc -l)" -eq 4 ]
	# The next-in messages show them too, rounded to the millisecond.
	matches "$(sed -n 2p err1)" '^retry: attempt 1/2 failed with exit 1; next in [0-9]{1,4}\.[0-9]{3}s$'
}

@test "no busy waiting: retry uses no CPU while a delay passes or a child runs" {
	local before
	start_retry -j none -b 10s false
	wait_for_text err 'next in'
	before=$(cpu_ticks "$rpid")
	sleep 0.3
	[ $(($(cpu_ticks "$rpid") - before)) -le 2 ]
	kill -TERM "$rpid"
	finish
	[ "$rc" -eq 143 ]

	start_retry -n 1 sh -c 'echo x >ready; exec sleep 5'
	wait_for_text ready x
	before=$(cpu_ticks "$rpid")
	sleep 0.3
	[ $(($(cpu_ticks "$rpid") - before)) -le 2 ]
	kill -TERM "$rpid"
	finish
	[ "$rc" -eq 143 ]
}
