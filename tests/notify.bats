#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Under systemd: the STATUS= lines retry sends to NOTIFY_SOCKET (a
# notify-listen stands in for systemd), and the priorities its own lines
# carry when stderr is the journal (JOURNAL_STREAM faked to a file's).
load helpers/common

setup() {
	in_test_dir
	unset NOTIFY_SOCKET JOURNAL_STREAM
}

teardown() {
	kill_later
}

# listen ADDRESS: a listener at ADDRESS writing to statuses, bound once
# the file is there; its pid in $listener.  Started from a subshell, so
# that bats says nothing of its end.
listen() {
	(notify-listen "$1" statuses 3>&- & echo $! >listener.pid)
	listener=$(cat listener.pid)
	later "$listener"
	wait_for statuses
}

# statuses_are TEXT: the listener has written TEXT, its lines in order
# (polled for its last line: datagrams are read as the listener runs).
statuses_are() {
	local last n=0
	last=$(printf '%s\n' "$1" | tail -n 1)
	until grep -qFx -- "$last" statuses; do
		[ "$n" -ge 200 ] && break
		sleep 0.01
		n=$((n + 1))
	done
	[ "$(cat statuses)" = "$1" ] && return
	printf 'expected statuses:\n%s\nactual:\n%s\n' "$1" "$(cat statuses)"
	return 1
}

@test "NOTIFY_SOCKET: one STATUS= per attempt and per wait, and one at the end" {
	listen "$PWD/notify"
	NOTIFY_SOCKET=$PWD/notify run -1 "$RETRY" -n 3 -b 10ms -j none false
	statuses_are "STATUS=attempt 1/3 running
STATUS=attempt 1/3 failed with exit 1; next in 0.010s
STATUS=attempt 2/3 running
STATUS=attempt 2/3 failed with exit 1; next in 0.020s
STATUS=attempt 3/3 running
STATUS=attempt 3/3 failed with exit 1; giving up: attempts used up"
}

@test "NOTIFY_SOCKET: an abstract @name; no attempt limit; a success" {
	local name="@retry-notify-test-$$-$BATS_TEST_NUMBER"
	listen "$name"
	NOTIFY_SOCKET=$name run -0 "$RETRY" -n 0 -b 10ms -j none \
	    sh -c '[ "$RETRY_ATTEMPT" -ge 2 ]'
	statuses_are "STATUS=attempt 1 running
STATUS=attempt 1 failed with exit 1; next in 0.010s
STATUS=attempt 2 running
STATUS=attempt 2 succeeded"
}

@test "NOTIFY_SOCKET: a stopped listener (its queue full) never blocks or fails the run; said once with -v" {
	local t0 t1 qlen n
	# Two statuses an attempt, past what a socket's queue holds (10).
	qlen=$(cat /proc/sys/net/unix/max_dgram_qlen 2>/dev/null || echo 10)
	[ "$qlen" -le 200 ] || skip "a datagram queue holds $qlen here"
	n=$((qlen / 2 + 2))
	listen "$PWD/notify"
	kill -STOP "$listener"
	t0=$(now_ms)
	NOTIFY_SOCKET=$PWD/notify run --separate-stderr -1 "$RETRY" -v \
	    -n "$n" -b 1ms -f 1 -j none false
	t1=$(now_ms)
	kill -CONT "$listener"
	between $((t1 - t0)) 0 2000
	[ "$(grep -c '^retry: NOTIFY_SOCKET: a status was dropped: its listener takes none now (Resource temporarily unavailable)$' <<<"$stderr")" -eq 1 ]
	wait_for_text statuses "^STATUS=attempt 1/$n running\$"
	[ "$(head -n 1 statuses)" = "STATUS=attempt 1/$n running" ]
}

@test "NOTIFY_SOCKET: a listener that vanishes mid-run or was never there never fails the run; said once with -v" {
	local t0 t1
	listen "$PWD/notify"
	t0=$(now_ms)
	NOTIFY_SOCKET=$PWD/notify run --separate-stderr -1 "$RETRY" -v \
	    -n 4 -b 10ms -j none sh -c \
	    '[ "$RETRY_ATTEMPT" = 2 ] && kill '"$listener"'; exit 1'
	t1=$(now_ms)
	between $((t1 - t0)) 0 2000
	[ "$(grep -c '^retry: NOTIFY_SOCKET: no more statuses: Connection refused$' <<<"$stderr")" -eq 1 ]
	grep -q '^STATUS=attempt 2/4 running$' statuses

	NOTIFY_SOCKET=$PWD/nothing-here run --separate-stderr -1 "$RETRY" -v \
	    -n 2 -b 10ms false
	[ "$(grep -c '^retry: NOTIFY_SOCKET: no more statuses: No such file or directory$' <<<"$stderr")" -eq 1 ]
}

