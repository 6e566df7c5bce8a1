#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Every way a run ends (outcome.c's table), each brought about for real:
# its exit status, its report key and its last line agree with each
# other and with retry(1)'s EXIT STATUS, and every listener says the same
# (issue 30): the metrics, the GitHub annotation and step outputs, and
# which end hook ran.
load helpers/common

setup() {
	cd "$BATS_TEST_TMPDIR" || exit 1
	export RETRY_STATE_DIR=$BATS_TEST_TMPDIR/state
	export GITHUB_ACTIONS=true GITHUB_OUTPUT=$PWD/gh.out \
	    GITHUB_STEP_SUMMARY=$PWD/gh.sum
	: >gh.out
	: >gh.sum
	printf '#!/bin/sh\necho success >>hook\n' >on-success
	printf '#!/bin/sh\necho giveup >>hook\n' >on-giveup
	chmod +x on-success on-giveup
	# Every listener, in words that split on spaces alone.
	export LISTEN="--metrics m.prom --ci github --on-success ./on-success \
	    --on-giveup ./on-giveup"
}

# gauge NAME: the value of the metrics file's gauge NAME.
gauge() {
	awk -v n="$1" '$1 ~ "^" n "[{]" { print $2 }' m.prom
}

# listeners_agree WANT KEY: the metrics, the CI lines (in $stderr) and
# the end hook of a run that exited WANT with outcome KEY say what the
# report says: one
# that exited 0 passed (a warning if after retries, else no annotation),
# any other gave up (an error naming KEY); a signal runs no end hook.
listeners_agree() {
	local want=$1 key=$2 after hook=giveup note=error
	after=$(grep -o '"passed_after_retries": [a-z]*' report.json)
	[ "$want" -eq 0 ] && hook=success note=none
	[ "$after" = '"passed_after_retries": true' ] && note=warning
	[ "$want" -gt 128 ] && [ "$key" = interrupted ] && hook=""
	[ "$(gauge retry_exit_status)" = "$want" ]
	grep -qxF "retry_outcome{job=\"m\",outcome=\"$key\"} 1" m.prom
	[ "$(gauge retry_passed_after_retries)" = \
	    "$([ "$note" = warning ] && echo 1 || echo 0)" ]
	if [ "$want" -eq 0 ]; then
		[ "$(gauge retry_last_success_timestamp_seconds)" != 0 ]
	else
		[ "$(gauge retry_last_success_timestamp_seconds)" = 0 ]
	fi
	grep -qxF "exit-status=$want" gh.out
	grep -qxF "outcome=$key" gh.out
	case $note in
	none) ! grep -q '^::\(warning\|error\) ' <<<"$stderr" ;;
	warning) grep -q '^::warning title=.*::passed on ' <<<"$stderr" ;;
	error) grep -q "^::error title=.*::gave up after .*outcome $key" \
	    <<<"$stderr" ;;
	esac
	[ "$(cat hook 2>/dev/null)" = "$hook" ]
	rm -f hook	# for the next run of the test
	: >gh.out
}

# exit_status_items: the .It lines of retry(1)'s EXIT STATUS, one a line.
exit_status_items() {
	awk '/^\.Sh EXIT STATUS/ { on = 1; next } /^\.Sh / { on = 0 }
	    on && /^\.It / { sub(/^\.It /, ""); print }' \
	    "$BATS_TEST_DIRNAME/../retry.1"
}

# exit_status_intro: the words of EXIT STATUS before its list, on one line.
exit_status_intro() {
	awk '/^\.Sh EXIT STATUS/ { on = 1; next } /^\.Bl / { on = 0 }
	    on && !/^\.Nm/ { sub(/^\.Fl /, "-"); printf "%s ", $0 }' \
	    "$BATS_TEST_DIRNAME/../retry.1"
}

# documented ITEM: retry(1)'s EXIT STATUS has the item ITEM, or for
# "last:WORDS", says before its list that the last attempt's status is
# the exit status when WORDS.
documented() {
	local intro
	case $1 in
	last:*)
		intro=$(exit_status_intro)
		[[ $intro == *"exits with the status of the last attempt"* &&
		    $intro == *"${1#last:}"* ]] && return
		echo "retry(1)'s EXIT STATUS does not say '${1#last:}' gives the last attempt's status: $intro"
		return 1 ;;
	esac
	exit_status_items | grep -qxF -- "$1" && return
	echo "retry(1)'s EXIT STATUS has no item '$1':"
	exit_status_items
	return 1
}

