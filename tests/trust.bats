#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Shared state that root can trust, and input that cannot hang or forge:
# the state directory and its records under a local attacker, the report
# path, patterns that would take exponential time or gigabytes, bytes in
# messages.  Cases that need root to be a victim skip without it.
load helpers/common

BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-60}

setup() {
	cd "$BATS_TEST_TMPDIR"
	export RETRY_STATE_DIR=$BATS_TEST_TMPDIR/state
}

teardown() {
	kill_later
	if [ -n "${mounted:-}" ]; then
		umount "$mounted" 2>/dev/null || true
	fi
	if [ -n "${shared:-}" ]; then
		rm -rf "$shared"
	fi
}

# --- 1. the way to the state directory ------------------------------------

@test "a symbolic link above the state directory is not followed" {
	mkdir -m 700 real
	ln -s real parentlink
	RETRY_STATE_DIR=$PWD/parentlink/state run -125 --separate-stderr \
	    "$RETRY" --circuit x touch ran
	expect_stderr "retry: $PWD/parentlink, on the way to the state directory, is a symbolic link"
	[ -z "$(ls real)" ]
	# The default place, with ~/.local a symbolic link.
	mkdir -m 700 home elsewhere
	ln -s ../elsewhere home/.local
	unset RETRY_STATE_DIR XDG_STATE_HOME
	HOME=$PWD/home run -125 --separate-stderr "$RETRY" -n1 --circuit x false
	expect_stderr "retry: $PWD/home/.local, on the way to the state directory, is a symbolic link"
	[ -z "$(ls elsewhere)" ]
	[ ! -e ran ]
}

@test "a parent that another user owns, or may write without the sticky bit, is refused" {
	need_root_and_nobody "to be the victim"
	mkdir -m 755 theirs
	chown nobody theirs
	RETRY_STATE_DIR=$PWD/theirs/state run -125 --separate-stderr \
	    "$RETRY" --circuit x touch ran
	expect_stderr "retry: $PWD/theirs, on the way to the state directory, belongs to another user"
	[ ! -e theirs/state ]
	mkdir -m 777 open
	RETRY_STATE_DIR=$PWD/open/state run -125 --separate-stderr \
	    "$RETRY" --circuit x touch ran
	expect_stderr "retry: $PWD/open is writable by other users; make it go-w"
	# Sticky, as /tmp: others cannot rename or remove what is root's.
	chmod 1777 open
	RETRY_STATE_DIR=$PWD/open/state run -0 "$RETRY" --circuit x touch ran
	[ -e ran ]
}

@test "a directory that only its owner's private group may write is accepted; one that a group with others may write is refused" {
	local grp
	grp=$(id -gn)
	# A private group: the user's alone, by primary group and by its list.
	if [ "$(awk -F: -v g="$(id -g)" '$4 == g { print $3 }' /etc/passwd)" != "$(id -u)" ] ||
	    [ -n "$(awk -F: -v g="$grp" '$1 == g { print $4 }' /etc/group)" ]; then
		skip "$grp is not a group of $(id -un) alone"
	fi
	mkdir home
	chmod 775 home
	unset RETRY_STATE_DIR XDG_STATE_HOME
	HOME=$PWD/home run -0 --separate-stderr "$RETRY" --circuit pg touch ran
	[ "$stderr" = "" ]
	[ -e ran ] && [ -d home/.local/state/retry ]
	chmod 775 home/.local/state/retry
	HOME=$PWD/home run -1 "$RETRY" -q -n1 --circuit pg false
	[ "$(awk '$1 == "failures" { print $2 }' home/.local/state/retry/pg)" = 1 ]
	# Another user's group, or a group of no one: refused, as before.
	[ "$(id -u)" -eq 0 ] || return 0
	local g
	for g in nogroup adm; do
		getent group "$g" >/dev/null || continue
		chgrp "$g" home
		HOME=$PWD/home run -125 --separate-stderr "$RETRY" --circuit pg touch ran2
		expect_stderr "retry: $PWD/home is writable by other users; make it go-w"
	done
	[ ! -e ran2 ]
}

