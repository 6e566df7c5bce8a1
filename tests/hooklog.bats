#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# --on-start, and what every hook finds for a heartbeat monitor: the
# run's ID (RETRY_RUN_ID), its duration (RETRY_DURATION) and the ended
# attempt's last output (RETRY_LOG); and that a run without hooks relays
# nothing for them.
load helpers/common

setup() {
	in_test_dir
	export RETRY_STATE_DIR=$BATS_TEST_TMPDIR/state
}

teardown() {
	kill_later
}

UUID4='^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'

# A hook that notes its name, run ID, duration and log into ./facts.
note() {
	echo "echo \"$1 \$RETRY_RUN_ID \$RETRY_DURATION \$RETRY_ELAPSED \${RETRY_LOG-unset} \${RETRY_STATUS-unset} \$RETRY_OUTCOME\" >>facts"
}

@test "--on-start runs once, before the first attempt and after the splay; it finds no attempt's status, an empty RETRY_LOG, outcome starting" {
	run -1 --separate-stderr "$RETRY" -n 3 -b 1ms -j none --splay 100ms \
	    --on-start "$(note start); echo \"[\${RETRY_LOG-unset}] \${RETRY_STATUS-unset}\" >seen; echo started >>events" \
	    sh -c 'echo "attempt $RETRY_ATTEMPT" >>events; exit 1'
	[ "$(cat events)" = "started
attempt 1
attempt 2
attempt 3" ]
	read -r name id duration elapsed _ <facts
	[ "$name" = start ]
	[ "$(awk '{ print $NF }' facts)" = starting ]
	matches "$id" "$UUID4"
	# No attempt's status; RETRY_LOG set, and empty.
	[ "$(cat seen)" = "[] unset" ]
	# After the splay it was told to wait.
	local splay
	splay=$(sed -n 's/^retry: splay: \([0-9.]*\)s before the first attempt$/\1/p' <<<"$stderr")
	[ -n "$splay" ]
	awk -v d="$duration" -v s="$splay" 'BEGIN { exit !(d >= s) }'
}

@test "--on-start never runs when no attempt starts: an open circuit, a deadline already past, --min-time" {
	run -1 --separate-stderr "$RETRY" -n 1 --circuit op --trip 1 \
	    --cool 20s false
	run -75 --separate-stderr "$RETRY" --circuit op -D 1s \
	    --on-start 'touch started' touch ran
	[ ! -e started ] && [ ! -e ran ]
	run --separate-stderr env RETRY_DEADLINE=1 "$RETRY" \
	    --on-start 'touch started' touch ran
	[ "$status" -ne 0 ]
	[ ! -e started ] && [ ! -e ran ]
	run -124 --separate-stderr "$RETRY" -D 100ms --min-time 1s \
	    --on-start 'touch started' touch ran
	[ ! -e started ] && [ ! -e ran ]
}

@test "--on-start that fails is one warning, and the run goes on" {
	run -0 --separate-stderr "$RETRY" -n 2 --on-start 'exit 3' touch ran
	expect_stderr "retry: --on-start: failed with exit 3"
	[ -e ran ]
}

@test "--on-start is stopped at the deadline, with one warning, and no attempt starts after it" {
	local t0
	t0=$(now_ms)
	run --separate-stderr "$RETRY" -D 300ms -k 0 --on-start 'sleep 5' \
	    touch ran
	between $(($(now_ms) - t0)) 250 1500
	[ "$status" -ne 0 ]
	[ "${stderr_lines[0]}" = "retry: --on-start: stopped at the deadline" ]
	[ "${stderr_lines[1]}" = "retry: the deadline came before the first attempt; not running 'touch'" ]
	[ ! -e ran ]
}

@test "SIGTERM while --on-start runs: the hook gets it, no attempt starts, retry dies of SIGTERM" {
	"$RETRY" -n 3 -b 10ms --on-start 'echo $$ >hook.pid; sleep 5' \
	    touch ran 2>err 3>&- &
	local pid=$! status=0
	later "$pid"
	wait_for hook.pid
	kill -TERM "$pid"
	wait "$pid" || status=$?
	[ "$status" -eq 143 ]
	gone "$(cat hook.pid)"
	[ ! -e ran ]
}

@test "RETRY_RUN_ID: a UUID (v4), the same in every hook, attempt and the report of a run; another for another run with the same key" {
	run -1 --separate-stderr "$RETRY" -n 2 -b 1ms -K job --report rep.json \
	    --on-start "$(note start)" --on-retry "$(note retry)" \
	    --on-giveup "$(note giveup)" \
	    sh -c 'echo "attempt $RETRY_RUN_ID" >>facts; exit 1'
	[ "$(wc -l <facts)" -eq 5 ]
	local id
	id=$(awk 'NR == 1 { print $2 }' facts)
	matches "$id" "$UUID4"
	[ "$(awk '{ print $2 }' facts | sort -u)" = "$id" ]
	grep -qxF "  \"run_id\": \"$id\"," rep.json
	rm facts
	run -0 --separate-stderr "$RETRY" -K job --on-success "$(note success)" true
	local other
	other=$(awk '{ print $2 }' facts)
	matches "$other" "$UUID4"
	[ "$other" != "$id" ]
	# Not in the metrics: a label per run would be a new series per run.
	run -0 --separate-stderr "$RETRY" --metrics m.prom true
	! grep -q run_id m.prom || false
}

@test "RETRY_DURATION: seconds since the run began, three decimals, as RETRY_ELAPSED; the end hook's is the whole run's" {
	run -1 --separate-stderr "$RETRY" -n 2 -b 200ms -j none \
	    --on-retry "$(note retry)" --on-giveup "$(note giveup)" false
	local name id duration elapsed
	while read -r name id duration elapsed _; do
		matches "$duration" '^[0-9]+\.[0-9]{3}$'
		[ "$duration" = "$elapsed" ] ||
		    awk -v d="$duration" -v e="$elapsed" 'BEGIN { exit !(e - d < 0.002) }'
		if [ "$name" = giveup ]; then
			# One delay of 200 ms lies in it.
			awk -v d="$duration" 'BEGIN { exit !(d >= 0.2 && d < 3) }'
		else
			awk -v d="$duration" 'BEGIN { exit !(d < 1) }'
		fi
	done <facts
	[ "$(wc -l <facts)" -eq 2 ]
}

# Each attempt writes to stdout and stderr in turn, with a pause for retry
# to read each write before the next: the order read is the order written.
INTERLEAVED='for i in 1 2 3; do echo "out $i of $RETRY_ATTEMPT"; sleep 0.03; echo "err $i of $RETRY_ATTEMPT" >&2; sleep 0.03; done; exit 1'
KEEP_LOG='cp "$RETRY_LOG" "log.$RETRY_ATTEMPT"; echo "$RETRY_LOG" >>paths'

# The log that attempt N would leave.
log_of() {
	local i
	for i in 1 2 3; do
		echo "out $i of $1"
		echo "err $i of $1"
	done
}

@test "RETRY_LOG: the ended attempt's stdout and stderr in the order written, in a file removed after the hook; what the user sees is unchanged" {
	"$RETRY" -n 2 -b 1ms -j none --on-retry "$KEEP_LOG" \
	    --on-giveup "$KEEP_LOG" sh -c "$INTERLEAVED" >out 2>err || true
	[ "$(cat log.1)" = "$(log_of 1)" ]
	[ "$(cat log.2)" = "$(log_of 2)" ]
	[ "$(wc -l <paths)" -eq 2 ]
	local path
	while read -r path; do
		matches "$path" "^${TMPDIR:-/tmp}/retry-log\\.[A-Za-z0-9]{6}$"
		[ ! -e "$path" ]
	done <paths
	[ "$(cat out)" = "$(grep out <(log_of 1; log_of 2))" ]
	[ "$(grep -v '^retry:' err)" = "$(grep err <(log_of 1; log_of 2))" ]
}

@test "RETRY_LOG of stdout and stderr that are one file (>log 2>&1): one pipe for both, the lines in the file as written, none swapped" {
	# No pause between the two streams' writes: two pipes would let
	# retry read a later stdout line before an earlier stderr one.
	"$RETRY" -n 1 --on-success 'cat "$RETRY_LOG" >kept' sh -c \
	    'for i in $(seq 200); do echo "o$i"; echo "e$i" >&2; done' >log 2>&1
	seq 200 | awk '{ print "o" $1; print "e" $1 }' >want
	cmp want log
	cmp want kept
}

@test "RETRY_LOG keeps the last 10 KiB" {
	run -1 --separate-stderr "$RETRY" -n 1 --on-giveup "$KEEP_LOG" \
	    sh -c 'seq 1 6000; exit 1'
	[ "$(wc -c <log.1)" -eq 10240 ]
	cmp log.1 <(seq 1 6000 | tail -c 10240)
	[ "$output" = "$(seq 1 6000)" ]
}

@test "RETRY_LOG with -Q and with -O" {
	run -1 --separate-stderr "$RETRY" -Q -n 2 -b 1ms -j none \
	    --on-retry "$KEEP_LOG" --on-giveup "$KEEP_LOG" sh -c "$INTERLEAVED"
	[ "$(cat log.1)" = "$(log_of 1)" ]
	[ "$(cat log.2)" = "$(log_of 2)" ]
	rm log.*
	run -1 --separate-stderr "$RETRY" -O -n 2 -b 1ms -j none \
	    --on-retry "$KEEP_LOG" --on-giveup "$KEEP_LOG" sh -c "$INTERLEAVED"
	[ "$(cat log.1)" = "$(log_of 1)" ]
	[ "$(cat log.2)" = "$(log_of 2)" ]
	[ "$output" = "$(log_of 2 | grep out)" ]
}

@test "RETRY_LOG is unset where TMPDIR cannot have it, with one warning for the run" {
	run -1 --separate-stderr env TMPDIR=/nonexistent "$RETRY" -n 3 -b 1ms \
	    -j none --on-retry 'echo "${RETRY_LOG-unset}" >>seen' \
	    --on-giveup 'echo "${RETRY_LOG-unset}" >>seen' sh -c 'echo x; exit 1'
	[ "$(cat seen)" = "unset
unset
unset" ]
	[ "$(grep -c 'no file in' <<<"$stderr")" -eq 1 ]
	grep -qxF "retry: --on-retry: no file in /nonexistent, so RETRY_LOG is unset: No such file or directory" <<<"$stderr"
}

@test "the attempts find RETRY_RUN_ID but neither RETRY_DURATION nor RETRY_LOG" {
	run -1 --separate-stderr "$RETRY" -n 2 -b 1ms --on-retry true \
	    sh -c 'env | grep -E "^RETRY_(RUN_ID|DURATION|LOG)=" | cut -d= -f1 >>seen; exit 1'
	[ "$(cat seen)" = "RETRY_RUN_ID
RETRY_RUN_ID" ]
}

# The attempt's stdout, as it finds it.
FD1='readlink /proc/$$/fd/1; [ -t 1 ] && echo tty; exit 0'

@test "no hook, or only --on-start: stdout and stderr stay the caller's; any other hook relays them for RETRY_LOG, but a terminal" {
	"$RETRY" -n 1 sh -c "$FD1" >out 2>err
	[ "$(cat out)" = "$PWD/out" ]
	"$RETRY" -n 1 --on-start true sh -c "$FD1" >out 2>err
	[ "$(cat out)" = "$PWD/out" ]
	"$RETRY" -n 1 --on-success true sh -c "$FD1" >out 2>err
	[[ $(cat out) =~ ^pipe: ]]
	# At a terminal, the attempt keeps it.
	run "$HELPERS/ptyrun" -- "$RETRY" -n 1 --on-success 'echo "[$(cat "$RETRY_LOG")]"' \
	    sh -c "$FD1"
	[[ $output == *tty* ]]
	[[ $output == *"[]"* ]]
}

@test "RETRY_DURATION of an end hook is the report's total_time, however long the hooks before it ran" {
	run -1 "$RETRY" -q -n 1 --job D --alert-after 1 false
	run -0 --separate-stderr "$RETRY" -n 1 --job D --alert-after 1 \
	    --report r.json --on-recover 'sleep 0.3' \
	    --on-success 'echo "$RETRY_DURATION $RETRY_ELAPSED" >d' true
	read -r duration elapsed <d
	total=$(sed -n 's/^  "total_time": \([0-9.]*\)$/\1/p' r.json)
	# The report has six decimals, the variable three, cut.
	[ "$duration" = "${total%???}" ]
	awk -v e="$elapsed" -v d="$duration" 'BEGIN { exit !(e - d >= 0.29) }'
}

@test "--on-start finds RETRY_ATTEMPT 0, not the number an outer run gave this one" {
	RETRY_ATTEMPT=7 run -0 --separate-stderr "$RETRY" -n 1 \
	    --on-start 'echo "start $RETRY_ATTEMPT" >&2' sh -c 'echo "$RETRY_ATTEMPT"'
	[ "$stderr" = "start 0" ]
	[ "$output" = 1 ]
}

@test "-Q with TMPDIR unusable: -Q's one warning, none more for RETRY_LOG, which is unset" {
	run -1 --separate-stderr env TMPDIR=/nonexistent "$RETRY" -Q -n 2 -b 1ms \
	    --on-giveup 'echo "${RETRY_LOG-unset}" >seen' sh -c 'exit 1'
	[ "$(cat seen)" = unset ]
	[ "$(grep -c 'no file in' <<<"$stderr")" -eq 1 ]
	[ "${stderr_lines[0]}" = "retry: -Q: no file in /nonexistent, so output passes through: No such file or directory" ]
}
