#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The job, not only the run (issue 33, item 3): --job NAME's history of
# failed runs in a row, --alert-after N's tolerated failures, alerts and
# recoveries as -Q, the hooks, CI, --metrics, --report and --job-status
# tell them; the record's rules; the history on a Redis --store shared by
# two "hosts" (two state directories).

load helpers/common

BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-60}

setup() {
	cd "$BATS_TEST_TMPDIR"
	unset RETRY_STORE REDISCLI_AUTH GITHUB_ACTIONS GITLAB_CI \
	    GITHUB_STEP_SUMMARY GITHUB_OUTPUT
	export RETRY_STATE_DIR=$BATS_TEST_TMPDIR/state
	mkdir -p -m 700 state
	server=
}

teardown() {
	kill_later
	if [ -n "$server" ]; then
		server_stop "$server"
		rm -rf "$server"
	fi
}

# job_run STATUS [OPTION ...]: a run of job J, one attempt that prints
# "out" and exits STATUS, -Q, --alert-after 3, each end hook echoing its
# name into hooks; its stderr in $stderr, its status checked by the caller.
job_run() {
	local code=$1
	shift
	run --separate-stderr "$RETRY" -Q -n 1 --job J --alert-after 3 \
	    --on-tolerate 'echo tolerate >>hooks' \
	    --on-giveup 'echo giveup >>hooks' \
	    --on-recover 'echo recover >>hooks' \
	    --on-success 'echo success >>hooks' "$@" \
	    sh -c "echo out; exit $code"
}

# status_is EXIT STATE FAILED: --job-status J exits EXIT and says STATE
# and FAILED (its "failed:" line's text).
status_is() {
	run --separate-stderr "$RETRY" --job-status J
	[ "$status" -eq "$1" ]
	[ "$(sed -n 's/^state: *//p' <<<"$output")" = "$2" ]
	[ "$(sed -n 's/^failed: *//p' <<<"$output" | sed 's/ (since .*//')" = "$3" ]
}

# gauge NAME: its value in J.prom.
gauge() {
	sed -n "s/^$1{job=\"J\"} //p" J.prom
}

