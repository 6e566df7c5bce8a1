#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The retry rules, with real children: which statuses are retried, what the
# run ends with, what retry says on stderr, and that stdin and stdout are
# the command's.

load helpers/common
load helpers/assert

# A test that hangs fails instead of stopping the whole suite.
BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-20}

setup() {
	cd "$BATS_TEST_TMPDIR"
}

@test "a listed status is retried until the command succeeds; then exit 0" {
	run -0 --separate-stderr "$RETRY" -b 10ms flaky st 2
	[ "$output" = "" ]
	[ "$(attempts st)" -eq 3 ]
	# RETRY_ATTEMPT counts, and every attempt sees the same key.
	[ "$(cut -d' ' -f1 st | tr '\n' ' ')" = "1 2 3 " ]
	[ "$(cut -d' ' -f2 st | sort -u | wc -l)" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	local re='^retry: attempt ([12])/5 failed with exit 1; next in ([0-9]+\.[0-9]{3})s$'
	matches "${stderr_lines[0]}" "$re"
	[ "${BASH_REMATCH[1]}" = 1 ]
	# Equal jitter: the first delay is in [base/2, base], the second in
	# [base, 2 base].
	in_band "${BASH_REMATCH[2]}" 5 10
	matches "${stderr_lines[1]}" "$re"
	[ "${BASH_REMATCH[1]}" = 2 ]
	in_band "${BASH_REMATCH[2]}" 10 20
}

@test "the default list retries 1, 2, 124, 128 and 255" {
	local s
	for s in 1 2 124 128 255; do
		rm -f st
		run -0 --separate-stderr "$RETRY" -j none -b 1ms flaky st 1 "$s"
		[ "$(attempts st)" -eq 2 ]
		expect_stderr "retry: attempt 1/5 failed with exit $s; next in 0.001s"
	done
}

@test "125, retry's own failure, is not on the default list: an outer retry does not re-run an inner one's usage error" {
	run -125 --separate-stderr "$RETRY" -n 3 -b 1ms "$RETRY" --atempts 3 -- true
	[ "${#stderr_lines[@]}" -eq 2 ]
	[ "${stderr_lines[0]}" = "retry: unknown option '--atempts': did you mean --attempts?" ]
	[ "${stderr_lines[1]}" = "retry: attempt 1/3 failed with exit 125; giving up: status 125 is not retryable" ]
}

@test "with -o 0, a success on the last attempt is not given up" {
	run -0 --separate-stderr "$RETRY" -o 0 -n 3 -b 1ms -j none true
	[ "${stderr_lines[2]}" = "retry: attempt 3/3 succeeded; no attempts left" ]
}

@test "a command not found with a later '--' says that options end at the first operand" {
	skip_cannot_run_under_qemu
	run -127 --separate-stderr "$RETRY" -D 5 mins -- true
	expect_stderr "retry: cannot run 'mins': No such file or directory (options end at the first operand: a value has no spaces)"
	run -127 --separate-stderr "$RETRY" no-such-command
	expect_stderr "retry: cannot run 'no-such-command': No such file or directory"
}

@test "a status not on the list ends the run at once, with that status" {
	run -2 --separate-stderr "$RETRY" --on 1 -b 1ms flaky st 3 2
	[ "$output" = "" ]
	[ "$(attempts st)" -eq 1 ]
	expect_stderr "retry: attempt 1/5 failed with exit 2; giving up: status 2 is not retryable"
}

@test "exit 126 and 127 from a child are not retried by default" {
	local s
	for s in 126 127; do
		rm -f st
		run -"$s" --separate-stderr "$RETRY" -b 1ms flaky st 3 "$s"
		[ "$(attempts st)" -eq 1 ]
		expect_stderr "retry: attempt 1/5 failed with exit $s; giving up: status $s is not retryable"
	done
}

@test "exit 126 and 127 from a child are retried when --on lists them" {
	local s
	for s in 126 127; do
		rm -f st
		run -0 --separate-stderr "$RETRY" --on 126,127 -j none -b 1ms \
		    flaky st 1 "$s"
		[ "$(attempts st)" -eq 2 ]
		expect_stderr "retry: attempt 1/5 failed with exit $s; next in 0.001s"
	done
}

@test "--on takes a list of statuses and ranges, and replaces the default" {
	local s
	# Listed: retried once, then success.
	for s in 3 5 6 7; do
		rm -f st
		run -0 "$RETRY" --on 3,5-7 -b 1ms flaky st 1 "$s"
		[ "$(attempts st)" -eq 2 ]
	done
	# Not listed, 1 included: the run ends with that status.
	for s in 1 2 4 8 255; do
		rm -f st
		run -"$s" --separate-stderr "$RETRY" --on 3,5-7 -b 1ms flaky st 1 "$s"
		[ "$(attempts st)" -eq 1 ]
		expect_stderr "retry: attempt 1/5 failed with exit $s; giving up: status $s is not retryable"
	done
}

@test "--on=CODES and -o CODES are the same option" {
	rm -f st
	run -0 "$RETRY" --on=5-7 -b 1ms flaky st 1 6
	[ "$(attempts st)" -eq 2 ]
	rm -f st
	run -0 "$RETRY" -o 200-210,6 -b 1ms flaky st 1 6
	[ "$(attempts st)" -eq 2 ]
	rm -f st
	run -1 "$RETRY" -o6 -b 1ms flaky st 1 1
	[ "$(attempts st)" -eq 1 ]
}

@test "--stop-on wins over --on" {
	run -5 --separate-stderr "$RETRY" --on 1-10 --stop-on 4-6 -b 1ms flaky st 3 5
	[ "$(attempts st)" -eq 1 ]
	expect_stderr "retry: attempt 1/5 failed with exit 5; giving up: status 5 is not retryable"
	# Outside --stop-on, --on still applies.
	rm -f st
	run -0 "$RETRY" --on 1-10 --stop-on 4-6 -b 1ms flaky st 1 3
	[ "$(attempts st)" -eq 2 ]
}

@test "--stop-on also cuts statuses out of the default list" {
	run -1 --separate-stderr "$RETRY" -x 1 -b 1ms flaky st 3
	[ "$(attempts st)" -eq 1 ]
	expect_stderr "retry: attempt 1/5 failed with exit 1; giving up: status 1 is not retryable"
	rm -f st
	run -0 "$RETRY" -x 1 -b 1ms flaky st 1 2
	[ "$(attempts st)" -eq 2 ]
}

@test "--on 0 polls until the command fails" {
	run -1 --separate-stderr "$RETRY" --on 0 -j none -b 1ms \
	    sh -c 'echo x >>st; [ "$(wc -l <st)" -lt 3 ]'
	[ "$(attempts st)" -eq 3 ]
	expect_stderr "retry: attempt 1/5 succeeded; next in 0.001s
retry: attempt 2/5 succeeded; next in 0.002s
retry: attempt 3/5 failed with exit 1; giving up: status 1 is not retryable"
}

@test "when the attempts are used up, retry exits with the last status" {
	run -3 --separate-stderr "$RETRY" -n 3 -j none -b 1ms flaky st 10 3
	[ "$output" = "" ]
	[ "$(attempts st)" -eq 3 ]
	expect_stderr "retry: attempt 1/3 failed with exit 3; next in 0.001s
retry: attempt 2/3 failed with exit 3; next in 0.002s
retry: attempt 3/3 failed with exit 3; giving up: no attempts left"
	# The last status, not the first: 2, then 3, then 4.
	run -4 "$RETRY" -n 3 -b 1ms sh -c 'exit $((RETRY_ATTEMPT + 1))'
}

@test "-n 1 runs the command once and sleeps never" {
	local t0 t1
	t0=$(now_ms)
	run -1 --separate-stderr "$RETRY" -n 1 -b 10s flaky st 10
	t1=$(now_ms)
	[ "$(attempts st)" -eq 1 ]
	expect_stderr "retry: attempt 1/1 failed with exit 1; giving up: no attempts left"
	[ $((t1 - t0)) -lt 2000 ]
}

@test "-n 0 means no limit on attempts" {
	run -0 --separate-stderr "$RETRY" -n 0 -b 1ms -c 2ms flaky st 7
	[ "$(attempts st)" -eq 8 ]
	[ "${#stderr_lines[@]}" -eq 7 ]
	local i
	for i in 1 2 3 4 5 6 7; do
		matches "${stderr_lines[i - 1]}" \
		    "^retry: attempt $i failed with exit 1; next in 0\.00[0-2]s$"
	done
}

@test "a command that does not exist: 127, one attempt, never retried" {
	skip_cannot_run_under_qemu
	run -127 --separate-stderr "$RETRY" -b 10s p-no-such-command
	[ "$output" = "" ]
	expect_stderr "retry: cannot run 'p-no-such-command': No such file or directory"
	# Not even when --on lists 127: exec failure is not an exit status.
	run -127 --separate-stderr "$RETRY" -v --on 126,127 -b 1ms ./no-such-file
	[ "${#stderr_lines[@]}" -eq 3 ]
	matches "${stderr_lines[0]}" "^retry: policy: "
	[ "${stderr_lines[1]}" = "retry: cannot run './no-such-file': No such file or directory" ]
	matches "${stderr_lines[2]}" \
	    '^retry: 1 attempt in [0-9]+\.[0-9]{3}s, 0\.000s asleep; stopped: cannot run the command$'
}

@test "an empty command name: 127 'No such file or directory', as a shell and env(1) say" {
	skip_cannot_run_under_qemu
	run -127 --separate-stderr "$RETRY" -b 10s ''
	expect_stderr "retry: cannot run '': No such file or directory"
	# Whatever PATH holds: an empty entry or a directory is no command.
	run -127 --separate-stderr env PATH=:/usr/bin "$RETRY" -b 10s ''
	expect_stderr "retry: cannot run '': No such file or directory"
}

@test "-v's policy line counts one attempt in the singular" {
	run -0 --separate-stderr "$RETRY" -v -n 1 -K k true
	matches "${stderr_lines[0]}" '^retry: policy: 1 attempt \(0: no limit\), '
}

@test "a file that cannot be executed: 126, one attempt, never retried" {
	skip_cannot_run_under_qemu
	printf '#!/bin/sh\necho ran >>st\n' >notexec
	chmod 644 notexec
	mkdir adir
	run -126 --separate-stderr "$RETRY" -b 10s ./notexec
	expect_stderr "retry: cannot run './notexec': Permission denied"
	run -126 --separate-stderr "$RETRY" -v --on 126,127 -b 1ms ./notexec
	[ "${#stderr_lines[@]}" -eq 3 ]
	[ "${stderr_lines[1]}" = "retry: cannot run './notexec': Permission denied" ]
	matches "${stderr_lines[2]}" \
	    '^retry: 1 attempt in [0-9]+\.[0-9]{3}s, 0\.000s asleep; stopped: cannot run the command$'
	[ ! -e st ]
	run -126 --separate-stderr "$RETRY" -b 1ms ./adir
	expect_stderr "retry: cannot run './adir': Is a directory"
}

@test "a child killed by a signal has status 128+S, and is retried" {
	run -138 --separate-stderr "$RETRY" -n 2 -j none -b 1ms \
	    sh -c 'echo x >>st; kill -USR1 $$'
	[ "$(attempts st)" -eq 2 ]
	expect_stderr "retry: attempt 1/2 killed by SIGUSR1; next in 0.001s
retry: attempt 2/2 killed by SIGUSR1; giving up: no attempts left"
}

@test "--on and --stop-on see a signal S as status 128+S" {
	run -138 --separate-stderr "$RETRY" --stop-on 138 -b 1ms \
	    sh -c 'echo x >>st; kill -USR1 $$'
	[ "$(attempts st)" -eq 1 ]
	expect_stderr "retry: attempt 1/5 killed by SIGUSR1; giving up: status 138 is not retryable"
	rm -f st
	run -0 --separate-stderr "$RETRY" --on 138 -j none -b 1ms \
	    sh -c 'echo x >>st; [ "$(wc -l <st)" -ge 2 ] || kill -USR1 $$'
	[ "$(attempts st)" -eq 2 ]
	expect_stderr "retry: attempt 1/5 killed by SIGUSR1; next in 0.001s"
	rm -f st
	run -137 --separate-stderr "$RETRY" --on 1 -b 1ms \
	    sh -c 'echo x >>st; kill -KILL $$'
	[ "$(attempts st)" -eq 1 ]
	expect_stderr "retry: attempt 1/5 killed by SIGKILL; giving up: status 137 is not retryable"
}

@test "-q prints nothing, whatever the end" {
	run -3 --separate-stderr "$RETRY" -q -n 3 -b 1ms flaky st 10 3
	[ "$(attempts st)" -eq 3 ]
	[ "$stderr" = "" ]
	[ "$output" = "" ]
	rm -f st
	run -2 --separate-stderr "$RETRY" --quiet --on 1 -b 1ms flaky st 10 2
	[ "$stderr" = "" ]
	rm -f st
	run -0 --separate-stderr "$RETRY" -q -b 1ms flaky st 1
	[ "$stderr" = "" ]
	run -127 --separate-stderr "$RETRY" -q p-no-such-command
	[ "$stderr" = "" ]
}

@test "-v adds the policy, where each delay comes from, and a summary" {
	run -1 --separate-stderr "$RETRY" -v -K k1 -n 3 -j none -b 10ms \
	    --on 1-10 -x 5 flaky st 10
	[ "$output" = "" ]
	[ "${#stderr_lines[@]}" -eq 7 ]
	[ "${stderr_lines[0]}" = "retry: policy: 3 attempts (0: no limit), delay 0.010s x 2 up to 30.000s with none jitter, retry on 1-4,6-10, timeout none, deadline none, key k1" ]
	[ "${stderr_lines[1]}" = "retry: attempt 1/3 failed with exit 1; next in 0.010s" ]
	[ "${stderr_lines[2]}" = "retry: drew 0.010s from [0.010s, 0.010s]: none jitter, step 0.010s" ]
	[ "${stderr_lines[3]}" = "retry: attempt 2/3 failed with exit 1; next in 0.020s" ]
	[ "${stderr_lines[4]}" = "retry: drew 0.020s from [0.020s, 0.020s]: none jitter, step 0.020s" ]
	[ "${stderr_lines[5]}" = "retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
	matches "${stderr_lines[6]}" \
	    '^retry: 3 attempts in ([0-9]+\.[0-9]{3})s, ([0-9]+\.[0-9]{3})s asleep; stopped: attempts used up$'
	# Asleep at least the 30 ms of delays, and the run at least as long.
	in_band "${BASH_REMATCH[2]}" 30 2000
	in_band "${BASH_REMATCH[1]}" "$((10#${BASH_REMATCH[2]/./}))" 5000
}

@test "-v on success: the summary says so" {
	run -0 --separate-stderr "$RETRY" -v -K k2 -j none -b 1ms -T 1m -D 1h \
	    flaky st 1
	[ "${#stderr_lines[@]}" -eq 4 ]
	[ "${stderr_lines[0]}" = "retry: policy: 5 attempts (0: no limit), delay 0.001s x 2 up to 30.000s with none jitter, retry on 1-124,128-255, timeout 60.000s, deadline 3600.000s, key k2" ]
	[ "${stderr_lines[1]}" = "retry: attempt 1/5 failed with exit 1; next in 0.001s" ]
	[ "${stderr_lines[2]}" = "retry: drew 0.001s from [0.001s, 0.001s]: none jitter, step 0.001s" ]
	matches "${stderr_lines[3]}" \
	    '^retry: 2 attempts in [0-9]+\.[0-9]{3}s, 0\.00[0-9]s asleep; stopped: success$'
}

@test "-v shows the jitter band of each delay" {
	run -1 --separate-stderr "$RETRY" -v -n 2 -j full -b 10ms false
	matches "${stderr_lines[2]}" \
	    '^retry: drew 0\.[0-9]+s from \[0\.000s, 0\.010s\]: full jitter, step 0\.010s$'
	run -1 --separate-stderr "$RETRY" -v -n 2 -j equal -b 10ms false
	matches "${stderr_lines[2]}" \
	    '^retry: drew 0\.[0-9]+s from \[0\.005s, 0\.010s\]: equal jitter, step 0\.010s$'
}

@test "-v says when the cap cut the step" {
	run -1 --separate-stderr "$RETRY" -v -K k3 -n 3 -j none -b 10ms -c 15ms false
	[ "${stderr_lines[3]}" = "retry: attempt 2/3 failed with exit 1; next in 0.015s" ]
	[ "${stderr_lines[4]}" = "retry: drew 0.015s from [0.015s, 0.015s]: none jitter, step 0.015s, cut to the cap 0.015s" ]
}

@test "-v names the real cap when decorrelated jitter hits it" {
	# With base 10ms the second step is 3 x d_1 >= 30ms, so a cap of 12ms
	# cuts most draws; whenever it does, the line must name 0.012s.
	local i line cut=0
	for i in 1 2 3 4 5 6; do
		run -1 --separate-stderr "$RETRY" -v -n 3 -j decorrelated -b 10ms -c 12ms false
		for line in "${stderr_lines[@]}"; do
			case $line in
			*"cut to the cap"*)
				cut=$((cut + 1))
				matches "$line" ', cut to the cap 0\.012s$'
				;;
			esac
		done
	done
	[ "$cut" -gt 0 ]
}

@test "retry writes nothing to stdout" {
	run -1 --separate-stderr "$RETRY" -v -n 2 -b 1ms false
	[ "$output" = "" ]
	[ "${#stderr_lines[@]}" -eq 5 ]
	run -127 --separate-stderr "$RETRY" -v p-no-such-command
	[ "$output" = "" ]
	run -0 --separate-stderr "$RETRY" -v true
	[ "$output" = "" ]
}

@test "the child's stdout and stderr pass through, in order" {
	run -1 --separate-stderr "$RETRY" -n 2 -j none -b 1ms \
	    sh -c 'echo "out $RETRY_ATTEMPT"; echo "err $RETRY_ATTEMPT" >&2; exit 1'
	[ "$output" = "out 1
out 2" ]
	expect_stderr "err 1
retry: attempt 1/2 failed with exit 1; next in 0.001s
retry: attempt 1 left 6 bytes on standard output; the next attempt's output follows (-O sends only the last attempt's there)
err 2
retry: attempt 2/2 failed with exit 1; giving up: no attempts left"
}

@test "the child's output passes through byte for byte" {
	head -c 100000 /dev/urandom >data
	"$RETRY" -n 1 cat data >out 2>err
	cmp data out
	[ ! -s err ]
	"$RETRY" -n 1 sh -c 'cat data >&2' >out 2>err
	cmp data err
	[ ! -s out ]
	# No newline added, none taken away.
	"$RETRY" -n 1 printf 'no newline' >out
	[ "$(od -An -c out | tr -d ' \n')" = "nonewline" ]
	[ "$(wc -c <out)" -eq 10 ]
}

@test "--share-stdin: retry does not read stdin: a surrounding while-read loop keeps its input" {
	run -0 bash -c 'printf "a\nb\n" | while read -r l; do "$1" --share-stdin -n1 true; echo "$l"; done' \
	    _ "$RETRY"
	[ "$output" = "a
b" ]
	# Also through failures, delays and a not-found command.
	run -0 bash -c 'printf "a\nb\nc\n" | while read -r l; do
		"$1" --share-stdin -q -n2 -b 1ms false
		"$1" --share-stdin -q p-no-such-command; echo "$l"
	done' _ "$RETRY"
	[ "$output" = "a
b
c" ]
}

@test "--share-stdin: the child reads retry's stdin, one line per attempt here" {
	run -0 bash -c 'printf "1\n2\n3\n4\n" | {
		"$1" --share-stdin -q -j none -b 1ms sh -c '\''read -r x; echo "got $x"; [ "$x" = 3 ]'\''
		cat
	}' _ "$RETRY"
	# The fourth line is still there for the next reader.
	[ "$output" = "got 1
got 2
got 3
4" ]
}
