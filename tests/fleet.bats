#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Fleets (issue 24): --store on a Redis Cluster of three nodes (-MOVED,
# -ASK, a slot moved during a run) and on a primary, a replica and three
# sentinels (a failover while runs go on).  All on free ports of
# 127.0.0.1, in temporary directories, nothing saved, stopped by pid.
# Without redis-server, redis-cli or redis-sentinel every test skips, and
# says why.

load helpers/common

BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-120}

# --- servers ---------------------------------------------------------------

# up PORT PID: the server on PORT answers (PONG, or NOAUTH when it wants
# a password), within 5 s.
up() {
	local n=0
	until redis-cli -p "$1" ping 2>&1 | grep -Eq 'PONG|NOAUTH'; do
		alive "$2" || return 1
		[ "$n" -ge 100 ] && return 1
		sleep 0.05
		n=$((n + 1))
	done
}

# serve DIR PROGRAM [OPTION ...]: redis-server (or redis-sentinel, with
# DIR/conf) in DIR on a free port of 127.0.0.1, saving nothing; its pid in
# DIR/pid, its port in DIR/port.  A port taken meanwhile: another one.
serve() {
	local dir=$1 prog=$2 try conf=()
	shift 2
	mkdir -p "$dir"
	[ "$prog" = redis-sentinel ] && conf=("$dir/conf")
	for try in 1 2 3 4 5; do
		slow-proxy -p >"$dir/port" || return 1
		"$prog" "${conf[@]}" --port "$(cat "$dir/port")" --bind 127.0.0.1 \
		    --dir "$dir" --logfile "$dir/log" --daemonize no "$@" 3>&- &
		echo "$!" >"$dir/pid"
		up "$(cat "$dir/port")" "$!" && return 0
		server_stop "$dir"
	done
	cat "$dir/log" >&2
	return 1
}

# cluster_start: three primaries in $CLUSTER/1, 2 and 3, the slots shared
# among them in that order; ready when every node says cluster_state:ok.
cluster_start() {
	local k bus n=0
	for k in 1 2 3; do
		bus=$(slow-proxy -p)
		serve "$CLUSTER/$k" redis-server --cluster-enabled yes \
		    --cluster-port "$bus" --cluster-config-file nodes.conf \
		    --save '' --appendonly no || return 1
	done
	redis-cli --cluster create "127.0.0.1:$(port 1)" "127.0.0.1:$(port 2)" \
	    "127.0.0.1:$(port 3)" --cluster-yes >"$CLUSTER/create" 2>&1 || {
		cat "$CLUSTER/create" >&2
		return 1
	}
	for k in 1 2 3; do
		until redis-cli -p "$(port "$k")" cluster info |
		    grep -q 'cluster_state:ok'; do
			[ "$n" -ge 200 ] && return 1
			sleep 0.05
			n=$((n + 1))
		done
	done
}

# port K: the port of node K.
port() {
	cat "$CLUSTER/$1/port"
}

# id K: the cluster's name of node K.
id() {
	redis-cli -p "$(port "$1")" cluster myid
}