@test "a state directory that others may write (0777) is refused" {
	mkdir -m 777 state
	chmod 777 state
	run -125 --separate-stderr "$RETRY" --circuit x touch ran
	expect_stderr "retry: state directory $RETRY_STATE_DIR is writable by other users; make it go-w"
	[ ! -e ran ]
}

@test "the state directory swapped for a symbolic link while runs go on: nothing outside it is written" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to be the victim"
	mkdir -m 700 victim real
	echo precious >victim/sw
	chmod 600 victim/sw
	ln -s victim link
	rename-race "$PWD/real" "$PWD/link" "$RETRY_STATE_DIR" 2000 >swaps 3>&- &
	local swapper=$! i
	later "$swapper"
	for i in $(seq 1 100); do
		"$RETRY" -q -n1 --trip 1000000 --circuit sw false 2>>err || true
	done
	# (bats' wait without a pid would wait for its own timer too.)
	wait "$swapper"
	echo "swaps: $(cat swaps); refusals: $(grep -c 'symbolic link' err || true)"
	[ "$(cat swaps)" -gt 0 ]
	[ "$(cat victim/sw)" = precious ]
	[ "$(ls -A victim)" = sw ]
}

# --- 2. what is not a record ----------------------------------------------

@test "a file without the record's first line is never written over, not even by --circuit-status or --circuit-reset" {
	mkdir -m 700 state
	echo precious >state/profile
	local opt
	for opt in --circuit --circuit-status --circuit-reset; do
		if [ "$opt" = --circuit ]; then
			run -125 --separate-stderr "$RETRY" -q "$opt" profile touch ran
		else
			run -125 --separate-stderr "$RETRY" -q "$opt" profile
		fi
		# -q does not hide a failure of retry itself.
		expect_stderr "retry: record $RETRY_STATE_DIR/profile is not a record of retry; it is left as it is"
	done
	[ "$(cat state/profile)" = precious ]
	[ ! -e ran ]
}

@test "a record with another name (a hard link) is refused, and left alone" {
	mkdir -m 700 state
	"$RETRY" -q -n1 --circuit hl false || true
	ln state/hl other
	cp state/hl before
	run -125 --separate-stderr "$RETRY" -n1 --circuit hl false
	expect_stderr "retry: record $RETRY_STATE_DIR/hl has another name (a hard link); not used"
	cmp before other
}

# --- 3. --report ------------------------------------------------------------

@test "--report to a device or a FIFO is written in place, and through an allowed symbolic link: none of them is replaced" {
	# Devices and links of the test's own, so that a retry that gets it
	# wrong spoils nothing of the system's (as 0.1 did to /dev/stdout).
	ln -s /proc/self/fd/1 stdout
	run -0 --separate-stderr "$RETRY" --report stdout true
	[[ $output == *'"outcome": "success"'* ]]
	[ -L stdout ]
	if [ "$(id -u)" -eq 0 ] && mknod full c 1 7 2>/dev/null; then
		run -0 --separate-stderr "$RETRY" --report full true
		expect_stderr "retry: --report 'full': No space left on device"
		[ -c full ]
	fi
	echo old >target
	ln -s target link
	run -0 "$RETRY" --report link true
	[ -L link ]
	grep -q '"outcome": "success"' target
	mkfifo fifo
	cat fifo >from-fifo 3>&- &
	local reader=$!
	exec 7>fifo	# returns once the reader has it open
	run -0 "$RETRY" --report fifo true
	exec 7>&-
	wait "$reader"
	[ -p fifo ]
	grep -q '"outcome": "success"' from-fifo
}

@test "--report to a directory is refused before anything runs" {
	mkdir dir
	run -125 --separate-stderr "$RETRY" --report dir touch ran
	expect_stderr "retry: --report 'dir': Is a directory"
	[ ! -e ran ]
}

# --- 4. updates are atomic ---------------------------------------------------

