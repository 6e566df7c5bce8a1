#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The hooks (--on-retry, --on-giveup, --on-success) and --reset-after:
# when each hook runs, what it finds in its environment, how the deadline
# and signals bound it, and that nothing it does changes the run.
load helpers/common

setup() {
	in_test_dir
}

teardown() {
	kill_later
}

# The facts a hook sees, a line per run of it, into FILE.
FACTS='echo "$0 $RETRY_ATTEMPT/$RETRY_MAX_ATTEMPTS status=$RETRY_STATUS signal=$RETRY_SIGNAL outcome=$RETRY_OUTCOME next=${RETRY_NEXT_DELAY-unset} elapsed=$RETRY_ELAPSED key=$RETRY_IDEMPOTENCY_KEY report=${RETRY_REPORT-unset}" >>facts'

@test "--on-retry runs after each failed attempt but the last: n-1 times for n attempts, never with a success" {
	run -1 --separate-stderr "$RETRY" -n 4 -b 1ms -K k \
	    --on-retry 'echo retry >>hooks' --on-giveup 'echo giveup >>hooks' \
	    --on-success 'echo success >>hooks' false
	[ "$(cat hooks)" = "$(printf 'retry\nretry\nretry\ngiveup')" ]
	rm hooks
	run -0 --separate-stderr "$RETRY" -n 4 -b 1ms -K k \
	    --on-retry 'echo retry >>hooks' --on-giveup 'echo giveup >>hooks' \
	    --on-success 'echo success >>hooks' flaky state 2
	[ "$(cat hooks)" = "$(printf 'retry\nretry\nsuccess')" ]
}

@test "a hook's environment: the attempt that ended, its status and signal, the outcome, the next delay, the time, the key, the report" {
	run -143 --separate-stderr "$RETRY" -n 2 -b 10ms -j none -K k1 \
	    --report rep.json --on-retry "$FACTS" --on-giveup "$FACTS" \
	    sh -c 'kill -TERM $$'
	cat facts
	[ "$(wc -l <facts)" -eq 2 ]
	matches "$(sed -n 1p facts)" \
	    '^/bin/sh 1/2 status=143 signal=SIGTERM outcome=running next=0\.010 elapsed=[0-9]+\.[0-9]{3} key=k1 report=rep\.json$'
	matches "$(sed -n 2p facts)" \
	    '^/bin/sh 2/2 status=143 signal=SIGTERM outcome=attempts_exhausted next=unset elapsed=[0-9]+\.[0-9]{3} key=k1 report=rep\.json$'
	# A report to stderr names no file; an exit, no signal.
	rm facts
	run -0 --separate-stderr "$RETRY" -n 2 -K k2 --report - \
	    --on-success "$FACTS" true
	matches "$(cat facts)" \
	    '^/bin/sh 1/2 status=0 signal= outcome=success next=unset elapsed=[0-9.]+ key=k2 report=unset$'
}

@test "--on-giveup and --on-success run after the report is written: the hook reads it" {
	run -3 --separate-stderr "$RETRY" -n 1 --report rep.json \
	    --on-giveup 'grep -c "\"outcome\": \"attempts_exhausted\"" "$RETRY_REPORT" >seen' \
	    sh -c 'exit 3'
	[ "$(cat seen)" = 1 ]
}

@test "the attempts find none of the hook's variables" {
	run -1 --separate-stderr "$RETRY" -n 3 -b 1ms --on-retry true \
	    sh -c 'env | grep -E "^RETRY_(STATUS|SIGNAL|OUTCOME|NEXT_DELAY|ELAPSED|REPORT)=" >>leaked; exit 1'
	[ ! -s leaked ]
}

