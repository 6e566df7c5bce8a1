#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Many hosts, one API (issue 16): --store, the circuit and the retry budget
# that runs on many hosts share through one Redis server.  This file starts
# its own servers (Debian's redis-server) on a Unix socket and a free port
# of 127.0.0.1 in a temporary directory, nothing saved, and stops them by
# their pids.  Three "hosts" are three state directories, A, B and C.
# Without redis-server every test skips, and says why.

load helpers/common

BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-60}

# --- servers ---------------------------------------------------------------

# up DIR: the server of DIR answers (PONG, or NOAUTH when it wants a
# password), within 5 s.
up() {
	local n=0
	until redis-cli -s "$1/sock" ping 2>&1 | grep -Eq 'PONG|NOAUTH'; do
		alive "$(cat "$1/pid")" || return 1
		[ "$n" -ge 100 ] && return 1
		sleep 0.05
		n=$((n + 1))
	done
}

# redis_start DIR [OPTION ...]: a server in DIR, on DIR/sock and a free
# port of 127.0.0.1 (and ::1 where there is one), saving nothing; its pid
# in DIR/pid, its port in DIR/port.  A port taken meanwhile: another one.
redis_start() {
	local dir=$1 try
	shift
	mkdir -p "$dir"
	for try in 1 2 3 4 5; do
		slow-proxy -p >"$dir/port" || return 1
		redis-server --port "$(cat "$dir/port")" --bind 127.0.0.1 -::1 \
		    --unixsocket "$dir/sock" --unixsocketperm 700 --save '' \
		    --appendonly no --dir "$dir" --logfile "$dir/log" \
		    --daemonize no "$@" 3>&- &
		echo "$!" >"$dir/pid"
		up "$dir" && return 0
		server_stop "$dir"
	done
	cat "$dir/log" >&2
	return 1
}

# A server for the file; servers of their own for the tests that stop
# them or set a password (in "servers", for teardown).
setup_file() {
	# bats 1.8 cannot skip from here: setup() does, for every test.
	NO_REDIS=$(redis_missing)
	export NO_REDIS
	[ -z "$NO_REDIS" ] || return 0
	# Short: a socket's path has at most 103 bytes.
	SERVER=$(mktemp -d /tmp/retry-store.XXXXXX)
	export SERVER
	redis_start "$SERVER"
}

teardown_file() {
	if [ -n "${SERVER:-}" ]; then
		server_stop "$SERVER"
		rm -rf "$SERVER"
	fi
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	unset RETRY_STORE REDISCLI_AUTH RETRY_STATE_DIR
	mkdir -p A B C
	pids=()
	# The URLs are checked with no server at all.
	[[ $BATS_TEST_DESCRIPTION == malformed* ]] && return 0
	[ -z "$NO_REDIS" ] || skip "$NO_REDIS"
	redis-cli -s "$SERVER/sock" flushall >/dev/null
	STORE=redis+unix://$SERVER/sock
	PORT=$(cat "$SERVER/port")
}

# Whatever a failed test left: the pids noted by later, the servers in
# "servers".
teardown() {
	local d
	kill_later
	for d in $(cat "$BATS_TEST_TMPDIR/servers" 2>/dev/null); do
		server_stop "$d"
		rm -rf "$d"
	done
}

# server: a server of the test's own, in $OWN, with the options given.
server() {
	OWN=$(mktemp -d /tmp/retry-store.XXXXXX)
	echo "$OWN" >>"$BATS_TEST_TMPDIR/servers"
	redis_start "$OWN" "$@"
}

rcli() {
	redis-cli -s "$SERVER/sock" "$@"
}

# started PID: kill PID in teardown, should the test stop before it ends;
# and wait for it in finish (a bare "wait" would wait for bats's timer).
started() {
	later "$1"
	pids+=("$1")
}

# finish: waits for the processes that "started" noted.
finish() {
	local p
	for p in "${pids[@]}"; do
		wait "$p" || true
	done
	pids=()
}

# on HOST COMMAND ...: COMMAND with the state directory of HOST.
on() {
	RETRY_STATE_DIR=$BATS_TEST_TMPDIR/$1 "${@:2}"
}

# field NAME F: field F of the circuit NAME's hash on the store.
field() {
	rcli hget "retry:{$1}:state" "$2"
}

# shown DUR: DUR as retry's messages write it ("0.2s"), from its own -v.
shown() {
	"$RETRY" -v -n1 --circuit shown --store redis://127.0.0.1:1 \
	    --store-timeout "$1" true 2>&1 |
	    sed -n 's/.*, \(.*\) a step at most,.*/\1/p'
}

# --- URLs and options -------------------------------------------------------