@test "runs killed with SIGKILL in the middle of updates never leave a broken record" {
	"$RETRY" -q -n1 --circuit atom false || true
	local i pids=()
	for i in $(seq 1 60); do
		"$RETRY" -q -n 0 -b 1ms -c 1ms -j none --circuit atom --trip 1000000 \
		    --budget 1000/1h false 3>&- &
		pids+=($!)
		sleep "0.00$((RANDOM % 10))"
		kill -KILL "${pids[-1]}"
	done
	for i in "${pids[@]}"; do
		wait "$i" 2>/dev/null || true
	done
	run -0 --separate-stderr "$RETRY" --circuit-status atom
	[ "$stderr" = "" ]
	matches "${lines[2]}" '^failures:  [0-9]+ in a row$'
	[ -z "$(ls -A state | grep -v -e '^atom$' -e '^\.atom\.lock$' -e '^\.atom\.new$')" ]
}

@test "a full disk: a change within the record's page is made; one past it fails whole and says why" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to mount a tmpfs"
	mkdir -m 700 state
	mount -t tmpfs -o size=16k,mode=700 tmpfs state 2>/dev/null ||
	    skip "cannot mount a tmpfs here"
	mounted=$PWD/state
	"$RETRY" -q -n1 --circuit full false || true
	big_record state/big
	cp state/big before
	# Fill it up: no block is left for a new file.
	dd if=/dev/zero of=state/fill bs=1k count=64 2>/dev/null || true
	# The record's own block takes the change.
	run -1 --separate-stderr "$RETRY" -n1 --circuit full false
	[ "$(awk '$1 == "failures" { print $2 }' state/full)" = 2 ]
	# Past a page, the new record has nowhere to go; the old one stays.
	run -125 --separate-stderr "$RETRY" -n1 --budget 1000/1h --circuit big false
	expect_stderr "retry: $RETRY_STATE_DIR/big: No space left on device"
	cmp before state/big
	[ ! -e state/.big.new ]
}

# --- 5. the probe ----------------------------------------------------------

@test "a half-open record naming a live process that is not a probe holds no one" {
	mkdir -m 700 state
	printf 'retry-circuit 1\nstate half-open\nfailures 5\nopenings 1\nhalf-open-at 1\nprobe 1\nbudget 0 0\nretries 0\n' >state/pr
	run -0 --separate-stderr "$RETRY" -D 3s --circuit pr touch ran
	[ -e ran ]
	run -0 "$RETRY" --circuit-status pr
	[ "${lines[1]}" = "state:     closed" ]
}

@test "--circuit-status names the process that holds the probe, and says when it is gone" {
	mkdir -m 700 state
	printf 'retry-circuit 1\nstate half-open\nfailures 5\nopenings 1\nhalf-open-at 1\nprobe 1\nbudget 0 0\nretries 0\n' >state/ps
	run -75 "$RETRY" --circuit-status ps
	[ "${lines[1]}" = "state:     half-open, its probe is gone: the next attempt probes" ]
	"$RETRY" --circuit ps sh -c 'touch probing; sleep 30' 3>&- &
	local pid=$!
	later "$pid"
	wait_for probing
	run -75 "$RETRY" --circuit-status ps
	[ "${lines[1]}" = "state:     half-open, probed by process $pid" ]
	kill -TERM "$pid"
	wait "$pid" || true
}

@test "the probe's run killed with SIGKILL: its attempt goes too, and the next run probes alone" {
	[ "$(uname -s)" = Linux ] || skip "the attempt outlives a killed retry without PR_SET_PDEATHSIG"
	mkdir -m 700 state probe
	printf 'retry-circuit 1\nstate open\nfailures 5\nopenings 1\nhalf-open-at 1\nprobe 0\nbudget 0 0\nretries 0\n' >state/pk
	"$RETRY" -n1 --circuit pk count-runs probe 0 2 3>&- &
	local first=$!
	later "$first"
	wait_for_text probe/log '^start 1 '
	# Others wait for it.
	"$RETRY" -v -n1 -D 10s --circuit pk count-runs probe 0 0.1 2>err2 3>&- &
	local second=$!
	later "$second"
	sleep 0.3
	[ "$(grep -c '^start' probe/log)" -eq 1 ]
	kill -KILL "$first"
	wait "$first" || true
	wait "$second"
	# The second probed once the first was gone, never beside it.
	[ "$(grep -c '^start' probe/log)" -eq 2 ]
	[ "$(cat probe/max)" -eq 1 ] || [ "$(grep -c '^end' probe/log)" -le 1 ]
	# Said once, however many times it looked.
	[ "$(grep -c 'another run probes it' err2)" -eq 1 ]
}

