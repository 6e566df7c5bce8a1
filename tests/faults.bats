#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Faults around retry: a full stderr, a FIFO where the hint should be, a
# lock that another run holds, a failure of retry itself in the middle of
# an attempt, no processes left to start one.  In every state a signal
# must end retry at once, and nothing may be left running.
load helpers/common
load helpers/assert

BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-30}

setup() {
	cd "$BATS_TEST_TMPDIR"
	export RETRY_STATE_DIR=$BATS_TEST_TMPDIR/state
}

teardown() {
	kill_later
}

@test "SIGTERM while retry waits to write a message to a full stderr: 143 at once" {
	# A reader that never reads; the attempt fills the pipe from behind.
	mkfifo ef
	(exec 7<>ef; sleep 30) 3>&- &
	later $!
	"$RETRY" -b 20ms -n 5 sh -c 'head -c 200000 /dev/zero >&2 & sleep 0.05
		exit 1' 2>ef 3>&- &
	local pid=$!
	later "$pid"
	# Its "next in" message waits for room in the pipe.
	sleep 0.5
	alive "$pid"
	stop_and_time TERM "$pid"
	[ "$rc" -eq 143 ]
	# Typically 1-10 ms; the bound is for a loaded machine.
	[ "$took" -lt 250 ]
}

@test "a FIFO that an attempt leaves at RETRY_AFTER_FILE holds retry neither after the attempt nor before the next" {
	run -1 --separate-stderr "$RETRY" -v -D 5 -n 3 -b 10ms sh -c '
		rm -f "$RETRY_AFTER_FILE"; mkfifo "$RETRY_AFTER_FILE"; exit 1'
	[ "$(grep -c 'Retry-After hint not used: not a regular file' <<<"$stderr")" -eq 2 ]
	[[ $stderr == *"attempt 3/3 failed with exit 1; giving up: no attempts left"* ]]
}

@test "SIGTERM while the attempt's end waits for the circuit's lock: 143 at once, the signal is not forgotten" {
	"$RETRY" --circuit lk true
	"$RETRY" --circuit lk -b 10ms sh -c '
		if [ "$RETRY_ATTEMPT" = 1 ]; then
			trap "exit 1" TERM; touch started
			sleep 30 & wait
		fi
		touch second' 2>err 3>&- &
	local pid=$!
	later "$pid"
	wait_for started
	# Another run holds the record when the attempt ends.
	hold_lock "$RETRY_STATE_DIR/.lk.lock"
	stop_and_time TERM "$pid"
	kill -KILL "$holder"
	cat err
	[ "$rc" -eq 143 ]
	[ "$took" -lt 250 ]
	[ ! -e second ]
	[ "$(cat err)" = "retry: attempt 1/5 failed with exit 1; giving up: interrupted by SIGTERM" ]
}

@test "SIGTERM while waiting for the circuit's lock before an attempt: 143 at once" {
	"$RETRY" --circuit lk true
	hold_lock "$RETRY_STATE_DIR/.lk.lock"
	"$RETRY" --circuit lk touch ran 2>err 3>&- &
	local pid=$!
	later "$pid"
	sleep 0.3
	stop_and_time TERM "$pid"
	kill -KILL "$holder"
	cat err
	[ "$rc" -eq 143 ]
	[ "$took" -lt 250 ]
	[ ! -e ran ]
	[ "$(grep -c 'attempt 1' err)" -eq 0 ]
	[ "$(cat err)" = "retry: interrupted by SIGTERM before the first attempt" ]
}

@test "a released lock wakes the waiting run at once, not at its next look" {
	"$RETRY" --circuit lk true
	hold_lock "$RETRY_STATE_DIR/.lk.lock"
	"$RETRY" --circuit lk touch ran 3>&- &
	local pid=$!
	later "$pid"
	sleep 0.3
	[ ! -e ran ]
	kill -KILL "$holder"
	wait "$holder" || true
	wait_for ran 20
	wait "$pid"
}

@test "a failure of retry itself during an attempt (125) stops the attempt's whole group first" {
	# The copy of stdin passes a file size limit: retry exits 125.  The
	# attempt ignores the SIGXFSZ that retry forwards, and leaves a child.
	rc=0
	(
		ulimit -f 50
		{ sleep 0.3; head -c 1000000 /dev/zero; } | "$RETRY" -I sh -c '
			trap "" XFSZ; sleep 30 & echo $! >kid; echo $$ >pid
			wait'
	) 2>err || rc=$?
	cat err
	[ "$rc" -eq 125 ]
	[ "$(cat err)" = "retry: temporary file: File too large" ]
	gone "$(cat pid)"
	gone "$(cat kid)"
}

