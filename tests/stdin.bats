#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The same standard input for every attempt: a regular file from where
# retry found it, --replay-stdin for a pipe, a socket or a closed stdin,
# and the temporary files that takes, gone however retry ends.  The 1 GiB
# case is tagged slow and comes last.

load helpers/common

# A test that hangs fails instead of stopping the whole file.
BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-120}

PTYRUN=$BATS_TEST_DIRNAME/helpers/ptyrun

# A line of an attempt's script: the targets of retry's open files.
# An fd of retry's may close while this lists them (readlink then fails).
FDS='for f in /proc/$PPID/fd/*; do readlink "$f" || :; done'

setup() {
	in_test_dir
}

# A retry that a failed test left in the background.
teardown() {
	kill_bg_retry
}

@test "stdin a regular file: every attempt reads it from where retry found it" {
	printf 'header\nline 2\nline 3\n' >in
	rc=0
	{
		read -r first
		"$RETRY" -n 3 -b 10ms -j none sh -c '
			case $RETRY_ATTEMPT in 1) head -n1 ;; *) cat ;; esac
			exit 1' >out 2>err
	} <in || rc=$?
	[ "$first" = header ]
	[ "$rc" -eq 1 ]
	[ "$(cat out)" = "line 2
line 2
line 3
line 2
line 3" ]
	[ "$(cat err)" = "retry: attempt 1/3 failed with exit 1; next in 0.010s
retry: attempt 1 left 7 bytes on standard output; the next attempt's output follows (-O sends only the last attempt's there)
retry: attempt 2/3 failed with exit 1; next in 0.020s
retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
}

@test "--replay-stdin: a regular file is read in place, not copied; a pipe is copied to a file without a name in \$TMPDIR" {
	printf 'header\nline 2\n' >in
	{ read -r first; "$RETRY" -I -n 2 -b 10ms -j none sh -c \
	    'cat; '"$FDS"' >>fds; exit 1' >out 2>/dev/null || true; } <in
	[ "$(cat out)" = "line 2
line 2" ]
	run -1 grep -c 'retry\.' fds

	rm fds
	cat in | "$RETRY" --replay-stdin -n 2 -b 10ms -j none sh -c \
	    'cat; '"$FDS"' >>fds; ls "$TMPDIR" >>listing; exit 1' >out 2>/dev/null || true
	[ "$(cat out)" = "header
line 2
header
line 2" ]
	# A file without a name: O_TMPFILE's "#INODE", else mkstemp's, unlinked.
	run -0 grep -cE "^$TMPDIR/(#[0-9]+|retry\.[A-Za-z0-9]{6}) \(deleted\)$" fds
	[ "$output" = 2 ]	# one copy, seen by each attempt
	# Only the directory of the Retry-After hints has a name.
	[ "$(sort -u listing)" = "retry-$(id -u)" ]
	[ "$(tmp_files)" = "" ]

	# No $TMPDIR: /tmp.
	rm fds
	echo x | env -u TMPDIR "$RETRY" -I -n 1 sh -c "$FDS >fds" 2>/dev/null
	run -0 grep -cE '^/tmp/(#[0-9]+|retry\.[A-Za-z0-9]{6}) \(deleted\)$' fds
}

@test "--replay-stdin: every attempt sees the same bytes from a pipe" {
	head -c 300000 /dev/urandom >in	# more than a pipe holds, NULs included
	rc=0
	cat in | "$RETRY" -I -n 3 -b 10ms -j none \
	    sh -c 'cksum >>sums; exit 1' 2>err || rc=$?
	[ "$rc" -eq 1 ]
	want=$(cksum <in)
	[ "$(cat sums)" = "$want
$want
$want" ]
	[ "$(cat err)" = "retry: attempt 1/3 failed with exit 1; next in 0.010s
retry: attempt 2/3 failed with exit 1; next in 0.020s
retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
}

@test "--replay-stdin: every attempt sees the same bytes from a socket" {
	head -c 300000 /dev/urandom >in
	rc=0
	socket-stdin in "$RETRY" -I -n 2 -b 10ms -j none \
	    sh -c 'readlink /proc/$PPID/fd/0 >>fd0; cksum >>sums; exit 1' \
	    2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
	[[ $(head -n1 fd0) == socket:* ]]
	want=$(cksum <in)
	[ "$(cat sums)" = "$want
$want" ]
}

@test "--replay-stdin: attempts that read nothing, one line, or close stdin neither block retry nor cost the next attempt input" {
	awk 'BEGIN { for (i = 1; i <= 200000; i++) print i }' >in	# 1.3 MB
	rc=0
	cat in | timeout 20 "$RETRY" -I -n 5 -b 10ms -j none sh -c '
		case $RETRY_ATTEMPT in
		1) exit 1 ;;
		2) head -n1 >first; exit 1 ;;
		3) exec <&-; sleep 0.1; exit 1 ;;
		*) cksum >sum ;;
		esac' 2>err || rc=$?
	[ "$rc" -eq 0 ]
	[ "$(cat first)" = 1 ]
	[ "$(cat sum)" = "$(cksum <in)" ]
	[ "$(cat err)" = "retry: attempt 1/5 failed with exit 1; next in 0.010s
retry: attempt 2/5 failed with exit 1; next in 0.020s
retry: attempt 3/5 failed with exit 1; next in 0.040s" ]
}

@test "--replay-stdin: input still arriving reaches the first attempt as it comes and later attempts whole" {
	head -c 200000 /dev/urandom >in
	{ printf 'ping\n'; cat in; } >whole
	# The rest comes only once the first attempt has read "ping" and
	# the second has started.
	{
		printf 'ping\n'
		wait_for got-ping && wait_for started-2
		sleep 0.05
		cat in
	} | "$RETRY" -I -n 3 -b 10ms -j none sh -c '
		case $RETRY_ATTEMPT in
		1) read -r line; echo "$line" >got-ping; exit 1 ;;
		2) touch started-2; cksum >sum2; exit 1 ;;
		*) cksum >sum3 ;;
		esac' 2>err
	[ "$(cat got-ping)" = ping ]
	[ "$(cat sum2)" = "$(cksum <whole)" ]
	[ "$(cat sum3)" = "$(cksum <whole)" ]
}