# --- 6. fields in range --------------------------------------------------------

# record STATE FAILURES OPENINGS AT PROBE BUDGET WINDOW RETRIES...: a record
# with these fields, written to state/g.
record() {
	local state=$1 f=$2 o=$3 at=$4 p=$5 b=$6 w=$7
	shift 7
	printf 'retry-circuit 1\nstate %s\nfailures %s\nopenings %s\nhalf-open-at %s\nprobe %s\nbudget %s %s\nretries %s' \
	    "$state" "$f" "$o" "$at" "$p" "$b" "$w" "$#" >state/g
	[ $# -gt 0 ] && printf ' %s' "$@" >>state/g
	printf '\n' >>state/g
}

@test "records whose fields are out of range are corrupt: no overflow, no wait of years" {
	mkdir -m 700 state
	local big=9223372036854775807 now far
	now=$(clock-now -r -n)
	far=$((now + 235 * 365 * 86400 * 1000000000))
	local cases=(
		"closed $big 0 0 0 0 0"
		"closed 2147483648 0 0 0 0 0"
		"closed -1 0 0 0 0 0"
		"open 5 $big $far 0 0 0"
		"open 5 1 $far 0 0 0"
		"open 5 1 99999999999999999999 0 0 0"
		"half-open 5 1 1 $big 0 0"
		"closed 0 0 0 0 1001 1000000000"
		"closed 0 0 0 0 5 $big"
		"closed 0 0 0 0 5 60000000000 $far"
		"closed 0 0 0 0 5 60000000000 $now 1"
		"closed 0 0 0 0 5 60000000000 $big"
		"closed 0 0 0 0 5 60000000000 -5"
		"closed 0x10 0 0 0 0 0"
		"closed 1 0 0 0 5 60000000000 3 2 1"
	)
	local c
	for c in "${cases[@]}"; do
		record $c
		run -0 --separate-stderr "$RETRY" --circuit-status g
		echo "$c: $stderr"
		[ "$stderr" = "retry: circuit g: the record is corrupt; the next run starts it afresh" ]
		run -0 --separate-stderr "$RETRY" -D 2s --budget 5/1m --circuit g true
		[ "$stderr" = "retry: circuit g: the record was corrupt; it starts afresh" ]
	done
	# The lines of 0.4 (issue 32), out of range or out of order, after a
	# record that is right.
	local tail
	local tails=(
		"share 1001 3" "share 0 3" "share 20 1001" "share 20"
		"firsts 17$(printf ' %s 1' $(seq 100 100 1700))"
		"firsts 0" "firsts 2 200 1 100 1" "firsts 2 100 1 100 1"
		"firsts 1 100 0" "firsts 1 $far 1" "firsts 2 100 1"
		"trip 30 4" "trip 101 10" "trip 0 10" "trip 30 101"
		"marks 3 0101" "marks 3 012" "marks 101 $(printf '1%.0s' $(seq 101))"
		"marks 0" "runs 1 p"
	)
	for tail in "${tails[@]}"; do
		record closed 0 0 0 0 0 0
		printf 'runs 1 p\n%s\n' "$tail" >>state/g
		run -0 --separate-stderr "$RETRY" --circuit-status g
		echo "$tail: $stderr"
		[ "$stderr" = "retry: circuit g: the record is corrupt; the next run starts it afresh" ]
	done
	# And the same lines in range are read.
	record closed 0 0 0 0 0 60000000000
	printf 'runs 1 p\nshare 20 3\nfirsts 2 %s 4 %s 5\ntrip 30 10\nmarks 4 0110\n' \
	    "$((now - 20000000000))" "$((now - 10000000000))" >>state/g
	run -0 --separate-stderr "$RETRY" --circuit-status g
	[ "$stderr" = "" ]
	[ "${lines[2]}" = "failures:  2 of the last 4 (trips at 30% once 10 are seen)" ]
	[ "${lines[4]}" = "retries:   0 of 4 allowed (20% of 9 first attempts + 3)" ]
	# Random bytes after the first line.
	local i
	for i in $(seq 1 30); do
		{ printf 'retry-circuit 1\n'; head -c $((RANDOM % 200)) /dev/urandom; } >state/g
		run --separate-stderr "$RETRY" -D 2s -n1 --circuit g true
		[ "$status" -eq 0 ]
	done
}

# --- 7. patterns ------------------------------------------------------------

@test "--on-output and --stop-on-output refuse patterns that can take exponential time or gigabytes" {
	local opt
	for opt in --on-output --stop-on-output; do
		run -125 --separate-stderr "$RETRY" "$opt" '(a*)*\1b' touch ran
		expect_stderr "retry: $opt '(a*)*\\1b': back-references are not allowed: they can take exponential time"
		run -125 --separate-stderr "$RETRY" "$opt" '((a{1,100}){1,100}){1,100}' touch ran
		expect_stderr "retry: $opt '((a{1,100}){1,100}){1,100}': too large once its repetitions are expanded (more than 1000 atoms)"
		run -125 --separate-stderr "$RETRY" "$opt" 'a++' touch ran
		expect_stderr "retry: $opt 'a++': a repetition of a repetition (such as a**) is not allowed"
	done
	[ ! -e ran ]
	# What is left matches as before: the line is retried.
	run --separate-stderr "$RETRY" -n2 -b 1ms --on-output '[0-9]{1,3}(\.[0-9]{1,3}){3}|(a+)*x' \
	    sh -c 'echo "to 10.0.0.1 failed"'
	[ "${#lines[@]}" -eq 2 ]
}

@test "matching a long line with an accepted pattern never holds retry back from SIGTERM" {
	"$RETRY" -b 1ms -n 0 --on-output '(a|aa)*(b|c){1,20}d' sh -c '
		i=0; while [ $i -lt 2000 ]; do printf "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"; i=$((i+1)); done
		echo; touch printed; exit 1' >/dev/null 2>&1 3>&- &
	local pid=$! t0
	later "$pid"
	wait_for printed
	t0=$(now_ms)
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ]
	[ $(($(now_ms) - t0)) -lt 1000 ]
}

