# SPDX-License-Identifier: ISC
# The library every test file loads first (load helpers/common): where
# retry and the helper programs are, and small polls and checks.
bats_require_minimum_version 1.5.0

# make check-sanitize points TEST_RETRY_BINARY at a sanitizer build.
RETRY=${TEST_RETRY_BINARY:-$BATS_TEST_DIRNAME/../retry}
HELPERS=$BATS_TEST_DIRNAME/helpers
PATH=$HELPERS:$PATH

# The suite's runs are no one's attempts: started under a retry (retry --
# make test), each would be an inner run, with one attempt by default and
# the outer one's key and deadline.  A test that wants one sets them.
unset RETRY_ATTEMPT RETRY_MAX_ATTEMPTS RETRY_IDEMPOTENCY_KEY \
    RETRY_DEADLINE RETRY_AFTER_FILE RETRY_STORE RETRY_ENV_FILE

# skip_cannot_run_under_qemu: make check-release runs a part of the suite
# with a release binary under qemu-user (TEST_QEMU names the
# architecture), which runs vfork(2) as fork(2): the child's exec error
# then never reaches retry, which still exits 126 or 127 but cannot say
# why.  A test of that message skips there.
skip_cannot_run_under_qemu() {
	[ -z "${TEST_QEMU:-}" ] ||
	    skip "qemu-$TEST_QEMU runs vfork() as fork(): retry cannot see why the exec failed"
}

# Milliseconds on the monotonic clock, for bounded timing checks.
now_ms() {
	clock-now
}

# wait_for FILE [TENTHS]: poll until FILE exists, at most TENTHS/10 s (50).
wait_for() {
	local n=0
	while [ ! -e "$1" ]; do
		[ "$n" -ge "${2:-50}" ] && return 1
		sleep 0.1
		n=$((n + 1))
	done
}

# alive PID: the process exists and is not a zombie.
alive() {
	local state
	state=$(proc-state "$1" state 2>/dev/null) || return 1
	[ "$state" != Z ]
}

# gone PID [HUNDREDTHS]: poll until PID has exited (or is a zombie), at
# most HUNDREDTHS/100 s (100): a killed process takes a moment to die.
gone() {
	local n=0
	while alive "$1"; do
		if [ "$n" -ge "${2:-100}" ]; then
			echo "process $1 is still alive: $(proc-state "$1")"
			return 1
		fi
		sleep 0.01
		n=$((n + 1))
	done
}

# later PID: kill PID in teardown (kill_later), should the test stop
# before it ends.
later() {
	echo "$1" >>"$BATS_TEST_TMPDIR/later.pids"
}

# kill_later: kills what later noted; for teardown.
kill_later() {
	local p
	for p in $(cat "$BATS_TEST_TMPDIR/later.pids" 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null || true
	done
}

# in_test_dir: for setup: the test runs in its own directory, with
# TMPDIR an empty tmp/ in it, where retry's temporary files land and can
# be counted (tmp_files).
in_test_dir() {
	cd "$BATS_TEST_TMPDIR" || return 1
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	mkdir "$TMPDIR"
}

# tmp_files: retry's files and directories in $TMPDIR, one a line.
tmp_files() {
	(cd "$TMPDIR" && ls -d retry.* 2>/dev/null) || true
}

# kill_bg_retry: for teardown: kills the retry whose pid a test wrote to
# bg.pid and left in the background, if that pid is still a retry.
kill_bg_retry() {
	local p
	[ -s bg.pid ] || return 0
	p=$(cat bg.pid)
	case $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") in
	*retry*) kill -KILL "$p" 2>/dev/null || true ;;
	esac
}

# stop_and_time SIG PID: sends SIG to PID, a child of the test's shell,
# and waits for it; sets $rc to its status and $took to the milliseconds
# it took to end.
stop_and_time() {
	local t0
	t0=$(now_ms)
	kill -s "$1" "$2"
	rc=0
	wait "$2" || rc=$?
	took=$(($(now_ms) - t0))
	echo "status $rc after $took ms"
}

# need_root_and_nobody WHY: skips the test unless it runs as root and
# there is a user nobody; WHY says what root is needed for.
need_root_and_nobody() {
	[ "$(id -u)" -eq 0 ] || skip "needs root $1"
	id nobody >/dev/null 2>&1 || skip "no user nobody"
}