@test "--replay-stdin: empty input ends for every attempt" {
	rc=0
	: | timeout 5 "$RETRY" -I -n 2 -b 10ms -j none \
	    sh -c 'wc -c >>counts; exit 1' 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(cat counts)" = "0
0" ]
}

@test "--replay-stdin: a closed stdin is an empty one for every attempt" {
	rc=0
	timeout 5 "$RETRY" -I -n 2 -b 10ms -j none \
	    sh -c 'wc -c >>counts; exit 1' <&- 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(cat counts)" = "0
0" ]
}

@test "--replay-stdin refuses a terminal: exit 125, one line, nothing run, nothing left" {
	run -125 "$PTYRUN" -- "$RETRY" -I sh -c 'touch ran'
	[ "$output" = $'retry: --replay-stdin: standard input is a terminal\r' ]
	[ ! -e ran ]
	[ "$(tmp_files)" = "" ]
}

# ---- Without -I: a pipe or a socket is replayed up to 16 MiB ------------------

@test "a piped stdin reaches every attempt whole by default, from memory up to 64 KiB: no file" {
	rc=0
	printf 'payload\n' | "$RETRY" -n 3 -b 10ms -j none sh -c \
	    'wc -c >>counts; '"$FDS"' >>fds; exit 1' 2>err || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(cat counts)" = "8
8
8" ]
	! grep -q 'deleted' fds || false
	[ "$(tmp_files)" = "" ]
	[ "$(cat err)" = "retry: attempt 1/3 failed with exit 1; next in 0.010s
retry: attempt 2/3 failed with exit 1; next in 0.020s
retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
	# A socket too; an attempt that reads part of it leaves the next whole.
	head -c 300000 /dev/urandom >in
	rc=0
	socket-stdin in "$RETRY" -n 3 -b 10ms -j none sh -c '
		case $RETRY_ATTEMPT in 1) head -c 10 >/dev/null ;; *) cksum >>sums ;; esac
		exit 1' 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
	want=$(cksum <in)
	[ "$(cat sums)" = "$want
$want" ]
}