# --- 8. messages ---------------------------------------------------------------

@test "bytes from outside are escaped in messages: every message is one line" {
	run -127 --separate-stderr "$RETRY" $'no-such\nretry: attempt 1/1 succeeded (forged)'
	[ "${#stderr_lines[@]}" -eq 1 ]
	expect_stderr "retry: cannot run 'no-such\\nretry: attempt 1/1 succeeded (forged)': No such file or directory"
	run -0 --separate-stderr "$RETRY" -v -K $'key\033[31mred' true
	[[ ${stderr_lines[0]} == *'key key\033[31mred' ]]
	[[ $stderr != *$'\033'* ]]
	run -127 --separate-stderr "$RETRY" $'bad\xffbyte\ttab'
	expect_stderr "retry: cannot run 'bad\\xffbyte\\ttab': No such file or directory"
}

# --- 9. reading only -------------------------------------------------------------

@test "--circuit-status works on a read-only state directory" {
	need_root_and_nobody "to be the victim"
	nobody_runs_retry
	local shared
	shared=$(mktemp -d /tmp/retry-ro.XXXXXX)
	chmod 755 "$shared"
	export RETRY_STATE_DIR=$shared/state
	mkdir -m 700 "$RETRY_STATE_DIR"
	chown nobody "$RETRY_STATE_DIR"
	as_nobody "$RETRY" -q -n1 --circuit ro false || true
	chmod 500 "$RETRY_STATE_DIR"
	run -0 --separate-stderr as_nobody "$RETRY" --circuit-status ro
	[ "$stderr" = "" ]
	[ "${lines[2]}" = "failures:  1 in a row" ]
	rm -rf "$shared"
}

# --- 10. one walk, two callers ---------------------------------------------------
# path.c walks to the state directory and to every file retry writes: each
# case here goes both ways, each with the rules that its page promises.