# owns K SLOT: node K serves SLOT now.
owns() {
	redis-cli -p "$(port "$1")" cluster nodes | awk -v slot="$2" '
	    /myself/ { for (i = 9; i <= NF; i++) {
		    if ($i ~ /^\[/) continue
		    n = split($i, r, "-"); if (n == 1) r[2] = r[1]
		    if (slot + 0 >= r[1] + 0 && slot + 0 <= r[2] + 0) found = 1 } }
	    END { exit !found }'
}

# slot NAME: the slot of the circuit NAME's keys (CRC16 of the hash tag).
slot() {
	redis-cli -p "$(port 1)" cluster keyslot "retry:{$1}:state"
}

# name_on K PREFIX: the first circuit name PREFIX1, PREFIX2, ... whose
# slot node K serves.
name_on() {
	local i
	for i in $(seq 1 500); do
		if owns "$1" "$(slot "$2$i")"; then
			echo "$2$i"
			return 0
		fi
	done
	return 1
}

# at K CMD...: redis-cli CMD on node K itself (no redirection followed).
at() {
	redis-cli -p "$(port "$1")" "${@:2}"
}

# asked K CMD...: CMD on node K after ASKING: as to a slot it imports.
asked() {
	printf 'asking\n%s\n' "${*:2}" | redis-cli -p "$(port "$1")" | tail -n 1
}

# One cluster for the file; sentinels, their primary and replica for the
# tests that want them (in "servers", for teardown).
setup_file() {
	# bats 1.8 cannot skip from here: setup() does, for every test.
	NO_REDIS=$(redis_missing)
	export NO_REDIS
	[ -z "$NO_REDIS" ] || return 0
	CLUSTER=$(mktemp -d /tmp/retry-fleet.XXXXXX)
	export CLUSTER
	cluster_start
}

teardown_file() {
	local k
	if [ -n "${CLUSTER:-}" ]; then
		for k in 1 2 3; do
			server_stop "$CLUSTER/$k"
		done
		rm -rf "$CLUSTER"
	fi
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	unset RETRY_STORE REDISCLI_AUTH RETRY_STATE_DIR
	mkdir -p A B C
	[ -z "$NO_REDIS" ] || skip "$NO_REDIS"
	local k
	for k in 1 2 3; do
		at "$k" flushall >/dev/null
		at "$k" config resetstat >/dev/null
	done
	SEED=redis://127.0.0.1:$(port 1)
}

teardown() {
	local d
	kill_later
	for d in $(cat "$BATS_TEST_TMPDIR/servers" 2>/dev/null); do
		server_stop "$d"
	done
	rm -rf "$(cat "$BATS_TEST_TMPDIR/servers" 2>/dev/null)"
}

# on HOST COMMAND ...: COMMAND with the state directory of HOST.
on() {
	RETRY_STATE_DIR=$BATS_TEST_TMPDIR/$1 "${@:2}"
}

# calls K COMMAND [rejected_calls]: how many times node K ran COMMAND
# since setup (or refused it: a redirection).
calls() {
	at "$1" info commandstats | tr ',:' '\n\n' |
	    sed -n "/^cmdstat_$2\$/,/^failed_calls=/s/^${3:-calls}=//p" |
	    grep . || echo 0
}

# trip_from_everywhere NAME URL: hosts A, B and C, one run after the other,
# 10 runs each, --trip 5: exactly 5 attempts in all, said in ./log.
trip_from_everywhere() {
	local run_ h
	rm -f log
	for run_ in 1 2 3 4; do
		for h in A B C; do
			on "$h" "$RETRY" -n2 -b 1ms --deadline 5s --circuit "$1" --trip 5 \
			    --cool 1m --store "$2" sh -c 'echo "$0" >>log; exit 1' "$h" \
			    2>>"err.$1" || true
		done
	done
	[ "$(tr '\n' ' ' <log)" = "A A B B C " ]
}

# --- a cluster ----------------------------------------------------------------

@test "cluster: three hosts trip one shared circuit for names on every node, from one seed; no warning, no fail-open" {
	local k name
	for k in 1 2 3; do
		name=$(name_on "$k" api)
		trip_from_everywhere "$name" "$SEED"
		# The keys are on the node that owns their slot, and only there.
		[ "$(at "$k" hget "retry:{$name}:state" s)" = 1 ]
		[ "$(at "$k" hget "retry:{$name}:state" f)" = 5 ]
		[ "$(at "$k" dbsize)" = 1 ]
		# Warnings would be in err; only attempts and the open circuit are.
		! grep -v -E 'failed with exit 1|circuit .* (is|stays) open|circuit .* opened after [0-9]+ failures in a row' \
		    "err.$name" || false
	done
}

@test "cluster: -MOVED is remembered for the run; seeds are tried in turn" {
	local name
	name=$(name_on 2 moved)
	on A run -1 --separate-stderr "$RETRY" -n3 -b 1ms --circuit "$name" \
	    --trip 100 --store "$SEED" false
	[ "$(at 2 hget "retry:{$name}:state" f)" = 3 ]
	# Six steps: the first went to the seed, the others to node 2 only.
	[ "$(calls 1 evalsha rejected_calls)" = 1 ]
	[ "$(calls 1 evalsha)" = 0 ]
	[ "$(($(calls 2 evalsha) + $(calls 2 eval)))" -ge 6 ]
	# A seed that refuses: the next one.
	local dead
	dead=$(slow-proxy -p)
	on A run -1 --separate-stderr "$RETRY" -n1 --circuit "$name" --trip 100 \
	    --store "redis://127.0.0.1:$dead,127.0.0.1:$(port 3)" false
	[ "$stderr" = "retry: attempt 1/1 failed with exit 1; giving up: no attempts left" ]
	[ "$(at 2 hget "retry:{$name}:state" f)" = 4 ]
	# The URL as messages show it: every seed, the password masked.
	run -1 --separate-stderr "$RETRY" -n1 --circuit "$name" \
	    --store "redis://:s3cret@127.0.0.1:$dead,127.0.0.1:$dead/0" false
	expect_stderr "retry: store redis://:***@127.0.0.1:$dead,127.0.0.1:$dead: Connection refused; going on without circuit $name
retry: attempt 1/1 failed with exit 1; giving up: no attempts left"
}

# migrating NAME FROM TO: the slot of NAME being moved from node FROM to
# node TO, its keys moved already: FROM answers -ASK, TO takes ASKING.
migrating() {
	local s keys
	s=$(slot "$1")
	at "$3" cluster setslot "$s" importing "$(id "$2")" >/dev/null
	at "$2" cluster setslot "$s" migrating "$(id "$3")" >/dev/null
	keys=$(at "$2" cluster getkeysinslot "$s" 100 | tr '\n' ' ')
	# shellcheck disable=SC2086
	[ -z "$keys" ] || at "$2" migrate 127.0.0.1 "$(port "$3")" "" 0 5000 \
	    keys $keys >/dev/null
}

# moved NAME TO: the slot of NAME given to node TO, on every node.
moved() {
	local s k to
	s=$(slot "$1")
	to=$(id "$2")
	for k in 1 2 3; do
		at "$k" cluster setslot "$s" node "$to" >/dev/null
	done
}

@test "cluster: a slot moved during the runs: -ASK followed for one step at a time, -TRYAGAIN waited out, then -MOVED" {
	local name s
	name=$(name_on 1 ask)
	s=$(slot "$name")
	# All three keys: the state, a retry in the budget, a probe's lease
	# (unused while closed), so that node 2 can serve the slot half moved.
	on A run -1 "$RETRY" -q -n2 -b 1ms --budget 100/1m --trip 100 \
	    --circuit "$name" --store "$SEED" false
	at 1 set "retry:{$name}:probe" none px 60000 >/dev/null
	migrating "$name" 1 2
	[ "$(at 1 dbsize)" = 0 ]
	on B run -1 --separate-stderr "$RETRY" -n3 -b 1ms -j none \
	    --budget 100/1m --trip 100 --circuit "$name" --store "$SEED" false
	[ "$stderr" = "retry: attempt 1/3 failed with exit 1; next in 0.001s
retry: attempt 2/3 failed with exit 1; next in 0.002s
retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
	[ "$(asked 2 hget "retry:{$name}:state" f)" = 5 ]
	# Each step asked node 1 first: -ASK is not remembered.
	[ "$(calls 1 evalsha rejected_calls)" -ge 6 ]
	[ "$(calls 2 asking)" -ge 6 ]
	# A circuit with its state alone, half moved: node 2 cannot run a
	# script of three keys, two missing (-TRYAGAIN) until the slot is its.
	[ "$(asked 2 del "retry:{$name}:probe" "retry:{$name}:retries")" = 2 ]
	(sleep 0.5; moved "$name" 2) 3>&- &
	later "$!"
	local start
	start=$(now_ms)
	on C run -1 --separate-stderr "$RETRY" -n1 --circuit "$name" --trip 100 \
	    --store "$SEED" --store-timeout 5s false
	[ "$stderr" = "retry: attempt 1/1 failed with exit 1; giving up: no attempts left" ]
	[ $(($(now_ms) - start)) -ge 400 ]
	owns 2 "$s"
	[ "$(at 2 hget "retry:{$name}:state" f)" = 6 ]
	# Then node 1 says -MOVED, and the runs follow it.
	trip_from_everywhere "$name" "$SEED" || true
	[ "$(at 2 hget "retry:{$name}:state" s)" = 1 ]
	# Back to node 1, for the other tests.
	migrating "$name" 2 1
	moved "$name" 1
}

@test "cluster: redirections that go round are a store that failed, after 5, within the step" {
	local name s
	name=$(name_on 2 loop)
	s=$(slot "$name")
	# Nodes 1 and 2 each say the other serves the slot.
	at 2 cluster setslot "$s" node "$(id 1)" >/dev/null
	at 1 cluster setslot "$s" node "$(id 2)" >/dev/null
	run -1 --separate-stderr "$RETRY" -n1 --circuit "$name" --store "$SEED" \
	    false
	expect_stderr "retry: store $SEED: more than 5 redirections in one step; going on without circuit $name
retry: attempt 1/1 failed with exit 1; giving up: no attempts left"
	run -75 --separate-stderr "$RETRY" -n1 --circuit "$name" --store "$SEED" \
	    --store-fail closed touch ran
	[ ! -e ran ]
	moved "$name" 2
}

# --- Sentinel -------------------------------------------------------------------

# sentinels_start [OPTION ...]: a primary in $OWN/p, its replica in $OWN/r,
# and three sentinels in $OWN/s1, s2 and s3 watching it as "svc" (quorum
# 2, down after 1 s), the options given to the primary and the replica;
# ready when sentinel 1 knows the replica.  $SENTINELS: the URL's hosts.
sentinels_start() {
	local k n=0
	OWN=$(mktemp -d /tmp/retry-fleet.XXXXXX)
	echo "$OWN" >>"$BATS_TEST_TMPDIR/servers"
	serve "$OWN/p" redis-server --save '' --appendonly no "$@" || return 1
	serve "$OWN/r" redis-server --save '' --appendonly no \
	    --replicaof 127.0.0.1 "$(cat "$OWN/p/port")" "$@" || return 1
	for k in 1 2 3; do
		mkdir -p "$OWN/s$k"
		{
			echo "sentinel monitor svc 127.0.0.1 $(cat "$OWN/p/port") 2"
			echo "sentinel down-after-milliseconds svc 1000"
			echo "sentinel failover-timeout svc 10000"
			echo "${SENTINEL_AUTH:-}"
		} >"$OWN/s$k/conf"
		serve "$OWN/s$k" redis-sentinel || return 1
		echo "$OWN/s$k" >>"$BATS_TEST_TMPDIR/servers"
	done
	echo "$OWN/p" >>"$BATS_TEST_TMPDIR/servers"
	echo "$OWN/r" >>"$BATS_TEST_TMPDIR/servers"
	until redis-cli -p "$(cat "$OWN/s1/port")" sentinel replicas svc |
	    grep -qx "$(cat "$OWN/r/port")"; do
		[ "$n" -ge 200 ] && return 1
		sleep 0.05
		n=$((n + 1))
	done
	SENTINELS=127.0.0.1:$(cat "$OWN/s1/port"),127.0.0.1:$(cat "$OWN/s2/port"),127.0.0.1:$(cat "$OWN/s3/port")
}

# primary_port: the port of the primary that sentinel 1 names.
primary_port() {
	redis-cli -p "$(cat "$OWN/s1/port")" sentinel get-master-addr-by-name svc |
	    tail -n 1
}

# runs_until_stop NAME URL: hosts A, B and C each run retry on NAME, one
# run after the other, until ./stop exists: each run's status and how
# long it took into status.HOST, what it said into err.HOST.
runs_until_stop() {
	local h
	for h in A B C; do
		(
			while [ ! -e stop ]; do
				t0=$(now_ms)
				rc=0
				on "$h" "$RETRY" -n1 --deadline 2s --circuit "$1" \
				    --store "$2" --store-timeout 1s touch "ran.$h" \
				    2>>"err.$h" || rc=$?
				echo "$rc $(($(now_ms) - t0))" >>"status.$h"
			done
		) 3>&- &
		later "$!"
		pids+=("$!")
	done
}

@test "sentinel: the primary that the sentinels name; a failover while runs go on keeps the open circuit, no warning" {
	command -v redis-sentinel >/dev/null ||
	    skip "no redis-sentinel: Debian's redis-sentinel package (make test gets it unless RETRY_NO_FETCH=1)"
	sentinels_start
	local url=redis+sentinel://$SENTINELS/svc old new n=0 pids=()
	old=$(cat "$OWN/p/port")
	new=$(cat "$OWN/r/port")
	[ "$(primary_port)" = "$old" ]
	trip_from_everywhere fo "$url"
	[ "$(redis-cli -p "$old" hget 'retry:{fo}:state' s)" = 1 ]
	until [ "$(redis-cli -p "$new" hget 'retry:{fo}:state' s)" = 1 ]; do
		[ "$n" -ge 100 ] && return 1
		sleep 0.05
		n=$((n + 1))
	done
	runs_until_stop fo "$url"
	sleep 0.5
	redis-cli -p "$(cat "$OWN/s1/port")" sentinel failover svc
	n=0
	until [ "$(primary_port)" = "$new" ] &&
	    redis-cli -p "$old" role | head -n 1 | grep -qx slave; do
		[ "$n" -ge 300 ] && return 1
		sleep 0.05
		n=$((n + 1))
	done
	redis-cli -p "$new" config resetstat >/dev/null
	sleep 1
	touch stop
	wait "${pids[@]}"
	cat status.* | sort -n -k2 | tail -n 3
	# Every run saw the open circuit: none ran its command, none warned.
	[ "$(ls ran.* 2>/dev/null)" = "" ]
	! grep -v 'circuit fo stays open past the deadline; giving up' err.[ABC] || false
	[ "$(awk '$1 != 75' status.*)" = "" ]
	# At most one step's delay: a step that found the primary gone asked
	# again within its --store-timeout.
	[ "$(awk '$2 > 1500' status.*)" = "" ]
	# After the failover the runs went to the new primary.
	[ "$(redis-cli -p "$new" info commandstats | grep -c 'cmdstat_eval')" -ge 1 ]
}

@test "sentinel: the primary killed: --store-fail closed holds the runs until the sentinels name the replica, which has the circuit" {
	command -v redis-sentinel >/dev/null ||
	    skip "no redis-sentinel: Debian's redis-sentinel package (make test gets it unless RETRY_NO_FETCH=1)"
	sentinels_start
	local url=redis+sentinel://$SENTINELS/svc new n=0 pids=() h primary
	new=$(cat "$OWN/r/port")
	trip_from_everywhere fk "$url"
	until [ "$(redis-cli -p "$new" hget 'retry:{fk}:state' s)" = 1 ]; do
		[ "$n" -ge 100 ] && return 1
		sleep 0.05
		n=$((n + 1))
	done
	primary=$(cat "$OWN/p/pid")
	kill -KILL "$primary"
	gone "$primary"
	for h in A B C; do
		(
			while [ ! -e stop ]; do
				rc=0
				on "$h" "$RETRY" -n1 --deadline 2s --circuit fk \
				    --store "$url" --store-fail closed touch "ran.$h" \
				    2>>"err.$h" || rc=$?
				echo "$rc" >>"status.$h"
			done
		) 3>&- &
		later "$!"
		pids+=("$!")
	done
	n=0
	until [ "$(primary_port)" = "$new" ]; do
		[ "$n" -ge 400 ] && return 1
		sleep 0.05
		n=$((n + 1))
	done
	# What the sentinels said last is what the runs now hear.
	rm -f err.* status.*
	sleep 1
	touch stop
	wait "${pids[@]}"
	[ "$(ls ran.* 2>/dev/null)" = "" ]
	[ "$(sort -u status.*)" = 75 ]
	! grep -v 'circuit fk stays open past the deadline; giving up' err.[ABC] || false
}

@test "sentinel: passwords as redis-cli takes them, never shown; a service the sentinels do not know" {
	command -v redis-sentinel >/dev/null ||
	    skip "no redis-sentinel: Debian's redis-sentinel package (make test gets it unless RETRY_NO_FETCH=1)"
	SENTINEL_AUTH="sentinel auth-pass svc s3cret" sentinels_start \
	    --requirepass s3cret --masterauth s3cret
	local url=redis+sentinel://:s3cret@$SENTINELS/svc
	# The sentinels have no password: they say so, and are asked without.
	run -1 --separate-stderr "$RETRY" -n1 --circuit pw --store "$url" false
	[ "$stderr" = "retry: attempt 1/1 failed with exit 1; giving up: no attempts left" ]
	[ "$(redis-cli -p "$(primary_port)" -a s3cret --no-auth-warning hget 'retry:{pw}:state' f)" = 1 ]
	REDISCLI_AUTH=s3cret run -1 --separate-stderr "$RETRY" -n1 --circuit pw \
	    --store "redis+sentinel://$SENTINELS/svc" false
	[ "$stderr" = "retry: attempt 1/1 failed with exit 1; giving up: no attempts left" ]
	# A wrong one: the primary's words, masked; 125 for --circuit-status.
	run -125 --separate-stderr "$RETRY" --circuit-status pw \
	    --store "redis+sentinel://:wr0ng@$SENTINELS/svc"
	[[ $stderr == "retry: store redis+sentinel://:***@$SENTINELS/svc: primary 127.0.0.1:$(primary_port): AUTH: WRONGPASS"* ]]
	[[ $stderr != *wr0ng* ]]
	local one=127.0.0.1:$(cat "$OWN/s1/port")
	run -1 --separate-stderr "$RETRY" -n1 --circuit pw \
	    --store "redis+sentinel://:s3cret@$one/nope/2" false
	expect_stderr "retry: store redis+sentinel://:***@$one/nope/2: sentinel $one does not know primary nope; going on without circuit pw
retry: attempt 1/1 failed with exit 1; giving up: no attempts left"
}

@test "malformed cluster and sentinel URLs are usage errors" {
	local -a bad=(
		'redis://h1:1,' "no host: write redis://HOST, as redis://127.0.0.1"
		'redis://h1:1,h2:x' "invalid port: a number from 1 to 65535"
		'redis://a,b,c,d,e,f,g,h,i' "more than 8 hosts"
		'redis+sentinel://h:26379' "no service: write redis+sentinel://HOST[:PORT]/SERVICE, as redis+sentinel://127.0.0.1:26379/mymaster"
		'redis+sentinel://h/' "no service: write redis+sentinel://HOST[:PORT]/SERVICE, as redis+sentinel://127.0.0.1:26379/mymaster"
		'redis+sentinel://h/a b' "invalid service: up to 64 letters, digits, '.', '-', '_'"
		'redis+sentinel://h/svc/x' "invalid database: a number from 0 to 2147483647"
		'redis+sentinel://h/svc?db=1' "no parameters: the database goes in the path, as redis+sentinel://HOST/SERVICE/2"
	)
	local k
	for ((k = 0; k < ${#bad[@]}; k += 2)); do
		run -125 --separate-stderr "$RETRY" --circuit x --store "${bad[k]}" touch ran
		expect_stderr "retry: --store '${bad[k]}': ${bad[k + 1]}"
	done
	[ ! -e ran ]
	# The default ports: 6379, and 26379 for a sentinel.
	run -0 "$RETRY" -v -n1 --circuit x --store 'redis+sentinel://:pw@h,[::1]/svc/3' true
	[[ $output == *"redis+sentinel://:***@h:26379,[::1]:26379/svc/3"* ]]
}
