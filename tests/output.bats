#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Standard output: --buffer-stdout (a reader sees the last attempt's
# stdout only), output streamed through unchanged while --on-output
# matches it, a reader that has gone (SIGPIPE), the child's fds left alone.

load helpers/common

# A test that hangs fails instead of stopping the whole file.
BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-120}

PTYRUN=$BATS_TEST_DIRNAME/helpers/ptyrun

setup() {
	in_test_dir
}

# A retry that a failed test left in the background, and the readers
# that a test holds (later).
teardown() {
	kill_bg_retry
	kill_later
}

# ---- --buffer-stdout ----------------------------------------------------------

@test "--buffer-stdout: a reader downstream sees exactly the last attempt's stdout; the others' go to stderr before 'next in'" {
	"$RETRY" -O -n 3 -b 10ms -j none sh -c '
		echo "out $RETRY_ATTEMPT"; echo "err $RETRY_ATTEMPT" >&2; exit 1' \
	    2>err | cat >down
	[ "${PIPESTATUS[0]}" -eq 1 ]
	[ "$(cat down)" = "out 3" ]
	[ "$(cat err)" = "err 1
out 1
retry: attempt 1/3 failed with exit 1; next in 0.010s
err 2
out 2
retry: attempt 2/3 failed with exit 1; next in 0.020s
err 3
retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]

	# The last attempt's, whether it succeeded or failed not retryably.
	run -0 --separate-stderr "$RETRY" --buffer-stdout -n 3 -b 10ms -j none \
	    sh -c 'echo "out $RETRY_ATTEMPT"; [ "$RETRY_ATTEMPT" = 2 ]'
	[ "$output" = "out 2" ]
	expect_stderr "out 1
retry: attempt 1/3 failed with exit 1; next in 0.010s"
	run -3 --separate-stderr "$RETRY" -O -x 3 -b 10ms -j none \
	    sh -c 'echo "out $RETRY_ATTEMPT"; exit $((RETRY_ATTEMPT + 1))'
	[ "$output" = "out 2" ]
	expect_stderr "out 1
retry: attempt 1/5 failed with exit 2; next in 0.010s
retry: attempt 2/5 failed with exit 3; giving up: status 3 is not retryable"
}

@test "--buffer-stdout: output sent to stderr before a delay does not reach stdout as well when the run ends there" {
	# A signal during the delay.
	"$RETRY" -O -b 10s -j none -n 3 sh -c 'echo "out-$RETRY_ATTEMPT"; exit 1' \
	    >out 2>err 3>&- &
	echo $! >bg.pid
	wait_for_text err 'next in 10.000s'
	stop_and_time TERM "$(cat bg.pid)"
	[ "$rc" -eq 143 ]
	[ "$(cat out)" = "" ]
	[ "$(grep -c '^out-' err)" -eq 1 ]
	# A circuit that opens for longer than the deadline allows.
	rc=0
	RETRY_STATE_DIR=$PWD/state "$RETRY" -O --circuit dup --trip 1 --cool 10s \
	    -D 5s -b 10ms -j none sh -c 'echo "out-$RETRY_ATTEMPT"; exit 1' \
	    >out 2>err || rc=$?
	[ "$rc" -eq 75 ]
	[ "$(cat out)" = "" ]
	[ "$(grep -c '^out-' err)" -eq 1 ]
}

@test "--buffer-stdout: an attempt that the deadline makes the last has its output on stdout" {
	run -3 --separate-stderr "$RETRY" -O -D 2s -b 10ms sh -c \
	    'echo "out $RETRY_ATTEMPT"; echo 10 >"$RETRY_AFTER_FILE"; exit 3'
	[ "$output" = "out 1" ]
	[[ $stderr =~ ^retry:\ attempt\ 1/5\ failed\ with\ exit\ 3\;\ giving\ up:\ a\ delay\ of\ 1[01]\.[0-9]{3}s\ would\ pass\ the\ deadline$ ]]
}