@test "after a hook, the attempts find the caller's own RETRY_STATUS, RETRY_SIGNAL, ..., and an end hook finds no RETRY_NEXT_DELAY of the caller's" {
	run -1 --separate-stderr env RETRY_STATUS=s RETRY_SIGNAL=g \
	    RETRY_OUTCOME=o RETRY_NEXT_DELAY=n RETRY_ELAPSED=e RETRY_REPORT=r \
	    "$RETRY" -n 3 -b 1ms --on-retry "$FACTS" --on-giveup "$FACTS" \
	    sh -c 'echo "$RETRY_STATUS $RETRY_SIGNAL $RETRY_OUTCOME $RETRY_NEXT_DELAY $RETRY_ELAPSED $RETRY_REPORT" >>seen; exit 1'
	[ "$(cat seen)" = "$(printf 's g o n e r\ns g o n e r\ns g o n e r')" ]
	# The hooks find their own facts, and none of the caller's.
	[ "$(wc -l <facts)" -eq 3 ]
	matches "$(sed -n 2p facts)" \
	    '^/bin/sh 2/3 status=1 signal= outcome=running next=0\.[0-9]{3} elapsed=[0-9.]+ key=[0-9a-f-]+ report=unset$'
	matches "$(sed -n 3p facts)" \
	    '^/bin/sh 3/3 status=1 signal= outcome=attempts_exhausted next=unset elapsed=[0-9.]+ key=[0-9a-f-]+ report=unset$'
}

@test "a hook's stdout goes to retry's stderr, its stdin is /dev/null, it runs in a process group of its own" {
	run -1 --separate-stderr "$RETRY" -n 2 -b 1ms \
	    --on-retry 'echo to-stdout; read -r line || echo stdin-empty; ps_pgid=$(proc-state $$ pgid); [ "$ps_pgid" = $$ ] && echo own-group' \
	    false <<<"typed"
	[ "$output" = "" ]
	[[ $stderr == *to-stdout* ]]
	[[ $stderr == *stdin-empty* ]]
	[[ $stderr == *own-group* ]]
}

@test "--on-retry runs inside the wait: it does not lengthen a delay it fits in" {
	local t0 t1
	t0=$(now_ms)
	run -1 --separate-stderr "$RETRY" -n 2 -b 300ms -j none \
	    --on-retry 'sleep 0.2' false
	t1=$(now_ms)
	# 300 ms of delay with the hook's 200 ms inside it, not 500 ms.
	between $((t1 - t0)) 290 480
}

@test "a hook that outlasts the deadline is stopped at it, with one warning, and the run ends there" {
	local t0 t1
	t0=$(now_ms)
	run -1 --separate-stderr "$RETRY" -n 3 -b 10ms -j none -D 300ms -k 0 \
	    --on-retry 'sleep 5' false
	t1=$(now_ms)
	between $((t1 - t0)) 280 1200
	[ "${stderr_lines[0]}" = "retry: attempt 1/3 failed with exit 1; next in 0.010s" ]
	[ "${stderr_lines[1]}" = "retry: --on-retry: stopped at the deadline" ]
	[ "${#stderr_lines[@]}" -eq 3 ]
	# No attempt started at or after the deadline, and the last line
	# blames the hook, not the delay that it has just said fits.
	[ "${stderr_lines[2]}" = "retry: attempt 1/3 failed with exit 1; giving up: the deadline passed during --on-retry" ]
}

@test "a deadline that passes after the delay (here in a wait for the circuit's lock) is said as such, not as a delay that would pass it" {
	export RETRY_STATE_DIR=$BATS_TEST_TMPDIR/state
	"$RETRY" --circuit lk true
	# The hook leaves another run's lock held for the attempt that follows.
	run -1 --separate-stderr "$RETRY" --circuit lk -n 3 -b 200ms -j none \
	    -D 700ms --on-retry 'hold-lock "$RETRY_STATE_DIR/.lk.lock" ready 3>&- &
		echo $! >holder.pid; while [ ! -e ready ]; do sleep 0.01; done' \
	    false
	later "$(cat holder.pid)"
	expect_stderr "retry: attempt 1/3 failed with exit 1; next in 0.200s
retry: attempt 1/3 failed with exit 1; giving up: the deadline passed before the next attempt"
}

