#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The data paths at full size (issue 15): megabytes through -I, -O and the
# output patterns, to pipes (Linux: splice and tee), files and a terminal
# (PIPE_BUF at a time); lines longer than every buffer; readers that stop
# reading or go away.  Correctness and generous bounds only: the speed is
# measured by make bench.

load helpers/common

BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-120}

PTYRUN=$BATS_TEST_DIRNAME/helpers/ptyrun

setup_file() {
	# Two sources, distinct at every offset, so that a lost, doubled or
	# reordered chunk shows in cmp.
	export DATA=$BATS_FILE_TMPDIR
	head -c 33554432 /dev/urandom >"$DATA/a"
	head -c 25165824 /dev/urandom >"$DATA/b"
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	mkdir "$TMPDIR"
}

# A retry that a failed test left in the background, and its attempt.
teardown() {
	local p f
	for f in bg.pid pid; do
		[ -s "$f" ] || continue
		p=$(cat "$f")
		kill -KILL "$p" 2>/dev/null || true
	done
	[ -s reader.pid ] && kill -KILL "$(cat reader.pid)" 2>/dev/null
	return 0
}

# A FIFO for stderr, read into FILE by cat in the background: retry's
# stderr is then a pipe too.
err_pipe() {
	mkfifo errp
	cat errp >"$1" 3>&- &
	echo $! >reader.pid
}

# ---- Whole and in order ----------------------------------------------------

@test "--on-output: tens of MB on both streams at once, to pipes, arrive whole and in order" {
	err_pipe err
	"$RETRY" --on-output 'no such line' --stop-on-output 'nor this' -n 1 \
	    sh -c 'cat "$DATA/a" & cat "$DATA/b" >&2; wait' 2>errp | cat >out
	[ "${PIPESTATUS[0]}" -eq 0 ]
	wait "$(cat reader.pid)"
	cmp "$DATA/a" out
	cmp "$DATA/b" err
}

@test "--on-output: a pattern that has matched lets the rest through unread, whole" {
	# '^' matches the first line: what follows no longer needs reading.
	err_pipe err
	"$RETRY" --on-output '^' -n 2 -b 10ms -j none sh -c '
		[ "$RETRY_ATTEMPT" = 2 ] && exit 0
		cat "$DATA/a" & cat "$DATA/b" >&2; wait' 2>errp | cat >out
	[ "${PIPESTATUS[0]}" -eq 0 ]
	wait "$(cat reader.pid)"
	cmp "$DATA/a" out
	{
		cat "$DATA/b"
		echo "retry: attempt 1/2 succeeded; next in 0.010s"
		echo "retry: attempt 1 left $(wc -c <"$DATA/a") bytes on standard output; the next attempt's output follows (-O sends only the last attempt's there)"
	} | cmp - err
}

@test "--on-output: tens of MB on both streams to files arrive whole and in order" {
	"$RETRY" --on-output 'no such line' -n 1 \
	    sh -c 'cat "$DATA/a" & cat "$DATA/b" >&2; wait' >out 2>err
	cmp "$DATA/a" out
	cmp "$DATA/b" err
}

@test "--on-output through a terminal, PIPE_BUF at a time, arrives whole" {
	seq 1 200000 >want
	run -0 "$PTYRUN" -t 60000 -- "$RETRY" --on-output x -n 1 seq 1 200000
	printf '%s\n' "$output" | tr -d '\r' | cmp - want
}

@test "--buffer-stdout: tens of MB held, to a pipe: the last attempt's whole on stdout, the first's on stderr" {
	err_pipe err
	"$RETRY" -O -n 2 -b 10ms -j none sh -c '
		case $RETRY_ATTEMPT in
		1) cat "$DATA/b"; exit 1 ;;
		*) cat "$DATA/a" ;;
		esac' 2>errp | cat >out
	[ "${PIPESTATUS[0]}" -eq 0 ]
	wait "$(cat reader.pid)"
	cmp "$DATA/a" out
	{
		cat "$DATA/b"
		echo "retry: attempt 1/2 failed with exit 1; next in 0.010s"
	} | cmp - err
}