# check_end WANT KEY LAST ITEM GOT: a run that exited GOT (stderr in
# $stderr, its report in report.json) exited WANT, wrote KEY as the
# report's outcome, said LAST as its last line on stderr (a regular
# expression; "" for nothing said), and retry(1)'s EXIT STATUS says so
# (see documented).
check_end() {
	local want=$1 key=$2 last=$3 item=$4 got=$5 tail
	if [ "$got" -ne "$want" ]; then
		echo "exit status $got, not $want"
		return 1
	fi
	grep -q "\"outcome\": \"$key\"" report.json || {
		echo "report's outcome is not $key:"
		cat report.json
		return 1
	}
	grep -q "\"exit_status\": $want," report.json
	listeners_agree "$want" "$key"
	# Then the CI lines aside, and the hooks' warning that a full TMPDIR
	# has no room for RETRY_LOG, which follows the last line.
	stderr=$(grep -v '^::' <<<"$stderr" | grep -v '^$' |
	    grep -v ', so RETRY_LOG is unset: ' || true)
	tail=$(printf '%s\n' "$stderr" | tail -n 1)
	if [ -z "$last" ]; then
		[ -z "$stderr" ]
	else
		matches "$tail" "$last"
	fi
	documented "$item"
}

# run_ends WANT KEY LAST ITEM -- ARGS...: check_end of retry ARGS.
run_ends() {
	local want=$1 key=$2 last=$3 item=$4
	shift 5
	# shellcheck disable=SC2086 # LISTEN: words split on spaces
	run "-$want" --separate-stderr "$RETRY" --report report.json $LISTEN "$@"
	check_end "$want" "$key" "$last" "$item" "$status"
}

@test "outcome success: 0, success, nothing said" {
	run_ends 0 success "" 0 -- -n 2 true
}

@test "outcome success after retries: 0, success, a warning, passed_after_retries" {
	run_ends 0 success '^retry: attempt 1/3 failed with exit 1; next in [0-9.]+s$' \
	    0 -- -n 3 -b 1ms -j none sh -c '[ "$RETRY_ATTEMPT" -ge 2 ]'
	[ "$(gauge retry_attempts)" = 2 ]
}

@test "outcome attempts exhausted by --on-output: each attempt exits 0 and matches: 1, gave up everywhere" {
	run_ends 1 attempts_exhausted \
	    '^retry: attempt 2/2 succeeded; giving up: no attempts left$' 1 -- \
	    -n 2 -b 1ms -j none --on-output ERR echo ERR
}

@test "outcome output stop on an attempt that exited 0: 1, gave up everywhere" {
	run_ends 1 not_retryable \
	    '^retry: attempt 1/3 succeeded; giving up: its output matched --stop-on-output$' \
	    1 -- -n 3 --stop-on-output denied echo denied
}

@test "outcome attempts exhausted with -o 0, the last a success: 0, passed, nothing given up" {
	run_ends 0 attempts_exhausted \
	    '^retry: attempt 2/2 succeeded; no attempts left$' 0 -- \
	    -n 2 -b 1ms -j none -o 0 true
}

@test "outcome not retryable: the status, not_retryable, 'giving up: status N is not retryable'" {
	run_ends 3 not_retryable \
	    '^retry: attempt 1/3 failed with exit 3; giving up: status 3 is not retryable$' \
	    "last:a status that is not to be retried" -- -n 3 -x 3 sh -c 'exit 3'
}

@test "outcome HTTP refused: the status, not_retryable, 'HTTP 404 is not retried'" {
	run_ends 22 not_retryable \
	    '^retry: attempt 1/3 failed with exit 22; giving up: HTTP 404 is not retried; --http-4xx retry to retry it$' \
	    "last:or an HTTP 4xx" -- -n 3 sh -c \
	    'printf "HTTP/1.1 404 Not Found\r\n\r\n" >"$RETRY_AFTER_FILE"; exit 22'
}

@test "outcome attempts exhausted: the status, attempts_exhausted, 'no attempts left'" {
	run_ends 1 attempts_exhausted \
	    '^retry: attempt 2/2 failed with exit 1; giving up: no attempts left$' \
	    "last:the attempts are used up" -- -n 2 -b 1ms -j none false
}

@test "outcome deadline: the status when the next delay would pass it, 124 when nothing ran" {
	run_ends 1 deadline \
	    '^retry: attempt 1/3 failed with exit 1; giving up: a delay of [0-9.]+s would pass the deadline$' \
	    "last:the next delay would reach the deadline" -- -n 3 -D 1s -b 10s -j none false
	run_ends 124 deadline \
	    "^retry: the splay would pass the deadline; not running 'true'$" \
	    124 -- -D 0.1 --splay 1h true
}

@test "outcome deadline: an attempt stopped at it is 124" {
	run_ends 124 deadline \
	    '^retry: attempt 1/3 timed out at the deadline; giving up$' \
	    124 -- -n 3 -D 0.2 -k 0 sleep 5
}

@test "outcome interrupted: retry dies of the keyboard's signal that ended the attempt" {
	need_keyboard_signals
	run_ends 130 interrupted \
	    '^retry: attempt 1/3 killed by SIGINT; giving up: interrupted$' \
	    "128 + Ar S" -- -n 3 sh -c 'kill -INT $$'
}