@test "--on-giveup runs when the deadline stops a hung job, within its grace: the heartbeat's fail ping goes out" {
	local t0 t1 before
	before=$(clock-now -r)
	t0=$(now_ms)
	run -124 --separate-stderr "$RETRY" -n 4 -D 200ms \
	    --on-success 'echo ok >>pings' \
	    --on-giveup 'echo "fail $RETRY_OUTCOME $RETRY_DEADLINE" >>pings' \
	    sleep 10
	t1=$(now_ms)
	expect_stderr "retry: attempt 1/4 timed out at the deadline; giving up"
	between $((t1 - t0)) 180 1500
	[ "$(wc -l <pings)" -eq 1 ]
	[ "$(cut -d' ' -f1-2 pings)" = "fail deadline" ]
	# RETRY_DEADLINE: the end of the grace, 10s after the deadline.
	local grace_end
	grace_end=$(cut -d' ' -f3 pings | tr -d .)
	between $((grace_end - before)) 10190 10900
}

@test "--hook-grace bounds an end hook past the deadline: stopped at its end, with one warning" {
	local t0 t1 before
	before=$(clock-now -r)
	t0=$(now_ms)
	run -124 --separate-stderr "$RETRY" -n 2 -D 200ms -k 0 \
	    --hook-grace 300ms --on-giveup 'echo "$RETRY_DEADLINE" >seen; sleep 5' \
	    sleep 10
	t1=$(now_ms)
	expect_stderr "retry: attempt 1/2 timed out at the deadline; giving up
retry: --on-giveup: stopped at the end of --hook-grace"
	# 200 ms of deadline, then 300 ms of grace, not the hook's 5 s.
	between $((t1 - t0)) 480 1500
	between $(($(tr -d . <seen) - before)) 490 900
	# A grace that has passed by the time the run ends starts nothing.
	run -124 --separate-stderr "$RETRY" -n 2 -D 100ms -k 200ms --hook-grace 1ms \
	    --on-giveup 'touch ran' sh -c 'trap "" TERM; sleep 1'
	[ ! -e ran ]
	[ "${stderr_lines[1]}" = "retry: --on-giveup not run: the deadline and --hook-grace have passed" ]
}

@test "--hook-grace 0: an end hook does not start after the deadline, and stops at it" {
	run -124 --separate-stderr "$RETRY" -D 200ms --hook-grace 0 \
	    --on-giveup 'touch ran' sleep 10
	[ ! -e ran ]
	expect_stderr "retry: attempt 1/5 timed out at the deadline; giving up
retry: --on-giveup not run: the deadline has passed"
	local t0
	t0=$(now_ms)
	run -1 --separate-stderr "$RETRY" -n 1 -D 300ms -k 0 --hook-grace 0 \
	    --on-giveup 'sleep 5' false
	between $(($(now_ms) - t0)) 280 1200
	[ "${stderr_lines[1]}" = "retry: --on-giveup: stopped at the deadline" ]
	run -125 --separate-stderr "$RETRY" --hook-grace 5x touch ran
	[[ $stderr == "retry: --hook-grace '5x': invalid duration"* ]]
	[ ! -e ran ]
}

@test "no end hook runs once a signal has ended the run, even within the grace" {
	"$RETRY" -n 3 -D 5s --on-giveup 'touch ran' \
	    sh -c 'echo $$ >cmd.pid; sleep 5' 2>err 3>&- &
	local pid=$!
	later "$pid"
	wait_for cmd.pid
	kill -TERM "$pid"
	local status=0
	wait "$pid" || status=$?
	[ "$status" -eq 143 ]
	[ ! -e ran ]
}

@test "SIGTERM while an end hook runs in its grace: the hook gets it, retry dies of SIGTERM at once" {
	"$RETRY" -D 200ms --on-giveup 'echo $$ >hook.pid; sleep 5' sleep 10 \
	    2>err 3>&- &
	local pid=$!
	later "$pid"
	wait_for hook.pid
	local t0 status=0
	t0=$(now_ms)
	kill -TERM "$pid"
	wait "$pid" || status=$?
	[ "$status" -eq 143 ]
	between $(($(now_ms) - t0)) 0 1000
	gone "$(cat hook.pid)"
}