@test "--buffer-stdout: tens of MB held, to files, whole" {
	"$RETRY" -O -n 2 -b 10ms -j none sh -c '
		case $RETRY_ATTEMPT in
		1) cat "$DATA/b"; exit 1 ;;
		*) cat "$DATA/a" ;;
		esac' >out 2>err
	cmp "$DATA/a" out
	{
		cat "$DATA/b"
		echo "retry: attempt 1/2 failed with exit 1; next in 0.010s"
	} | cmp - err
}

@test "--buffer-stdout through a terminal, PIPE_BUF at a time, arrives whole" {
	seq 1 200000 >want
	run -0 "$PTYRUN" -t 60000 -- "$RETRY" -O -n 1 seq 1 200000
	printf '%s\n' "$output" | tr -d '\r' | cmp - want
}

@test "--replay-stdin: tens of MB from a pipe reach every attempt whole, whether it reads all or stops early" {
	rc=0
	cat "$DATA/a" | "$RETRY" -I -n 3 -b 10ms -j none sh -c '
		case $RETRY_ATTEMPT in
		1) head -c 1000000 | cksum >>sums ;;
		*) cksum >>sums ;;
		esac
		exit 1' 2>err || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(sed -n 1p sums)" = "$(head -c 1000000 "$DATA/a" | cksum)" ]
	[ "$(sed -n 2p sums)" = "$(cksum <"$DATA/a")" ]
	[ "$(sed -n 3p sums)" = "$(cksum <"$DATA/a")" ]
}

@test "--replay-stdin with the output patterns and -O together: every byte where it belongs" {
	err_pipe err
	cat "$DATA/a" | "$RETRY" -I -O --on-output 'no such line' -n 2 -b 10ms \
	    -j none sh -c 'cat; cat "$DATA/b" >&2; [ "$RETRY_ATTEMPT" = 2 ]' \
	    2>errp | cat >out
	[ "${PIPESTATUS[1]}" -eq 0 ]
	wait "$(cat reader.pid)"
	cmp "$DATA/a" out
	{
		cat "$DATA/b" "$DATA/a"
		echo "retry: attempt 1/2 failed with exit 1; next in 0.010s"
		cat "$DATA/b"
	} | cmp - err
}

# ---- Long lines --------------------------------------------------------------

# attempts HOW SCRIPT: how many attempts retry --on-output 'throttled$' -n
# 2 makes when each runs SCRIPT and exits 0 (2: a line matched, 1: none).
# HOW is where the output goes: "pipe" (tee), "file" (read and write) or
# "held" (-O, read back from its file).
attempts() {
	local how=$1 opt=
	shift
	rm -f count out
	[ "$how" = held ] && opt=-O
	case $how in
	pipe) "$RETRY" $opt --on-output 'throttled$' -n 2 -b 10ms -j none \
	    sh -c 'echo x >>count; eval "$1"' sh "$1" 2>/dev/null | cat >out ;;
	*) "$RETRY" $opt --on-output 'throttled$' -n 2 -b 10ms -j none \
	    sh -c 'echo x >>count; eval "$1"' sh "$1" >out 2>/dev/null ;;
	esac
	wc -l <count
}