@test "malformed store URLs are usage errors: the option, the value with its password masked, the fix" {
	local -a bad=(
		'localhost:6379' "not a store URL: use redis://[USER:PASSWORD@]HOST[:PORT][/DB], redis+unix:///PATH[?db=N] or redis+sentinel://HOST[:PORT]/SERVICE"
		'http://u:pw@h' "not a store URL: use redis://[USER:PASSWORD@]HOST[:PORT][/DB], redis+unix:///PATH[?db=N] or redis+sentinel://HOST[:PORT]/SERVICE"
		'rediss://u:pw@h:6380' "TLS is not supported: reach the server through a Unix socket or a local TLS proxy (see retry-circuit(7))"
		'redis://' "no host: write redis://HOST, as redis://127.0.0.1"
		'redis://:pw@' "no host: write redis://HOST, as redis://127.0.0.1"
		'redis://h:0' "invalid port: a number from 1 to 65535"
		'redis://u:pw@h:65536' "invalid port: a number from 1 to 65535"
		'redis://h:x' "invalid port: a number from 1 to 65535"
		'redis://h:00000000000000000065536' "invalid port: a number from 1 to 65535"
		'redis://h/x' "invalid database: a number from 0 to 2147483647"
		'redis://h/2147483648' "invalid database: a number from 0 to 2147483647"
		'redis://h?db=1' "no parameters: the database goes in the path, as redis://HOST/2"
		'redis://[::1' "an IPv6 address without its ']'"
		'redis://[::g]:1' "invalid IPv6 address"
		'redis://::1' "an IPv6 address goes in brackets, as redis://[::1]:6379"
		'redis://300.1.1.1' "invalid IPv4 address"
		'redis://a b' "invalid host: letters, digits, '.', '-', '_', or an IPv6 address in brackets"
		'redis://u:pa%zzss@h' "a '%' that is not %XX (nor %00): write '%' as %25"
		'redis://u:pass%2@h' "a '%' that is not %XX: write '%' as %25"
		'redis://u:se#cret@h' "a '#' in the URL: write it as %23 in a password"
		'redis+unix://h/s.sock' "a host in a redis+unix URL: write redis+unix:///PATH"
		'redis+unix://' "no socket path: write redis+unix:///PATH"
		'redis+unix:///' "no socket path: write redis+unix:///PATH"
		'redis+unix:///s.sock?x=1' "an unknown parameter: only ?db=N"
		'redis+unix:///s.sock?db=-1' "invalid database: a number from 0 to 2147483647"
		"redis+unix:///$(printf 'd%.0s' {1..110})" "a socket path longer than 103 bytes"
	)
	local k url masked
	for ((k = 0; k < ${#bad[@]}; k += 2)); do
		url=${bad[k]}
		masked=$(sed 's#^\(\([a-z+]*://\)\{0,1\}[^:@]*:\).*@#\1***@#' <<<"$url")
		run -125 --separate-stderr "$RETRY" --circuit x --store "$url" touch ran
		[ "$output" = "" ]
		expect_stderr "retry: --store '$masked': ${bad[k + 1]}"
		[[ $stderr != *:pw@* && $stderr != *pass%* && $stderr != *pa%zz* &&
		    $stderr != *se#cret* ]]
		RETRY_STORE=$url run -125 --separate-stderr "$RETRY" --circuit x touch ran
		expect_stderr "retry: RETRY_STORE '$masked': ${bad[k + 1]}"
	done
	[ ! -e ran ]
	[ ! -e state ]
}

@test "--store needs a circuit; bad --store-timeout and --store-fail; RETRY_STORE, and the option first" {
	run -125 --separate-stderr "$RETRY" --store "$STORE" touch ran
	expect_stderr "retry: --store, --store-timeout and --store-fail need --circuit, --job or one of their commands"
	run -125 --separate-stderr "$RETRY" --store-fail closed touch ran
	expect_stderr "retry: --store, --store-timeout and --store-fail need --circuit, --job or one of their commands"
	run -125 --separate-stderr "$RETRY" --circuit x --store-timeout 0 touch ran
	expect_stderr "retry: --store-timeout '0': must be greater than 0"
	run -125 --separate-stderr "$RETRY" --circuit x --store-timeout soon touch ran
	[[ $stderr == "retry: --store-timeout 'soon': invalid duration"* ]]
	run -125 --separate-stderr "$RETRY" --circuit x --store-fail maybe touch ran
	expect_stderr "retry: --store-fail 'maybe': must be open or closed"
	[ ! -e ran ]
	# RETRY_STORE: only runs with a circuit read it; empty is unset.
	RETRY_STORE=nonsense run -0 "$RETRY" true
	RETRY_STORE= RETRY_STATE_DIR=$PWD/A run -1 "$RETRY" -q -n1 --circuit env false
	[ -f A/env ]
	RETRY_STORE=$STORE run -1 "$RETRY" -q -n1 --circuit env false
	[ "$(field env f)" = 1 ]
	# --store wins over it.
	RETRY_STORE=nonsense run -1 "$RETRY" -q -n1 --circuit env --store "$STORE" false
	[ "$(field env f)" = 2 ]
	RETRY_STORE=$STORE run -0 "$RETRY" --circuit-status env
	[ "${lines[2]}" = "failures:  2 in a row" ]
	# The keys of a name share one hash tag; no state directory is made.
	[ "$(rcli keys '*')" = "retry:{env}:state" ]
	[ ! -e state ]
}

# --- one circuit for many hosts ----------------------------------------------

@test "3 hosts x 10 runs, --trip 5: the circuit opens after 5 failures in all" {
	local run_ h rc statuses=""
	# One run after the other, host after host: exactly 5 attempts.
	for run_ in {1..10}; do
		for h in A B C; do
			rc=0
			on "$h" "$RETRY" -q -n2 -b 1ms --deadline 5s --circuit api --trip 5 \
			    --cool 1m --store "$STORE" \
			    sh -c 'echo "$0" >>log; exit 1' "$h" || rc=$?
			statuses="$statuses $rc"
		done
	done
	[ "$(wc -l <log)" -eq 5 ]
	[ "$(tr '\n' ' ' <log)" = "A A B B C " ]
	[ "$statuses" = " 1 1 75$(printf ' 75%.0s' {1..27})" ]
	[ "$(field api s)" = 1 ]
	[ "$(field api f)" = 5 ]
	[ "$(field api o)" = 1 ]
	# Without the store, each host trips its own breaker: 15 attempts.
	rm log
	for run_ in {1..10}; do
		for h in A B C; do
			on "$h" "$RETRY" -q -n2 -b 1ms --deadline 5s --circuit api --trip 5 \
			    --cool 1m sh -c 'echo "$0" >>log; exit 1' "$h" || true
		done
	done
	[ "$(wc -l <log)" -eq 15 ]
}

@test "3 hosts x 10 runs at once, --trip 5: attempts stay under trip + hosts x runs" {
	local h
	for h in A B C; do
		(
			for run_ in {1..10}; do
				on "$h" "$RETRY" -q -n3 -b 1ms --deadline 5s --circuit api \
				    --trip 5 --cool 1m --store "$STORE" \
				    sh -c 'echo "$0" >>log; exit 1' "$h"
				echo "$?" >>"statuses.$h"
			done
		) 3>&- &
		started "$!"
	done
	finish
	local total
	total=$(wc -l <log)
	echo "attempts: $total; statuses: $(cat statuses.* | sort | uniq -c | tr '\n' ' ')"
	# Each host has at most one attempt under way when the fifth failure
	# opens the circuit.
	between "$total" 5 $((5 + 3))
	[ "$total" -lt $((5 + 3 * 10)) ]
	[ "$(field api o)" = 1 ]
	[ "$(field api f)" = "$total" ]
	[ "$(cat statuses.* | grep -vcx 75)" -le 3 ]
	[ "$(cat statuses.* | grep -cvx '1\|75')" -eq 0 ]
}

@test "40 runs at once across 3 hosts on --budget 20/1m: exactly 20 retries in all" {
	local k hosts=(A B C)
	for k in {1..40}; do
		on "${hosts[k % 3]}" "$RETRY" -n5 -b 1ms --deadline 10s --trip 100000 \
		    --budget 20/1m --circuit bud --store "$STORE" \
		    sh -c 'echo "$1 $RETRY_ATTEMPT" >>"$0"; exit 1' log "$k" \
		    2>"err.$k" 3>&- &
		started "$!"
	done
	finish
	echo "attempts: $(wc -l <log)"
	# Every run's first attempt, and 20 retries among them.
	[ "$(grep -c ' 1$' log)" -eq 40 ]
	[ "$(wc -l <log)" -eq 60 ]
	[ "$(rcli zcard 'retry:{bud}:retries')" -eq 20 ]
	[ "$(field bud f)" -eq 60 ]
	run -0 "$RETRY" --circuit-status bud --store "$STORE"
	[ "${lines[4]}" = "retries:   20 in the last $(shown 1m) (budget 20)" ]
	# No run failed for its own reasons: each said only its attempts, its
	# waits and why it gave up.
	! grep -v -E 'failed with exit 1|retry budget of circuit bud (spent; waiting|stays spent)|circuit bud is (open|half-open)' err.* || false
}

@test "--budget 20%/1m --budget-min 0 on the store: 200 runs whose first attempts fail make at most 40 retries, and at least 38" {
	# A step may wait its turn among 200 on a loaded machine: 5 s, and a
	# store that fails ends the run rather than let it retry unbudgeted.
	share_herd 200 3s --store "$STORE" --store-timeout 5s \
	    --store-fail closed
	herd_ends
	echo "first attempts $(grep -c '^1$' attempts), retries $(grep -c '^2$' attempts)"
	[ "$(grep -c '^1$' attempts)" -eq 200 ]
	between "$(grep -c '^2$' attempts)" 38 40
	[ "$(rcli zcard 'retry:{herd}:retries')" -le 40 ]
	run -0 "$RETRY" --circuit-status herd --store "$STORE"
	matches "${lines[4]}" '^retries:   (38|39|40) of 40 allowed \(20% of 200 first attempts \+ 0\)$'
}

@test "--budget 20%/1m on the store: runs SIGKILLed at random moments never make the retries pass 40" {
	share_herd 200 1s --store "$STORE" --store-timeout 5s \
	    --store-fail closed
	herd_kills 30 1.5
	herd_ends
	echo "first attempts $(grep -c '^1$' attempts), retries $(grep -c '^2$' attempts)"
	[ "$(grep -c '^1$' attempts)" -eq 200 ]
	[ "$(grep -c '^2$' attempts)" -le 40 ]
	[ "$(rcli zcard 'retry:{herd}:retries')" -le 40 ]
}

# --- the probe's lease ---------------------------------------------------------

# open_circuit NAME [SOCK]: a circuit opened for 100 ms on the store at
# SOCK (by default the file's server), then past its cool-down.
open_circuit() {
	local sock=${2:-$SERVER/sock}
	on A "$RETRY" -q -n1 --circuit "$1" --trip 1 --cool 100ms \
	    --store "redis+unix://$sock" false || true
	[ "$(redis-cli -s "$sock" hget "retry:{$1}:state" s)" = 1 ]
	sleep 0.3
}

@test "a probe longer than its lease keeps it: renewed while it runs, no other host probes" {
	open_circuit lp
	mkdir probe
	on A "$RETRY" -n1 --circuit lp --store "$STORE" count-runs probe 0 4.5 \
	    2>err.A 3>&- &
	started "$!"
	wait_for_text probe/log '^start 1 '
	on B "$RETRY" -v -n1 --deadline 20s --circuit lp --store "$STORE" \
	    count-runs probe 0 0.1 2>err.B 3>&- &
	started "$!"
	finish
	cat probe/log
	# One at a time: A's probe, for longer than the 3 s lease, then B's.
	[ "$(cat probe/max)" -eq 1 ]
	[ "$(cut -d' ' -f1-2 probe/log | tr '\n' ,)" = "start 1,end 1,start 2,end 2," ]
	grep -q 'circuit lp is half-open; another run probes it' err.B
	[ "$(field lp s)" = 0 ]
}

@test "the probe's run SIGKILLed: another host probes within the lease, never two at once" {
	open_circuit pk
	mkdir probe
	# Not through "on": $! must be retry's pid.
	RETRY_STATE_DIR=$PWD/A "$RETRY" -n1 --circuit pk --store "$STORE" \
	    sh -c 'echo $$ >"$0"; exec count-runs probe 0 30' attempt 2>err.A 3>&- &
	local a=$!
	later "$a"
	wait_for_text probe/log '^start 1 '
	run -75 "$RETRY" --circuit-status pk --store "$STORE"
	[ "${lines[1]}" = "state:     half-open, probed by process $a on $(hostname)" ]
	local h
	for h in B C; do
		on "$h" "$RETRY" -v -n1 --deadline 20s --circuit pk --store "$STORE" \
		    count-runs probe 0 0.2 2>"err.$h" 3>&- &
		started "$!"
	done
	sleep 1.2
	# Renewed: held past the first second, while A lives.
	[ "$(grep -c '^start' probe/log)" -eq 1 ]
	local killed
	killed=$(clock-now -r -n)
	kill -KILL "$a"
	wait "$a" || true
	# Its attempt dies with it (Linux); the rest of its group too.
	kill -KILL -- "-$(cat attempt)" 2>/dev/null || true
	echo 0 >probe/running	# the killed execution never said "end"
	finish
	cat probe/log
	local next
	next=$(awk '$1 == "start" && $2 == 2 { print $3 }' probe/log)
	# Within the 3 s lease of its last renewal (every second), not before.
	between $(((next - killed) / 1000000)) 1000 4500
	[ "$(cat probe/max)" -eq 1 ]
	[ "$(cut -d' ' -f1-2 probe/log | tr '\n' ,)" = "start 1,start 2,end 2,start 3,end 3," ]
	[ "$(field pk s)" = 0 ]
}

@test "a run whose lease another took over probes no more: its failure reopens nothing" {
	open_circuit lt
	on A "$RETRY" -v -n1 --circuit lt --store "$STORE" \
	    sh -c 'touch started; sleep 2.5; exit 1' 2>err.A 3>&- &
	started "$!"
	wait_for started
	[ "$(rcli get 'retry:{lt}:probe')" != "" ]
	# As if its lease had lapsed and another run had taken the probe.
	rcli set 'retry:{lt}:probe' another-run px 20000 >/dev/null
	finish
	grep -qx 'retry: circuit lt: another run has taken the probe over' err.A
	# Its failure counts, but as no probe's: still half-open, one opening.
	[ "$(field lt s)" = 2 ]
	[ "$(field lt f)" = 2 ]
	[ "$(field lt o)" = 1 ]
	[ "$(rcli get 'retry:{lt}:probe')" = another-run ]
}

@test "a retry that must wait for the budget does not hold the probe: a first attempt of another host probes meanwhile" {
	on A "$RETRY" -v -n2 -b 1ms -j none --budget 1/1m --circuit bp \
	    --store "$STORE" sh -c '
		[ "$RETRY_ATTEMPT" = 1 ] || exit 1
		touch started; until [ -e go ]; do sleep 0.02; done; exit 1' \
	    2>err.A 3>&- &
	local a=$! t
	later "$a"
	wait_for started
	# Meanwhile the circuit opened, is due to half-open, and the budget
	# is spent: A's retry would probe, but must wait for the budget.
	t=$(rcli time | tr '\n' ' ' | awk '{ printf "%d%06d", $1, $2 }')
	rcli hset 'retry:{bp}:state' s 1 f 5 o 1 h 1 >/dev/null
	rcli zadd 'retry:{bp}:retries' "$t" other-run >/dev/null
	touch go
	wait_for_text err.A 'retry budget of circuit bp spent; waiting'
	[ -z "$(rcli get 'retry:{bp}:probe')" ]
	run -75 "$RETRY" --circuit-status bp --store "$STORE"
	[ "${lines[1]}" = "state:     open, half-opens at the next attempt" ]
	on B run -0 --separate-stderr "$RETRY" -D 2s --circuit bp \
	    --store "$STORE" touch ran
	[ -e ran ]
	[ "$(field bp s)" = 0 ]
	kill -TERM "$a"
	wait "$a" || true
}

@test "a store stopped mid-probe holds the attempt no longer than -T, or -D and the kill-after: the lease's renewal ends at the limit" {
	server
	local url=redis+unix://$OWN/sock redis start took rc=0
	redis=$(cat "$OWN/pid")
	open_circuit sd "$OWN/sock"
	# -D 1.5s, and an attempt that ignores SIGTERM: SIGKILL 200 ms later.
	start=$(now_ms)
	on A "$RETRY" -n1 -D 1.5s -k 200ms --circuit sd --store "$url" \
	    --store-timeout 5s sh -c 'trap "" TERM; touch started; sleep 30' \
	    2>err 3>&- &
	local r=$!
	later "$r"
	wait_for started
	kill -STOP "$redis"
	wait "$r" || rc=$?
	took=$(($(now_ms) - start))
	kill -CONT "$redis"
	echo "status $rc after $took ms: $(cat err)"
	[ "$rc" -eq 124 ]
	# The deadline and the kill-after (1.7 s), with slack for a loaded
	# machine (a round of make check-load took 2.3 s): what the bound
	# catches is a renewal that waits out the 5 s store timeout (6.5 s).
	between "$took" 1700 3500
	# -T 1.1s: the attempt is stopped then, not when the renewal gives up.
	rm started
	redis-cli -s "$OWN/sock" flushall >/dev/null
	open_circuit sd "$OWN/sock"
	start=$(now_ms)
	on A "$RETRY" -n1 -T 1.1s --circuit sd --store "$url" --store-timeout 1.5s \
	    sh -c 'trap "clock-now >killed; exit 1" TERM; touch started
		while :; do sleep 0.02; done' 2>err 3>&- &
	r=$!
	later "$r"
	wait_for started
	kill -STOP "$redis"
	rc=0
	wait "$r" || rc=$?
	kill -CONT "$redis"
	cat err
	[ "$rc" -eq 124 ]
	between $(($(cat killed) - start)) 1100 1500
	grep -q '^retry: attempt 1/1 timed out after 1.100s' err
}

# --- when the store fails -----------------------------------------------------

@test "the store stopped mid-run: the runs finish as if without a circuit, one warning each" {
	server
	local url=redis://127.0.0.1:$(cat "$OWN/port") h
	for h in A B C; do
		on "$h" "$RETRY" -n3 -b 1ms -j none --circuit m --store "$url" \
		    --report "r.$h" sh -c '
			[ "$RETRY_ATTEMPT" = 1 ] && touch "started.$0" &&
			    until [ -e stopped ]; do sleep 0.05; done
			echo "$0" >>log; exit 1' "$h" 2>"err.$h" 3>&- &
		started "$!"
	done
	for h in A B C; do
		wait_for "started.$h"
	done
	server_stop "$OWN"
	touch stopped
	finish
	[ "$(wc -l <log)" -eq 9 ]
	for h in A B C; do
		[ "$(cat "err.$h")" = "retry: store $url: Connection refused; going on without circuit m
retry: attempt 1/3 failed with exit 1; next in 0.001s
retry: attempt 2/3 failed with exit 1; next in 0.002s
retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
		grep -q '^  "store": "unavailable",$' "r.$h"
	done
	# --store-fail closed: 75 before the next attempt.
	run -75 --separate-stderr "$RETRY" -n3 -b 1ms --circuit m --store "$url" \
	    --store-fail closed --report r touch ran
	expect_stderr "retry: store $url: Connection refused; giving up (--store-fail closed)"
	[ ! -e ran ]
	grep -q '"outcome": "store_unavailable"' r
	# A store that is down is an error for --circuit-status and -reset.
	run -125 --separate-stderr "$RETRY" --circuit-status m --store "$url"
	[ "$output" = "" ]
	expect_stderr "retry: store $url: Connection refused"
	run -125 --separate-stderr "$RETRY" --circuit-reset m --store "$url"
	expect_stderr "retry: store $url: Connection refused"
}

@test "--store-fail closed: a store that fails while the probe's lease is renewed is said, also when the probe then succeeds" {
	server
	local url=redis+unix://$OWN/sock redis rc=0
	redis=$(cat "$OWN/pid")
	open_circuit rf "$OWN/sock"
	on A "$RETRY" -n1 --circuit rf --store "$url" --store-timeout 200ms \
	    --store-fail closed --report r sh -c 'touch started; sleep 1.5' \
	    2>err 3>&- &
	local r=$!
	later "$r"
	wait_for started
	kill -STOP "$redis"
	wait "$r" || rc=$?
	kill -CONT "$redis"
	# The probe succeeded: 0, but the store failed and its end is lost.
	[ "$rc" -eq 0 ]
	[ "$(cat err)" = "retry: circuit rf is half-open; this run probes it
retry: store $url: no answer within $(shown 200ms); the end of attempt 1 was not recorded (--store-fail closed)" ]
	grep -q '^  "store": "unavailable",$' r
	[ "$(redis-cli -s "$OWN/sock" hget 'retry:{rf}:state' s)" = 2 ]
}

# slow MS: a proxy to the file's server that holds its answers MS ms; its
# URL in $SLOW.
slow() {
	slow-proxy port "$SERVER/sock" "$1" 3>&- &
	later "$!"
	disown "$!"	# killed in teardown: no word from bash about it
	wait_for port
	SLOW=redis://127.0.0.1:$(cat port)
}

@test "a store that answers slowly: each step ends at its timeout; the runs go on, one warning each" {
	slow 3000
	local h start
	start=$(now_ms)
	for h in A B C; do
		on "$h" "$RETRY" -n3 -b 1ms -j none --circuit sl --store "$SLOW" \
		    --store-timeout 200ms sh -c 'echo x >>log; exit 1' \
		    2>"err.$h" 3>&- &
		started "$!"
	done
	finish
	# One step each, at its timeout; no other was tried.
	[ $(($(now_ms) - start)) -lt 2500 ]
	[ "$(wc -l <log)" -eq 9 ]
	for h in A B C; do
		[ "$(cat "err.$h")" = "retry: store $SLOW: no answer within $(shown 200ms); going on without circuit sl
retry: attempt 1/3 failed with exit 1; next in 0.001s
retry: attempt 2/3 failed with exit 1; next in 0.002s
retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
	done
	start=$(now_ms)
	run -75 --separate-stderr "$RETRY" --circuit sl --store "$SLOW" \
	    --store-timeout 200ms --store-fail closed touch ran
	[ $(($(now_ms) - start)) -lt 2000 ]
	expect_stderr "retry: store $SLOW: no answer within $(shown 200ms); giving up (--store-fail closed)"
	[ ! -e ran ]
	# The deadline bounds a step too: then the run ends as at a deadline.
	start=$(now_ms)
	run -124 --separate-stderr "$RETRY" --deadline 300ms --circuit sl \
	    --store "$SLOW" --store-timeout 20s touch ran
	[ $(($(now_ms) - start)) -lt 2000 ]
	expect_stderr "retry: the deadline came before the first attempt; not running 'touch'"
	[ ! -e ran ]
}

@test "SIGTERM during a step of a slow store ends retry at once: 143, nothing run" {
	slow 30000
	"$RETRY" --circuit sl --store "$SLOW" --store-timeout 1m touch ran \
	    2>err 3>&- &
	local pid=$! start rc=0
	later "$pid"
	sleep 0.5
	start=$(now_ms)
	kill -TERM "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ]
	[ $(($(now_ms) - start)) -lt 1500 ]
	[ "$(cat err)" = "retry: interrupted by SIGTERM before the first attempt" ]
	[ ! -e ran ]
}

@test "a store that does not answer as Redis does, or cannot be reached, is a store that failed" {
	# A server that is not Redis: it closes at once.
	local start
	run -1 --separate-stderr "$RETRY" -n1 --circuit u \
	    --store "redis+unix://$PWD/none.sock" false
	expect_stderr "retry: store redis+unix://$PWD/none.sock: No such file or directory; going on without circuit u
retry: attempt 1/1 failed with exit 1; giving up: no attempts left"
	start=$(now_ms)
	run -1 --separate-stderr "$RETRY" -n1 --circuit u \
	    --store redis://no-such-host.invalid false
	[ $(($(now_ms) - start)) -lt 5000 ]
	matches "${stderr_lines[0]}" '^retry: store redis://no-such-host\.invalid:6379: (cannot resolve no-such-host\.invalid: .*|no answer within [0-9.]+s); going on without circuit u$'
	[ "${#stderr_lines[@]}" -eq 2 ]
}

# fake REPLY [AUTH_REPLY]: a fake server on 127.0.0.1 that answers every
# command with the bytes REPLY, and AUTH with AUTH_REPLY; its URL in $FAKE.
fake() {
	rm -f fake.port
	slow-proxy -a fake.port "$@" 3>&- &
	later "$!"
	disown "$!"	# killed in teardown: no word from bash about it
	wait_for fake.port
	FAKE=redis://127.0.0.1:$(cat fake.port)
}

@test "a reply outside the script's contract is a store failure: a first attempt told to wait for the budget runs, or ends 75, never 0 with nothing run" {
	fake $'*2\r\n:3\r\n:5000\r\n'
	run -0 --separate-stderr "$RETRY" -n3 -D 2s --circuit fk --store "$FAKE" \
	    touch ran
	expect_stderr "retry: store $FAKE: an unexpected reply; going on without circuit fk"
	[ -e ran ]
	rm ran
	run -75 --separate-stderr "$RETRY" -n3 -D 2s --circuit fk --store "$FAKE" \
	    --store-fail closed touch ran
	expect_stderr "retry: store $FAKE: an unexpected reply; giving up (--store-fail closed)"
	[ ! -e ran ]
}

# --- passwords and rights ------------------------------------------------------

@test "requirepass: the URL's password, or REDISCLI_AUTH; wrong or missing: one line, 125; never shown" {
	local pw='p@ss:w%rd-S3cret'
	server --requirepass "$pw"
	local sock=$OWN/sock port
	port=$(cat "$OWN/port")
	run -0 --separate-stderr "$RETRY" -v -n1 --circuit pw --report r.json \
	    --store "redis+unix://:p%40ss%3Aw%25rd-S3cret@$sock" touch ran
	[ -e ran ]
	matches "$stderr" "store redis\\+unix://:\\*\\*\\*@$sock,"
	[[ $stderr$output != *S3cret* && $(cat r.json) != *S3cret* ]]
	grep -q '^  "store": "ok",$' r.json
	REDISCLI_AUTH=$pw run -1 --separate-stderr "$RETRY" -v -n1 --circuit pw \
	    --store "redis://127.0.0.1:$port" false
	[[ $stderr$output != *S3cret* ]]
	[ "$(REDISCLI_AUTH=$pw redis-cli -s "$sock" hget 'retry:{pw}:state' f)" = 1 ]
	# Wrong, with either --store-fail: a mistake, not an outage.
	local fail
	for fail in open closed; do
		run -125 --separate-stderr "$RETRY" -v -n1 --circuit pw \
		    --store-fail "$fail" --report r2.json \
		    --store "redis+unix://:Wrong-S3cret@$sock" touch ran2
		[ "${stderr_lines[-1]}" = "retry: store redis+unix://:***@$sock: AUTH: WRONGPASS invalid username-password pair or user is disabled." ]
		[[ $stderr$output != *S3cret* ]]
		[ ! -e ran2 ] && [ ! -e r2.json ]
	done
	REDISCLI_AUTH=nope run -125 --separate-stderr "$RETRY" --circuit pw \
	    --store "redis://127.0.0.1:$port" touch ran2
	expect_stderr "retry: store redis://127.0.0.1:$port: AUTH: WRONGPASS invalid username-password pair or user is disabled."
	run -125 --separate-stderr "$RETRY" --circuit pw --store "redis+unix://$sock" \
	    touch ran2
	expect_stderr "retry: store redis+unix://$sock: the server wants a password: give it in the URL or REDISCLI_AUTH"
	[ ! -e ran2 ]
	run -125 --separate-stderr "$RETRY" --circuit-status pw --store "redis+unix://$sock"
	expect_stderr "retry: store redis+unix://$sock: the server wants a password: give it in the URL or REDISCLI_AUTH"
}

@test "a password alone before the '@' is a password, as redis-cli reads it; no message shows it, not even in a server's words" {
	server --requirepass S3cret-alone
	local sock=$OWN/sock
	run -0 --separate-stderr "$RETRY" -v -n1 --circuit al \
	    --store "redis+unix://S3cret-alone@$sock" touch ran
	[ -e ran ]
	matches "$stderr" "store redis\\+unix://:\\*\\*\\*@$sock,"
	[[ $stderr != *S3cret* ]]
	run -125 --separate-stderr "$RETRY" -n1 --circuit al \
	    --store "redis+unix://S3cret-wrong@$sock" touch ran2
	expect_stderr "retry: store redis+unix://:***@$sock: AUTH: WRONGPASS invalid username-password pair or user is disabled."
	[ ! -e ran2 ]
	# Malformed, masked all the same.
	run -125 --separate-stderr "$RETRY" --circuit al \
	    --store "redis://S3cret-alone@h:0" touch ran2
	expect_stderr "retry: --store 'redis://***@h:0': invalid port: a number from 1 to 65535"
	# A server (or a proxy) that echoes what it was sent: the URL's
	# password, or REDISCLI_AUTH, is masked in its words, cut or not.
	local long
	long=$(printf 'x%.0s' {1..150})
	fake $'+OK\r\n' "-ERR $long S3cret-echoed"$'\r\n'
	run -125 --separate-stderr "$RETRY" --circuit al \
	    --store "redis://u:S3cret-echoed@${FAKE#redis://}" touch ran2
	expect_stderr "retry: store redis://u:***@${FAKE#redis://}: AUTH: ERR $long ***"
	REDISCLI_AUTH=S3cret-echoed run -125 --separate-stderr "$RETRY" \
	    --circuit al --store "$FAKE" touch ran2
	[[ $stderr == "retry: store $FAKE: AUTH: ERR x"* ]]
	[[ $stderr != *S3cret* ]]
	fake "-NOPERM not for you, S3cret-echoed"$'\r\n' $'+OK\r\n'
	REDISCLI_AUTH=S3cret-echoed run -125 --separate-stderr "$RETRY" \
	    --circuit al --store "$FAKE" touch ran2
	expect_stderr "retry: store $FAKE: NOPERM not for you, ***"
	run -125 --separate-stderr "$RETRY" --circuit al \
	    --store "redis://:S3cret-echoed@${FAKE#redis://}" touch ran2
	expect_stderr "retry: store redis://:***@${FAKE#redis://}: NOPERM not for you, ***"
	[ ! -e ran2 ]
}

@test "REDISCLI_AUTH against a server without a password: the run goes on without it, as redis-cli does; a '/' or '?' in a password is named" {
	REDISCLI_AUTH=for-another-server run -1 --separate-stderr "$RETRY" -n1 \
	    --circuit na --store "$STORE" false
	expect_stderr "retry: attempt 1/1 failed with exit 1; giving up: no attempts left"
	[ "$(field na f)" = 1 ]
	REDISCLI_AUTH=for-another-server run -1 --separate-stderr "$RETRY" -v \
	    -n1 --circuit na --store "$STORE" false
	[ "${stderr_lines[2]}" = "retry: store $STORE: the server has no password; going on without one" ]
	[ "$(field na f)" = 2 ]
	run -125 --separate-stderr "$RETRY" --circuit na \
	    --store "redis://u:pass/word@h" touch ran
	expect_stderr "retry: --store 'redis://u:***@h': a '/' in the user or password: write it as %2F"
	run -125 --separate-stderr "$RETRY" --circuit na \
	    --store "redis://pass?word@h:1" touch ran
	expect_stderr "retry: --store 'redis://***@h:1': a '?' in the user or password: write it as %3F"
	run -125 --separate-stderr "$RETRY" --circuit na \
	    --store "redis+unix://u:pass/word@/run/redis.sock" touch ran
	expect_stderr "retry: --store 'redis+unix://u:***@/run/redis.sock': a '/' in the user or password: write it as %2F"
	[ ! -e ran ]
}

# acl_user PASSWORD: the user that retry-circuit(7) tells how to make, on $OWN.
acl_user() {
	local line pw=$1
	line=$(awk '/ACL SETUSER retry/ { on = 1 } on { print; if (!/\\e$/) exit }' \
	    "$BATS_TEST_DIRNAME/../retry-circuit.7" |
	    sed 's/ *\\e$//; s/^\$ redis-cli //' | tr '\n' ' ')
	[ -n "$line" ]
	eval "set -- $line"
	redis-cli -s "$OWN/sock" "${@//PASSWORD/$pw}"
}

@test "an ACL user limited to the retry: keys and the man page's commands; one without them is refused" {
	server
	local sock=$OWN/sock
	[ "$(acl_user S3cret-ACL)" = OK ]
	redis-cli -s "$sock" acl getuser retry | grep -qx '~retry:\*'
	redis-cli -s "$sock" acl setuser other on '>Sec-ret' '~other:*' \
	    resetchannels -@all +evalsha +eval +time +get
	local url=redis+unix://retry:S3cret-ACL@$sock
	# Every step: admit (taking a retry), result (open it), status, reset.
	run -75 --separate-stderr "$RETRY" -n3 -b 1ms -j none --deadline 5s --trip 2 \
	    --cool 1m --budget 5/1m --circuit acl --store "$url" false
	expect_stderr "retry: attempt 1/3 failed with exit 1; next in 0.001s
retry: circuit acl opened after 2 failures in a row
retry: attempt 2/3 failed with exit 1; next in 0.002s
retry: circuit acl stays open past the deadline; giving up"
	run -75 "$RETRY" --circuit-status acl --store "$url"
	[ "${lines[2]}" = "failures:  2 in a row" ]
	[ "${lines[4]}" = "retries:   1 in the last $(shown 1m) (budget 5)" ]
	[ "${lines[5]}" = "runs:      1 of the last 100: 0 passed at once, 0 after retries, 1 failed" ]
	run -0 "$RETRY" --circuit-list --store "$url"
	[ "$output" = acl ]
	run -0 "$RETRY" --circuit-reset acl --store "$url"
	# Keys beyond its reach: refused at the first step, 125.
	run -125 --separate-stderr "$RETRY" --circuit acl \
	    --store "redis+unix://other:Sec-ret@$sock" touch ran
	expect_stderr "retry: store redis+unix://other:***@$sock: NOPERM this user has no permissions to access one of the keys used as arguments"
	[ ! -e ran ]
}

@test "a port written with leading zeros is that number, however many" {
	run -0 --separate-stderr "$RETRY" -v -n1 --circuit x \
	    --store redis://127.0.0.1:0000000000000000009 true
	[[ $stderr == *"circuit x: store redis://127.0.0.1:9, "* ]]
}

# --- status, reset, the URL's parts ---------------------------------------------

@test "--circuit-status and --circuit-reset against the store" {
	run -0 "$RETRY" --circuit-status st --store "$STORE"
	[ "$output" = "circuit:   st
state:     closed
failures:  0 in a row
openings:  0 in a row
retries:   not counted: no run with --budget yet
runs:      none counted yet
flakes:    not known: no run has passed yet
record:    none: no key retry:{st}:state on $STORE" ]
	on A "$RETRY" -q -n1 --circuit st --trip 3 --store "$STORE" false || true
	on B "$RETRY" -q -n1 --circuit st --trip 3 --store "$STORE" false || true
	run -0 "$RETRY" --circuit-status st --store "$STORE"
	[ "${lines[1]}" = "state:     closed" ]
	[ "${lines[2]}" = "failures:  2 in a row" ]
	on C "$RETRY" -q -n2 -b 1ms --deadline 3s --budget 7/1m --circuit st --trip 3 \
	    --cool 20s --store "$STORE" false || true
	# Open: 75, with a store as without.
	run -75 "$RETRY" --circuit-status st --store "$STORE"
	[ "${#lines[@]}" -eq 8 ]
	[ "${lines[7]}" = "record:    retry:{st}:state on $STORE" ]
	matches "${lines[1]}" '^state:     open, half-opens in ([0-9]+\.[0-9]{3})s$'
	between "${BASH_REMATCH[1]%.*}" 8 20
	[ "${lines[2]}" = "failures:  3 in a row" ]
	[ "${lines[3]}" = "openings:  1 in a row" ]
	[ "${lines[4]}" = "retries:   0 in the last $(shown 1m) (budget 7)" ]
	run -0 --separate-stderr "$RETRY" --circuit-reset st --store "$STORE"
	[ "$output" = "" ] && [ "$stderr" = "" ]
	[ -z "$(rcli keys '*')" ]
	run -0 "$RETRY" --circuit-status st --store "$STORE"
	[ "${lines[1]}" = "state:     closed" ]
	[ "${lines[3]}" = "openings:  0 in a row" ]
	run -0 "$RETRY" --deadline 2s --circuit st --store "$STORE" touch ran
	[ -e ran ]
}

@test "TCP over IPv4, IPv6 and a host name (resolved in a child); the database of the URL" {
	run -1 "$RETRY" -q -n1 --circuit t4 --store "redis://127.0.0.1:$PORT" false
	[ "$(field t4 f)" = 1 ]
	run -1 "$RETRY" -q -n1 --circuit tn --store "redis://localhost:$PORT" false
	[ "$(field tn f)" = 1 ]
	if grep -q 'Ready to accept connections' "$SERVER/log" &&
	    redis-cli -h ::1 -p "$PORT" ping >/dev/null 2>&1; then
		run -1 "$RETRY" -q -n1 --circuit t6 --store "redis://[::1]:$PORT" false
		[ "$(field t6 f)" = 1 ]
	fi
	run -1 "$RETRY" -q -n1 --circuit db --store "redis://127.0.0.1:$PORT/3" false
	run -1 "$RETRY" -q -n1 --circuit db --store "$STORE?db=3" false
	[ "$(rcli -n 3 hget 'retry:{db}:state' f)" = 2 ]
	[ -z "$(field db f)" ]
	run -125 --separate-stderr "$RETRY" --circuit db --store "$STORE?db=99" true
	expect_stderr "retry: store $STORE?db=99: SELECT: ERR DB index is out of range"
	[ ! -e A/db ] && [ ! -e state ]
}

# --- issue 22: the changes said, the status, the flake count, the list ------

@test "with a store: a circuit that opens mid-run and closes again is said; the status exits 75 while open" {
	run -75 --separate-stderr "$RETRY" -n4 -b 1ms -j none -D 2s --trip 2 \
	    --cool 20s --circuit tr --store "$STORE" --report r.json false
	expect_stderr "retry: attempt 1/4 failed with exit 1; next in 0.001s
retry: circuit tr opened after 2 failures in a row
retry: attempt 2/4 failed with exit 1; next in 0.002s
retry: circuit tr stays open past the deadline; giving up"
	matches "$(tr -d '\n' <r.json)" '"changes": \[\{"at": [0-9.]+, "change": "opened"\}\]'
	run -75 --separate-stderr "$RETRY" --circuit-status tr --store "$STORE" --report s.json
	[ "$stderr" = "" ]
	grep -q '"exit_status": 75' s.json
	grep -qF "\"store\": \"$STORE\"" s.json
	grep -q '"state_directory": null' s.json
	# Due: the next run probes, and its success closes it again.
	rcli hset 'retry:{tr}:state' h 1 >/dev/null
	run -0 --separate-stderr "$RETRY" -n1 --circuit tr --store "$STORE" true
	expect_stderr "retry: circuit tr is half-open; this run probes it
retry: circuit tr is closed again"
	run -0 "$RETRY" --circuit-status tr --store "$STORE"
	[ "${lines[1]}" = "state:     closed" ]
	[ "${lines[5]}" = "runs:      2 of the last 100: 1 passed at once, 0 after retries, 1 failed" ]
}

@test "with a store: the flake count after a scripted series of runs, the last 100 in the hash's r" {
	local i
	for i in 1 2; do
		on A "$RETRY" -q --circuit fk --store "$STORE" true
	done
	rm -f mark
	on B "$RETRY" -q -n3 -b 1ms --circuit fk --store "$STORE" \
	    sh -c 'test -e mark || { touch mark; exit 1; }'
	on C "$RETRY" -q -n2 -b 1ms --circuit fk --trip 9 --store "$STORE" false || true
	[ "$(field fk r)" = pprf ]
	run -0 "$RETRY" --circuit-status fk --store "$STORE" --report s.json
	[ "${lines[5]}" = "runs:      4 of the last 100: 2 passed at once, 1 after retries, 1 failed" ]
	[ "${lines[6]}" = "flakes:    33.3% (1 of the 3 that passed needed retries)" ]
	grep -q '"runs": {"counted": 4, "passed_at_once": 2, "passed_after_retries": 1, "failed": 1}' s.json
	grep -q '"flake_rate": 0.3333' s.json
	# Trimmed by the script to the last 100.
	rcli hset 'retry:{fk}:state' r "$(printf 'f%.0s' $(seq 100))" >/dev/null
	on A "$RETRY" -q --circuit fk --store "$STORE" true
	matches "$(field fk r)" '^f{99}p$'
	# What is not a runs letter is not the script's: the store is not ours.
	rcli hset 'retry:{fk}:state' r 'ppx' >/dev/null
	run -125 --separate-stderr "$RETRY" --circuit-status fk --store "$STORE"
	expect_stderr "retry: store $STORE: an unexpected reply"
}

@test "--circuit-status says where it read: the store forgotten reads the state directory, and says there is no record there" {
	on A "$RETRY" -q -n1 --circuit fg --trip 1 --cool 20s --store "$STORE" false || true
	run -75 "$RETRY" --circuit-status fg --store "$STORE"
	[ "${lines[7]}" = "record:    retry:{fg}:state on $STORE" ]
	RETRY_STATE_DIR=$PWD/A run -0 "$RETRY" --circuit-status fg
	[ "${lines[1]}" = "state:     closed" ]
	[ "${lines[7]}" = "record:    none: no file fg in $PWD/A" ]
	# The password is masked where the status says where.
	run -0 --separate-stderr "$RETRY" --circuit-status none --store "redis+unix://:secret@$SERVER/sock"
	[ "${lines[7]}" = "record:    none: no key retry:{none}:state on redis+unix://:***@$SERVER/sock" ]
	[[ $output != *secret* ]]
}

@test "--circuit-list with a store: SCAN over every state key, sorted, each once, nothing else" {
	run -0 --separate-stderr "$RETRY" --circuit-list --store "$STORE"
	[ "$output" = "" ] && [ "$stderr" = "" ]
	local i
	for i in $(seq 250); do
		echo "HSET retry:{n$i}:state s 0"
	done | rcli >/dev/null
	rcli set 'retry:{bad name}:state' x >/dev/null
	rcli set 'other:{n1}:state' x >/dev/null
	rcli set 'retry:{p}:probe' x >/dev/null
	run -0 --separate-stderr "$RETRY" --circuit-list --store "$STORE"
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 250 ]
	[ "$output" = "$(seq 250 | sed 's/^/n/' | LC_ALL=C sort)" ]
	# RETRY_STORE as for a status; a store that is down: 125.
	RETRY_STORE=$STORE run -0 "$RETRY" --circuit-list
	[ "${#lines[@]}" -eq 250 ]
	run -125 --separate-stderr "$RETRY" --circuit-list --store redis://127.0.0.1:9
	[ "$output" = "" ]
	[[ $stderr == "retry: store redis://127.0.0.1:9: "* ]]
}

# --- one set of rules, two backends ---------------------------------------------

# scripted WHERE: one series of runs against a circuit d kept in the file
# record of host A (WHERE=file) or on the store (WHERE=store); each run's
# status and stderr, then the status of d without its times and place.
scripted() {
	local where=$1 i st
	local -a runs=(
		"-n3 -b 1ms -j none --trip 5 --budget 4/1m false"
		"-n1 --trip 5 --budget 4/1m true"
		"-n4 -b 1ms -j none --trip 2 --cool 1ms --budget 4/1m -D 2s false"
		"-n1 --trip 2 --cool 1ms --budget 4/1m true"
		"-n3 -b 1ms -j none --trip 1 --cool 1ms --budget 2/1m -D 2s false"
	)
	# The share of first attempts and the ratio (issue 32), on circuit e.
	[ "$2" = share ] && runs=(
		"-n4 -b 1ms -j none --trip 40%/5 --budget 50%/1m --budget-min 1 -D 2s false"
		"-n1 --trip 40%/5 --budget 50%/1m --budget-min 1 true"
		"-n1 --trip 40%/5 --budget 50%/1m --budget-min 1 true"
		"-n3 -b 1ms -j none --trip 40%/5 --cool 1ms --budget 50%/1m --budget-min 1 -D 2s false"
		"-n2 -b 1ms -j none --trip 40%/5 --cool 1ms --budget 50%/1m --budget-min 1 -D 2s true"
	)
	for i in "${!runs[@]}"; do
		st=0
		# shellcheck disable=SC2086 # the run's words
		if [ "$where" = store ]; then
			on A "$RETRY" --circuit d --store "$STORE" ${runs[i]} \
			    2>&1 || st=$?
		else
			on A "$RETRY" --circuit d ${runs[i]} 2>&1 || st=$?
		fi
		echo "run $i: $st"
		sleep 0.005	# past the 1 ms cool-downs: the next run probes
	done
	st=0
	if [ "$where" = store ]; then
		on A "$RETRY" --circuit-status d --store "$STORE" >status || st=$?
	else
		on A "$RETRY" --circuit-status d >status || st=$?
	fi
	echo "status: $st"
	sed -e 's/half-opens .*/half-opens (when)/' -e '/^record:/d' status
}

@test "the same runs leave the same circuit in the file record and on the store: one set of rules" {
	scripted file >file.out
	scripted store >store.out
	diff file.out store.out
	# It says something: the circuit opened, was probed, closed, counted.
	grep -qx 'retry: circuit d opened after 2 failures in a row' file.out
	grep -qx 'retry: circuit d is half-open; this run probes it' file.out
	grep -qx 'retry: circuit d opened after 3 failures in a row' file.out
	grep -qx 'retry: circuit d is closed again' file.out
	grep -qx 'retry: the retry budget of circuit d stays spent past the deadline; giving up' file.out
	grep -qx 'runs:      5 of the last 100: 2 passed at once, 0 after retries, 3 failed' file.out
	grep -qx 'retries:   4 in the last 60.000s (budget 2)' file.out
	[ "$(grep -c '^run [0-9]: ' file.out)" -eq 5 ]
}

@test "the same runs with --budget P%/DUR and --trip P%/M leave the same circuit in the file record and on the store" {
	scripted file share >file.out
	scripted store share >store.out
	cat file.out
	diff file.out store.out
	# The share: one first attempt allows 50% of 1 + 1 retry.
	grep -qx 'retry: the retry budget of circuit d stays spent past the deadline; giving up' file.out
	# 1 1 0 0 1: 3 of the last 5 failed, 60%.
	grep -qx 'retry: circuit d opened: 3 of the last 5 attempts failed' file.out
	grep -qx 'retry: circuit d is closed again' file.out
	grep -qx 'failures:  none seen yet (trips at 40% of the last 5)' file.out
	grep -qx 'retries:   3 of 3 allowed (50% of 5 first attempts + 1)' file.out
}