@test "a piped stdin past 64 KiB goes on in a file without a name; a terminal, /dev/null and a regular file are never copied" {
	head -c 1000000 /dev/urandom >in
	rc=0
	cat in | "$RETRY" -n 2 -b 10ms -j none sh -c \
	    'cksum >>sums; '"$FDS"' >>fds; exit 1' 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
	want=$(cksum <in)
	[ "$(cat sums)" = "$want
$want" ]
	run -0 grep -cE "^$TMPDIR/(#[0-9]+|retry\.[A-Za-z0-9]{6}) \(deleted\)$" fds
	[ "$output" = 2 ]
	[ "$(tmp_files)" = "" ]
	# /dev/null and a regular file: the attempt's stdin is retry's own.
	"$RETRY" -n 1 sh -c 'readlink /proc/$$/fd/0 >fd0' </dev/null
	[ "$(cat fd0)" = /dev/null ]
	"$RETRY" -n 1 sh -c 'readlink /proc/$$/fd/0 >fd0' <in
	[ "$(cat fd0)" = "$PWD/in" ]
	# A terminal.
	run -0 "$PTYRUN" -- "$RETRY" -n 1 sh -c '[ -t 0 ] && echo tty'
	[ "$output" = $'tty\r' ]
}

@test "a piped stdin past 16 MiB: the first attempt gets all of it, and the run ends before a retry, naming -I and --share-stdin" {
	rc=0
	head -c $((16 * 1024 * 1024 + 1)) /dev/zero | timeout 60 "$RETRY" \
	    --report r.json -n 3 -b 10ms -j none sh -c 'wc -c >>counts; exit 3' 2>err || rc=$?
	[ "$rc" -eq 3 ]
	[ "$(cat counts)" = 16777217 ]
	[ "$(cat err)" = "retry: attempt 1/3 failed with exit 3; giving up: its standard input passed the 16 MiB kept for a retry (-I keeps any size, --share-stdin lets attempts read on)" ]
	grep -q '"outcome": "not_retryable"' r.json
	# Exactly 16 MiB is kept whole: retried as usual.
	rm counts
	rc=0
	head -c $((16 * 1024 * 1024)) /dev/zero | timeout 60 "$RETRY" \
	    -n 2 -b 10ms -j none sh -c 'wc -c >>counts; exit 3' 2>/dev/null || rc=$?
	[ "$rc" -eq 3 ]
	[ "$(cat counts)" = "16777216
16777216" ]
	# With -I any size; with --share-stdin the next attempt reads on.
	rm counts
	head -c $((16 * 1024 * 1024 + 1)) /dev/zero | timeout 60 "$RETRY" -I \
	    -n 2 -b 10ms -j none sh -c 'wc -c >>counts; exit 3' 2>/dev/null || rc=$?
	[ "$(cat counts)" = "16777217
16777217" ]
	rm counts
	head -c $((16 * 1024 * 1024 + 1)) /dev/zero | timeout 60 "$RETRY" --share-stdin \
	    -n 2 -b 10ms -j none sh -c 'wc -c >>counts; exit 3' 2>/dev/null || rc=$?
	[ "$(cat counts)" = "16777217
0" ]
}

@test "without a file in TMPDIR the copy stays in memory: 64 KiB replayed, more ends the run before a retry, -v says why" {
	rc=0
	head -c 1000 /dev/zero | TMPDIR=$PWD/none "$RETRY" -n 2 -b 10ms -j none \
	    sh -c 'wc -c >>counts; exit 1' 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(cat counts)" = "1000
1000" ]
	rm counts
	rc=0
	head -c 100000 /dev/zero | TMPDIR=$PWD/none "$RETRY" -v -n 2 -b 10ms -j none \
	    sh -c 'wc -c >>counts; exit 1' 2>err || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(cat counts)" = 100000 ]
	grep -qx 'retry: standard input kept in memory only: temporary file: No such file or directory' err
	grep -qx 'retry: attempt 1/2 failed with exit 1; giving up: its standard input passed the 64 KiB kept for a retry (-I keeps any size, --share-stdin lets attempts read on)' err
}

@test "input that retry took from a pipe and no attempt read is said at the end, with its bytes, even with -q" {
	local line="retry: 4 bytes of standard input went to no attempt (retry took them to replay; --share-stdin leaves them to the next reader, </dev/null gives the command none)"
	# The loop reads a line, retry takes the rest for a replay that the
	# command, which reads nothing, never asks for: the loop ends.
	printf 'a\nb\nc\n' | while read -r x; do
		echo "line $x"
		"$RETRY" -q -- sleep 0.1
	done >out 2>err
	[ "$(cat out)" = "line a" ]
	[ "$(cat err)" = "$line" ]
	# --share-stdin leaves them to the loop; an attempt that reads them
	# all, or </dev/null, says nothing.
	printf 'a\nb\nc\n' | while read -r x; do
		echo "line $x"
		"$RETRY" --share-stdin -- sleep 0.1
	done >out 2>err
	[ "$(cat out)" = "line a
line b
line c" ]
	[ ! -s err ]
	printf 'a\nb\nc\n' | "$RETRY" cat >out 2>err
	[ ! -s err ]
	"$RETRY" -- sleep 0.1 </dev/null 2>err
	[ ! -s err ]
	# Each attempt reads 1 byte of the copy's 3: 2 unread, said before the
	# last line.
	rc=0
	printf abc | "$RETRY" -n 2 -b 10ms -j none sh -c '
		dd bs=1 count=1 2>/dev/null >>got; exit 1' 2>err || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(cat got)" = aa ]
	[ "$(sed -n 2p err)" = "${line/4 bytes/2 bytes}" ]
	[ "$(sed -n 3p err)" = "retry: attempt 2/2 failed with exit 1; giving up: no attempts left" ]
}

@test "--replay-stdin and --share-stdin exclude each other: exit 125, one line, nothing run" {
	run -125 "$RETRY" -I --share-stdin sh -c 'touch ran'
	[ "$output" = "retry: --replay-stdin and --share-stdin exclude each other: replay the input, or let attempts read on" ]
	[ ! -e ran ]
}

@test "temporary files are gone however retry ends: success, failure, SIGTERM in a delay, usage errors" {
	[ "$(tmp_files)" = "" ]
	echo data | "$RETRY" -I -O --report r.json -n 2 -b 10ms -j none \
	    sh -c 'cat; [ "$RETRY_ATTEMPT" = 2 ]' >out 2>err
	[ "$(cat out)" = data ]
	[ "$(tmp_files)" = "" ]
	rc=0
	echo data | "$RETRY" -I -O --report r.json -n 2 -b 10ms -j none \
	    --on-output x sh -c 'cat; exit 1' >out 2>err || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(tmp_files)" = "" ]

	awk 'BEGIN { for (i = 1; i <= 100000; i++) print i }' | "$RETRY" -I -O --report r.json -b 20s -j none \
	    --on-output x sh -c 'cat; exit 1' >out 2>err 3>&- &
	echo $! >bg.pid
	wait_for_text err 'next in 20.000s'
	[ "$(tmp_files)" = "" ]	# -I and -O: files without a name
	stop_and_time TERM "$(cat bg.pid)"
	[ "$rc" -eq 143 ]
	[ "$(tmp_files)" = "" ]

	run -125 "$RETRY" --no-such-option true
	run -125 "$RETRY" -I -O --report nodir/r.json true
	run -125 "$RETRY" -I -O --on-output '(' true
	[ "$(tmp_files)" = "" ]
}

# ---- Slow -------------------------------------------------------------------

# bats test_tags=slow
@test "--replay-stdin: 1 GiB reaches every attempt whole with retry's peak RSS under 4 MiB" {
	[ -z "${TEST_SANITIZED:-}" ] || skip "memory is measured without sanitizers"
	rc=0
	head -c 1073741824 /dev/zero | timeout 100 "$RETRY" -I -n 2 -b 10ms -j none sh -c '
		wc -c >>counts
		grep VmHWM "/proc/$PPID/status" >>hwm
		exit 1' 2>err || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(cat counts)" = "1073741824
1073741824" ]
	cat hwm
	while read -r _ kb _; do
		[ "$kb" -lt 4096 ]
	done <hwm
	[ "$(tmp_files)" = "" ]
}

@test "-I: every attempt gets identical bytes at 0 B, 1 B, 64 KiB +- 1, 1 MiB + 1 and 256 MiB" {
	local n
	for n in 0 1 65535 65536 65537 1048577 268435456; do
		rm -f sums
		head -c "$n" /dev/urandom >in
		want=$(cksum <in)
		rc=0
		cat in | "$RETRY" -I -n 3 -b 1ms -j none sh -c \
		    'cksum >>sums; exit 1' 2>/dev/null || rc=$?
		[ "$rc" -eq 1 ]
		[ "$(sort -u sums)" = "$want" ]
		[ "$(wc -l <sums)" -eq 3 ]
	done
	rm -f in
}