# need_keyboard_signals: skips the test unless the processes it starts get
# SIGINT and SIGQUIT at their default actions.  A job started with them
# ignored (nohup, a script's background job, some CI runners) passes that
# on, and retry rightly keeps an ignored signal ignored; tests/run-bats
# restores them for the suite when it can, so this skips only when it
# could not (or bats was run directly).
need_keyboard_signals() {
	local ign
	ign=$(bash -c 'trap -p INT QUIT' | sed -n "s/^trap -- '' //p")
	[ -z "$ign" ] && return
	skip "${ign//$'\n'/ and } ignored from the start (nohup, a background job), and retry keeps an ignored signal ignored: run the suite through tests/run-bats, which restores the default actions"
}

# hold_lock FILE [TENTHS]: a process (its pid in $holder, killed in
# teardown) holds the lock of the circuit's lock file FILE, taken within
# TENTHS/10 s (50).
hold_lock() {
	hold-lock "$1" ready 3>&- &
	holder=$!
	later "$holder"
	wait_for ready "${2:-50}"
}

# big_record FILE: a circuit record longer than a page (4096 bytes): 300
# retries in the last second, of a --budget 1000/1h.
big_record() {
	local now i
	now=$(clock-now -r -n)
	{
		printf 'retry-circuit 1\nstate closed\nfailures 0\nopenings 0\nhalf-open-at 0\nprobe 0\nbudget 1000 3600000000000\nretries 300'
		for i in $(seq 300); do printf ' %d' $((now - 1000000000 + i)); done
		printf '\n'
	} >"$1"
}

# mode_of FILE: its permission bits in octal, as stat -c %a prints them
# (from ls -ld, which POSIX specifies).
mode_of() {
	local perms
	perms=$(ls -ld "$1") || return 1
	awk -v p="${perms:1:9}" 'BEGIN {
		for (i = 0; i < 3; i++) {
			d = 0
			if (substr(p, 3 * i + 1, 1) == "r") d += 4
			if (substr(p, 3 * i + 2, 1) == "w") d += 2
			if (substr(p, 3 * i + 3, 1) ~ /[xst]/) d += 1
			printf "%d", d
		}
		print ""
	}'
}

# owner_of FILE: the name of its owner.
owner_of() {
	ls -ld "$1" | awk '{ print $3 }'
}

# expect_stderr TEXT: bats' $stderr is exactly TEXT, else shows both.
expect_stderr() {
	[ "$stderr" = "$1" ] && return
	printf 'expected stderr:\n%s\nactual stderr:\n%s\n' "$1" "$stderr"
	return 1
}

# between N LO HI: LO <= N <= HI (integers), else says so.
between() {
	[ "$1" -ge "$2" ] && [ "$1" -le "$3" ] && return
	echo "$1 is not within [$2, $3]"
	return 1
}

# matches STRING REGEX: STRING matches the extended REGEX, else says why.
matches() {
	[[ $1 =~ $2 ]] && return
	printf 'no match:\n  %s\nfor:\n  %s\n' "$1" "$2"
	return 1
}

# wait_for_text FILE REGEX [HUNDREDTHS]: poll until a line of FILE matches
# the extended REGEX, at most HUNDREDTHS/100 s (500).
wait_for_text() {
	local n=0
	until grep -Eq -- "$2" "$1" 2>/dev/null; do
		if [ "$n" -ge "${3:-500}" ]; then
			echo "no line matching '$2' in $1 after $n polls"
			return 1
		fi
		sleep 0.01
		n=$((n + 1))
	done
}