@test "one walk: a directory on the way that may be searched but not listed (0711) is passed, to the state directory as to --report's file" {
	need_root_and_nobody "to be the user who may only search"
	nobody_runs_retry
	shared=$(mktemp -d /tmp/retry-walk.XXXXXX)
	chmod 711 "$shared"
	mkdir -m 700 "$shared/mine"
	chown nobody "$shared/mine"
	RETRY_STATE_DIR=$shared/mine/state run -0 --separate-stderr \
	    as_nobody "$RETRY" --circuit walk touch "$shared/mine/ran"
	[ "$stderr" = "" ]
	[ -e "$shared/mine/ran" ]
	[ "$(owner_of "$shared/mine/state") $(mode_of "$shared/mine/state")" = "nobody 700" ]
	RETRY_STATE_DIR=$shared/mine/state run -0 as_nobody "$RETRY" \
	    --circuit-status walk
	[ "${lines[5]}" = "runs:      1 of the last 100: 1 passed at once, 0 after retries, 0 failed" ]
	run -0 --separate-stderr as_nobody "$RETRY" --report \
	    "$shared/mine/r.json" true
	grep -q '"outcome": "success"' "$shared/mine/r.json"
}

@test "one walk: \"..\" goes back up on the way to --report's file; the state directory, vouched for on the way down, takes none" {
	mkdir -m 700 a
	RETRY_STATE_DIR=$PWD/a/../state run -125 --separate-stderr "$RETRY" \
	    --circuit x touch ran
	expect_stderr "retry: state directory $PWD/a/../state: no \"..\" in it, please"
	[ ! -e ran ]
	[ ! -e state ]
	run -0 "$RETRY" --report a/../r.json --metrics a/../job.prom touch ran
	[ -e ran ]
	grep -q '"outcome": "success"' r.json
	grep -q '^retry_exit_status{job="job"} 0$' job.prom
	[ -z "$(ls a)" ]
}

@test "one walk: a directory that others may write (0777) is refused on the way to the state directory; --report and --metrics, which need only a directory that retry may write, are written there" {
	mkdir -m 777 open
	chmod 777 open
	RETRY_STATE_DIR=$PWD/open/state run -125 --separate-stderr "$RETRY" \
	    --circuit x touch ran
	expect_stderr "retry: $PWD/open is writable by other users; make it go-w"
	[ ! -e ran ]
	[ ! -e open/state ]
	run -0 "$RETRY" --report open/r.json --metrics open/job.prom touch ran
	[ -e ran ]
	grep -q '"outcome": "success"' open/r.json
	[ "$(ls open)" = "job.prom
r.json" ]
}

@test "one walk: the user's own symbolic link on the way is followed to --report's file, as protected_symlinks would, and never to the state directory" {
	mkdir -m 700 real
	ln -s real link
	RETRY_STATE_DIR=$PWD/link/state run -125 --separate-stderr "$RETRY" \
	    --circuit x touch ran
	expect_stderr "retry: $PWD/link, on the way to the state directory, is a symbolic link"
	[ ! -e ran ]
	[ -z "$(ls real)" ]
	run -0 "$RETRY" --report link/r.json touch ran
	[ -e ran ]
	[ -L link ]
	grep -q '"outcome": "success"' real/r.json
}

@test "one walk: a name on the way that is not a directory, or is longer than NAME_MAX, is refused before anything runs, to the state directory as to --report's file" {
	local long
	long=$(printf '%0256d' 0)
	touch file
	RETRY_STATE_DIR=$PWD/file/state run -125 --separate-stderr "$RETRY" \
	    --circuit x touch ran
	expect_stderr "retry: $PWD/file is not a directory"
	run -125 --separate-stderr "$RETRY" --report file/r.json touch ran
	expect_stderr "retry: --report 'file/r.json': Not a directory"
	RETRY_STATE_DIR=$PWD/$long/state run -125 --separate-stderr "$RETRY" \
	    --circuit x touch ran
	# ENAMETOOLONG in the C library's words: glibc's "File name too
	# long", musl's "Filename too long".
	[[ $stderr == "retry: $PWD/$long: File name too long" ||
	    $stderr == "retry: $PWD/$long: Filename too long" ]]
	run -125 --separate-stderr "$RETRY" --report "$long/r.json" touch ran
	[[ $stderr == "retry: --report '$long/r.json': File name too long" ||
	    $stderr == "retry: --report '$long/r.json': Filename too long" ]]
	[ ! -e ran ]
	[ ! -e state ]
}