@test "outcome cannot run: 127 not found, 126 not executable, never retried" {
	skip_cannot_run_under_qemu
	run_ends 127 not_retryable \
	    "^retry: cannot run '\\./nosuch': No such file or directory$" \
	    127 -- -n 3 ./nosuch
	printf 'echo x\n' >plain
	chmod 644 plain
	run_ends 126 not_retryable \
	    "^retry: cannot run '\\./plain': Permission denied$" \
	    126 -- -n 3 ./plain
}

@test "outcome output stop: the status, not_retryable, 'its output matched --stop-on-output'" {
	run_ends 1 not_retryable \
	    '^retry: attempt 1/3 failed with exit 1; giving up: its output matched --stop-on-output$' \
	    "last:-stop-on-output" -- -n 3 --stop-on-output FATAL \
	    sh -c 'echo FATAL; exit 1'
}

@test "outcome circuit open: 75, circuit_open, 'stays open past the deadline'" {
	run_ends 75 circuit_open \
	    '^retry: circuit c stays open past the deadline; giving up$' \
	    75 -- --circuit c --trip 1 --cool 1h -n 3 -b 1ms -D 2s false
}

@test "outcome budget spent: the status, budget_spent, 'the retry budget ... stays spent past the deadline'" {
	run_ends 1 budget_spent \
	    '^retry: the retry budget of circuit b stays spent past the deadline; giving up$' \
	    "last:the retry budget stays spent past the deadline" -- --circuit b --budget 1/1h \
	    -n 5 -b 1ms -j none -D 2s false
}

@test "outcome reader gone: the attempt's SIGPIPE, not_retryable, 'the reader of the output has gone'" {
	run bash -c '"$1" $LISTEN --report report.json -n 3 -- yes 2>err | head -c 1 \
	    >/dev/null; echo "${PIPESTATUS[0]}"' sh "$RETRY"
	stderr=$(cat err)
	check_end 141 not_retryable \
	    '^retry: attempt 1/3 killed by SIGPIPE; giving up: the reader of the output has gone$' \
	    "128 + Ar S" "$output"
}

@test "outcome store unavailable: 75 with --store-fail closed, store_unavailable" {
	run_ends 75 store_unavailable \
	    '; giving up \(--store-fail closed\)$' \
	    75 -- --circuit s --store redis://127.0.0.1:1 \
	    --store-fail closed -n 2 true
}

@test "outcome input cut: the status, not_retryable, 'its standard input passed the 16 MiB kept for a retry'" {
	run bash -c 'head -c 17825792 /dev/zero | "$1" $LISTEN --report report.json -n 2 \
	    -b 1ms -- sh -c "cat >/dev/null; exit 1" 2>err; echo $?' sh "$RETRY"
	stderr=$(cat err)
	check_end 1 not_retryable \
	    '^retry: attempt 1/2 failed with exit 1; giving up: its standard input passed the 16 MiB kept for a retry \(-I keeps any size, --share-stdin lets attempts read on\)$' \
	    "last:its standard input was too long to replay" "$output"
}

@test "outcome output unheld: the status, not_retryable, 'its output went to standard output'" {
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	run small_tmpdir bash -c '"$1" $LISTEN --report report.json -O -n 2 -b 1ms -- \
	    sh -c "head -c 3000000 /dev/zero; exit 1" 2>err >/dev/null; echo $?' sh "$RETRY"
	stderr=$(cat err)
	# The hooks of $LISTEN find no room for RETRY_LOG either: said once.
	[ "$(grep -c ', so RETRY_LOG is unset: No space left on device$' err)" -eq 1 ]
	check_end 1 not_retryable \
	    '^retry: attempt 1/2 failed with exit 1; giving up: its output went to standard output, as -O had no room in TMPDIR to hold it \(No space left on device\)$' \
	    "last:or the output of" "$output"
}

@test "outcome input unkept: the status, not_retryable, 'no room in TMPDIR to keep its standard input'" {
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	run small_tmpdir bash -c 'head -c 3000000 /dev/zero | "$1" $LISTEN --report report.json \
	    -n 2 -b 1ms -- sh -c "cat >/dev/null; exit 1" 2>err; echo $?' sh "$RETRY"
	stderr=$(cat err)
	check_end 1 not_retryable \
	    '^retry: attempt 1/2 failed with exit 1; giving up: no room in TMPDIR to keep its standard input for a retry \(No space left on device\)$' \
	    "last:TMPDIR too full to keep it" "$output"
}

@test "outcome too late: 124, too_late, 'less than 2.000s left before the deadline; not starting', nothing run" {
	run_ends 124 too_late \
	    '^retry: less than 2\.000s left before the deadline; not starting$' \
	    "124" -- -D 1s --min-time 2s sh -c 'echo ran >>ran'
	[ ! -e ran ]
	grep -q '"attempts": \[\]' report.json
}