# setpriv_path: a setpriv that can change the user (util-linux's: busybox's
# has no --reuid), wherever PATH has one; fails when there is none.
setpriv_path() {
	local p
	for p in $(type -ap setpriv); do
		if "$p" --reuid="$(id -u)" true 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# as_nobody COMMAND ...: runs COMMAND as the user nobody, keeping the
# environment; returns 77 when no tool here can.
as_nobody() {
	local p
	if p=$(setpriv_path); then
		"$p" --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"
	elif command -v runuser >/dev/null 2>&1; then
		runuser -u nobody -- "$@"
	else
		return 77
	fi
}

# nobody_runs_retry: skips the test unless the user nobody can run retry
# from where it is (a tree unpacked in a 0700 directory, as by make
# distcheck, is out of its reach).
nobody_runs_retry() {
	as_nobody true || skip "nothing here can run a command as nobody"
	# Through env: setpriv itself still has root's capabilities when it
	# executes its command, which the command no longer has.
	as_nobody env "$RETRY" --version >/dev/null 2>&1 ||
	    skip "nobody cannot run $RETRY from where it is"
}

# server_stop DIR: the server whose pid is in DIR/pid stopped (TERM, then
# KILL after 5 s), and gone.
server_stop() {
	local pid n=0
	pid=$(cat "$1/pid" 2>/dev/null) || return 0
	kill -TERM "$pid" 2>/dev/null || true
	while alive "$pid" && [ "$n" -lt 100 ]; do
		sleep 0.05
		n=$((n + 1))
	done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$1/pid"
}

# redis_missing: why the Redis tests cannot run here (empty: they can).
redis_missing() {
	if ! command -v redis-server >/dev/null; then
		echo "no redis-server: Debian's redis-server package (make test gets it unless RETRY_NO_FETCH=1)"
	elif ! command -v redis-cli >/dev/null; then
		echo "no redis-cli: Debian's redis-tools, which redis-server needs"
	fi
}

# small_tmpdir COMMAND [ARG ...]: runs COMMAND where $TMPDIR is a tmpfs of
# 1 MiB, in a mount namespace of its own (the machine's mounts are left
# alone), so that a test can fill it; skips the test unless root can.
small_tmpdir() {
	[ "$(id -u)" -eq 0 ] || skip "needs root, for a mount namespace"
	command -v unshare >/dev/null || skip "unshare is not installed"
	unshare --mount true 2>/dev/null || skip "no mount namespace here"
	mkdir -p "$TMPDIR"
	unshare --mount --propagation private sh -c '
		mount -t tmpfs -o size=1m tmpfs "$TMPDIR" || exit 125
		exec "$@"' sh "$@"
}

# share_herd N DELAY [OPTION ...]: N runs of retry at once, each "-n 2
# -b DELAY -j none -D 20s --circuit herd --trip 100000 --budget 20%/1m
# --budget-min 0" and OPTION, whose first attempts fail together once all
# N have started (each waits on the FIFO ./gate, opened for a moment when
# ./attempts holds N lines), and whose retries then ask the budget DELAY
# later.  Every attempt appends its number to ./attempts; the runs' pids
# are in herd_pids, each noted for teardown.  The deadline is 20 s where
# 6 s would do on a quiet machine: starting 200 processes takes seconds
# on a loaded one, and a run whose deadline came first would ask nothing.
# Returns 1 when the first attempts are not all there within 20 s.
share_herd() {
	local n=$1 delay=$2 k
	shift 2
	mkfifo gate
	: >attempts
	herd_pids=() kill_pids=()
	for ((k = 0; k < n; k++)); do
		"$RETRY" -q -n 2 -b "$delay" -j none -D 20s --circuit herd \
		    --trip 100000 --budget 20%/1m --budget-min 0 "$@" -- sh -c '
			echo "$RETRY_ATTEMPT" >>attempts
			[ "$RETRY_ATTEMPT" != 1 ] || read -r x <gate
			exit 1' 3>&- &
		herd_pids+=("$!")
		later "$!"
	done
	for ((k = 0; k < 400; k++)); do
		[ "$(wc -l <attempts)" -ge "$n" ] && break
		sleep 0.05
	done
	# Open, the gate lets every read go, and they all end as it closes.
	sleep 0.2 >gate
	[ "$k" -lt 400 ]
}

# herd_ends: waits for the kills of herd_kills, then for the runs of
# share_herd.  Until they are waited for here, the runs that have ended
# are zombies that keep their pids: a kill never reaches another process.
herd_ends() {
	local p
	for p in "${kill_pids[@]}" "${herd_pids[@]}"; do
		wait "$p" || true
	done
	kill_pids=()
}

# herd_kills N SECONDS: N runs of share_herd's, drawn at random, get
# SIGKILL at random moments within SECONDS from now, while the others
# ask the budget.
herd_kills() {
	local k p
	for ((k = 0; k < $1; k++)); do
		p=${herd_pids[RANDOM % ${#herd_pids[@]}]}
		(sleep "$(awk -v r="$RANDOM" -v s="$2" \
		    'BEGIN { printf "%.3f", r / 32767 * s }')"
		    kill -KILL "$p" 2>/dev/null || true) 3>&- &
		kill_pids+=("$!")
	done
}