@test "--buffer-stdout: nothing reaches stdout while an attempt that may be retried runs" {
	"$RETRY" -O -n 2 sh -c 'echo held; touch written
		i=0; while [ ! -e go ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done' \
	    >out 2>err 3>&- &
	echo $! >bg.pid
	wait_for written
	sleep 0.1
	[ ! -s out ]
	[ ! -s err ]
	touch go
	wait "$(cat bg.pid)"
	[ "$(cat out)" = held ]
	[ ! -s err ]
}

@test "--buffer-stdout with --replay-stdin: megabytes in and out, memory stays constant" {
	[ -z "${TEST_SANITIZED:-}" ] || skip "memory is measured without sanitizers"
	head -c 2000000 /dev/urandom >in
	rc=0
	cat in | "$RETRY" -I -O -n 3 -b 10ms -j none sh -c '
		cat
		[ "$RETRY_ATTEMPT" = 3 ] && grep VmHWM "/proc/$PPID/status" >hwm
		exit 1' >out 2>err || rc=$?
	[ "$rc" -eq 1 ]
	cmp in out
	{
		cat in
		echo "retry: attempt 1/3 failed with exit 1; next in 0.010s"
		cat in
		echo "retry: attempt 2/3 failed with exit 1; next in 0.020s"
		echo "retry: attempt 3/3 failed with exit 1; giving up: no attempts left"
	} | cmp - err
	read -r _ kb _ <hwm
	echo "retry's peak RSS: $kb kB"
	[ "$kb" -lt 4096 ]
}

# ---- Output that stays before a retry -------------------------------------------

@test "a failed attempt's output that stays on a stdout that is not a terminal is said once, with its bytes and -O" {
	local line="retry: attempt 1 left 8 bytes on standard output; the next attempt's output follows (-O sends only the last attempt's there)"
	local script='echo "out $RETRY_ATTEMPT" >&2; printf "{\"n\":%s}\n" "$RETRY_ATTEMPT"; exit 1'
	# A pipe, as in retry curl | jq.
	"$RETRY" -n 3 -b 10ms -j none sh -c "$script" 2>err | cat >down
	[ "$(cat down)" = '{"n":1}
{"n":2}
{"n":3}' ]
	[ "$(cat err)" = "out 1
retry: attempt 1/3 failed with exit 1; next in 0.010s
$line
out 2
retry: attempt 2/3 failed with exit 1; next in 0.020s
out 3
retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
	# A file, and relayed through the patterns: the same line.
	rc=0
	"$RETRY" -n 2 -b 10ms -j none sh -c "$script" >out 2>err || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(grep -c 'left .* bytes' err)" -eq 1 ]
	grep -qxF "$line" err
	"$RETRY" --on-output nothing -n 2 -b 10ms -j none sh -c "$script" 2>err | cat >/dev/null
	grep -qxF "$line" err
	# Not for nothing written, /dev/null, -O, -q, or a terminal.
	"$RETRY" -n 2 -b 10ms -j none sh -c 'exit 1' 2>err | cat
	! grep -q 'standard output' err || false
	"$RETRY" -n 2 -b 10ms -j none sh -c "$script" >/dev/null 2>err || true
	! grep -q 'standard output' err || false
	"$RETRY" -O -n 2 -b 10ms -j none sh -c "$script" 2>err | cat >/dev/null
	! grep -q 'standard output' err || false
	"$RETRY" -q -n 2 -b 10ms -j none sh -c "$script" 2>err | cat >/dev/null
	[ "$(cat err)" = "out 1
out 2" ]
	run "$PTYRUN" -- "$RETRY" -n 2 -b 10ms -j none sh -c "$script"
	[[ $output != *"standard output"* ]]
}

@test "the bytes an attempt left on a >> stdout are its own, not another writer's of the same file" {
	# Another process appends to the log while attempt 1 runs: after the
	# attempt's own bytes (5), or when it wrote none.
	local writer='while [ ! -e a ]; do sleep 0.01; done; echo "another writer"; touch w'
	local script='[ "$RETRY_ATTEMPT" -gt 1 ] && exit 1
		printf "$OUT"; touch a; while [ ! -e w ]; do sleep 0.01; done; exit 1'
	: >log
	{ sh -c "$writer" & OUT=abcde "$RETRY" -n 2 -b 10ms -j none sh -c "$script"
	    wait "$!"; } >>log 2>err 3>&- || true
	cat err log
	[ "$(cat log)" = "abcdeanother writer" ]
	grep -qxF "retry: attempt 1 left 5 bytes on standard output; the next attempt's output follows (-O sends only the last attempt's there)" err
	rm -f a w
	: >log
	{ sh -c "$writer" & OUT= "$RETRY" -n 2 -b 10ms -j none sh -c "$script"
	    wait "$!"; } >>log 2>err 3>&- || true
	cat err
	[ "$(cat log)" = "another writer" ]
	! grep -q 'standard output' err || false
}

# ---- Matched output, and a reader that has gone --------------------------------

@test "matched output streams through unchanged, in order within each stream" {
	head -c 300000 /dev/urandom >o
	head -c 200000 /dev/urandom >e
	head -c 100000 o >o1; tail -c +100001 o >o2
	head -c 150000 e >e1; tail -c +150001 e >e2
	rc=0
	"$RETRY" --on-output 'no such line' --stop-on-output 'nor this one' -n 1 sh -c '
		cat o1; cat e1 >&2; cat o2; cat e2 >&2; printf end; printf end2 >&2' \
	    >out 2>err || rc=$?
	[ "$rc" -eq 0 ]
	{ cat o; printf end; } | cmp - out
	{ cat e; printf end2; } | cmp - err
}

@test "matched output is passed on as it comes, not when the attempt ends" {
	"$RETRY" --on-output x -n 1 sh -c 'echo first; echo first-err >&2
		i=0; while [ ! -e go ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		[ -e go ] && echo after-go' >out 2>err 3>&- &
	echo $! >bg.pid
	wait_for_text out first
	wait_for_text err first-err
	touch go
	wait "$(cat bg.pid)"
	[ "$(cat out)" = "first
after-go" ]
	[ "$(cat err)" = first-err ]
}

@test "no deadlock when the child writes 5 MB to both streams at once with matching on" {
	yes 0123456789 | head -c 5000000 >big
	t0=$(now_ms)
	timeout 30 "$RETRY" --on-output x --stop-on-output y -n 1 \
	    sh -c 'cat big & cat big >&2; wait' 2>err | cat >out
	[ "${PIPESTATUS[0]}" -eq 0 ]
	echo "took $(($(now_ms) - t0)) ms"
	cmp big out
	cmp big err
}

@test "matched output to a reader that has gone: the child's pipe closes too" {
	run -0 timeout 10 sh -c '"$1" --on-output x -n 1 yes 2>err | head -n1' sh "$RETRY"
	[ "$output" = y ]
	[ "$(cat err)" = "retry: attempt 1/1 killed by SIGPIPE; giving up: the reader of the output has gone" ]
}

# stuck_reader FIFO: a reader opens FIFO and never reads (killed in
# teardown), so that a writer fills it and then waits.
stuck_reader() {
	mkfifo "$1"
	sleep 30 <"$1" 3>&- &
	later $!
	disown $!	# no word from the shell when teardown kills it
}

# within_deadline MS: the run ended at its deadline of MS ms, with slack
# for a busy machine, and not after it ($took is the run's time).
within_deadline() {
	echo "deadline $1 ms, the run took $took ms"
	between "$took" $(($1 - 50)) $(($1 + 100 + 300))
}

@test "a reader that stops reading holds retry no longer than -D: matched output, held output to stderr and to stdout" {
	# Matched: the attempt waits for the reader and is stopped at the
	# deadline; what it wrote is dropped there.
	stuck_reader fifo
	t0=$(now_ms)
	rc=0
	"$RETRY" -n 3 -D 1 -b 10ms -j none --on-output x sh -c \
	    'echo "$RETRY_ATTEMPT" >>count; head -c 2000000 /dev/zero; exit 1' \
	    >fifo 2>err || rc=$?
	took=$(($(now_ms) - t0))
	within_deadline 1000
	[ "$rc" -eq 124 ]
	[ "$(cat count)" = 1 ]
	[ "$(cat err)" = "retry: attempt 1/3 timed out at the deadline; giving up" ]
	# Held: a failed attempt's output goes to a stderr that no one
	# reads; no attempt starts at or after the deadline, and the run ends
	# with the last attempt's status.
	stuck_reader fifo2
	rm count
	t0=$(now_ms)
	rc=0
	"$RETRY" -n 3 -D 1 -b 10ms -j none -O sh -c \
	    'echo "$RETRY_ATTEMPT" >>count; head -c 2000000 /dev/zero; exit 1' \
	    >out 2>fifo2 || rc=$?
	took=$(($(now_ms) - t0))
	within_deadline 1000
	[ "$rc" -eq 1 ]
	[ "$(cat count)" = 1 ]
	# The last attempt's held output to a stdout that no one reads.
	stuck_reader fifo3
	t0=$(now_ms)
	rc=0
	"$RETRY" -n 3 -D 1 -O head -c 2000000 /dev/zero >fifo3 2>err || rc=$?
	took=$(($(now_ms) - t0))
	within_deadline 1000
	[ "$rc" -eq 0 ]
}

@test "an attempt killed by SIGPIPE because retry's reader has gone is not retried: no one to retry for" {
	run -0 timeout 10 sh -c '"$1" -b 10ms yes 2>err | head -n1' sh "$RETRY"
	[ "$output" = y ]
	[ "$(cat err)" = "retry: attempt 1/5 killed by SIGPIPE; giving up: the reader of the output has gone" ]
	# Also an attempt that says so with status 141, as a shell does.
	run -0 timeout 10 sh -c '"$1" -b 10ms sh -c "yes; exit 141" 2>err | head -n1' sh "$RETRY"
	[ "$(cat err)" = "retry: attempt 1/5 failed with exit 141; giving up: the reader of the output has gone" ]
}

@test "a SIGPIPE from elsewhere (a socket, a pipe of the attempt's own) is still retried" {
	# retry's own output has a reader; the attempt's pipe does not.
	run -141 --separate-stderr "$RETRY" -n 2 -b 10ms -j none sh -c 'kill -PIPE $$'
	[ "${stderr_lines[0]}" = "retry: attempt 1/2 killed by SIGPIPE; next in 0.010s" ]
}

@test "without -O, --on-output and --stop-on-output retry leaves the child's stdin, stdout and stderr alone" {
	echo in >in
	# Expanded before the redirection: the attempt's own fd 1.
	script='rm -f "$1"; for i in 0 1 2; do
		echo "$i $(readlink /proc/$$/fd/$i) $(readlink /proc/$PPID/fd/$i)" >>"$1"; done'
	"$RETRY" -n 1 sh -c "$script" sh fds <in >out 2>err
	[ "$(cat fds)" = "0 $PWD/in $PWD/in
1 $PWD/out $PWD/out
2 $PWD/err $PWD/err" ]
	# Even with -I: a regular file is given as it is.
	"$RETRY" -I -n 1 sh -c "$script" sh fds <in >out 2>err
	[ "$(sed -n 1p fds)" = "0 $PWD/in $PWD/in" ]
	# With matching, pipes.
	"$RETRY" --on-output x -n 1 sh -c "$script" sh fds <in >out 2>err
	[[ $(sed -n 2p fds) =~ ^1\ pipe:\[[0-9]+\]\ $PWD/out$ ]]
	[[ $(sed -n 3p fds) =~ ^2\ pipe:\[[0-9]+\]\ $PWD/err$ ]]
	# With -O, a pipe into the held file, for stdout only.
	"$RETRY" -O -n 2 sh -c "$script" sh fds <in >out 2>err
	[[ $(sed -n 2p fds) =~ ^1\ pipe:\[[0-9]+\]\ $PWD/out$ ]]
	[ "$(sed -n 3p fds)" = "2 $PWD/err $PWD/err" ]
	# But the last attempt has retry's stdout itself.
	"$RETRY" -O -n 1 sh -c "$script" sh fds <in >out 2>err
	[ "$(sed -n 2p fds)" = "1 $PWD/out $PWD/out" ]
}

# ---- -O and the last attempt (issue 23) ------------------------------------

@test "--buffer-stdout: an attempt that is the last (-n) streams to stdout as it runs" {
	"$RETRY" -O -n 2 -b 10ms -j none sh -c '
		[ "$RETRY_ATTEMPT" = 1 ] && { echo first; exit 1; }
		echo streamed; touch written
		i=0; while [ ! -e go ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done' \
	    >out 2>err 3>&- &
	echo $! >bg.pid
	wait_for written
	wait_for_text out streamed
	[ "$(cat err)" = "first
retry: attempt 1/2 failed with exit 1; next in 0.010s" ]
	touch go
	wait "$(cat bg.pid)"
	[ "$(cat out)" = streamed ]
}

@test "--buffer-stdout: an attempt after which no delay fits before the deadline streams, where no hint can come" {
	# No private directory: Retry-After hints are off, so the 2 s delay
	# is the shortest there can be, and it passes the 1 s deadline.
	XDG_RUNTIME_DIR=/dev/null "$RETRY" -O -D 1s -b 2s -j none sh -c '
		echo streamed; touch written
		i=0; while [ ! -e go ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		exit 1' >out 2>err 3>&- &
	echo $! >bg.pid
	wait_for written
	wait_for_text out streamed
	touch go
	rc=0
	wait "$(cat bg.pid)" || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(cat out)" = streamed ]
	# With hints on, or equal jitter's half step inside the deadline, held
	# (through a pipe into the held file).
	"$RETRY" -O -D 1s -b 2s -j none sh -c \
	    'ls -l /proc/$$/fd/1 | sed "s/.* -> //"; exit 1' >out 2>err || true
	[[ $(cat out) =~ ^pipe: ]]
	XDG_RUNTIME_DIR=/dev/null "$RETRY" -O -D 10s -b 15s -j equal sh -c \
	    'ls -l /proc/$$/fd/1 | sed "s/.* -> //"' >out 2>err
	[[ $(cat out) =~ ^pipe: ]]
	XDG_RUNTIME_DIR=/dev/null "$RETRY" -O -D 1s -b 2100ms -j equal sh -c \
	    'ls -l /proc/$$/fd/1 | sed "s/.* -> //"; exit 1' >out 2>err || true
	[ "$(cat out)" = "$PWD/out" ]
	# --reset-after may count again from 1: never known to be the last.
	"$RETRY" -O -n 1 --reset-after 1h sh -c \
	    'ls -l /proc/$$/fd/1 | sed "s/.* -> //"' >out 2>err
	[[ $(cat out) =~ ^pipe: ]]
}

# The same bytes, held (attempt 1 of 2 succeeds) and streamed (the last).
held_and_streamed() {
	"$RETRY" -O -n 2 -b 10ms -j none "$@" sh -c 'cat data' | $READER >held
	"$RETRY" -O -n 2 -b 10ms -j none "$@" sh -c \
	    '[ "$RETRY_ATTEMPT" = 2 ] || exit 1; cat data' 2>/dev/null |
	    $READER >streamed
	cmp data held
	cmp held streamed
}

@test "--buffer-stdout: the last attempt's streamed output is byte for byte the held one's: binary data, a reader that stalls" {
	head -c 3000000 /dev/urandom >data
	printf '\0\r\nno final newline' >>data
	READER=cat held_and_streamed
	READER=cat held_and_streamed --on-output 'no such line'
	# A reader that stalls a second before it reads.
	READER='eval { sleep 1; cat; }' held_and_streamed
	READER='eval { sleep 1; cat; }' held_and_streamed --stop-on-output 'x{9}y'
	# To a file.
	"$RETRY" -O -n 2 -b 10ms -j none sh -c \
	    '[ "$RETRY_ATTEMPT" = 2 ] || exit 1; cat data' >out 2>/dev/null
	cmp data out
}

@test "--buffer-stdout: the last attempt's output is still matched as it streams" {
	run -1 --separate-stderr "$RETRY" -O -n 2 -b 10ms -j none --on-output '^bad$' \
	    sh -c 'echo "out $RETRY_ATTEMPT"; echo bad'
	[ "$output" = "out 2
bad" ]
	[ "$stderr" = "out 1
bad
retry: attempt 1/2 succeeded; next in 0.010s
retry: attempt 2/2 succeeded; giving up: no attempts left" ]
	run -1 --separate-stderr "$RETRY" -O -n 1 --stop-on-output '^stop' \
	    sh -c 'echo go; echo stop here'
	[ "$output" = "go
stop here" ]
	[ "$stderr" = "retry: attempt 1/1 succeeded; giving up: its output matched --stop-on-output" ]
}

@test "--buffer-stdout: held output released to a regular file is byte for byte, at the caller's offset, and with >>" {
	head -c 3145728 /dev/urandom >data
	printf '\0\r\nno final newline' >>data
	# Attempt 1 of 2 may be retried: held, then released when it succeeds.
	"$RETRY" -O -n 2 cat data >out
	cmp data out
	# The offset of stdout is the caller's: what comes before and after.
	{ printf before; "$RETRY" -O -n 2 cat data; printf after; } >out
	{ printf before; cat data; printf after; } >want
	cmp want out
	# A file opened with O_APPEND, which copy_file_range(2) refuses.
	printf before >out
	"$RETRY" -O -n 2 cat data >>out
	printf after >>out
	cmp want out
	# Released to a stderr on a file, before the attempt's message.
	"$RETRY" -O -n 2 -b 1ms -j none sh -c \
	    '[ "$RETRY_ATTEMPT" = 2 ] && exit 0; cat data; exit 1' 2>err >out
	[ ! -s out ]
	head -c "$(wc -c <data)" err >held
	cmp data held
	tail -c +"$(($(wc -c <data) + 1))" err >msg
	[ "$(cat msg)" = "retry: attempt 1/2 failed with exit 1; next in 0.001s" ]
}