@test "a full TMPDIR while the copy of stdin grows: the attempt runs on with all its input, and a retry is refused in one line" {
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	head -c 3000000 /dev/urandom >data
	# -I, the default bound, and a socket (read(2), not splice(2)): the
	# attempt gets every byte and its own status, never 125 or SIGKILL.
	for how in -I ""; do
		rm -f got
		rc=0
		small_tmpdir sh -c 'slow() { head -c 500000 data; sleep 0.1; tail -c +500001 data; }
			slow | "$1" $2 -n 3 -b 10ms -j none sh -c "cat >>got; exit 1"' \
		    sh "$RETRY" "$how" 2>err || rc=$?
		cat err
		[ "$rc" -eq 1 ]
		cmp got data
		[ "$(cat err)" = "retry: attempt 1/3 failed with exit 1; giving up: no room in TMPDIR to keep its standard input for a retry (No space left on device)" ]
	done
	rm -f got
	run -0 --separate-stderr small_tmpdir socket-stdin data "$RETRY" \
	    --report r.json -n 3 -b 10ms sh -c 'cat >got'
	cmp got data
	[ -z "$stderr" ]
	# A retry after all would run on less input: refused, said, reported.
	rm -f got
	run -1 --separate-stderr small_tmpdir socket-stdin data "$RETRY" \
	    --report r.json -n 3 -b 10ms sh -c 'cat >got; exit 1'
	cmp got data
	expect_stderr "retry: attempt 1/3 failed with exit 1; giving up: no room in TMPDIR to keep its standard input for a retry (No space left on device)"
	grep -q '"outcome": "not_retryable"' r.json
}

@test "-O with a full TMPDIR: the attempt's output reaches stdout whole after one line, and no retry follows it there" {
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	python3 -c 'import json; print(json.dumps([{"n": i, "s": "x" * 40} for i in range(50000)]))' >doc.json
	local held="retry: -O: no room in $TMPDIR to hold the attempt's output (No space left on device): the 1048576 bytes held and the rest go to standard output now, and no retry may follow"
	# A success: its whole document on stdout, to a file (copy_file_range)
	# and through a pipe to a JSON reader (splice, then read and write
	# with a pattern), and the one line.
	run -0 --separate-stderr small_tmpdir "$RETRY" -O -n 3 -b 10ms cat doc.json
	[ "$output" = "$(cat doc.json)" ]
	expect_stderr "$held"
	for pattern in --jitter=full --on-output=nosuchline; do
		rm -f out
		small_tmpdir sh -c '"$1" -O "$2" -n 3 -b 10ms cat doc.json 2>err |
		    python3 -c "import json, sys; d = sys.stdin.read(); json.loads(d); open(\"out\", \"w\").write(d)"' \
		    sh "$RETRY" "$pattern"
		cmp out doc.json
		[ "$(cat err)" = "$held" ]
	done
	# A failure that would be retried: its output stays, once, the run
	# ends with its status, and says why.
	run -1 --separate-stderr small_tmpdir "$RETRY" --report r.json -O -n 3 \
	    -b 10ms sh -c 'cat doc.json; exit 1'
	[ "$output" = "$(cat doc.json)" ]
	expect_stderr "$held
retry: attempt 1/3 failed with exit 1; giving up: its output went to standard output, as -O had no room in TMPDIR to hold it (No space left on device)"
	grep -q '"outcome": "not_retryable"' r.json
}

need_nobody_and_prlimit() {
	# ASan's runtime needs a thread of its own at exit: no process left.
	[ -z "${TEST_SANITIZED:-}" ] || skip "the sanitizers' runtime needs processes of its own"
	[ "$(id -u)" -eq 0 ] || skip "needs root to run as another user"
	id nobody >/dev/null 2>&1 || skip "no user nobody"
	SETPRIV=$(setpriv_path) || skip "no setpriv that can change the user"
	nobody_runs_retry
	command -v prlimit >/dev/null || skip "no prlimit"
	# The limit counts the processes of the user: nobody must have none.
	[ -z "$(ps -u nobody -o pid= 2>/dev/null)" ] || skip "nobody runs processes"
}

