#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The job, not only the run (issue 33's "Done when"): 30 runs of a job as
# cron runs them (env -i PATH=/usr/bin:/bin, stdin /dev/null, no
# terminal: setsid), failing whole runs at random, under -Q --job J
# --alert-after 3 with every hook pinging a local fake of healthchecks.io
# (ping-server), through the README's recipe plus a tolerate and a recover
# ping.  No cron daemon runs here (none is installed on the machines the
# suite runs on, and one would add a minute a run), so a loop stands in.
#
# The sequence of failures comes from a seed, printed when a test fails;
# TEST_JOBSIM_SEED=N runs that sequence again.
load helpers/common
load helpers/ping

BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-120}

setup() {
	in_test_dir
	need_curl
	mkdir -p A B m
	runs=30
	if [[ $BATS_TEST_DESCRIPTION == *redis* ]]; then
		NO_REDIS=$(redis_missing)
		[ -z "$NO_REDIS" ] || skip "$NO_REDIS"
	fi
}

teardown() {
	[ ! -e ping/pid ] || ping_stop || true
	if [ -n "${REDIS_DIR:-}" ]; then
		server_stop "$REDIS_DIR"
		rm -rf "$REDIS_DIR"
	fi
	kill_later
}

# pick_sequence: $seq, one digit a run, 1 for a run that fails, from the
# seed TEST_JOBSIM_SEED or a new one; the first seed from there whose
# sequence has 3 failures in a row or more and then a success (an alert
# and a recovery).
pick_sequence() {
	seed=${TEST_JOBSIM_SEED:-$RANDOM}
	while :; do
		seq=$(awk -v s="$seed" -v n="$runs" 'BEGIN {
			srand(s)
			for (i = 0; i < n; i++) printf "%d", rand() < 0.5
			print ""
		}')
		[[ $seq =~ 1{3,}0 ]] && break
		seed=$((seed + 1))
	done
	echo "seed $seed (TEST_JOBSIM_SEED=$seed to run it again): $seq"
}

# hooks: the README's healthchecks recipe, its PING, its start hook and
# its end hook, into $PING, $START and $END, for the runs to use; and a
# tolerated failure's ping (its output to /log, which changes no state
# at healthchecks.io) and a recovery's.
hooks() {
	local text
	text=$(readme_recipe "export HC=")
	eval "$(grep '^export PING=' <<<"$text")"
	eval "$(grep '^end=' <<<"$text")"
	END=$end
	START=$(sed -n "s/.*--on-start '\([^']*\)'.*/\1/p" <<<"$text")
	[ -n "$PING" ] && [ -n "$END" ] && [ -n "$START" ]
	# shellcheck disable=SC2016 # for the hooks' shell
	TOLERATE='$PING --data-binary @"$RETRY_LOG" "$HC/log?rid=$RETRY_RUN_ID"'
	# shellcheck disable=SC2016
	RECOVER='$PING "$HC/recover?rid=$RETRY_RUN_ID"'
}

# as_cron HOST ARGS...: retry ARGS... as cron runs it, with the state
# directory of HOST (A or B) and the hooks' variables; its stdout and
# stderr both to ./mail, as cron mails them.
as_cron() {
	local host=$1
	shift
	# Not a group leader here, setsid execs at once (no -w: BusyBox has none).
	setsid env -i PATH=/usr/bin:/bin TMPDIR="$TMPDIR" \
	    RETRY_STATE_DIR="$PWD/$host" PING="$PING" \
	    HC="http://127.0.0.1:$PORT/UUID" "$RETRY" "$@" </dev/null >mail 2>&1
}

# job_run I HOST [OPTION...]: run I of the job J on HOST: 2 attempts; a
# run that fails fails both with status 3; of those that pass, the odd
# ones fail their first attempt.  Each attempt writes a line to stdout
# and one to stderr.  Its status in $run_status.
job_run() {
	local i=$1 host=$2
	shift 2
	run_status=0
	as_cron "$host" -Q -n 2 -b 1ms --job J --alert-after 3 \
	    --metrics "$PWD/m/J.prom" --on-start "$START" \
	    --on-success "$END" --on-giveup "$END" \
	    --on-tolerate "$TOLERATE" --on-recover "$RECOVER" "$@" -- \
	    sh -c 'echo "run $0 attempt $RETRY_ATTEMPT out"
		echo "run $0 attempt $RETRY_ATTEMPT err" >&2
		if [ "$1" = 1 ] ||
		    { [ $(($0 % 2)) = 1 ] && [ "$RETRY_ATTEMPT" = 1 ]; }; then
			exit 3
		fi' "$i" "${seq:i-1:1}" || run_status=$?
}

# gauge NAME: the value of the gauge NAME in m/J.prom (any labels).
gauge() {
	sed -n "s/^$1\({[^}]*}\)\{0,1\} \([0-9][0-9]*\)\$/\2/p" m/J.prom
}