@test "a hook that fails, is killed or cannot run gives one warning and changes nothing" {
	run -1 --separate-stderr "$RETRY" -n 2 -b 1ms -j none --on-retry 'exit 7' \
	    --on-giveup 'kill -KILL $$' false
	expect_stderr "retry: attempt 1/2 failed with exit 1; next in 0.001s
retry: --on-retry: failed with exit 7
retry: attempt 2/2 failed with exit 1; giving up: no attempts left
retry: --on-giveup: killed by SIGKILL"
	run -0 --separate-stderr "$RETRY" -n 2 -b 1ms \
	    --on-success 'no-such-hook-command' true
	[ "${#stderr_lines[@]}" -eq 2 ]
	[[ ${stderr_lines[0]} == *"no-such-hook-command"*"not found"* ]]
	[ "${stderr_lines[1]}" = "retry: --on-success: failed with exit 127" ]
}

@test "SIGTERM while --on-retry runs: the hook gets it, the run ends at once, retry dies of SIGTERM" {
	"$RETRY" -n 3 -b 10ms --on-retry 'echo $$ >hook.pid; sleep 5' false \
	    2>err 3>&- &
	local pid=$!
	later "$pid"
	wait_for hook.pid
	local t0
	t0=$(now_ms)
	kill -TERM "$pid"
	local status=0
	wait "$pid" || status=$?
	[ "$status" -eq 143 ]
	between $(($(now_ms) - t0)) 0 1000
	gone "$(cat hook.pid)"
	# No second attempt, no giveup hook after a signal.
	[ "$(grep -c 'attempt 2' err)" -eq 0 ]
}

@test "a hook may itself be a retry, whose key is derived like a nested run's" {
	run -1 --separate-stderr "$RETRY" -n 2 -b 1ms -K outer \
	    --on-retry "\"$RETRY\" -n 1 sh -c 'echo \"\$RETRY_IDEMPOTENCY_KEY\" >inner'" \
	    false
	[[ $(cat inner) =~ ^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}- ]]
}

@test "hooks: an empty command is a usage error, and nothing runs" {
	local o
	for o in --on-retry --on-giveup --on-success; do
		run -125 --separate-stderr "$RETRY" "$o" '' touch ran
		[ "$stderr" = "retry: $o '': must not be empty (a command for /bin/sh -c)" ]
		run -125 --separate-stderr "$RETRY" "$o" '  ' touch ran
		[ ! -e ran ]
	done
}

@test "--reset-after: an attempt that ran at least DUR before failing starts attempts and delays afresh" {
	# Attempt 1 fails at once, 2 runs 300 ms then fails, 3 and 4 at once.
	cat >cmd <<'EOF'
n=$(($(cat n 2>/dev/null || echo 0) + 1)); echo $n >n
echo "$n $RETRY_ATTEMPT" >>seen
[ "$n" -eq 2 ] && sleep 0.3
[ "$n" -ge 5 ] && exit 0
exit 1
EOF
	run -0 --separate-stderr "$RETRY" -n 3 -b 20ms -f 4 -j none \
	    --reset-after 250ms --report rep.json sh cmd
	# Without the reset, -n 3 would have ended at the third attempt.
	[ "$(cut -d' ' -f2 seen | tr '\n' ' ')" = "1 2 1 2 3 " ]
	[ "${stderr_lines[0]}" = "retry: attempt 1/3 failed with exit 1; next in 0.020s" ]
	matches "${stderr_lines[1]}" '^retry: attempt 2/3 failed with exit 1; it ran 0\.[0-9]{3}s, at least --reset-after: attempts and delays start afresh; next in 0\.020s$'
	# The delay after the reset is the first step's again, not the third's.
	[ "${stderr_lines[2]}" = "retry: attempt 1/3 failed with exit 1; next in 0.020s" ]
	[ "${stderr_lines[3]}" = "retry: attempt 2/3 failed with exit 1; next in 0.080s" ]
	# The report numbers the attempts through the run and marks the reset.
	grep -q '"attempt": 5,' rep.json
	[ "$(grep -c '"schedule_reset": true' rep.json)" -eq 1 ]
	grep '"attempt": 2,' rep.json | grep -q '"schedule_reset": true'
}

@test "--reset-after: a bad duration is a usage error" {
	run -125 --separate-stderr "$RETRY" --reset-after -1s touch ran
	[[ $stderr == "retry: --reset-after '-1s': "* ]]
	run -125 --separate-stderr "$RETRY" --reset-after 0 touch ran
	[ ! -e ran ]
}