@test "NOTIFY_SOCKET: the attempts and hooks do not get it, unless --notify-pass" {
	local hook='echo "hook ${NOTIFY_SOCKET-unset}"'
	listen "$PWD/notify"
	NOTIFY_SOCKET=$PWD/notify run -0 "$RETRY" -n 1 --on-success "$hook" \
	    sh -c 'echo "attempt ${NOTIFY_SOCKET-unset}"'
	[ "$output" = "attempt unset
hook unset" ]
	NOTIFY_SOCKET=$PWD/notify run -0 "$RETRY" -n 1 --notify-pass \
	    --on-success "$hook" sh -c 'echo "attempt ${NOTIFY_SOCKET-unset}"'
	[ "$output" = "attempt $PWD/notify
hook $PWD/notify" ]
	statuses_are "STATUS=attempt 1/1 running
STATUS=attempt 1/1 succeeded
STATUS=attempt 1/1 running
STATUS=attempt 1/1 succeeded"
	# Taken away even when it is no address retry can use.
	NOTIFY_SOCKET=relative run -0 "$RETRY" -n 1 \
	    sh -c 'echo "attempt ${NOTIFY_SOCKET-unset}"'
	[ "$output" = "attempt unset" ]
}

@test "NOTIFY_SOCKET: a relative path, an empty value, a name too long or a bare @ are ignored with one -v line" {
	local long
	long=/$(printf '%0200d' 0)
	NOTIFY_SOCKET=run/notify run --separate-stderr -0 "$RETRY" -v -n 1 true
	grep -qx "retry: NOTIFY_SOCKET 'run/notify' ignored: neither an absolute path nor an abstract @name" <<<"$stderr"
	NOTIFY_SOCKET= run --separate-stderr -0 "$RETRY" -v -n 1 true
	grep -qx "retry: NOTIFY_SOCKET '' ignored: empty" <<<"$stderr"
	NOTIFY_SOCKET=$long run --separate-stderr -0 "$RETRY" -v -n 1 true
	grep -qx "retry: NOTIFY_SOCKET '$long' ignored: too long for a socket's address" <<<"$stderr"
	NOTIFY_SOCKET=@ run --separate-stderr -0 "$RETRY" -v -n 1 true
	grep -qx "retry: NOTIFY_SOCKET '@' ignored: no name" <<<"$stderr"
	NOTIFY_SOCKET=run/notify run --separate-stderr -0 "$RETRY" -n 1 true
	[ "$stderr" = "" ]
}

# journal ARGS...: retry ARGS... with stderr appended to the file
# journal, which JOURNAL_STREAM names as the journal's stream.
journal() {
	: >>journal
	JOURNAL_STREAM=$(stat -c %d:%i journal) "$RETRY" "$@" 2>>journal
}

@test "JOURNAL_STREAM: retry's own lines carry their priority; the command's stderr does not" {
	run -1 journal -v -n 2 -b 10ms -j none -K k sh -c 'echo own >&2; exit 1'
	run -0 cat journal
	matches "$output" '^<6>retry: policy: .*
own
<5>retry: attempt 1/2 failed with exit 1; next in 0\.010s
<6>retry: drew .*
own
<5>retry: attempt 2/2 failed with exit 1; giving up: no attempts left
<6>retry: 2 attempts in [0-9.]+s, 0\.0[0-9]+s asleep; stopped: attempts used up$'
	rm journal
	printf 'hi\n' | journal -n 1 true
	run -0 cat journal
	[ "$output" = "<4>retry: 3 bytes of standard input went to no attempt (retry took them to replay; --share-stdin leaves them to the next reader, </dev/null gives the command none)" ]
	rm journal
	run -125 journal -n x true
	run -0 cat journal
	[ "$output" = "<3>retry: -n 'x': invalid number (0 for no limit, or 1 to 2147483647)" ]
}

@test "JOURNAL_STREAM: naming another file, or not DEV:INODE, gives no prefixes" {
	: >other
	JOURNAL_STREAM=$(stat -c %d:%i other) run --separate-stderr -1 \
	    "$RETRY" -n 1 false
	[ "$stderr" = "retry: attempt 1/1 failed with exit 1; giving up: no attempts left" ]
	JOURNAL_STREAM=junk run --separate-stderr -125 "$RETRY" -n x true
	[ "${stderr:0:7}" = "retry: " ]
	# Near misses of the right device and inode.
	: >>log
	d=$(stat -c %d log) i=$(stat -c %i log)
	for v in "$d:" ":$i" "-$d:$i" "$d:${i}x" "$d:$i:" " $d:$i" "$d:+$i" "$d"; do
		: >log
		JOURNAL_STREAM=$v "$RETRY" -n x true 2>>log || true
		[ "$(cut -c1-7 log)" = "retry: " ]
	done
	JOURNAL_STREAM=$d:$i "$RETRY" -n x true 2>>log || true
	[ "$(tail -n 1 log | cut -c1-10)" = "<3>retry: " ]
}