# check_run I STREAK WAS HOST [OPTION...]: what run I left, when it is
# the STREAKth failure in a row (0: it passed) after WAS failures in a
# row: its status, its mail, its pings (from line $seen + 1 of the log,
# $seen moved past them), the job's status on HOST and the gauges.
check_run() {
	local i=$1 streak=$2 was=$3 host=$4 id last k lines rest want
	shift 4
	echo "run $i: $streak failures in a row (before: $was)"
	if [ "$streak" -gt 0 ]; then
		[ "$run_status" -eq 3 ]
		last=2
	else
		[ "$run_status" -eq 0 ]
		last=$((i % 2 + 1))
	fi
	# Mail exactly for the 3rd, 4th, ... failure in a row.
	if [ "$streak" -ge 3 ]; then
		mapfile -t lines <mail
		matches "${lines[0]}" "^retry: job J failed $streak runs in a row \(since [^)]+\)$"
		grep -qx "run $i attempt 1 out" mail
		grep -qx "run $i attempt 2 err" mail
	else
		[ ! -s mail ] || { cat mail; return 1; }
	fi
	# One start ping, then one end ping (and a recovery's), one run id.
	mapfile -t lines < <(pings_from $((seen + 1)))
	printf '  %s\n' "${lines[@]}"
	[[ ${lines[0]} =~ ^GET\ /UUID/start\?rid=($UUID)\ 0$ ]]
	id=${BASH_REMATCH[1]}
	[ -z "${ids[$id]:-}" ]
	ids[$id]=$i
	if [ "$streak" -eq 0 ]; then
		want="POST /UUID/0?rid=$id"
	elif [ "$streak" -lt 3 ]; then
		want="POST /UUID/log?rid=$id"
	else
		want="POST /UUID/3?rid=$id"
	fi
	rest=("${lines[@]:1}")
	if [ "$streak" -eq 0 ] && [ "$was" -ge 3 ]; then
		[ "${#rest[@]}" -eq 2 ]
		# The order of the success's and the recovery's hooks is the
		# implementation's.
		[ "${rest[0]% *}" = "$want" ] || [ "${rest[1]% *}" = "$want" ]
		[ "${rest[0]}" = "GET /UUID/recover?rid=$id 0" ] ||
		    [ "${rest[1]}" = "GET /UUID/recover?rid=$id 0" ]
	else
		[ "${#rest[@]}" -eq 1 ]
		[ "${rest[0]% *}" = "$want" ]
	fi
	# The end ping carries the last attempt's output.
	for ((k = seen + 2; k <= seen + ${#lines[@]}; k++)); do
		case $(sed -n "${k}p" "$PINGS") in
		"$want "*)
			[ "$(cat "$PINGS.$k")" = "run $i attempt $last out
run $i attempt $last err" ] ;;
		esac
	done
	seen=$((seen + ${#lines[@]}))
	# The job's history, and the metrics that say the same.
	k=0
	as_cron "$host" --job-status J "$@" || k=$?
	case $streak in
	0) want=0 ;;
	1 | 2) want=1 ;;
	*) want=75 ;;
	esac
	[ "$k" -eq "$want" ] || { echo "--job-status: $k"; cat mail; return 1; }
	[ "$(gauge retry_job_failed_runs_in_row)" = "$streak" ]
	[ "$(gauge retry_job_alerting)" = "$((streak >= 3))" ]
}

# simulate HOSTS [OPTION...]: the 30 runs, the Ith on the host
# HOSTS[I % #HOSTS] (HOSTS: "A" or "A B"), OPTION given to each.
simulate() {
	local -a hosts
	read -ra hosts <<<"$1"
	shift
	local i streak=0 was host
	declare -gA ids=()
	seen=0
	hooks
	ping_server
	pick_sequence
	for ((i = 1; i <= runs; i++)); do
		host=${hosts[i % ${#hosts[@]}]}
		job_run "$i" "$host" "$@"
		was=$streak
		if [ "${seq:i-1:1}" = 1 ]; then
			streak=$((streak + 1))
		else
			streak=0
		fi
		check_run "$i" "$streak" "$was" "$host" "$@"
	done
	[ "$(wc -l <"$PINGS")" -eq "$seen" ]
}

@test "cron, 30 runs of a job that fails at random: mail from the 3rd failure in a row on, one start and one end ping a run under one run id, and --metrics agrees with --job-status" {
	local t0
	t0=$(now_ms)
	simulate A
	echo "took $(($(now_ms) - t0)) ms"
}

# redis_here: a redis-server of the test's own on a Unix socket only, in
# $REDIS_DIR (short: a socket's path has at most 103 bytes).
redis_here() {
	local n=0
	REDIS_DIR=$(mktemp -d /tmp/retry-jobsim.XXXXXX)
	redis-server --port 0 --unixsocket "$REDIS_DIR/sock" \
	    --unixsocketperm 700 --save '' --appendonly no --dir "$REDIS_DIR" \
	    --logfile "$REDIS_DIR/log" --daemonize no 3>&- &
	echo "$!" >"$REDIS_DIR/pid"
	later "$!"
	until redis-cli -s "$REDIS_DIR/sock" ping 2>/dev/null | grep -q PONG; do
		[ "$n" -lt 100 ] || { cat "$REDIS_DIR/log"; return 1; }
		sleep 0.05
		n=$((n + 1))
	done
}

@test "cron on two hosts with --store on redis: the runs alternate between them and the job's count goes on across them" {
	redis_here
	simulate "A B" --store "redis+unix://$REDIS_DIR/sock"
}