# line N TEXT: a line of N bytes (newline not counted) that ends in TEXT.
line() {
	head -c $(($1 - ${#2})) /dev/zero | tr '\0' -
	printf '%s\n' "$2"
}

@test "a line longer than every buffer is matched on its first 4095 bytes, on each path" {
	line 4095 throttled >l4095
	line 4096 throttled >l4096
	line 200000 throttled >l200k
	{ printf throttled; line 199991 x; } >head200k
	{ line 200000 x; echo throttled; } >after200k
	local how
	for how in pipe file held; do
		echo "path: $how"
		[ "$(attempts $how 'cat l4095')" -eq 2 ]
		[ "$(attempts $how 'cat l4096')" -eq 1 ]
		[ "$(attempts $how 'cat l200k')" -eq 1 ]
		# Long: "throttled$" would not match its first 4095 bytes.
		[ "$(attempts $how 'cat head200k')" -eq 1 ]
		# The line after a long one is matched from its start.
		[ "$(attempts $how 'cat after200k')" -eq 2 ]
		[ "$(attempts $how 'cat l200k; echo throttled')" -eq 2 ]
		# The output itself is untouched.
		[ "$(attempts $how 'cat l200k head200k after200k')" -eq 2 ]
		cat l200k head200k after200k >once
		if [ "$how" = held ]; then
			cmp once out
		else
			cat once once | cmp - out
		fi
	done
	# And "^throttled" does match that long line, at its start: both
	# attempts exit 0 and match, so the run gives up with 1.
	rm -f count
	run -1 "$RETRY" --on-output '^throttled' -n 2 -b 10ms -j none \
	    sh -c 'echo x >>count; cat head200k' </dev/null >/dev/null
	[ "$(wc -l <count)" -eq 2 ]
}

@test "a line that begins in one read and ends in the next is matched whole, on each path" {
	line 3000 throttled >l3000
	# The held file is read 64 KiB at a time: the line starts 1000
	# bytes before the end of the first read.
	{ line 64535 x; cat l3000; } >straddle
	line 5000 x >l5000
	local how
	for how in pipe file held; do
		echo "path: $how"
		[ "$(attempts $how 'head -c 2000 l3000; sleep 0.2; tail -c +2001 l3000')" -eq 2 ]
		[ "$(attempts $how 'cat straddle')" -eq 2 ]
		[ "$(attempts $how 'printf "throt"; sleep 0.2; printf "tled\nok\n"')" -eq 2 ]
		[ "$(attempts $how 'printf "ok\nthrottled"')" -eq 2 ]
		[ "$(attempts $how 'cat l5000; printf throttle; sleep 0.2; printf "d\n"')" -eq 2 ]
		[ "$(attempts $how 'cat l5000; printf throttle; sleep 0.2; printf "d!\n"')" -eq 1 ]
	done
}

# ---- Readers that stop reading, or go -------------------------------------------

# A FIFO whose reader holds it open and never reads.
stuck_reader() {
	mkfifo stuck
	sleep 60 <stuck 3>&- &
	echo $! >reader.pid
	disown	# no notice when teardown kills it
}

@test "a stdout reader that stops reading: --timeout still stops the attempt, stderr still flows, SIGTERM ends retry at once" {
	stuck_reader
	"$RETRY" --on-output x -n 1 --timeout 1500ms sh -c 'echo $$ >pid
		yes &
		i=0; while [ $i -lt 100 ]; do echo "tick $i" >&2; sleep 0.05; i=$((i + 1)); done
		wait' >stuck 2>err 3>&- &
	echo $! >bg.pid
	wait_for pid
	# stderr goes on while stdout is stuck.
	wait_for_text err '^tick 5$'
	# --timeout: the attempt's group gets SIGTERM at 1.5 s.
	gone "$(cat pid)" 500
	sleep 0.2
	alive "$(cat bg.pid)"	# its output waits for the reader
	stop_and_time TERM "$(cat bg.pid)"
	[ "$rc" -eq 143 ]
	between "$took" 0 2000
}

@test "a stdout reader that stops reading: --deadline still stops the attempt, and retry itself, output dropped" {
	stuck_reader
	t0=$(now_ms)
	"$RETRY" --on-output x --deadline 1500ms sh -c 'echo $$ >pid; exec yes' \
	    >stuck 2>err 3>&- &
	echo $! >bg.pid
	wait_for pid
	gone "$(cat pid)" 500
	rc=0
	wait "$(cat bg.pid)" || rc=$?
	took=$(($(now_ms) - t0))
	[ "$rc" -eq 124 ]
	between "$took" 1400 1900
}

@test "--buffer-stdout released to a reader that stops reading: SIGTERM ends retry at once" {
	stuck_reader
	# -n 2: held (the last attempt, not held, is a plain writer's).
	"$RETRY" -O -n 2 sh -c 'echo $$ >pid; head -c 20000000 "$DATA/a"' \
	    >stuck 2>err 3>&- &
	echo $! >bg.pid
	wait_for pid
	gone "$(cat pid)" 500
	sleep 0.2
	alive "$(cat bg.pid)"
	stop_and_time TERM "$(cat bg.pid)"
	# The run had succeeded before the signal: its status, as before.
	[ "$rc" -eq 0 ]
	between "$took" 0 2000
}

@test "--buffer-stdout released to a stderr that is not read: input for -I is still taken meanwhile" {
	stuck_reader
	{
		head -c 1000000 "$DATA/a"
		wait_for released
		cat "$DATA/a"
		touch sent
	} | "$RETRY" -I -O -n 2 -b 10ms -j none sh -c '
		head -c 100 >/dev/null; cat "$DATA/b"; touch released; exit 1' \
	    2>stuck 3>&- &
	echo $! >bg.pid
	# The release waits for stderr; the copy goes on meanwhile.
	wait_for sent 100
	sleep 0.2
	alive "$(cat bg.pid)"
	stop_and_time TERM "$(cat bg.pid)"
	[ "$rc" -eq 143 ]
	between "$took" 0 2000
}

@test "--replay-stdin to an attempt that never reads: --timeout still stops it" {
	rc=0
	t0=$(now_ms)
	cat "$DATA/a" | "$RETRY" -I -n 1 --timeout 1s sh -c 'echo $$ >pid; sleep 30' \
	    2>err || rc=$?
	[ "$rc" -eq 124 ]
	between $(($(now_ms) - t0)) 900 5000
	# The message itself is retry.c's: only that it says so (after the
	# line on the input that no attempt read).
	[[ $(tail -n 1 err) == "retry: attempt 1/1 timed out after 1"* ]]
}

@test "readers that have gone: the attempt's pipe closes (SIGPIPE), held output stops, as before" {
	timeout 20 "$RETRY" --on-output x -n 1 cat "$DATA/a" 2>err |
	    head -c 100 >/dev/null
	[ "${PIPESTATUS[0]}" -eq 141 ]
	[[ $(cat err) == "retry: attempt 1/1 killed by SIGPIPE; giving up: "* ]]
	# Matched already: spliced through, and still closed.
	timeout 20 "$RETRY" --on-output '^' -n 1 cat "$DATA/a" 2>err |
	    head -c 100 >/dev/null
	[ "${PIPESTATUS[0]}" -eq 141 ]
	timeout 20 "$RETRY" -O -n 2 cat "$DATA/a" 2>err | head -c 100 >/dev/null
	[ "${PIPESTATUS[0]}" -eq 0 ]
	[ ! -s err ]
	# The last attempt is not held: its own pipe closes, as without -O.
	timeout 20 "$RETRY" -O -n 1 cat "$DATA/a" 2>err | head -c 100 >/dev/null
	[ "${PIPESTATUS[0]}" -eq 141 ]
	[[ $(cat err) == "retry: attempt 1/1 killed by SIGPIPE; giving up: "* ]]
	# stderr gone as well: retry still ends, with the attempt's status.
	timeout 20 "$RETRY" -O --on-output x -n 2 -b 10ms -j none \
	    sh -c 'cat "$DATA/b" >&2; cat "$DATA/a"; exit 3' 2>&1 >/dev/null |
	    head -c 100 >/dev/null
	[ "${PIPESTATUS[0]}" -eq 3 ]
}
