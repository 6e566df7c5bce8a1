#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# --report: the run as JSON (the command, each attempt, the outcome, the
# exit status, the total time), written atomically at the end however the
# run ends, or to stderr with "-".

load helpers/common

# A test that hangs fails instead of stopping the whole file.
BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-120}

# python3 for checking JSON, once: a version manager's shim can take a
# second a call.
setup_file() {
	PYTHON=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) ||
	    PYTHON=
	export PYTHON
}

setup() {
	in_test_dir
}

# A retry that a failed test left in the background.
teardown() {
	kill_bg_retry
}

# json_ok FILE: FILE parses as JSON; unchecked when python3 is missing.
json_ok() {
	if [ -z "$PYTHON" ]; then
		echo "# python3 is not installed: JSON not validated" >&3
		return 0
	fi
	"$PYTHON" -m json.tool "$1" >/dev/null
}

# norm FILE: the report with every time (digits.6 digits) as T, every
# RFC 3339 time as R and the key as K.
norm() {
	sed -E 's/[0-9]+\.[0-9]{6}/T/g;
	    s/"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z"/R/g;
	    s/"key": "[^"]*"/"key": K/;
	    s/"run_id": "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"/"run_id": I/' "$1"
}

@test "--report: valid JSON with the command, each attempt, the outcome, the exit status and the total time" {
	script='case $RETRY_ATTEMPT in 1) exit 1 ;; 2) echo 10ms >$RETRY_AFTER_FILE; exit 1 ;; esac'
	run -0 --separate-stderr "$RETRY" --report r.json -b 10ms -j none sh -c "$script"
	json_ok r.json
	cat r.json
	[ "$(norm r.json)" = '{
  "command": ["sh", "-c", "'"$script"'"],
  "started_at": R,
  "key": K,
  "run_id": I,
  "attempts": [
    {"attempt": 1, "started_at": R, "start": T, "duration": T, "status": 1, "signal": null, "timed_out": false, "error": null, "delay": T, "delay_from": "backoff"},
    {"attempt": 2, "started_at": R, "start": T, "duration": T, "status": 1, "signal": null, "timed_out": false, "error": null, "delay": T, "delay_from": "hint"},
    {"attempt": 3, "started_at": R, "start": T, "duration": T, "status": 0, "signal": null, "timed_out": false, "error": null, "delay": null, "delay_from": null}
  ],
  "waits": [
    {"start": T, "length": T, "reason": "backoff"},
    {"start": T, "length": T, "reason": "hint"}
  ],
  "circuit": null,
  "outcome": "success",
  "passed_after_retries": true,
  "exit_status": 0,
  "signal": null,
  "total_time": T
}' ]
	grep -q '"attempt": 1, .*"delay": 0\.010000, "delay_from": "backoff"' r.json
	grep -q '"attempt": 2, .*"delay": 0\.01[01][0-9]\{3\}, "delay_from": "hint"' r.json
	# Starts increase; the total is at least the last start.
	starts=$(grep '^    {"attempt"' r.json | grep -o '"start": [0-9.]*' |
	    cut -d' ' -f2 | tr -d .)
	[ "$(sort -n <<<"$starts")" = "$starts" ]
	total=$(grep -o '"total_time": [0-9.]*' r.json | cut -d' ' -f2 | tr -d .)
	[ $((10#$total)) -ge $((10#$(tail -n1 <<<"$starts"))) ]
}

@test "--report: the command's arguments are escaped, whatever their bytes" {
	run -0 "$RETRY" --report r.json true 'a"b' 'c\d' $'e\nf' $'g\th' $'\x01' \
	    $'\xff' 'é' $'\x7f' '' $'\xc3' $'\xc0\xaf' '€𝄞'
	json_ok r.json
	[ "$(sed -n 2p r.json)" = '  "command": ["true", "a\"b", "c\\d", "e\nf", "g\th", "\u0001", "\u00ff", "é", "\u007f", "", "\u00c3", "\u00c0\u00af", "€𝄞"],' ]
}

# outcome ARGS...: runs retry --report r.json ARGS and prints the
# report's outcome and exit status, after checking that it is JSON.
outcome() {
	rm -f r.json
	"$RETRY" --report r.json "$@" >/dev/null 2>&1 || true
	json_ok r.json
	grep -o '"outcome": "[a-z_]*"\|"exit_status": [0-9]*' r.json | tr '\n' ' '
}

@test "--report: the outcomes, and attempts that timed out or were killed" {
	[ "$(outcome true)" = '"outcome": "success" "exit_status": 0 ' ]
	[ "$(outcome -n 2 -b 10ms false)" = '"outcome": "attempts_exhausted" "exit_status": 1 ' ]
	[ "$(outcome -D 2s -b 10ms sh -c 'echo 10 >$RETRY_AFTER_FILE; exit 4')" = \
	    '"outcome": "deadline" "exit_status": 4 ' ]
	[ "$(outcome -D 200ms -b 10ms sleep 5)" = '"outcome": "deadline" "exit_status": 124 ' ]
	[ "$(outcome -x 3 -b 10ms sh -c 'exit 3')" = '"outcome": "not_retryable" "exit_status": 3 ' ]
	[ "$(outcome --stop-on-output no -b 10ms sh -c 'echo no; exit 1')" = \
	    '"outcome": "not_retryable" "exit_status": 1 ' ]
	[ "$(outcome ./no-such-command)" = '"outcome": "not_retryable" "exit_status": 127 ' ]

	outcome -n 1 -T 100ms sleep 5
	grep -q '"attempt": 1, .*"status": 124, "signal": "SIGTERM", "timed_out": true, "error": null, "delay": null' r.json
	outcome -n 1 sh -c 'kill -USR1 $$'
	grep -q '"attempt": 1, .*"status": 138, "signal": "SIGUSR1", "timed_out": false, "error": null, "delay": null' r.json
}

@test "--report is written atomically at the end: the old report stays until then, no temporary file before or after" {
	mkdir rep
	echo old >rep/r.json
	run -1 --separate-stderr "$RETRY" --report rep/r.json -n 2 -b 10ms -j none \
	    sh -c '{ cat rep/r.json; ls rep; } >>seen; exit 1'
	json_ok rep/r.json
	[ "$(ls rep)" = r.json ]
	[ "$(mode_of rep/r.json)" = 600 ]
	# While it runs: the old report, and no temporary file yet.
	[ "$(cat seen)" = "old
r.json
old
r.json" ]
	grep -q '"outcome": "attempts_exhausted"' rep/r.json
}

@test "--report - writes the report to stderr" {
	run -1 --separate-stderr "$RETRY" --report - -n 2 -b 10ms -j none \
	    sh -c 'echo out; exit 1'
	[ "$output" = "out
out" ]
	[ "${stderr_lines[0]}" = "retry: attempt 1/2 failed with exit 1; next in 0.010s" ]
	[ "${stderr_lines[-1]}" = "retry: attempt 2/2 failed with exit 1; giving up: no attempts left" ]
	printf '%s\n' "$stderr" | sed -n '/^{$/,/^}$/p' >r.json
	[ "$(wc -l <r.json)" -eq 19 ]
	json_ok r.json
	[ "$(sed -n 2p r.json)" = '  "command": ["sh", "-c", "echo out; exit 1"],' ]
	[ ! -e ./- ]
	# Even with -q.
	run -1 --separate-stderr "$RETRY" -q --report - -n 1 false
	[ "${stderr_lines[0]}" = "{" ]
	[ "${stderr_lines[-1]}" = "}" ]
}

@test "--report is written when SIGTERM interrupts a delay: outcome interrupted, exit status 143" {
	"$RETRY" --report r.json -b 20s -j none false 2>err 3>&- &
	echo $! >bg.pid
	wait_for_text err 'next in 20.000s'
	stop_and_time TERM "$(cat bg.pid)"
	[ "$rc" -eq 143 ]
	cat r.json
	json_ok r.json
	grep -q '"outcome": "interrupted"' r.json
	grep -q '"exit_status": 143' r.json
	grep -q '"signal": "SIGTERM"' r.json
	# The delay as drawn, though the signal cut it short.
	grep -q '"attempt": 1, .*"delay": 20\.000000, "delay_from": "backoff"}' r.json
	[ "$(ls)" = "bg.pid
err
r.json
tmp" ]
	# The one attempt is listed once.
	run -0 grep -c '"attempt": ' r.json
	[ "$output" = 1 ]

	# During an attempt: the attempt gets SIGTERM too.
	rm r.json
	"$RETRY" --report r.json -b 10ms sh -c 'touch started; sleep 10' 2>err 3>&- &
	echo $! >bg.pid
	wait_for started
	stop_and_time TERM "$(cat bg.pid)"
	[ "$rc" -eq 143 ]
	json_ok r.json
	grep -q '"attempt": 1, .*"status": 143, "signal": "SIGTERM", "timed_out": false, "error": null, "delay": null' r.json
	grep -q '"outcome": "interrupted"' r.json
	grep -q '"exit_status": 143' r.json
}

@test "--report: written, with no attempt, when the deadline has passed before the start" {
	mkdir rep
	RETRY_DEADLINE=$(($(clock-now -r) / 1000 - 10)) run -124 --separate-stderr \
	    "$RETRY" --report rep/r.json sh -c 'touch ran'
	expect_stderr "retry: the deadline has passed; not running 'sh'"
	[ ! -e ran ]
	[ "$(ls rep)" = "r.json" ]
	json_ok rep/r.json
	grep -q '"attempts": \[\]' rep/r.json
	grep -q '"outcome": "deadline"' rep/r.json
	grep -q '"exit_status": 124' rep/r.json
	[ "$(tmp_files)" = "" ]
}

@test "--report to a directory that does not exist is a usage error before anything runs" {
	run -125 --separate-stderr "$RETRY" --report nodir/r.json sh -c 'touch ran'
	expect_stderr "retry: --report 'nodir/r.json': No such file or directory"
	[ "$output" = "" ]
	[ ! -e ran ]
	[ ! -e nodir ]
	[ "$(tmp_files)" = "" ]
}

@test "--report tells the whole story: the start and each attempt's as RFC 3339 UTC, the key, every wait and why, the circuit, its store without the password, passed after retries" {
	export RETRY_STATE_DIR=$BATS_TEST_TMPDIR/state
	local before after
	before=$(date -u +%Y-%m-%dT%H:%M:%S)
	run -0 --separate-stderr "$RETRY" --report r.json -K key-1 --splay 20ms \
	    -n 3 -b 10ms -j none --circuit c sh -c '[ "$RETRY_ATTEMPT" = 2 ]'
	after=$(date -u +%Y-%m-%dT%H:%M:%S)
	json_ok r.json
	cat r.json
	grep -q '^  "key": "key-1",$' r.json
	local at
	at=$(sed -n 's/^  "started_at": "\(.*\)\.[0-9]\{3\}Z",$/\1/p' r.json)
	[[ ! $at < $before && ! $at > $after ]]
	[ "$(grep -c '"attempt": [0-9], "started_at": "20[0-9-]*T[0-9:.]*Z"' r.json)" -eq 2 ]
	grep -q '^    {"start": [0-9.]*, "length": [0-9.]*, "reason": "splay"},$' r.json
	grep -q '^    {"start": [0-9.]*, "length": 0\.010000, "reason": "backoff"}$' r.json
	grep -q '^  "circuit": {"name": "c", "store": null, "changes": \[\]},$' r.json
	grep -q '^  "passed_after_retries": true,$' r.json
	# The store's URL, its password masked.
	run -75 --separate-stderr "$RETRY" --report r.json -n 1 --circuit s \
	    --store redis://u:s3cret@127.0.0.1:1 --store-fail closed true
	json_ok r.json
	grep -q '"store": "redis://u:\*\*\*@127.0.0.1:1"' r.json
	! grep -q s3cret r.json || false
	grep -q '^  "passed_after_retries": false,$' r.json
}
