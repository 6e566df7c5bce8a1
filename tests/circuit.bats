#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Many runs, one downstream: --splay, and the record that runs of one
# --circuit NAME share (where it lives and who may use it, the breaker, the
# shared retry budget).  Real processes, tens of milliseconds, bounds
# generous enough for a loaded machine with two cores.

load helpers/common

# A test that hangs fails instead of stopping the whole suite.
BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-30}

setup() {
	cd "$BATS_TEST_TMPDIR"
	export RETRY_STATE_DIR=$BATS_TEST_TMPDIR/state
}

# Whatever a failed test left running (noted by later), and a shared
# directory under /tmp.
teardown() {
	kill_later
	if [ -n "${shared:-}" ] && [ -d "$shared" ]; then
		rm -rf "$shared"
	fi
}

# ms SECONDS: "1.234" as 1234.
ms() {
	echo $((10#${1/./}))
}

# now_ns: Unix time in nanoseconds, the clock of the record's times.
now_ns() {
	clock-now -r -n
}

# rec NAME KEY: the first number after KEY in the record of NAME.
rec() {
	awk -v k="$2" '$1 == k { print $2 }' "$RETRY_STATE_DIR/$1"
}

# rec_at FILE KEY: like rec, for a record named by its path.
rec_at() {
	awk -v k="$2" '$1 == k { print $2 }' "$1"
}

# json_valid FILE: FILE parses as JSON; unchecked without python3.
json_valid() {
	command -v python3 >/dev/null || return 0
	python3 -m json.tool "$1" >/dev/null
}

# fail_once NAME [OPTION ...]: one run of one failed attempt under NAME.
fail_once() {
	local name=$1
	shift
	"$RETRY" -q -n1 --circuit "$name" "$@" false || [ "$?" -eq 1 ]
}

# --- --splay ---------------------------------------------------------

@test "--splay waits a random time within [0, DUR] before the first attempt" {
	local round start child said seen=""
	for round in 1 2 3 4 5; do
		start=$(now_ms)
		run -0 --separate-stderr "$RETRY" -v -n1 --splay 200ms \
		    sh -c 'clock-now >"$0"' child
		child=$(cat child)
		matches "${stderr_lines[1]}" \
		    '^retry: splay: ([0-9]+\.[0-9]{3})s before the first attempt$'
		said=$(ms "${BASH_REMATCH[1]}")
		between "$said" 0 200
		# The attempt started no sooner than the splay said.
		between $((child - start)) "$said" $((said + 1500))
		# The summary counts the splay as time asleep.
		matches "${stderr_lines[-1]}" \
		    '^retry: 1 attempt in [0-9.]+s, ([0-9]+\.[0-9]{3})s asleep; stopped: success$'
		[ "$(ms "${BASH_REMATCH[1]}")" -ge "$said" ]
		seen="$seen $said"
	done
	# Five draws from 200 ms: not all the same.
	[ "$(echo $seen | tr ' ' '\n' | sort -u | wc -l)" -ge 3 ]
}

@test "--splay counts against the deadline: one past it runs nothing, exit 124" {
	local start
	start=$(now_ms)
	# Within 100 ms of an hour: once in 36000 runs.
	run -124 --separate-stderr "$RETRY" --splay 1h -D 100ms touch ran
	[ $(($(now_ms) - start)) -lt 5000 ]
	[ ! -e ran ]
	[ "$output" = "" ]
	expect_stderr "retry: the splay would pass the deadline; not running 'touch'"
	# A splay that fits runs the command.
	run -0 --separate-stderr "$RETRY" --splay 20ms -D 10s touch ran
	[ -e ran ]
}

@test "--dry-run shows the splay as the delay before attempt 1; the totals include it" {
	local seed d seen=""
	for seed in {1..12}; do
		run -0 --separate-stderr "$RETRY" --dry-run --seed "$seed" \
		    --splay 2s -n3 -b 1s -j none
		[ "${#lines[@]}" -eq 3 ]
		matches "${lines[0]}" $'^1\t([0-9]+\\.[0-9]{3})\t([0-9]+\\.[0-9]{3})$'
		[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
		d=$(ms "${BASH_REMATCH[1]}")
		between "$d" 0 2000
		[ "${lines[1]}" = "$(printf '2\t1.000\t%d.%03d' \
		    $(((d + 1000) / 1000)) $(((d + 1000) % 1000)))" ]
		[ "${lines[2]}" = "$(printf '3\t2.000\t%d.%03d' \
		    $(((d + 3000) / 1000)) $(((d + 3000) % 1000)))" ]
		seen="$seen $d"
	done
	[ "$(echo $seen | tr ' ' '\n' | sort -u | wc -l)" -ge 6 ]
	# Without a splay the schedule starts with the delay before attempt 2.
	run -0 "$RETRY" --dry-run -n2 -b 1s -j none
	[ "$output" = $'2\t1.000\t1.000' ]
}

@test "--seed reproduces the splay, in --dry-run and in a real run" {
	local first
	run -0 "$RETRY" --dry-run --seed 42 --splay 300ms -n1
	first=$output
	matches "$first" $'^1\t(0\\.[0-9]{3})\t0\\.[0-9]{3}$'
	run -0 "$RETRY" --dry-run --seed 42 --splay 300ms -n1
	[ "$output" = "$first" ]
	local drawn re=$'^1\t([0-9.]+)\t'
	[[ $first =~ $re ]]
	drawn=$(ms "${BASH_REMATCH[1]}")
	run -0 --separate-stderr "$RETRY" -v --seed 42 --splay 300ms -n1 true
	matches "${stderr_lines[1]}" '^retry: splay: ([0-9]+\.[0-9]{3})s before'
	# What it says is measured a moment after the draw: at most 1 ms less.
	between "$(ms "${BASH_REMATCH[1]}")" $((drawn - 1)) "$drawn"
	# With --circuit too (its own draws do not shift the schedule's).
	run -0 "$RETRY" --dry-run --seed 42 --splay 30ms -n3 -b 10ms
	local want
	want=$(cut -f2 <<<"$output" | tail -n 2 | tr '\n' ' ')
	[ "$(wc -w <<<"$want")" -eq 2 ]
	run -1 --separate-stderr "$RETRY" --seed 42 --splay 30ms -n3 -b 10ms \
	    --circuit sd --trip 1 --cool 1ms false
	[ "$(sed -n 's/.*; next in \([0-9.]*\)s$/\1/p' <<<"$stderr" | tr '\n' ' ')" = "$want" ]
}

# --- names and where the record lives -----------------------------------

@test "a NAME other than letters, digits, '.', '_' and '-' is a usage error" {
	local name opt
	for name in a/b .. . '' 'a b' 'a*' .hidden .profile; do
		for opt in --circuit --circuit-status --circuit-reset; do
			if [ "$opt" = --circuit ]; then
				run -125 --separate-stderr "$RETRY" "$opt" "$name" touch ran
			else
				run -125 --separate-stderr "$RETRY" "$opt" "$name"
			fi
			[ "$output" = "" ]
			expect_stderr "retry: $opt '$name': invalid name (letters, digits, '.', '_', '-', not beginning with '.')"
		done
	done
	[ ! -e ran ]
	[ ! -e state ]
	run -0 "$RETRY" --circuit api.example-com_1 touch ran
	[ -e ran ]
	# A success on a fresh record changes nothing but the runs counted.
	[ -f state/.api.example-com_1.lock ]
	[ "$(grep -v '^$' state/api.example-com_1 | tail -n 3)" = "budget 0 0
retries 0
runs 1 p" ]
}

@test "the state directory is made 0700 and the record 0600, whatever the umask" {
	umask 000
	export RETRY_STATE_DIR=$BATS_TEST_TMPDIR/a/b/state
	run -1 --separate-stderr "$RETRY" -n1 --circuit perm false
	[ "$(mode_of "$RETRY_STATE_DIR")" = 700 ]
	[ "$(mode_of "$RETRY_STATE_DIR/perm")" = 600 ]
	[ "$(mode_of "$RETRY_STATE_DIR/.perm.lock")" = 600 ]
	[ "$(head -n 1 "$RETRY_STATE_DIR/perm")" = "retry-circuit 1" ]
	# --circuit-status only reads: it makes nothing.
	export RETRY_STATE_DIR=$BATS_TEST_TMPDIR/other
	run -0 "$RETRY" --circuit-status perm
	[ "${lines[1]}" = "state:     closed" ]
	[ ! -e "$RETRY_STATE_DIR" ]
}

@test "a state directory named with trailing /. or / is that directory" {
	mkdir -m 700 state
	local d
	for d in "$PWD/state/." "$PWD/state/./" "$PWD/state//" "state/."; do
		RETRY_STATE_DIR=$d run -1 --separate-stderr "$RETRY" -q -n1 \
		    --circuit dot false
		[ "$stderr" = "" ]
	done
	[ "$(rec dot failures)" = 4 ]
}

@test "without RETRY_STATE_DIR: \$XDG_STATE_HOME/retry, else \$HOME/.local/state/retry" {
	unset RETRY_STATE_DIR
	export XDG_STATE_HOME=$BATS_TEST_TMPDIR/xdg HOME=$BATS_TEST_TMPDIR/home
	mkdir home
	run -1 "$RETRY" -q -n1 --circuit where false
	[ "$(rec_at xdg/retry/where failures)" = 1 ]
	[ "$(mode_of xdg/retry)" = 700 ]
	[ ! -e home/.local ]
	unset XDG_STATE_HOME
	run -1 "$RETRY" -q -n1 --circuit where false
	[ "$(rec_at home/.local/state/retry/where failures)" = 1 ]
	[ "$(mode_of home/.local/state/retry)" = 700 ]
	# Empty is unset.
	export RETRY_STATE_DIR='' XDG_STATE_HOME=''
	run -1 "$RETRY" -q -n1 --circuit where false
	[ "$(rec_at home/.local/state/retry/where failures)" = 2 ]
}

# --- refusals ----------------------------------------------------------

@test "a record that is a symbolic link is refused (125, one line, nothing run)" {
	mkdir state
	chmod 700 state
	# To a file of ours, and dangling.
	fail_once real
	ln -s real state/link
	ln -s nowhere state/dangling
	local name
	for name in link dangling; do
		run -125 --separate-stderr "$RETRY" --circuit "$name" touch ran
		[ "$output" = "" ]
		expect_stderr "retry: record $RETRY_STATE_DIR/$name is a symbolic link"
		run -125 --separate-stderr "$RETRY" --circuit-status "$name"
		[ "$output" = "" ]
		expect_stderr "retry: record $RETRY_STATE_DIR/$name is a symbolic link"
		run -125 --separate-stderr "$RETRY" --circuit-reset "$name"
		expect_stderr "retry: record $RETRY_STATE_DIR/$name is a symbolic link"
	done
	[ ! -e ran ]
	[ ! -e state/nowhere ]
	[ -L state/dangling ]
}

@test "a state directory that is a symbolic link is refused (125, one line, nothing run)" {
	mkdir real
	chmod 700 real
	ln -s real state
	run -125 --separate-stderr "$RETRY" --circuit x touch ran
	[ "$output" = "" ]
	expect_stderr "retry: state directory $RETRY_STATE_DIR is a symbolic link"
	run -125 --separate-stderr "$RETRY" --circuit-status x
	expect_stderr "retry: state directory $RETRY_STATE_DIR is a symbolic link"
	[ ! -e ran ]
	[ -z "$(ls real)" ]
	# Dangling too: retry does not make its target.
	ln -s nowhere state2
	RETRY_STATE_DIR=$BATS_TEST_TMPDIR/state2 run -125 --separate-stderr \
	    "$RETRY" --circuit x touch ran
	expect_stderr "retry: state directory $BATS_TEST_TMPDIR/state2 is a symbolic link"
	[ ! -e nowhere ]
	[ ! -e ran ]
}

@test "a state path that is not a directory, or a record that is not a file, is refused" {
	touch state
	run -125 --separate-stderr "$RETRY" --circuit x touch ran
	expect_stderr "retry: $RETRY_STATE_DIR is not a directory"
	rm state
	mkdir -p state/x
	chmod 700 state
	run -125 --separate-stderr "$RETRY" --circuit x touch ran
	expect_stderr "retry: record $RETRY_STATE_DIR/x is not a regular file"
	[ ! -e ran ]
}

@test "a record or a state directory owned by another user is refused (as root)" {
	need_root_and_nobody "to give files to another user"
	fail_once theirs
	chown nobody "$RETRY_STATE_DIR/theirs"
	run -125 --separate-stderr "$RETRY" --circuit theirs touch ran
	[ "$output" = "" ]
	expect_stderr "retry: record $RETRY_STATE_DIR/theirs belongs to another user"
	run -125 --separate-stderr "$RETRY" --circuit-status theirs
	expect_stderr "retry: record $RETRY_STATE_DIR/theirs belongs to another user"
	run -125 --separate-stderr "$RETRY" --circuit-reset theirs
	expect_stderr "retry: record $RETRY_STATE_DIR/theirs belongs to another user"
	# Another name in the same directory is fine.
	run -0 "$RETRY" --circuit mine true
	chown nobody "$RETRY_STATE_DIR"
	run -125 --separate-stderr "$RETRY" --circuit mine touch ran
	[ "$output" = "" ]
	expect_stderr "retry: state directory $RETRY_STATE_DIR belongs to another user"
	[ ! -e ran ]
}

@test "a second user pointed at root's state is refused; its own state works" {
	need_root_and_nobody "to give files to another user"
	nobody_runs_retry
	# A place nobody can reach: the bats directories are private.
	shared=$(mktemp -d /tmp/retry-cb.XXXXXX)
	chmod 755 "$shared"
	mkdir -m 1777 "$shared/out"	# sticky, like /tmp: a parent others write
	export RETRY_STATE_DIR=$shared/root-state
	"$RETRY" -q -n1 --circuit api false || true
	chmod 755 "$RETRY_STATE_DIR"
	run -125 --separate-stderr as_nobody "$RETRY" --circuit api touch "$shared/out/ran"
	[ "$output" = "" ]
	expect_stderr "retry: state directory $RETRY_STATE_DIR belongs to another user"
	run -125 --separate-stderr as_nobody "$RETRY" --circuit-reset api
	expect_stderr "retry: state directory $RETRY_STATE_DIR belongs to another user"
	[ ! -e "$shared/out/ran" ]
	[ "$(rec api failures)" = 1 ]
	# The directory theirs, the record root's: it cannot open it, or if it
	# may, it must not use it.
	chown nobody "$RETRY_STATE_DIR"
	run -125 --separate-stderr as_nobody "$RETRY" --circuit api touch "$shared/out/ran"
	expect_stderr "retry: $RETRY_STATE_DIR/api: Permission denied"
	chmod 666 "$RETRY_STATE_DIR/api"
	run -125 --separate-stderr as_nobody "$RETRY" --circuit api touch "$shared/out/ran"
	expect_stderr "retry: record $RETRY_STATE_DIR/api belongs to another user"
	[ ! -e "$shared/out/ran" ]
	# Its own state is its own.
	RETRY_STATE_DIR=$shared/out/nobody-state run -0 --separate-stderr \
	    as_nobody "$RETRY" --circuit api touch "$shared/out/ran"
	[ -e "$shared/out/ran" ]
	[ "$(owner_of "$shared/out/nobody-state") $(mode_of "$shared/out/nobody-state")" = "nobody 700" ]
	[ "$(owner_of "$shared/out/nobody-state/.api.lock") $(mode_of "$shared/out/nobody-state/.api.lock")" = "nobody 600" ]
}

# --- a corrupt record ----------------------------------------------------

@test "a corrupt record is reported once, replaced by a fresh one, and the run goes on" {
	fail_once c
	[ "$(rec c failures)" = 1 ]
	printf 'retry-circuit 1\ngarbage\n' >state/c
	run -1 --separate-stderr "$RETRY" -n3 -b 1ms -j none --circuit c false
	[ "${stderr_lines[0]}" = "retry: circuit c: the record was corrupt; it starts afresh" ]
	[ "$(grep -c corrupt <<<"$stderr")" -eq 1 ]
	[ "${stderr_lines[-1]}" = "retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
	# Fresh: the old count is gone, the three new failures are in.
	[ "$(head -n 1 state/c)" = "retry-circuit 1" ]
	[ "$(rec c failures)" = 3 ]
	run -0 --separate-stderr "$RETRY" --circuit-status c
	[ "$stderr" = "" ]
	[ "${lines[2]}" = "failures:  3 in a row" ]
}

@test "a record is changed in place, a shorter one padded with newlines to the old length" {
	mkdir -m 700 state
	local now ino size
	now=$(now_ns)
	# Three retries an hour old: the budget's next step drops them.
	printf 'retry-circuit 1\nstate closed\nfailures 0\nopenings 0\nhalf-open-at 0\nprobe 0\nbudget 5 60000000000\nretries 3 %d %d %d\nruns 0\n' \
	    $((now - 3600000000000)) $((now - 3599000000000)) $((now - 3598000000000)) >state/p
	ino=$(stat -c %i state/p)
	size=$(wc -c <state/p)
	run -1 "$RETRY" -q -n2 -b 1ms -j none --budget 5/1m --circuit p false
	[ "$(stat -c %i state/p)" = "$ino" ]
	[ "$(wc -c <state/p)" = "$size" ]
	[ "$(rec p failures)" = 2 ]
	matches "$(grep '^retries' state/p)" '^retries 1 [0-9]+$'
	[ "$(grep '^runs' state/p)" = "runs 1 f" ]
	# What follows the record is newlines only.
	[ "$(sed -n '/^runs/,$p' state/p | sed 1d | tr -d '\n' | wc -c)" -eq 0 ]
	[ "$(sed -n '/^runs/,$p' state/p | wc -l)" -gt 1 ]
	run -0 --separate-stderr "$RETRY" --circuit-status p
	[ "$stderr" = "" ]
	[ "${lines[2]}" = "failures:  2 in a row" ]
	[ "${lines[4]}" = "retries:   1 in the last 60.000s (budget 5)" ]
}

@test "a record longer than a page is written beside it and renamed over it" {
	mkdir -m 700 state
	local ino
	big_record state/big
	[ "$(wc -c <state/big)" -gt 4096 ]
	ino=$(stat -c %i state/big)
	# Held open, its inode cannot be taken again by the next rename.
	exec 4<state/big
	run -1 "$RETRY" -q -n1 --budget 1000/1h --circuit big false
	exec 4<&-
	[ "$(stat -c %i state/big)" != "$ino" ]
	[ "$(rec big failures)" = 1 ]
	[ "$(tail -c 1 state/big | od -An -tx1 | tr -d ' ')" = 0a ]
	[ "$(tail -c 2 state/big | od -An -tx1 | tr -d ' ')" != 0a0a ]
	[ ! -e state/.big.new ]
	run -0 --separate-stderr "$RETRY" --circuit-status big
	[ "$stderr" = "" ]
	[ "${lines[4]}" = "retries:   300 in the last 3600.000s (budget 1000)" ]
}

@test "--circuit-status reads the record only between two steps (it is written in place)" {
	fail_once rs
	hold_lock state/.rs.lock 100
	"$RETRY" --circuit-status rs >status 3>&- &
	pid=$!
	later "$pid"
	sleep 0.2
	alive "$pid"
	[ ! -s status ]
	kill -KILL "$holder"
	wait "$holder" 2>/dev/null || true
	gone "$pid" 300
	wait "$pid"
	[ "$(sed -n 3p status)" = "failures:  1 in a row" ]
}

@test "a record truncated halfway is corrupt; an empty one is a fresh one" {
	"$RETRY" -q -n3 -b 1ms --budget 5/1m --circuit t false || true
	local size
	size=$(wc -c <state/t)
	head -c $((size / 2)) state/t >half
	cat half >state/t
	run -1 --separate-stderr "$RETRY" -n1 --circuit t false
	[ "${#stderr_lines[@]}" -eq 2 ]
	[ "${stderr_lines[0]}" = "retry: circuit t: the record was corrupt; it starts afresh" ]
	[ "$(rec t failures)" = 1 ]
	[ "$(rec t retries)" = 0 ]
	# Without the final newline.
	head -c $(($(wc -c <state/t) - 1)) state/t >cut.tmp
	cat cut.tmp >state/t
	# --circuit-status says so, and changes nothing.
	run -0 --separate-stderr "$RETRY" --circuit-status t
	expect_stderr "retry: circuit t: the record is corrupt; the next run starts it afresh"
	[ "${lines[2]}" = "failures:  0 in a row" ]
	cmp cut.tmp state/t
	: >state/t
	run -1 --separate-stderr "$RETRY" -n1 --circuit t false
	expect_stderr "retry: attempt 1/1 failed with exit 1; giving up: no attempts left"
	[ "$(rec t failures)" = 1 ]
}

@test "a corrupt record met by ten runs at once is reported by one of them" {
	mkdir state && chmod 700 state
	printf 'retry-circuit 1\nstate open\nfailures x\n' >state/many
	local i pids=()
	for i in {1..10}; do
		"$RETRY" -n1 --circuit many sh -c 'echo x >>"$0"' runs 2>"err.$i" 3>&- &
		pids+=("$!")
		later "$!"
	done
	for i in "${pids[@]}"; do
		wait "$i"
	done
	[ "$(wc -l <runs)" -eq 10 ]
	[ "$(cat err.* | grep -c 'the record was corrupt')" -eq 1 ]
	[ "$(cat err.* | wc -l)" -eq 1 ]
	[ "$(head -n 2 state/many | tail -n 1)" = "state closed" ]
}

# --- the breaker ---------------------------------------------------------

@test "--trip N failed attempts from several runs open the circuit" {
	fail_once br --trip 3 --cool 20s
	fail_once br --trip 3 --cool 20s
	run -0 "$RETRY" --circuit-status br
	[ "$output" = "circuit:   br
state:     closed
failures:  2 in a row
openings:  0 in a row
retries:   not counted: no run with --budget yet
runs:      2 of the last 100: 0 passed at once, 0 after retries, 2 failed
flakes:    not known: no run has passed yet
record:    $RETRY_STATE_DIR/br" ]
	fail_once br --trip 3 --cool 20s
	# Open: 75, as a run that meets it.
	run -75 "$RETRY" --circuit-status br
	[ "${#lines[@]}" -eq 8 ]
	[ "${lines[0]}" = "circuit:   br" ]
	# Equal jitter: the cool-down is within [10s, 20s].
	matches "${lines[1]}" '^state:     open, half-opens in ([0-9]+\.[0-9]{3})s$'
	between "$(ms "${BASH_REMATCH[1]}")" 8000 20000
	[ "${lines[2]}" = "failures:  3 in a row" ]
	[ "${lines[3]}" = "openings:  1 in a row" ]
	[ "$(sed -n 2p state/br)" = "state open" ]
}

@test "while open, a run whose deadline comes first exits 75 at once, running nothing" {
	fail_once op --trip 1 --cool 20s
	local start
	start=$(now_ms)
	run -75 --separate-stderr "$RETRY" --circuit op -D 3s touch ran
	[ $(($(now_ms) - start)) -lt 2500 ]
	[ "$output" = "" ]
	expect_stderr "retry: circuit op stays open past the deadline; giving up"
	[ ! -e ran ]
	# With -q only the status says it.
	run -75 --separate-stderr "$RETRY" -q --circuit op -D 1s touch ran
	[ "$stderr" = "" ]
	[ ! -e ran ]
	# A run that opens the circuit itself ends the same way at its next try.
	run -75 --separate-stderr "$RETRY" --circuit own --trip 1 --cool 20s \
	    -b 1ms -D 3s sh -c 'echo x >>"$0"; exit 1' log
	[ "$(wc -l <log)" -eq 1 ]
	[ "${stderr_lines[-1]}" = "retry: circuit own stays open past the deadline; giving up" ]
}

@test "--min-time: a run too late to start counts nothing in the circuit; a wait that would end in its last DUR ends the run (75)" {
	fail_once late
	fail_once late
	[ "$(rec late failures)" = 2 ]
	run -124 --separate-stderr "$RETRY" --circuit late -D 200ms \
	    --min-time 1s touch ran
	expect_stderr "retry: less than 1.000s left before the deadline; not starting"
	[ ! -e ran ]
	[ "$(rec late failures)" = 2 ]
	# Nor as a run: two runs counted, both the ones that ran.
	[ "$(awk '$1 == "runs" { print $2 }' "$RETRY_STATE_DIR/late")" = 2 ]
	# Open for 2 to 4 s: a deadline 3 s away would let a run wait for it,
	# but not with --min-time 2s, whatever the cool-down drew.
	fail_once late --trip 1 --cool 4s
	local start
	start=$(now_ms)
	run -75 --separate-stderr "$RETRY" --circuit late -D 3s --min-time 2s \
	    touch ran
	[ $(($(now_ms) - start)) -lt 1500 ]
	expect_stderr "retry: circuit late stays open past the deadline; giving up"
	[ ! -e ran ]
}

@test "after --trip N failures in a row no run starts another attempt" {
	local i rc
	for i in 1 2 3 4 5; do
		rc=0
		"$RETRY" -q -n3 -b 1ms -D 5s --circuit seq --trip 7 --cool 20s \
		    sh -c 'echo x >>"$0"; exit 1' log || rc=$?
		echo "$rc" >>statuses
	done
	[ "$(wc -l <log)" -eq 7 ]
	[ "$(tr '\n' ' ' <statuses)" = "1 1 75 75 75 " ]
	[ "$(rec seq failures)" = 7 ]
	[ "$(rec seq openings)" = 1 ]
}

@test "an open circuit that half-opens before the deadline: the run waits, probes, closes it" {
	fail_once w --trip 1 --cool 1s
	local at
	at=$(rec w half-open-at)
	run -0 --separate-stderr "$RETRY" -v -n1 -D 10s --circuit w \
	    sh -c 'clock-now -r -n >"$0"' child
	# It started no sooner than the record said.
	[ "$(cat child)" -ge "$at" ]
	matches "${stderr_lines[1]}" '^retry: circuit w is open; waiting ([0-9]+\.[0-9]{3})s$'
	between "$(ms "${BASH_REMATCH[1]}")" 0 1000
	run -0 "$RETRY" --circuit-status w
	[ "${lines[1]}" = "state:     closed" ]
	[ "${lines[2]}" = "failures:  0 in a row" ]
	[ "${lines[3]}" = "openings:  0 in a row" ]
}

# start_waiters NAME N FAILS [OPTION ...]: N runs in the background, each
# one attempt of count-runs (in dir "probe"; the first FAILS executions
# fail); pids in $pids.
start_waiters() {
	local i name=$1 n=$2 fails=$3
	shift 3
	mkdir -p probe
	pids=()
	for ((i = 1; i <= n; i++)); do
		CB_RECORD=$RETRY_STATE_DIR/$name "$RETRY" -v -n1 -D 10s \
		    --circuit "$name" "$@" count-runs probe "$fails" 0.2 \
		    2>"err.$i" 3>&- &
		pids+=("$!")
		later "$!"
	done
}

# collect: waits for the runs in $pids; their statuses, sorted, in $statuses.
collect() {
	local p rc
	statuses=()
	for p in "${pids[@]}"; do
		rc=0
		wait "$p" || rc=$?
		statuses+=("$rc")
	done
	statuses=($(printf '%s\n' "${statuses[@]}" | sort -n))
}

# field_of LINE N: the Nth word of line LINE of probe/log.
field_of() {
	sed -n "$1p" probe/log | cut -d' ' -f"$2"
}

@test "half-open: one probe among five waiting runs; its success closes the circuit" {
	fail_once h --trip 1 --cool 1s
	start_waiters h 5 0 --trip 1 --cool 1s
	collect
	[ "${statuses[*]}" = "0 0 0 0 0" ]
	# All five waited for the circuit.
	[ "$(grep -l 'circuit h is open; waiting' err.* | wc -l)" -eq 5 ]
	[ "$(wc -l <probe/log)" -eq 10 ]
	# The probe ran alone: its end comes before any other start.
	[ "$(sed -n 1p probe/log | cut -d' ' -f1-2)" = "start 1" ]
	[ "$(sed -n 2p probe/log | cut -d' ' -f1-2)" = "end 1" ]
	# The probe held the record while it ran.
	[ "$(sed -n 2p probe/record.1)" = "state half-open" ]
	[ "$(rec_at probe/record.1 openings)" = 1 ]
	[ "$(rec_at probe/record.1 probe)" -gt 0 ]
	# It started no sooner than the circuit half-opened.
	[ "$(field_of 1 3)" -ge "$(rec_at probe/record.1 half-open-at)" ]
	# Once it had closed the circuit, the others ran.
	[ "$(sed -n 2p probe/record.2)" = "state closed" ]
	run -0 "$RETRY" --circuit-status h
	[ "${lines[1]}" = "state:     closed" ]
	[ "${lines[2]}" = "failures:  0 in a row" ]
	[ "${lines[3]}" = "openings:  0 in a row" ]
}

@test "half-open: a failed probe opens the circuit again, for twice the cool-down" {
	run -1 "$RETRY" -q -n1 --circuit h2 --trip 1 --cool 300ms --cap 5s \
	    sh -c 'clock-now -r -n >"$0"; exit 1' failed
	start_waiters h2 5 1 --trip 1 --cool 300ms --cap 5s
	collect
	# The first probe failed; its run had no attempts left.
	[ "${statuses[*]}" = "0 0 0 0 1" ]
	[ "$(wc -l <probe/log)" -eq 10 ]
	# Each probe ran alone.
	[ "$(sed -n 1,4p probe/log | cut -d' ' -f1-2 | tr '\n' ,)" = "start 1,end 1,start 2,end 2," ]
	# The first opening: a cool-down within [150, 300] ms of the failure.
	[ "$(rec_at probe/record.1 openings)" = 1 ]
	between $((($(rec_at probe/record.1 half-open-at) - $(cat failed)) / 1000000)) 150 500
	# The second: openings 2, within [300, 600] ms of the probe's failure.
	[ "$(sed -n 2p probe/record.2)" = "state half-open" ]
	[ "$(rec_at probe/record.2 openings)" = 2 ]
	[ "$(rec_at probe/record.2 failures)" = 2 ]
	local end1 at2
	end1=$(field_of 2 3)
	at2=$(rec_at probe/record.2 half-open-at)
	between $(((at2 - end1) / 1000000)) 300 800
	# The second probe waited for it.
	[ $((($(field_of 3 3) - end1) / 1000000)) -ge 299 ]
	run -0 "$RETRY" --circuit-status h2
	[ "${lines[1]}" = "state:     closed" ]
	[ "${lines[3]}" = "openings:  0 in a row" ]
}

@test "a probe's end waits for the record another run has locked, and still counts as the probe's: the circuit opens again" {
	run -1 "$RETRY" -q -n1 --circuit hl --trip 1 --cool 1ms false
	sleep 0.01	# past the cool-down: the next run probes
	"$RETRY" -n1 --circuit hl --trip 1 --cool 1h sh -c '
		touch started; until [ -e go ]; do sleep 0.01; done; exit 1' \
	    2>probe.err &
	local probe=$! holder
	later "$probe"
	wait_for started
	# Byte 0 alone, the change's: byte 1 is the probe's, held by it.
	hold-lock "$RETRY_STATE_DIR/.hl.lock" ready 0 &
	holder=$!
	later "$holder"
	wait_for ready
	touch go
	sleep 0.2	# the probe's run now waits for the lock
	alive "$probe"
	kill -TERM "$holder"
	wait "$holder" || true
	local st=0
	wait "$probe" || st=$?
	[ "$st" -eq 1 ]
	grep -qx 'retry: circuit hl opened after 2 failures in a row' probe.err
	[ "$(rec hl state)" = open ]
	[ "$(rec hl openings)" = 2 ]
	[ "$(rec hl probe)" = 0 ]
	! grep -q '^probe-group' "$RETRY_STATE_DIR/hl" || false
}

@test "the cool-down doubles per opening in a row, up to --cap" {
	local round at
	# (bats 1.8's run clobbers a variable named i.)
	for round in 1 2 3 4; do
		# Each failure after the first is a probe's: it opens again.
		run -1 "$RETRY" -q -n1 -D 10s --circuit dbl --trip 1 --cool 200ms \
		    --cap 1s sh -c 'clock-now -r -n >"$0"; exit 1' failed
		at=$(rec dbl half-open-at)
		echo $(((at - $(cat failed)) / 1000000)) >>cools
		[ "$(rec dbl openings)" = "$round" ]
	done
	# [100, 200], [200, 400], [400, 800], then cut to the cap: [500, 1000].
	local c=($(cat cools))
	between "${c[0]}" 100 300
	between "${c[1]}" 200 500
	between "${c[2]}" 400 900
	between "${c[3]}" 500 1100
}

@test "any success closes the circuit and resets the failures" {
	fail_once ok --trip 3
	fail_once ok --trip 3
	[ "$(rec ok failures)" = 2 ]
	run -0 "$RETRY" --circuit ok true
	[ "$(rec ok failures)" = 0 ]
	fail_once ok --trip 3
	fail_once ok --trip 3
	[ "$(sed -n 2p state/ok)" = "state closed" ]
	# A retry that succeeds counts as well.
	run -0 "$RETRY" -q --circuit ok -b 1ms -j none flaky st 1
	[ "$(rec ok failures)" = 0 ]
}

@test "--circuit-status after a run with --budget that needed no retry counts its budget" {
	run -0 "$RETRY" --circuit nb --budget 5/1m true
	run -0 "$RETRY" --circuit-status nb
	[ "${lines[4]}" = "retries:   0 in the last 60.000s (budget 5)" ]
}

@test "--circuit-reset clears the record; --circuit-status shows every field" {
	run -75 "$RETRY" -q -n3 -b 1ms -D 3s --circuit rs --trip 2 --cool 20s \
	    --budget 5/1m false
	run -75 --separate-stderr "$RETRY" --circuit-status rs
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 8 ]
	[ "${lines[0]}" = "circuit:   rs" ]
	matches "${lines[1]}" '^state:     open, half-opens in [0-9]+\.[0-9]{3}s$'
	[ "${lines[2]}" = "failures:  2 in a row" ]
	[ "${lines[3]}" = "openings:  1 in a row" ]
	[ "${lines[4]}" = "retries:   1 in the last 60.000s (budget 5)" ]
	run -0 --separate-stderr "$RETRY" --circuit-reset rs
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	run -0 "$RETRY" --circuit-status rs
	[ "$output" = "circuit:   rs
state:     closed
failures:  0 in a row
openings:  0 in a row
retries:   not counted: no run with --budget yet
runs:      none counted yet
flakes:    not known: no run has passed yet
record:    $RETRY_STATE_DIR/rs" ]
	run -0 "$RETRY" -D 1s --circuit rs touch ran
	[ -e ran ]
	# Reset of a name never used makes an empty record.
	run -0 "$RETRY" --circuit-reset fresh
	[ -f state/fresh ]
}

@test "--circuit-status: open past its cool-down, and half-open with its probe" {
	fail_once st --trip 1 --cool 100ms
	sleep 0.2
	run -75 "$RETRY" --circuit-status st
	[ "${lines[1]}" = "state:     open, half-opens at the next attempt" ]
	"$RETRY" -n1 --circuit st sh -c 'touch "$0"; sleep 5' begun 3>&- &
	local pid=$!
	later "$pid"
	wait_for begun
	run -75 "$RETRY" --circuit-status st
	[ "${lines[1]}" = "state:     half-open, probed by process $pid" ]
	kill -TERM "$pid"
	wait "$pid" || true
}

@test "while another run probes, a waiting run gives up at its deadline (75)" {
	fail_once pb --trip 1 --cool 50ms
	sleep 0.1
	"$RETRY" -n1 --circuit pb sh -c 'touch "$0"; sleep 5' begun 3>&- &
	local pid=$! start
	later "$pid"
	wait_for begun
	start=$(now_ms)
	run -75 --separate-stderr "$RETRY" --circuit pb -D 500ms touch ran
	# It looked again every 50-150 ms, and gave up before the deadline.
	between $(($(now_ms) - start)) 300 2500
	# The wait was said once as it began, however many looks it took.
	expect_stderr "retry: circuit pb is half-open; another run probes it; waiting
retry: circuit pb stays open past the deadline; giving up"
	[ ! -e ran ]
	kill -TERM "$pid"
	wait "$pid" || true
}

@test "a probe whose run is gone is taken over by the next run" {
	fail_once gone --trip 1 --cool 50ms
	sleep 0.1
	"$RETRY" -n1 --circuit gone sh -c 'echo $$ >"$0"; exec sleep 5' child 3>&- &
	local pid=$!
	later "$pid"
	wait_for child
	kill -KILL "$pid"
	wait "$pid" || true
	# The parent-death signal may have ended the child already, and an
	# init that reaps at once (a PID namespace's) leaves no process to
	# signal then: the child gone is what counts, whoever ended it.
	local child
	child=$(cat child)
	kill -KILL "$child" 2>/dev/null || true
	gone "$child"
	[ "$(rec gone probe)" = "$pid" ]
	local start
	start=$(now_ms)
	run -0 "$RETRY" -D 5s --circuit gone touch ran
	[ $(($(now_ms) - start)) -lt 4000 ]
	[ -e ran ]
	[ "$(sed -n 2p state/gone)" = "state closed" ]
}

# start_of PID: when PID started, in clock ticks since boot (field 22 of
# /proc/PID/stat, counted after the command's name).
start_of() {
	local line
	line=$(cat "/proc/$1/stat") || return 1
	echo "${line##*) }" | cut -d' ' -f20
}

# half_open_with_group NAME PGID SID START HOST: a record of NAME, half-open,
# whose probe (a process that is gone) left the group PGID on HOST.
half_open_with_group() {
	mkdir -p state
	printf 'retry-circuit 1\nstate half-open\nfailures 1\nopenings 1\nhalf-open-at 1\nprobe 1\nbudget 0 0\nretries 0\nruns 0\nprobe-group %s %s %s %s\n' \
	    "$2" "$3" "$4" "$5" >"state/$1"
}

# sleeper: a sleep 30 in a session and process group of its own, its pid
# in $sleeper (killed in teardown), once setsid(2) has made them.
sleeper() {
	local n=0
	setsid sleep 30 3>&- &
	sleeper=$!
	later "$sleeper"
	until [ "$(proc-state "$sleeper" pgid 2>/dev/null)" = "$sleeper" ]; do
		[ "$n" -ge 500 ] && return 1
		sleep 0.01
		n=$((n + 1))
	done
}

@test "a probe killed with SIGKILL: the run that takes it over ends what its attempt left, then probes alone" {
	fail_once left --trip 1 --cool 50ms
	sleep 0.1
	# The probe's attempt: a shell and two sleeps in its group.
	"$RETRY" -n1 --circuit left sh -c 'sleep 30 & echo $! >>"$0"
	    sleep 30 & echo $! >>"$0"; echo $$ >leader.new; mv leader.new leader
	    wait' pids 3>&- &
	local pid=$! p leader
	later "$pid"
	wait_for leader
	for p in $(cat pids); do later "$p"; done
	leader=$(cat leader)
	cp state/left record.before
	# Not reaped yet, so its pid is not given again: a plain kill is safe.
	kill -KILL "$pid"
	wait "$pid" || true
	# The next run: before its attempt starts, none of the old one runs.
	run -0 --separate-stderr "$RETRY" -n1 --circuit left sh -c '
	    for p in $(cat pids); do
	        s=$(proc-state "$p" state) && [ "$s" != Z ] && echo "$p" >>"$0"
	    done; true' running
	[ ! -e running ]
	# The record named the old attempt's group.
	[ "$(rec_at record.before probe-group)" = "$leader" ]
	# Two sleeps, and the shell if the parent-death signal had not ended
	# it yet.
	matches "${stderr_lines[0]}" "^retry: circuit left: process $pid, its probe, is gone; ended the [23] processes its attempt left$"
	[ "${stderr_lines[1]}" = "retry: circuit left is half-open; this run probes it" ]
	[ "${stderr_lines[2]}" = "retry: circuit left is closed again" ]
	for p in $(cat pids) "$leader"; do gone "$p"; done
	# The group is no one's now.
	[ -z "$(rec left probe-group)" ]
}

@test "a recorded probe group is signalled only when its leader's start time and host match (a reused PID is not)" {
	local host start
	host=$(uname -n)
	sleeper
	start=$(start_of "$sleeper")
	# Its number, given again to a process that started at another time.
	half_open_with_group reused "$sleeper" "$sleeper" $((start + 1)) "$host"
	run -0 --separate-stderr "$RETRY" -n1 --circuit reused true
	expect_stderr "retry: circuit reused is half-open; this run probes it
retry: circuit reused is closed again"
	alive "$sleeper"
	# The same group, of another host.
	half_open_with_group reused "$sleeper" "$sleeper" "$start" other-host
	run -0 --separate-stderr "$RETRY" -n1 --circuit reused true
	alive "$sleeper"
	# The group as it was marked: ended.
	half_open_with_group reused "$sleeper" "$sleeper" "$start" "$host"
	run -0 --separate-stderr "$RETRY" -n1 --circuit reused true
	expect_stderr "retry: circuit reused: process 1, its probe, is gone; ended the 1 process its attempt left
retry: circuit reused is half-open; this run probes it
retry: circuit reused is closed again"
	gone "$sleeper"
}

@test "a recorded probe group whose leader is gone is signalled only when none of it started before the leader" {
	local host member start
	host=$(uname -n)
	# A group whose leader exits, leaving a sleep in it.
	setsid sh -c 'sleep 30 & echo $! >member.new; mv member.new member' 3>&- &
	local leader=$!
	wait_for member
	member=$(cat member)
	later "$member"
	wait "$leader" || true
	[ "$(proc-state "$member" pgid)" = "$leader" ]
	start=$(start_of "$member")
	# Started before the leader that the record names: another group.
	half_open_with_group orphan "$leader" "$leader" $((start + 1)) "$host"
	run -0 --separate-stderr "$RETRY" -n1 --circuit orphan true
	expect_stderr "retry: circuit orphan is half-open; this run probes it
retry: circuit orphan is closed again"
	alive "$member"
	# Of another session: another group.
	half_open_with_group orphan "$leader" 1 "$start" "$host"
	run -0 "$RETRY" -n1 --circuit orphan true
	alive "$member"
	half_open_with_group orphan "$leader" "$leader" "$start" "$host"
	run -0 --separate-stderr "$RETRY" -n1 --circuit orphan true
	[ "${stderr_lines[0]}" = "retry: circuit orphan: process 1, its probe, is gone; ended the 1 process its attempt left" ]
	gone "$member"
}

# --- the shared budget ---------------------------------------------------

# fifty NAME [OPTION ...]: 50 runs at once of a child that logs "RUN
# ATTEMPT" to "log" and fails.  Sets statuses[I], last[I] (the last line of
# run I's stderr) and tried[I] (its attempts), for I in 1..50.
fifty() {
	local name=$1 run_ p line
	shift
	local pids=()
	for run_ in {1..50}; do
		"$RETRY" --circuit "$name" "$@" -n5 -b 1ms \
		    sh -c 'echo "$1 $RETRY_ATTEMPT" >>"$0"; exit 1' log "$run_" \
		    2>"err.$run_" 3>&- &
		pids+=("$!")
		later "$!"
	done
	statuses=() last=() tried=()
	for run_ in {1..50}; do
		p=0
		wait "${pids[run_ - 1]}" || p=$?
		statuses[run_]=$p
		tried[run_]=0
		last[run_]=
		while IFS= read -r line; do
			last[run_]=$line
		done <"err.$run_"
	done
	while read -r run_ p; do
		tried[run_]=$((tried[run_] + 1))
	done <log
}

@test "50 runs at once share a budget: at most 50 first attempts + N retries, counted exactly" {
	local start
	start=$(now_ms)
	fifty bud --trip 100000 --budget 10/1m -D 10s
	[ $(($(now_ms) - start)) -lt 25000 ]
	local total k
	total=$(wc -l <log)
	# Shown when the test fails.
	for k in {1..50}; do
		echo "run $k: status ${statuses[k]}, ${tried[k]} attempts, ${last[k]}"
	done
	[ "$total" -le 60 ]
	# First attempts are never held back: every run ran once.
	[ "$(grep -c ' 1$' log)" -eq 50 ]
	[ "$(grep ' 1$' log | cut -d' ' -f1 | sort -u | wc -l)" -eq 50 ]
	# No lost update: the record counts every retry and every failure.
	[ "$(rec bud retries)" -eq $((total - 50)) ]
	[ "$(rec bud retries)" -eq 10 ]
	[ "$(rec bud failures)" -eq "$total" ]
	[ "$(awk '$1 == "retries" { print NF - 2 }' state/bud)" -eq 10 ]
	# Each run ends with its last status, and says why.
	for k in {1..50}; do
		[ "${statuses[k]}" = 1 ]
		[ "${tried[k]}" -ge 1 ]
		if [ "${tried[k]}" -lt 5 ]; then
			[ "${last[k]}" = "retry: the retry budget of circuit bud stays spent past the deadline; giving up" ]
		fi
	done
	run -0 "$RETRY" --circuit-status bud
	[ "${lines[4]}" = "retries:   10 in the last 60.000s (budget 10)" ]
}

@test "50 runs at once with a breaker and a budget: attempts within both, counted exactly" {
	fifty both --trip 20 --cool 1m --budget 10/1m -D 10s
	local total k opened=0
	total=$(wc -l <log)
	[ "$total" -le 60 ]
	[ "$(rec both failures)" -eq "$total" ]
	[ "$(rec both retries)" -le 10 ]
	[ "$(sed -n 2p state/both)" = "state open" ]
	[ "$(rec both openings)" = 1 ]
	for k in {1..50}; do
		case ${statuses[k]} in
		75)	opened=$((opened + 1))
			[ "${last[k]}" = "retry: circuit both stays open past the deadline; giving up" ] ;;
		1)	matches "${last[k]}" "^retry: (attempt ${tried[k]}/5 failed with exit 1; giving up: no attempts left|the retry budget of circuit both stays spent past the deadline; giving up)\$" ;;
		*)	echo "run $k exited ${statuses[k]}"; false ;;
		esac
	done
	[ "$opened" -ge 1 ]
}

@test "a run that finds the budget spent past its deadline gives up with its last status" {
	"$RETRY" -q -n2 -b 1ms --circuit sp --budget 1/1m false || true
	[ "$(rec sp retries)" = 1 ]
	local start
	start=$(now_ms)
	run -3 --separate-stderr "$RETRY" -v -n3 -b 1ms -j none -D 10s \
	    --circuit sp --budget 1/1m sh -c 'echo x >>"$0"; exit 3' log
	[ $(($(now_ms) - start)) -lt 5000 ]
	# Its first attempt was not held back; the retry was.
	[ "$(wc -l <log)" -eq 1 ]
	# The attempt is said once, and no wait past the deadline is promised.
	[ "${stderr_lines[1]}" = "retry: attempt 1/3 failed with exit 3; next in 0.001s" ]
	[ "${stderr_lines[3]}" = "retry: the retry budget of circuit sp stays spent past the deadline; giving up" ]
	[ "${#stderr_lines[@]}" -eq 5 ]
	[[ $stderr != *waiting* ]]
	[ "$(rec sp retries)" = 1 ]
}

@test "a run whose budget frees within its deadline waits, then retries" {
	"$RETRY" -q -n2 -b 1ms --circuit fr --budget 1/500ms \
	    sh -c 'echo "A $(clock-now -r -n)" >>"$0"; exit 1' log || true
	run -1 --separate-stderr "$RETRY" -v -n2 -b 1ms -D 10s --circuit fr \
	    --budget 1/500ms sh -c 'echo "B $(clock-now -r -n)" >>"$0"; exit 1' log
	[ "$(grep -c '^A' log)" -eq 2 ]
	[ "$(grep -c '^B' log)" -eq 2 ]
	local said
	said=$(grep 'retry budget of circuit fr spent; waiting' <<<"$stderr")
	matches "$said" '^retry: retry budget of circuit fr spent; waiting ([0-9]+\.[0-9]{3})s$'
	# Until A's retry leaves the window, plus up to a tenth of it.
	between "$(ms "${BASH_REMATCH[1]}")" 0 550
	local a2 b2
	a2=$(grep '^A' log | sed -n 2p | cut -d' ' -f2)
	b2=$(grep '^B' log | sed -n 2p | cut -d' ' -f2)
	[ $(((b2 - a2) / 1000000)) -ge 450 ]
	[ "${stderr_lines[-2]}" = "retry: attempt 2/2 failed with exit 1; giving up: no attempts left" ]
}

@test "a retry that must wait for the budget does not hold the probe: a first attempt of another run probes meanwhile" {
	"$RETRY" -v -n2 -b 1ms -j none --budget 1/1m --circuit bp sh -c '
		[ "$RETRY_ATTEMPT" = 1 ] || exit 1
		touch started; until [ -e go ]; do sleep 0.02; done; exit 1' \
	    2>err 3>&- &
	local a=$!
	later "$a"
	wait_for started
	# Meanwhile the circuit opened, is due to half-open, and the budget
	# is spent: its retry would probe, but must wait for the budget.
	printf 'retry-circuit 1\nstate open\nfailures 5\nopenings 1\nhalf-open-at 1\nprobe 0\nbudget 1 60000000000\nretries 1 %s\n' \
	    "$(now_ns)" >state/bp
	touch go
	wait_for_text err 'retry budget of circuit bp spent; waiting'
	run -75 "$RETRY" --circuit-status bp
	[ "${lines[1]}" = "state:     open, half-opens at the next attempt" ]
	run -0 --separate-stderr "$RETRY" -D 2s --circuit bp touch ran
	[ -e ran ]
	[ "$(rec bp state)" = closed ]
	kill -TERM "$a"
	wait "$a" || true
}

# --- a budget in proportion to the traffic, a trip on a ratio (issue 32) ---

@test "--budget 20%/1m --budget-min 0: 200 runs whose first attempts fail make at most 40 retries, and at least 38" {
	share_herd 200 3s
	herd_ends
	echo "first attempts $(grep -c '^1$' attempts), retries $(grep -c '^2$' attempts)"
	[ "$(grep -c '^1$' attempts)" -eq 200 ]
	between "$(grep -c '^2$' attempts)" 38 40
	# The record counts them all, and what allowed them.
	[ "$(rec herd retries)" -le 40 ]
	run -0 "$RETRY" --circuit-status herd
	matches "${lines[4]}" '^retries:   (38|39|40) of 40 allowed \(20% of 200 first attempts \+ 0\)$'
}

@test "--budget 20%/1m: runs SIGKILLed at random moments while the others retry never make the retries pass 40" {
	share_herd 200 1s
	herd_kills 30 1.5
	herd_ends
	echo "first attempts $(grep -c '^1$' attempts), retries $(grep -c '^2$' attempts)"
	[ "$(grep -c '^1$' attempts)" -eq 200 ]
	[ "$(grep -c '^2$' attempts)" -le 40 ]
	# The record is whole: a status reads it, not corrupt.
	run -0 --separate-stderr "$RETRY" --circuit-status herd
	[ "$stderr" = "" ]
	[ "$(rec herd retries)" -le 40 ]
}

@test "--budget P%/DUR: a quiet job still retries, --budget-min times (3); a run's first attempt is never held back" {
	run -1 --separate-stderr "$RETRY" -n 10 -b 1ms -j none -D 5s --circuit q \
	    --budget 20%/1m sh -c 'echo x >>"$0"; exit 1' log
	# 1 first attempt allows 20% of 1, none, plus 3.
	[ "$(wc -l <log)" -eq 4 ]
	[ "${stderr_lines[-1]}" = "retry: the retry budget of circuit q stays spent past the deadline; giving up" ]
	run -0 "$RETRY" --circuit-status q
	[ "${lines[4]}" = "retries:   3 of 3 allowed (20% of 1 first attempt + 3)" ]
	# Four more runs: 5 first attempts, 20% of them 1 more retry.
	for k in 1 2 3 4; do
		"$RETRY" -q -n 1 --circuit q --budget 20%/1m true
	done
	run -0 "$RETRY" --circuit-status q
	[ "${lines[4]}" = "retries:   3 of 4 allowed (20% of 5 first attempts + 3)" ]
	run -1 "$RETRY" -q -n 3 -b 1ms -D 5s --circuit q --budget 20%/1m \
	    sh -c 'echo y >>"$0"; exit 1' log2
	[ "$(wc -l <log2)" -eq 2 ]
	# JSON: what makes the allowance.
	run -0 "$RETRY" --circuit-status q --report s.json
	grep -qF '"budget": {"retries": 4, "limit": 4, "window": 60.000000, "percent": 20, "first_attempts": 6, "min": 3}' s.json
}

# flap NAME TRIP RUNS: RUNS runs of one attempt each, one after the other,
# of a downstream that fails every third call, under --trip TRIP; their
# statuses, one a line, in "statuses" (75: the circuit stays open past
# the run's deadline).
flap() {
	local k st
	: >statuses
	for ((k = 0; k < $3; k++)); do
		st=0
		"$RETRY" -q -n 1 -D 2s --circuit "$1" --trip "$2" --cool 1m \
		    -- sh -c '
			n=$(($(cat calls 2>/dev/null || echo 0) + 1))
			echo "$n" >calls
			[ $((n % 3)) -ne 0 ]' || st=$?
		echo "$st" >>statuses
	done
}

@test "a downstream that fails every third call: --trip 5 never opens; --trip 30%/12 opens on the 12th call, once 12 were seen" {
	flap five 5 30
	[ "$(cat calls)" -eq 30 ]
	run -0 "$RETRY" --circuit-status five
	[ "${lines[1]}" = "state:     closed" ]
	rm calls
	flap ratio 30%/12 20
	# Calls 3, 6, 9 and 12 fail: 4 of 12 is 33%.  The 12th opens it, and
	# no call follows.
	[ "$(cat calls)" -eq 12 ]
	[ "$(sed -n 12p statuses)" = 1 ]
	[ "$(sed -n 13p statuses)" = 75 ]
	run -75 "$RETRY" --circuit-status ratio
	[ "${lines[2]}" = "failures:  4 of the last 12 (trips at 30%)" ]
	[ "$(rec ratio openings)" = 1 ]
	[ "$(awk '$1 == "marks" { print $3 }' state/ratio)" = 001001001001 ]
}

@test "--trip P%/M: the opening says the share; fewer than M seen do not trip; the probe's success closes and the marks start afresh" {
	run -1 --separate-stderr "$RETRY" -n 6 -b 1ms -j none --circuit r \
	    --trip 50%/6 --cool 100ms -- false
	# All failed, but only the 6th is the 6th seen.
	expect_stderr "retry: attempt 1/6 failed with exit 1; next in 0.001s
retry: attempt 2/6 failed with exit 1; next in 0.002s
retry: attempt 3/6 failed with exit 1; next in 0.004s
retry: attempt 4/6 failed with exit 1; next in 0.008s
retry: attempt 5/6 failed with exit 1; next in 0.016s
retry: circuit r opened: 6 of the last 6 attempts failed
retry: attempt 6/6 failed with exit 1; giving up: no attempts left"
	run -75 "$RETRY" --circuit-status r
	[ "${lines[2]}" = "failures:  6 of the last 6 (trips at 50%)" ]
	sleep 0.2
	run -0 --separate-stderr "$RETRY" -n 1 -D 5s --circuit r \
	    --trip 50%/6 --cool 100ms -- true
	expect_stderr "retry: circuit r is half-open; this run probes it
retry: circuit r is closed again"
	run -0 "$RETRY" --circuit-status r
	[ "${lines[2]}" = "failures:  none seen yet (trips at 50% of the last 6)" ]
	[ "$(awk '$1 == "marks"' state/r)" = "" ]
	# JSON: the trip.
	run -1 "$RETRY" -q -n 1 --circuit r --trip 50%/6 -- false
	run -0 "$RETRY" --circuit-status r --report s.json
	grep -qF '"trip": {"percent": 50, "of_last": 6, "seen": 1, "failed": 1}' s.json
}

@test "records of 0.3 are read as they are, and gain the new lines only when a run needs them" {
	mkdir -m 700 state
	printf 'retry-circuit 1\nstate closed\nfailures 2\nopenings 0\nhalf-open-at 0\nprobe 0\nbudget 0 0\nretries 0\nruns 2 pf\n' >state/old
	cp state/old state/kept
	run -0 --separate-stderr "$RETRY" -n 1 --circuit kept true
	[ "$stderr" = "" ]
	[ "$(sed -n 3p state/kept)" = "failures 0" ]
	! grep -qE '^(share|firsts|trip|marks) ' state/kept || false
	run -1 --separate-stderr "$RETRY" -n 1 --circuit old --trip 30%/10 \
	    --budget 20%/1m false
	[ "$stderr" = "retry: attempt 1/1 failed with exit 1; giving up: no attempts left" ]
	[ "$(sed -n 3p state/old)" = "failures 3" ]
	[ "$(rec old share)" = 20 ]
	[ "$(rec old trip)" = 30 ]
	[ "$(awk '$1 == "marks" { print $3 }' state/old)" = 1 ]
	[ "$(awk '$1 == "runs" { print $3 }' state/old)" = pff ]
}

# --- signals and deadlines during the waits ------------------------------

# term_during_wait REGEX: with retry started in the background as $pid
# (stderr in err), waits until err matches REGEX, sends SIGTERM and
# checks that retry ends at once with 143.
term_during_wait() {
	wait_for_text err "$1"
	local start rc=0
	start=$(now_ms)
	kill -TERM "$pid"
	gone "$pid" 200
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ]
	[ $(($(now_ms) - start)) -lt 1500 ]
}

@test "SIGTERM while waiting for an open circuit ends retry at once: 143, nothing run" {
	fail_once tw --trip 1 --cool 20s
	"$RETRY" -v -D 30s --circuit tw touch ran 2>err 3>&- &
	pid=$!
	later "$pid"
	term_during_wait 'circuit tw is open; waiting'
	[ ! -e ran ]
	[ "$(sed -n 3p err)" = "retry: interrupted by SIGTERM before the first attempt" ]
	[ "$(wc -l <err)" -eq 4 ]
	[ "$(rec tw failures)" = 1 ]
}

@test "SIGTERM while waiting for the budget ends retry at once: 143, no retry" {
	"$RETRY" -q -n2 -b 1ms --circuit tb --budget 1/20s false || true
	"$RETRY" -v -b 1ms -D 30s --circuit tb --budget 1/20s \
	    sh -c 'echo x >>"$0"; exit 1' log 2>err 3>&- &
	pid=$!
	later "$pid"
	term_during_wait 'retry budget of circuit tb spent; waiting'
	[ "$(wc -l <log)" -eq 1 ]
}

@test "SIGTERM during the splay ends retry at once: 143, nothing run" {
	"$RETRY" -v --splay 1h touch ran 2>err 3>&- &
	pid=$!
	later "$pid"
	term_during_wait 'splay: '
	[ ! -e ran ]
	[ "$(sed -n 3p err)" = "retry: interrupted by SIGTERM before the first attempt" ]
	[ "$(wc -l <err)" -eq 4 ]
}

@test "a run waits for the record's lock, and goes on when its holder dies" {
	"$RETRY" --circuit lk true
	hold_lock state/.lk.lock 100
	"$RETRY" --circuit lk touch ran 3>&- &
	pid=$!
	later "$pid"
	sleep 0.5
	[ ! -e ran ]
	alive "$pid"
	kill -KILL "$holder"
	wait "$holder" 2>/dev/null || true
	gone "$pid" 300
	wait "$pid"
	[ -e ran ]
}

@test "an attempt stopped at the deadline counts when the record's lock frees within 100 ms past it" {
	fail_once dl
	local start wake rc=0
	start=$(now_ms)
	"$RETRY" -n1 -D 1s --circuit dl sh -c 'touch started; sleep 30' \
	    2>err 3>&- &
	local r=$!
	later "$r"
	wait_for started
	hold_lock state/.dl.lock
	# Held over the deadline, let go 30 ms past it.
	wake=$((start + 1030))
	while [ "$(now_ms)" -lt "$wake" ]; do
		sleep 0.01
	done
	kill -KILL "$holder"
	wait "$r" || rc=$?
	[ "$rc" -eq 124 ]
	[ "$(cat err)" = "retry: attempt 1/1 timed out at the deadline; giving up" ]
	[ "$(rec dl failures)" = 2 ]
}

@test "the deadline bounds a wait for the record's lock: 124, no attempt" {
	"$RETRY" --circuit lt true
	hold_lock state/.lt.lock 100
	local start rc=0
	start=$(now_ms)
	"$RETRY" -D 300ms --circuit lt touch ran 2>err 3>&- || rc=$?
	local elapsed=$(($(now_ms) - start))
	kill -KILL "$holder"
	wait "$holder" 2>/dev/null || true
	[ "$rc" -eq 124 ]
	[ ! -e ran ]
	[ "$elapsed" -lt 3000 ]
}

# --- usage ---------------------------------------------------------------

@test "--trip, --cool, --budget and --budget-min without --circuit are usage errors" {
	local opt
	for opt in '--trip 3' '--trip 30%/10' '--cool 1s' '--budget 5/1s' \
	    '--budget 20%/1m' '--budget-min 2'; do
		run -125 --separate-stderr "$RETRY" $opt touch ran
		[ "$output" = "" ]
		expect_stderr "retry: --trip, --cool, --budget and --budget-min need --circuit"
		run -125 --separate-stderr "$RETRY" $opt --circuit-status x
		expect_stderr "retry: --trip, --cool, --budget and --budget-min need --circuit"
	done
	[ ! -e ran ]
}

@test "--trip 5 and --cool 30s (the defaults, given) without --circuit are usage errors too" {
	local opt
	for opt in '--trip 5' '--cool 30s'; do
		run -125 --separate-stderr "$RETRY" $opt touch ran
		expect_stderr "retry: --trip, --cool, --budget and --budget-min need --circuit"
	done
	[ ! -e ran ]
}

@test "bad --budget, --trip and --cool values are usage errors" {
	local b
	for b in 0/1s x/1s 1001/1s /1s; do
		run -125 --separate-stderr "$RETRY" --circuit x --budget "$b" touch ran
		expect_stderr "retry: --budget '$b': invalid budget (N/DUR, N from 1 to 1000)"
	done
	for b in 5/ 5/0s 5/x; do
		run -125 --separate-stderr "$RETRY" --circuit x --budget "$b" touch ran
		expect_stderr "retry: --budget '$b': invalid budget (N/DUR)"
	done
	for b in 5 5% 20; do
		run -125 --separate-stderr "$RETRY" --circuit x --budget "$b" touch ran
		expect_stderr "retry: --budget '$b': invalid budget (N/DUR or P%/DUR)"
	done
	for b in 0%/1s 1001%/1s x%/1s %/1s; do
		run -125 --separate-stderr "$RETRY" --circuit x --budget "$b" touch ran
		expect_stderr "retry: --budget '$b': invalid budget (P%/DUR, P from 1 to 1000)"
	done
	for b in 20%/ 20%/0 20%/x; do
		run -125 --separate-stderr "$RETRY" --circuit x --budget "$b" touch ran
		expect_stderr "retry: --budget '$b': invalid budget (P%/DUR)"
	done
	for b in -1 1001 x; do
		run -125 --separate-stderr "$RETRY" --circuit x --budget 20%/1m \
		    --budget-min "$b" touch ran
		expect_stderr "retry: --budget-min '$b': invalid number (0 to 1000)"
	done
	# A floor of a share: not of a fixed budget, nor of none.
	for b in '--budget 5/1m' ''; do
		run -125 --separate-stderr "$RETRY" --circuit x $b --budget-min 2 \
		    touch ran
		expect_stderr "retry: --budget-min needs --budget P%/DUR: a floor of retries for a budget in proportion to the first attempts"
	done
	for b in 0%/10 101%/10 30%/4 30%/101 30/10 30%/x 30%10 %/10; do
		run -125 --separate-stderr "$RETRY" --circuit x --trip "$b" touch ran
		expect_stderr "retry: --trip '$b': invalid trip (N, or P%/M with P from 1 to 100 and M from 5 to 100)"
	done
	run -125 --separate-stderr "$RETRY" --circuit x --trip 0 touch ran
	expect_stderr "retry: --trip '0': must be greater than 0"
	run -125 --separate-stderr "$RETRY" --circuit x --cool 0 touch ran
	expect_stderr "retry: --cool '0': must be greater than 0"
	run -125 --separate-stderr "$RETRY" --splay x touch ran
	expect_stderr "retry: --splay 'x': invalid duration (a number and a unit, ms, s, m or h, or several, as in 1m30s)"
	[ ! -e ran ]
	[ ! -e state ]
	run -0 "$RETRY" --circuit x --budget 1000/1s true
	run -0 "$RETRY" --circuit x --budget 1000%/1s --budget-min 1000 \
	    --trip 100%/100 true
	run -0 "$RETRY" --circuit x --budget 1%/1ms --budget-min 0 --trip 1%/5 true
}

# --- what a run says of the circuit, the status, the flake count (issue 22) ---

@test "a circuit that opens mid-run is said once, with its count; a probe that succeeds closes it again" {
	run -75 --separate-stderr "$RETRY" -n5 -b 1ms -j none -D 2s --circuit mid \
	    --trip 2 --cool 20s --report r.json false
	expect_stderr "retry: attempt 1/5 failed with exit 1; next in 0.001s
retry: circuit mid opened after 2 failures in a row
retry: attempt 2/5 failed with exit 1; next in 0.002s
retry: circuit mid stays open past the deadline; giving up"
	matches "$(tr -d '\n' <r.json)" '"changes": \[\{"at": [0-9.]+, "change": "opened"\}\]'
	# Half-open: this run probes, and its success closes the circuit.
	printf 'retry-circuit 1\nstate open\nfailures 2\nopenings 1\nhalf-open-at 1\nprobe 0\nbudget 0 0\nretries 0\nruns 0\n' >state/mid
	run -0 --separate-stderr "$RETRY" -n1 --circuit mid --report r.json true
	expect_stderr "retry: circuit mid is half-open; this run probes it
retry: circuit mid is closed again"
	matches "$(tr -d '\n' <r.json)" '"changes": \[\{"at": [0-9.]+, "change": "probing"\}, \{"at": [0-9.]+, "change": "closed"\}\]'
	# -q hides them; a success of a closed circuit says nothing.
	printf 'retry-circuit 1\nstate open\nfailures 2\nopenings 1\nhalf-open-at 1\nprobe 0\nbudget 0 0\nretries 0\nruns 0\n' >state/mid
	run -0 --separate-stderr "$RETRY" -q -n1 --circuit mid true
	[ "$stderr" = "" ]
	run -0 --separate-stderr "$RETRY" -n1 --circuit mid true
	[ "$stderr" = "" ]
}

@test "a failed probe opens the circuit again, said with the failures in a row" {
	mkdir -m 700 state
	printf 'retry-circuit 1\nstate open\nfailures 3\nopenings 1\nhalf-open-at 1\nprobe 0\nbudget 0 0\nretries 0\n' >state/fp
	run -1 --separate-stderr "$RETRY" -n1 --circuit fp --cool 20s false
	expect_stderr "retry: circuit fp is half-open; this run probes it
retry: circuit fp opened after 4 failures in a row
retry: attempt 1/1 failed with exit 1; giving up: no attempts left"
}

@test "--circuit-status of a name with no record says where it looked: unknown name, other HOME" {
	fail_once known
	run -0 --separate-stderr "$RETRY" --circuit-status knwon
	[ "$stderr" = "" ]
	[ "${lines[1]}" = "state:     closed" ]
	[ "${lines[5]}" = "runs:      none counted yet" ]
	[ "${lines[7]}" = "record:    none: no file knwon in $RETRY_STATE_DIR" ]
	run -0 "$RETRY" --circuit-status known
	[ "${lines[7]}" = "record:    $RETRY_STATE_DIR/known" ]
	# Another HOME, no state directory there: nothing is made.
	unset RETRY_STATE_DIR
	mkdir other
	HOME=$PWD/other XDG_STATE_HOME= run -0 "$RETRY" --circuit-status known
	[ "${lines[7]}" = "record:    none: no file known in $PWD/other/.local/state/retry" ]
	[ ! -e other/.local ]
}

@test "--circuit-status exits 0 closed, 75 open or half-open, 125 for errors; --report writes the same as JSON" {
	fail_once js --trip 1 --cool 20s
	run -75 --separate-stderr "$RETRY" --circuit-status js --report s.json
	[ "$stderr" = "" ]
	[ "${lines[1]%%,*}" = "state:     open" ]
	json_valid s.json
	matches "$(tr -d '\n' <s.json)" '^\{  "circuit": "js",  "store": null,  "state_directory": "[^"]+/state",  "record": true,  "corrupt": false,  "state": "open",  "half_opens_in": [0-9]+\.[0-9]{6},  "probe": null,  "failures": 1,  "trip": null,  "openings": 1,  "budget": null,  "runs": \{"counted": 1, "passed_at_once": 0, "passed_after_retries": 0, "failed": 1\},  "flake_rate": null,  "exit_status": 75\}$'
	# To stderr with -, as for a run; closed: 0.
	run -0 "$RETRY" --circuit-reset js
	run -0 --separate-stderr "$RETRY" --circuit-status js --report -
	[ "${lines[1]}" = "state:     closed" ]
	printf '%s\n' "$stderr" >e.json
	json_valid e.json
	grep -q '"exit_status": 0' e.json
	grep -q '"record": true' e.json
	# A report that cannot be written: 125 before anything is read.
	run -125 --separate-stderr "$RETRY" --circuit-status js --report nodir/s.json
	[ "$output" = "" ]
	[[ $stderr == "retry: --report 'nodir/s.json': "* ]]
	# A state directory refused: 125.
	chmod 777 state
	run -125 --separate-stderr "$RETRY" --circuit-status js
	[ "$output" = "" ]
	chmod 700 state
}

@test "the flake count after a scripted series of runs: at once, after retries, failed; the last 100 kept" {
	local i
	for i in 1 2 3; do
		run -0 "$RETRY" -q --circuit fl true
	done
	for i in 1 2; do
		rm -f mark
		run -0 "$RETRY" -q -n3 -b 1ms --circuit fl --trip 9 sh -c 'test -e mark || { touch mark; exit 1; }'
	done
	run -1 "$RETRY" -q -n2 -b 1ms --circuit fl --trip 9 false
	# A status not retried fails the run; a command that cannot run
	# says nothing of its flakiness: not counted.
	run -3 "$RETRY" -q -n2 -o 1 --circuit fl --trip 9 sh -c 'exit 3'
	run -127 "$RETRY" -q -n2 --circuit fl --trip 9 ./no-such-command
	[ "$(grep '^runs' state/fl)" = "runs 7 ppprrff" ]
	run -0 "$RETRY" --circuit-status fl
	[ "${lines[5]}" = "runs:      7 of the last 100: 3 passed at once, 2 after retries, 2 failed" ]
	[ "${lines[6]}" = "flakes:    40.0% (2 of the 5 that passed needed retries)" ]
	# 102 runs in all: the oldest two go.
	for i in $(seq 95); do
		"$RETRY" -q --circuit fl true
	done
	matches "$(grep '^runs' state/fl)" '^runs 100 prrffp{95}$'
	run -0 "$RETRY" --circuit-status fl
	[ "${lines[5]}" = "runs:      100 of the last 100: 96 passed at once, 2 after retries, 2 failed" ]
	[ "${lines[6]}" = "flakes:    2.0% (2 of the 98 that passed needed retries)" ]
}

@test "a record of 0.2 (no runs line) reads fine, and gains the line when next written" {
	mkdir -m 700 state
	printf 'retry-circuit 1\nstate closed\nfailures 2\nopenings 0\nhalf-open-at 0\nprobe 0\nbudget 0 0\nretries 0\n' >state/old
	run -0 --separate-stderr "$RETRY" --circuit-status old
	[ "$stderr" = "" ]
	[ "${lines[2]}" = "failures:  2 in a row" ]
	[ "${lines[5]}" = "runs:      none counted yet" ]
	run -1 --separate-stderr "$RETRY" -n1 --circuit old --trip 5 false
	expect_stderr "retry: attempt 1/1 failed with exit 1; giving up: no attempts left"
	[ "$(rec old failures)" = 3 ]
	[ "$(grep -v '^$' state/old | tail -n 2)" = "retries 0
runs 1 f" ]
	# A runs line that is not right makes the record corrupt, as any field.
	printf 'retry-circuit 1\nstate closed\nfailures 2\nopenings 0\nhalf-open-at 0\nprobe 0\nbudget 0 0\nretries 0\nruns 2 px\n' >state/old
	run -0 --separate-stderr "$RETRY" --circuit-status old
	expect_stderr "retry: circuit old: the record is corrupt; the next run starts it afresh"
}

@test "--circuit-list lists the names with a record in the state directory, sorted; --circuit-status without a name points to it" {
	run -0 --separate-stderr "$RETRY" --circuit-list
	[ "$output" = "" ] && [ "$stderr" = "" ]
	[ ! -e state ]
	fail_once b.two
	fail_once a-one
	"$RETRY" -q --circuit c3 true
	echo 'not a record' >state/notes
	mkdir state/dir
	run -0 --separate-stderr "$RETRY" --circuit-list
	[ "$stderr" = "" ]
	[ "$output" = "a-one
b.two
c3" ]
	run -125 --separate-stderr "$RETRY" --circuit-status
	expect_stderr "retry: option '--circuit-status' needs a value: a NAME (--circuit-list lists them)"
	run -125 --separate-stderr "$RETRY" --circuit-list --report x.json
	expect_stderr "retry: --report goes with a run or --circuit-status, not --circuit-list"
}