@test "no process left for an attempt (EAGAIN): a failed attempt, retried, then 125 with its own message" {
	need_nobody_and_prlimit
	chmod 777 .
	run -125 --separate-stderr prlimit --nproc=1 -- "$SETPRIV" \
	    --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	    "$RETRY" -n 3 -b 10ms --report r.json touch ran
	echo "$stderr"
	[ "${#stderr_lines[@]}" -eq 3 ]
	matches "${stderr_lines[0]}" '^retry: attempt 1/3 could not start: Resource temporarily unavailable; next in 0\.[0-9]{3}s$'
	[ "${stderr_lines[2]}" = "retry: attempt 3/3 could not start: Resource temporarily unavailable; giving up: no attempts left" ]
	[ ! -e ran ]
	grep -q '"status": 125, .*"error": "Resource temporarily unavailable"' r.json
	grep -q '"outcome": "attempts_exhausted"' r.json
	grep -q '"exit_status": 125' r.json
}

@test "a shortage of processes that passes is ridden out: the next attempt runs" {
	need_nobody_and_prlimit
	chmod 777 .
	# Two processes for nobody: this one and retry; none left for an attempt.
	"$SETPRIV" --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	    sleep 30 3>&- &
	local blocker=$!
	later "$blocker"
	sleep 0.1
	prlimit --nproc=2 -- "$SETPRIV" --reuid=nobody --regid="$(id -g nobody)" \
	    --clear-groups "$RETRY" -n 5 -b 300ms -j none touch ran 2>err 3>&- &
	local pid=$!
	later "$pid"
	wait_for_text err 'could not start'
	kill -KILL "$blocker"
	rc=0
	wait "$pid" || rc=$?
	cat err
	[ "$rc" -eq 0 ]
	[ -e ran ]
	[ "$(cat err)" = "retry: attempt 1/5 could not start: Resource temporarily unavailable; next in 0.300s" ]
}

# stalled_stderr: a FIFO ef whose reader (killed in teardown) never reads.
stalled_stderr() {
	mkfifo ef
	(exec 7<>ef; sleep 30) 3>&- &
	later $!
	disown $!	# no notice when teardown kills it
}

# ends_within PID MS: PID, a child of the test's shell, ends within MS
# milliseconds (else it is killed and the test fails); sets $rc and $took.
ends_within() {
	local t0
	t0=$(now_ms)
	while alive "$1" && [ $(($(now_ms) - t0)) -lt "$2" ]; do
		sleep 0.01
	done
	took=$(($(now_ms) - t0))
	if alive "$1"; then
		kill -KILL "$1" 2>/dev/null || true
		echo "still running after $took ms"
		return 1
	fi
	rc=0
	wait "$1" || rc=$?
	echo "status $rc after $took ms"
}

@test "-Q: a failed run's report to a stderr that is never read holds retry past the deadline by -k at most" {
	stalled_stderr
	# 200 kB held: more than the pipe takes.
	"$RETRY" -Q -D 0.3 -k 100ms -n 1 sh -c 'head -c 200000 /dev/zero
		exit 1' 2>ef 3>&- &
	local pid=$!
	later "$pid"
	ends_within "$pid" 3000
	[ "$rc" -eq 1 ]
	# 0.3 s and 0.1 s, from the start; the bound is for a loaded machine.
	between "$took" 250 1500
}

@test "-Q: SIGTERM while the failed run's report waits for a stderr that is never read: at once, with the run's status" {
	stalled_stderr
	"$RETRY" -Q -n 1 sh -c 'head -c 200000 /dev/zero; touch ended; exit 1' \
	    2>ef 3>&- &
	local pid=$!
	later "$pid"
	wait_for ended
	sleep 0.2	# into the report, which waits for room in the pipe
	alive "$pid"
	kill -TERM "$pid"
	ends_within "$pid" 1000
	[ "$rc" -eq 1 ]
	[ "$took" -lt 250 ]
}

@test "--report - to a stderr that is never read holds retry past the deadline by -k at most; SIGTERM ends it at once" {
	stalled_stderr
	# A process the attempt leaves behind fills the pipe from behind.
	"$RETRY" --report - -D 0.3 -k 100ms -n 1 sh -c '
		head -c 200000 /dev/zero >&2 & sleep 0.05; exit 1' 2>ef 3>&- &
	local pid=$!
	later "$pid"
	ends_within "$pid" 3000
	[ "$rc" -eq 1 ]
	between "$took" 250 1500
	"$RETRY" --report - -n 1 sh -c '
		head -c 200000 /dev/zero >&2 & sleep 0.05; touch ended; exit 1' \
	    2>ef 3>&- &
	pid=$!
	later "$pid"
	wait_for ended
	sleep 0.2
	alive "$pid"
	kill -TERM "$pid"
	ends_within "$pid" 1000
	[ "$rc" -eq 1 ]
	[ "$took" -lt 250 ]
}