# The first line of an alert's mail, N failed runs in a row.
alert_head() {
	[[ $1 =~ ^'retry: job J failed '$2' runs in a row (since '[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z')'$ ]]
}

@test "--alert-after 3: fail, fail, fail, fail, pass, fail: statuses kept, mail from the 3rd, the hooks, --job-status at each step" {
	status_is 0 healthy "none in a row"
	job_run 3
	[ "$status" -eq 3 ]
	[ "$stderr" = "" ]
	status_is 1 failing "1 run in a row"
	job_run 3
	[ "$status" -eq 3 ]
	[ "$stderr" = "" ]
	status_is 1 failing "2 runs in a row"
	job_run 3
	[ "$status" -eq 3 ]
	alert_head "${stderr_lines[0]}" 3
	[[ ${stderr_lines[1]} == "retry: attempt 1/1, started "*", ran "*s ]]
	[ "${stderr_lines[2]}" = out ]
	[ "${stderr_lines[3]}" = "retry: attempt 1/1 failed with exit 3; giving up: no attempts left" ]
	[ "${#stderr_lines[@]}" -eq 4 ]
	status_is 75 alerting "3 runs in a row"
	job_run 3
	[ "$status" -eq 3 ]
	alert_head "${stderr_lines[0]}" 4
	status_is 75 alerting "4 runs in a row"
	job_run 0
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	status_is 0 healthy "none in a row"
	job_run 3
	[ "$status" -eq 3 ]
	[ "$stderr" = "" ]
	status_is 1 failing "1 run in a row"
	[ "$(cat hooks)" = "$(printf '%s\n' tolerate tolerate giveup giveup \
	    recover success tolerate)" ]
}

@test "--metrics agrees with --job-status after every run, and names the job when --job is not given" {
	local s want_failed want_alerting
	for s in 1 1 1 0 1; do
		run "$RETRY" -q -n 1 --alert-after 2 --metrics J.prom sh -c "exit $s"
		[ "$status" -eq "$s" ]
		run "$RETRY" --job-status J
		want_failed=$(sed -n 's/^failed: *\([0-9]*\) run.*/\1/p' <<<"$output")
		want_alerting=0
		[ "$status" -ne 75 ] || want_alerting=1
		[ "$(gauge retry_job_failed_runs_in_row)" = "${want_failed:-0}" ]
		[ "$(gauge retry_job_alerting)" = "$want_alerting" ]
	done
	[ "$(gauge retry_job_failed_runs_in_row)" = 1 ]
	grep -qx '# TYPE retry_job_alerting gauge' J.prom
	# Without a job, no such gauge.
	run -0 "$RETRY" -q --metrics other.prom true
	! grep -q retry_job_ other.prom || false
}

@test "--metrics: a run that counts neither way keeps the job gauges as the history says" {
	run -1 "$RETRY" -q -n 1 --metrics M.prom --alert-after 1 false
	run -124 --separate-stderr "$RETRY" -n 1 --metrics M.prom --alert-after 1 \
	    -D 100ms --min-time 200ms false
	[ "$stderr" = "retry: less than 0.200s left before the deadline; not starting" ]
	grep -qx 'retry_job_failed_runs_in_row{job="M"} 1' M.prom
	grep -qx 'retry_job_alerting{job="M"} 1' M.prom
	grep -qx 'retry_outcome{job="M",outcome="too_late"} 1' M.prom
	run -75 "$RETRY" --job-status M
}

@test "the report's job object, and -v's line of what job.c decided" {
	run --separate-stderr "$RETRY" -v -n 1 --job J --alert-after 2 \
	    --report r.json false
	[ "$status" -eq 1 ]
	grep -qx 'retry: job J: failed run 1 in a row, tolerated (alerts at 2)' <<<"$stderr"
	grep -qF '"job": {"name": "J", "failed_in_row": 1, "alerting": false, "tolerated": true, "alert": false, "recovered": false}' r.json
	run --separate-stderr "$RETRY" -v -n 1 --job J --alert-after 2 \
	    --report r.json false
	grep -qx 'retry: job J: failed run 2 in a row, an alert (--alert-after 2)' <<<"$stderr"
	grep -qF '"failed_in_row": 2, "alerting": true, "tolerated": false, "alert": true' r.json
	run --separate-stderr "$RETRY" -v -n 1 --job J --report r.json true
	grep -qx 'retry: job J: recovered after an alert; failed runs in a row reset' <<<"$stderr"
	grep -qF '"recovered": true' r.json
	run -0 "$RETRY" -n 1 --report r.json true
	! grep -q '"job"' r.json || false
}

@test "a run that ran no attempt or was interrupted counts neither way" {
	run -1 "$RETRY" -q -n 1 --job J --alert-after 3 false
	run -124 --separate-stderr "$RETRY" -v -n 1 --job J --alert-after 3 \
	    -D 100ms --min-time 100ms false
	grep -qx 'retry: job J: the run counts neither way' <<<"$stderr"
	status_is 1 failing "1 run in a row"
	"$RETRY" -q -n 1 --job J --alert-after 3 sh -c ': >started; exec sleep 10' 3>&- &
	local pid=$!
	later "$pid"
	wait_for started
	kill -TERM "$pid"
	local code=0
	wait "$pid" || code=$?
	[ "$code" -eq 143 ]
	status_is 1 failing "1 run in a row"
	# A command that cannot run is a job that fails.
	run -127 "$RETRY" -q -n 1 --job J --alert-after 3 ./no-such-command
	status_is 1 failing "2 runs in a row"
}

@test "GitHub: a tolerated failure is a warning, an alert the run's error; GitLab: a plain line" {
	export GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$BATS_TEST_TMPDIR/summary \
	    GITHUB_OUTPUT=$BATS_TEST_TMPDIR/outputs
	run -1 "$RETRY" --ci github -n 1 --job J --alert-after 2 false
	grep -q '^::warning title=false::gave up after 1 attempt in .* s, outcome attempts_exhausted.*; tolerated as failed run 1 in a row of job J (--alert-after 2)$' <<<"$output"
	! grep -q '^::error' <<<"$output" || false
	run -1 "$RETRY" --ci github -n 1 --job J --alert-after 2 false
	grep -q '^::error title=false::gave up after 1 attempt' <<<"$output"
	! grep -q '^::warning' <<<"$output" || false
	unset GITHUB_ACTIONS
	"$RETRY" --job-reset J
	run -1 --separate-stderr env GITLAB_CI=true "$RETRY" --ci gitlab -n 1 \
	    --job J --alert-after 2 false
	grep -qx 'retry: tolerated as failed run 1 in a row of job J (--alert-after 2)' <<<"$stderr"
}

@test "--job-reset forgets the history; a name without one says so" {
	run -1 "$RETRY" -q -n 1 --job J --alert-after 1 false
	status_is 75 alerting "1 run in a row"
	run --separate-stderr "$RETRY" --job-reset J
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	status_is 0 healthy "none in a row"
	grep -qx 'record:    none: no file J in .*/state/.jobs' <<<"$output"
	run --separate-stderr "$RETRY" --job-reset J
	[ "$status" -eq 0 ]
	expect_stderr "retry: job J: no history to forget"
}

@test "a command of a circuit or a job goes alone: no command, no --job or --circuit, nothing that tunes a job's run (125, nothing run)" {
	local args want
	while IFS='|' read -r args want; do
		# shellcheck disable=SC2086
		run --separate-stderr "$RETRY" $args
		[ "$status" -eq 125 ]
		[ "$output" = "" ]
		[ "$stderr" = "retry: $want" ]
	done <<-'EOF'
	--job-status J -- touch ran|--job-status takes no command: give it alone
	--job-reset J touch ran|--job-reset takes no command: give it alone
	--circuit-status C -- touch ran|--circuit-status takes no command: give it alone
	--circuit-list touch ran|--circuit-list takes no command: give it alone
	--job A --job-status B|--job-status is not a run: give it without --circuit and --job
	--job-reset B --job A|--job-reset is not a run: give it without --circuit and --job
	--circuit A --circuit-status B|--circuit-status is not a run: give it without --circuit and --job
	--job-status J --alert-after 3|--alert-after, --on-tolerate and --on-recover tune a run of a job, not --job-status
	--job-reset J --on-recover true|--alert-after, --on-tolerate and --on-recover tune a run of a job, not --job-reset
	EOF
	[ ! -e ran ]
	[ ! -e state/.jobs ]
	run -125 --separate-stderr "$RETRY" --metrics 'a b.prom' --alert-after 2 touch ran
	expect_stderr "retry: --alert-after needs a job name, and --metrics 'a b.prom' names none ('a b' is not a name: letters, digits, '.', '_', '-', not beginning with '.'): give --job NAME"
	[ ! -e ran ]
}

@test "the records live in .jobs, which --circuit-list and the circuits' completions skip" {
	run -1 "$RETRY" -q -n 1 --job J --alert-after 2 false
	run -0 "$RETRY" -q --circuit C true
	[ "$(mode_of state/.jobs)" = 700 ]
	[ "$(mode_of state/.jobs/J)" = 600 ]
	[ "$(head -n 1 state/.jobs/J)" = "retry-job 1" ]
	run -0 "$RETRY" --circuit-list
	[ "$output" = C ]
}

@test "two runs of a job that end together both count (the record's lock)" {
	run -0 "$RETRY" -q -n 1 --job J --alert-after 9 true
	hold_lock state/.jobs/.J.lock
	"$RETRY" -q -n 1 --job J --alert-after 9 sh -c ': >ran1; exit 1' 3>&- &
	local a=$!
	"$RETRY" -q -n 1 --job J --alert-after 9 sh -c ': >ran2; exit 1' 3>&- &
	local b=$!
	later "$a"
	later "$b"
	wait_for ran1 100
	wait_for ran2 100
	# Both wait for the lock now (or soon): neither has counted.
	grep -qx 'failed 0' state/.jobs/J
	kill "$holder"
	wait "$a" || [ $? -eq 1 ]
	wait "$b" || [ $? -eq 1 ]
	status_is 1 failing "2 runs in a row"
}

@test "a record that is not one, a symbolic link, or another user's is refused (125, nothing run)" {
	mkdir -m 700 state/.jobs
	echo 'not a record' >state/.jobs/J
	run -125 --separate-stderr "$RETRY" --job J --alert-after 2 touch ran
	expect_stderr "retry: job J: record $RETRY_STATE_DIR/.jobs/J is not a record of retry; it is left as it is"
	run -125 --separate-stderr "$RETRY" --job-status J
	expect_stderr "retry: job J: record $RETRY_STATE_DIR/.jobs/J is not a record of retry; it is left as it is"
	[ "$(cat state/.jobs/J)" = "not a record" ]
	ln -s J state/.jobs/L
	run -125 --separate-stderr "$RETRY" --job L --alert-after 2 touch ran
	expect_stderr "retry: job L: record $RETRY_STATE_DIR/.jobs/L is a symbolic link"
	[ ! -e ran ]
	# A corrupt record (the magic, then nonsense) starts afresh, said.
	printf 'retry-job 1\nfailed x\n' >state/.jobs/K
	run -1 --separate-stderr "$RETRY" -n 1 --job K --alert-after 2 false
	grep -qx "retry: job K: the record $RETRY_STATE_DIR/.jobs/K is corrupt; it starts afresh" <<<"$stderr"
	run -1 "$RETRY" --job-status K
	grep -qx 'failed:    1 run in a row (since .*)' <<<"$output"
}

@test "a corrupt record longer than the history, or than a page, heals: warned once, then counted" {
	local size n
	mkdir -m 700 state/.jobs
	for size in 621 5000; do
		{ echo 'retry-job 1'; head -c $((size - 12)) /dev/zero | tr '\0' '\n'; } \
		    >state/.jobs/X
		[ "$(wc -c <state/.jobs/X)" -eq "$size" ]
		for n in 1 2 3; do
			run -1 --separate-stderr "$RETRY" -v -n 1 --job X \
			    --alert-after 5 false
			[ "$(grep -c 'is corrupt' <<<"$stderr")" -eq $((n == 1)) ]
			grep -qx "retry: job X: failed run $n in a row, tolerated (alerts at 5)" <<<"$stderr"
		done
	done
}

@test "a job record owned by another user is refused (as root)" {
	need_root_and_nobody "to give files to another user"
	run -1 "$RETRY" -q -n 1 --job J --alert-after 2 false
	chown nobody state/.jobs/J
	run -125 --separate-stderr "$RETRY" --job J --alert-after 2 touch ran
	expect_stderr "retry: job J: record $RETRY_STATE_DIR/.jobs/J belongs to another user"
	[ ! -e ran ]
}

# --- on a Redis store ---------------------------------------------------------

# redis: a server of the test's own on a Unix socket in $server, saving
# nothing; STORE its URL.  Skips, saying why, without redis-server.
redis() {
	local why n=0
	why=$(redis_missing)
	[ -z "$why" ] || skip "$why"
	server=$(mktemp -d /tmp/retry-job.XXXXXX)
	redis-server --port 0 --unixsocket "$server/sock" --unixsocketperm 700 \
	    --save '' --appendonly no --dir "$server" --logfile "$server/log" \
	    --daemonize no 3>&- &
	echo "$!" >"$server/pid"
	until redis-cli -s "$server/sock" ping 2>/dev/null | grep -q PONG; do
		[ "$n" -lt 100 ] || return 1
		sleep 0.05
		n=$((n + 1))
	done
	STORE=redis+unix://$server/sock
}

# on HOST COMMAND ...: COMMAND with HOST's own state directory.
on() {
	mkdir -p -m 700 "$BATS_TEST_TMPDIR/$1"
	RETRY_STATE_DIR=$BATS_TEST_TMPDIR/$1 "${@:2}"
}

@test "--store: two hosts alternate runs of a job and the count goes on across them" {
	redis
	run -1 on A "$RETRY" -q -n 1 --store "$STORE" --job J --alert-after 3 false
	run -1 --separate-stderr on B "$RETRY" -Q -n 1 --store "$STORE" --job J \
	    --alert-after 3 false
	[ "$stderr" = "" ]
	run -1 --separate-stderr on A "$RETRY" -Q -n 1 --store "$STORE" --job J \
	    --alert-after 3 false
	alert_head "${stderr_lines[0]}" 3
	run on B "$RETRY" --store "$STORE" --job-status J
	[ "$status" -eq 75 ]
	grep -qx 'failed:    3 runs in a row (since .*)' <<<"$output"
	grep -qx "record:    retry:job:{J} on $STORE" <<<"$output"
	[ "$(redis-cli -s "$server/sock" hget 'retry:job:{J}' failed)" = 3 ]
	run -0 on B "$RETRY" -q -n 1 --store "$STORE" --job J --on-recover \
	    'echo recovered' true
	[ "$output" = recovered ]
	run -0 on A "$RETRY" --store "$STORE" --job-status J
	# Nothing in either state directory; no circuit listed.
	[ ! -e A/.jobs ]
	[ ! -e B/.jobs ]
	run -0 on A "$RETRY" --store "$STORE" --circuit-list
	[ "$output" = "" ]
	run -0 on A "$RETRY" --store "$STORE" --job-reset J
	[ "$(redis-cli -s "$server/sock" exists 'retry:job:{J}')" = 0 ]
}

@test "--store: a corrupt hash starts afresh with one warning, as a corrupt record does" {
	redis
	redis-cli -s "$server/sock" hset 'retry:job:{J}' v 1 failed x >/dev/null
	run -1 --separate-stderr "$RETRY" -v -n 1 --store "$STORE" --job J \
	    --alert-after 3 false
	[ "$(grep -c 'corrupt' <<<"$stderr")" -eq 1 ]
	grep -qx "retry: job J: the store's hash retry:job:{J} is corrupt; it starts afresh" <<<"$stderr"
	grep -qx 'retry: job J: failed run 1 in a row, tolerated (alerts at 3)' <<<"$stderr"
	[ "$(redis-cli -s "$server/sock" hget 'retry:job:{J}' failed)" = 1 ]
}

@test "--store: runs on two hosts that end together both count" {
	redis
	local i pids=()
	for i in 1 2 3 4 5 6; do
		on "H$i" "$RETRY" -q -n 1 --store "$STORE" --job J --alert-after 99 \
		    false 3>&- &
		pids+=("$!")
		later "$!"
	done
	for i in "${pids[@]}"; do
		wait "$i" || [ $? -eq 1 ]
	done
	[ "$(redis-cli -s "$server/sock" hget 'retry:job:{J}' failed)" = 6 ]
}

@test "--store that fails: the run's status stands, one warning, and the failed run alerts" {
	run --separate-stderr "$RETRY" -Q -n 1 --store redis://127.0.0.1:1 \
	    --store-timeout 200ms --job J --alert-after 3 --on-tolerate 'echo T' \
	    --on-giveup 'echo G' sh -c 'echo out; exit 4'
	[ "$status" -eq 4 ]
	[ "$output" = "" ]
	grep -qx G <<<"$stderr"
	[ "$(grep -c '^retry: job J: store redis://127.0.0.1:1: .*; its history is not kept, so this failed run alerts$' <<<"$stderr")" = 1 ]
	grep -qx out <<<"$stderr"
	run -0 "$RETRY" -q -n 1 --store redis://127.0.0.1:1 --store-timeout 200ms \
	    --job J --alert-after 3 true
}

@test "a history that cannot be kept: -Q's first line says so, no job gauges, the report's count null" {
	run --separate-stderr "$RETRY" -Q -n 1 --store redis://127.0.0.1:1 \
	    --store-timeout 200ms --job J --alert-after 3 --metrics J.prom \
	    --report r.json false
	[ "$status" -eq 1 ]
	[ "${stderr_lines[1]}" = "retry: job J: its history could not be kept; this failed run alerts" ]
	grep -q '^retry_exit_status{job="J"} 1$' J.prom
	! grep -q retry_job_ J.prom || false
	grep -qF '"job": {"name": "J", "failed_in_row": null, "alerting": null, "tolerated": false, "alert": true, "recovered": false}' r.json
}

@test "the completions offer the jobs that have a record for --job, --job-status and --job-reset" {
	run -1 "$RETRY" -q -n 1 --job nightly --alert-after 2 false
	run -0 "$RETRY" -q --circuit api true
	run -0 bash -c 'source "$1"; COMP_WORDS=(retry "$2" ""); COMP_CWORD=2
	    COMP_LINE="retry $2 "; COMP_POINT=${#COMP_LINE}; _retry
	    printf "%s\n" "${COMPREPLY[@]}"' - "$BATS_TEST_DIRNAME/../completions/retry.bash" --job-status
	[ "$output" = nightly ]
	run -0 bash -c 'source "$1"; COMP_WORDS=(retry "$2" ""); COMP_CWORD=2
	    COMP_LINE="retry $2 "; COMP_POINT=${#COMP_LINE}; _retry
	    printf "%s\n" "${COMPREPLY[@]}"' - "$BATS_TEST_DIRNAME/../completions/retry.bash" --circuit
	[ "$output" = api ]
	command -v fish >/dev/null || skip "no fish"
	run -0 fish -c "source '$BATS_TEST_DIRNAME/../completions/retry.fish'; complete -C 'retry --job-reset '"
	[ "${output%%$'\t'*}" = nightly ]
}

@test "--job-status --report writes the history as JSON; --job-reset takes no --report" {
	run -1 "$RETRY" -q -n 1 --job J --alert-after 1 false
	run -75 "$RETRY" --job-status J --report s.json
	grep -qx '  "job": "J",' s.json
	# The state directory itself, as --circuit-status names it.
	grep -qx "  \"state_directory\": \"$RETRY_STATE_DIR\"," s.json
	grep -qx '  "state": "alerting",' s.json
	grep -qx '  "failed_in_row": 1,' s.json
	grep -qx '  "last_success": null,' s.json
	grep -qx '  "exit_status": 75' s.json
	run -125 "$RETRY" --job-reset J --report s.json
	[ "$output" = "retry: --report goes with a run or --job-status, not --job-reset" ]
}

@test "a record that shrinks, written in place, reads back: a success after a failure, then a failure, warn of nothing" {
	local c
	for c in false true false true false; do
		run --separate-stderr "$RETRY" -q -n 1 --job J --alert-after 3 "$c"
		[ "$stderr" = "" ]
	done
	run -1 "$RETRY" --job-status J
}

@test "--job-status prints the history a line a fact, as --circuit-status does" {
	local i
	for i in 1 2 3; do
		run -1 "$RETRY" -q -n 1 --job nightly --alert-after 2 false
	done
	run -75 "$RETRY" --job-status nightly
	[ "${lines[0]}" = "job:       nightly" ]
	[ "${lines[1]}" = "state:     alerting" ]
	matches "${lines[2]}" '^failed:    3 runs in a row \(since [0-9-]{10}T[0-9:]{8}Z\)$'
	[ "${lines[3]}" = "alerts:    at 2 failed runs in a row" ]
	[ "${lines[4]}" = "success:   never" ]
	matches "${lines[5]}" '^alert:     [0-9-]{10}T[0-9:]{8}Z$'
	[ "${lines[6]}" = "record:    $RETRY_STATE_DIR/.jobs/nightly" ]
	[ "${#lines[@]}" -eq 7 ]
}
