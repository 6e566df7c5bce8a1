#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Pipelines: the same stdin for every attempt (a regular file from its
# offset, --replay-stdin for anything else), --buffer-stdout,
# RETRY_AFTER_FILE, --on-output and --stop-on-output, and --report.  Real
# children; delays of tens of milliseconds with -j none, so that the
# messages are exact.  The 1 GiB case is tagged slow and comes last.

load common

# A test that hangs fails instead of stopping the whole file.
BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-120}

PTYRUN=$BATS_TEST_DIRNAME/ptyrun

# python3 for checking JSON, once: a version manager's shim can take a
# second a call.
setup_file() {
	PYTHON=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) ||
	    PYTHON=
	export PYTHON
}

setup() {
	cd "$BATS_TEST_TMPDIR"
	# retry's temporary files land here, where they can be counted.
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	mkdir "$TMPDIR"
}

# A retry that a failed test left in the background.
teardown() {
	local p
	[ -s bg.pid ] || return 0
	p=$(cat bg.pid)
	case $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") in
	*retry*) kill -KILL "$p" 2>/dev/null || true ;;
	esac
}

# tmp_files: retry's files and directories in $TMPDIR, one a line.
tmp_files() {
	(cd "$TMPDIR" && ls -d retry.* 2>/dev/null) || true
}

# json_ok FILE: FILE parses as JSON; unchecked when python3 is missing.
json_ok() {
	if [ -z "$PYTHON" ]; then
		echo "# python3 is not installed: JSON not validated" >&3
		return 0
	fi
	"$PYTHON" -m json.tool "$1" >/dev/null
}

# norm FILE: the report with every time (digits.6 digits) as T.
norm() {
	sed -E 's/[0-9]+\.[0-9]{6}/T/g' "$1"
}

# A line of an attempt's script: the targets of retry's open files.
# An fd of retry's may close while this lists them (readlink then fails).
FDS='for f in /proc/$PPID/fd/*; do readlink "$f" || :; done'

# ---- Input ----------------------------------------------------------------

@test "stdin a regular file: every attempt reads it from where retry found it" {
	printf 'header\nline 2\nline 3\n' >in
	rc=0
	{
		read -r first
		"$RETRY" -n 3 -b 10ms -j none sh -c '
			case $RETRY_ATTEMPT in 1) head -n1 ;; *) cat ;; esac
			exit 1' >out 2>err
	} <in || rc=$?
	[ "$first" = header ]
	[ "$rc" -eq 1 ]
	[ "$(cat out)" = "line 2
line 2
line 3
line 2
line 3" ]
	[ "$(cat err)" = "retry: attempt 1/3 failed with exit 1; next in 0.010s
retry: attempt 2/3 failed with exit 1; next in 0.020s
retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
}

@test "--replay-stdin: a regular file is read in place, not copied; a pipe is copied to a file without a name in \$TMPDIR" {
	printf 'header\nline 2\n' >in
	{ read -r first; "$RETRY" -I -n 2 -b 10ms -j none sh -c \
	    'cat; '"$FDS"' >>fds; exit 1' >out 2>/dev/null || true; } <in
	[ "$(cat out)" = "line 2
line 2" ]
	run -1 grep -c 'retry\.' fds

	rm fds
	cat in | "$RETRY" --replay-stdin -n 2 -b 10ms -j none sh -c \
	    'cat; '"$FDS"' >>fds; ls "$TMPDIR" >>listing; exit 1' >out 2>/dev/null || true
	[ "$(cat out)" = "header
line 2
header
line 2" ]
	# A file without a name: O_TMPFILE's "#INODE", else mkstemp's, unlinked.
	run -0 grep -cE "^$TMPDIR/(#[0-9]+|retry\.[A-Za-z0-9]{6}) \(deleted\)$" fds
	[ "$output" = 2 ]	# one copy, seen by each attempt
	# Only the directory of the Retry-After hints has a name.
	[ "$(sort -u listing)" = "retry-$(id -u)" ]
	[ "$(tmp_files)" = "" ]

	# No $TMPDIR: /tmp.
	rm fds
	echo x | env -u TMPDIR "$RETRY" -I -n 1 sh -c "$FDS >fds" 2>/dev/null
	run -0 grep -cE '^/tmp/(#[0-9]+|retry\.[A-Za-z0-9]{6}) \(deleted\)$' fds
}

@test "--replay-stdin: every attempt sees the same bytes from a pipe" {
	head -c 300000 /dev/urandom >in	# more than a pipe holds, NULs included
	rc=0
	cat in | "$RETRY" -I -n 3 -b 10ms -j none \
	    sh -c 'cksum >>sums; exit 1' 2>err || rc=$?
	[ "$rc" -eq 1 ]
	want=$(cksum <in)
	[ "$(cat sums)" = "$want
$want
$want" ]
	[ "$(cat err)" = "retry: attempt 1/3 failed with exit 1; next in 0.010s
retry: attempt 2/3 failed with exit 1; next in 0.020s
retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
}

@test "--replay-stdin: every attempt sees the same bytes from a socket" {
	head -c 300000 /dev/urandom >in
	rc=0
	io-socket in "$RETRY" -I -n 2 -b 10ms -j none \
	    sh -c 'readlink /proc/$PPID/fd/0 >>fd0; cksum >>sums; exit 1' \
	    2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
	[[ $(head -n1 fd0) == socket:* ]]
	want=$(cksum <in)
	[ "$(cat sums)" = "$want
$want" ]
}

@test "--replay-stdin: attempts that read nothing, one line, or close stdin neither block retry nor cost the next attempt input" {
	awk 'BEGIN { for (i = 1; i <= 200000; i++) print i }' >in	# 1.3 MB
	rc=0
	cat in | timeout 20 "$RETRY" -I -n 5 -b 10ms -j none sh -c '
		case $RETRY_ATTEMPT in
		1) exit 1 ;;
		2) head -n1 >first; exit 1 ;;
		3) exec <&-; sleep 0.1; exit 1 ;;
		*) cksum >sum ;;
		esac' 2>err || rc=$?
	[ "$rc" -eq 0 ]
	[ "$(cat first)" = 1 ]
	[ "$(cat sum)" = "$(cksum <in)" ]
	[ "$(cat err)" = "retry: attempt 1/5 failed with exit 1; next in 0.010s
retry: attempt 2/5 failed with exit 1; next in 0.020s
retry: attempt 3/5 failed with exit 1; next in 0.040s" ]
}

@test "--replay-stdin: input still arriving reaches the first attempt as it comes and later attempts whole" {
	head -c 200000 /dev/urandom >in
	{ printf 'ping\n'; cat in; } >whole
	# The rest comes only once the first attempt has read "ping" and
	# the second has started.
	{
		printf 'ping\n'
		wait_for got-ping && wait_for started-2
		sleep 0.05
		cat in
	} | "$RETRY" -I -n 3 -b 10ms -j none sh -c '
		case $RETRY_ATTEMPT in
		1) read -r line; echo "$line" >got-ping; exit 1 ;;
		2) touch started-2; cksum >sum2; exit 1 ;;
		*) cksum >sum3 ;;
		esac' 2>err
	[ "$(cat got-ping)" = ping ]
	[ "$(cat sum2)" = "$(cksum <whole)" ]
	[ "$(cat sum3)" = "$(cksum <whole)" ]
}

@test "--replay-stdin: empty input ends for every attempt" {
	rc=0
	: | timeout 5 "$RETRY" -I -n 2 -b 10ms -j none \
	    sh -c 'wc -c >>counts; exit 1' 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(cat counts)" = "0
0" ]
}

@test "--replay-stdin: a closed stdin is an empty one for every attempt" {
	rc=0
	timeout 5 "$RETRY" -I -n 2 -b 10ms -j none \
	    sh -c 'wc -c >>counts; exit 1' <&- 2>/dev/null || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(cat counts)" = "0
0" ]
}

@test "--replay-stdin refuses a terminal: exit 125, one line, nothing run, nothing left" {
	run -125 "$PTYRUN" -- "$RETRY" -I sh -c 'touch ran'
	[ "$output" = $'retry: --replay-stdin: standard input is a terminal\r' ]
	[ ! -e ran ]
	[ "$(tmp_files)" = "" ]
}

@test "temporary files are gone however retry ends: success, failure, SIGTERM in a delay, usage errors" {
	[ "$(tmp_files)" = "" ]
	echo data | "$RETRY" -I -O --report r.json -n 2 -b 10ms -j none \
	    sh -c 'cat; [ "$RETRY_ATTEMPT" = 2 ]' >out 2>err
	[ "$(cat out)" = data ]
	[ "$(tmp_files)" = "" ]
	rc=0
	echo data | "$RETRY" -I -O --report r.json -n 2 -b 10ms -j none \
	    --on-output x sh -c 'cat; exit 1' >out 2>err || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(tmp_files)" = "" ]

	awk 'BEGIN { for (i = 1; i <= 100000; i++) print i }' | "$RETRY" -I -O --report r.json -b 20s -j none \
	    --on-output x sh -c 'cat; exit 1' >out 2>err 3>&- &
	echo $! >bg.pid
	wait_for_text err 'next in 20.000s'
	[ "$(tmp_files)" = "" ]	# -I and -O: files without a name
	stop_and_time TERM "$(cat bg.pid)"
	[ "$rc" -eq 143 ]
	[ "$(tmp_files)" = "" ]

	run -125 "$RETRY" --no-such-option true
	run -125 "$RETRY" -I -O --report nodir/r.json true
	run -125 "$RETRY" -I -O --on-output '(' true
	[ "$(tmp_files)" = "" ]
}

# ---- Output -----------------------------------------------------------------

@test "--buffer-stdout: a reader downstream sees exactly the last attempt's stdout; the others' go to stderr before 'next in'" {
	"$RETRY" -O -n 3 -b 10ms -j none sh -c '
		echo "out $RETRY_ATTEMPT"; echo "err $RETRY_ATTEMPT" >&2; exit 1' \
	    2>err | cat >down
	[ "${PIPESTATUS[0]}" -eq 1 ]
	[ "$(cat down)" = "out 3" ]
	[ "$(cat err)" = "err 1
out 1
retry: attempt 1/3 failed with exit 1; next in 0.010s
err 2
out 2
retry: attempt 2/3 failed with exit 1; next in 0.020s
err 3
retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]

	# The last attempt's, whether it succeeded or failed not retryably.
	run -0 --separate-stderr "$RETRY" --buffer-stdout -n 3 -b 10ms -j none \
	    sh -c 'echo "out $RETRY_ATTEMPT"; [ "$RETRY_ATTEMPT" = 2 ]'
	[ "$output" = "out 2" ]
	expect_stderr "out 1
retry: attempt 1/3 failed with exit 1; next in 0.010s"
	run -3 --separate-stderr "$RETRY" -O -x 3 -b 10ms -j none \
	    sh -c 'echo "out $RETRY_ATTEMPT"; exit $((RETRY_ATTEMPT + 1))'
	[ "$output" = "out 2" ]
	expect_stderr "out 1
retry: attempt 1/5 failed with exit 2; next in 0.010s
retry: attempt 2/5 failed with exit 3; giving up: status 3 is not retryable"
}

@test "--buffer-stdout: output sent to stderr before a delay does not reach stdout as well when the run ends there" {
	# A signal during the delay.
	"$RETRY" -O -b 10s -j none -n 3 sh -c 'echo "out-$RETRY_ATTEMPT"; exit 1' \
	    >out 2>err 3>&- &
	echo $! >bg.pid
	wait_for_text err 'next in 10.000s'
	stop_and_time TERM "$(cat bg.pid)"
	[ "$rc" -eq 143 ]
	[ "$(cat out)" = "" ]
	[ "$(grep -c '^out-' err)" -eq 1 ]
	# A circuit that opens for longer than the deadline allows.
	rc=0
	RETRY_STATE_DIR=$PWD/state "$RETRY" -O --circuit dup --trip 1 --cool 10s \
	    -D 5s -b 10ms -j none sh -c 'echo "out-$RETRY_ATTEMPT"; exit 1' \
	    >out 2>err || rc=$?
	[ "$rc" -eq 75 ]
	[ "$(cat out)" = "" ]
	[ "$(grep -c '^out-' err)" -eq 1 ]
}

@test "--buffer-stdout: an attempt that the deadline makes the last has its output on stdout" {
	run -3 --separate-stderr "$RETRY" -O -D 2s -b 10ms sh -c \
	    'echo "out $RETRY_ATTEMPT"; echo 10 >"$RETRY_AFTER_FILE"; exit 3'
	[ "$output" = "out 1" ]
	[[ $stderr =~ ^retry:\ attempt\ 1/5\ failed\ with\ exit\ 3\;\ giving\ up:\ a\ delay\ of\ 1[01]\.[0-9]{3}s\ would\ pass\ the\ deadline$ ]]
}

@test "--buffer-stdout: nothing reaches stdout while the attempt runs" {
	"$RETRY" -O -n 1 sh -c 'echo held; touch written
		i=0; while [ ! -e go ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done' \
	    >out 2>err 3>&- &
	echo $! >bg.pid
	wait_for written
	sleep 0.1
	[ ! -s out ]
	[ ! -s err ]
	touch go
	wait "$(cat bg.pid)"
	[ "$(cat out)" = held ]
	[ ! -s err ]
}

@test "--buffer-stdout with --replay-stdin: megabytes in and out, memory stays constant" {
	[ -z "${TEST_SANITIZED:-}" ] || skip "memory is measured without sanitizers"
	head -c 2000000 /dev/urandom >in
	rc=0
	cat in | "$RETRY" -I -O -n 3 -b 10ms -j none sh -c '
		cat
		[ "$RETRY_ATTEMPT" = 3 ] && grep VmHWM "/proc/$PPID/status" >hwm
		exit 1' >out 2>err || rc=$?
	[ "$rc" -eq 1 ]
	cmp in out
	{
		cat in
		echo "retry: attempt 1/3 failed with exit 1; next in 0.010s"
		cat in
		echo "retry: attempt 2/3 failed with exit 1; next in 0.020s"
		echo "retry: attempt 3/3 failed with exit 1; giving up: no attempts left"
	} | cmp - err
	read -r _ kb _ <hwm
	echo "retry's peak RSS: $kb kB"
	[ "$kb" -lt 4096 ]
}

# ---- RETRY_AFTER_FILE ---------------------------------------------------------

@test "RETRY_AFTER_FILE: a name in a private 0700 directory that nothing makes; a hint is read once, then removed" {
	unset XDG_RUNTIME_DIR
	run -1 --separate-stderr "$RETRY" -n 3 -b 10ms -j none sh -c '
		f=$RETRY_AFTER_FILE
		{ echo "$f"; [ -e "$f" ] && echo there; ls -ld "${f%/*}" | cut -c 1-10; } >>log
		case $RETRY_ATTEMPT in 1) echo junk >"$f" ;; esac
		exit 1'
	expect_stderr "retry: attempt 1/3 failed with exit 1; next in 0.010s
retry: attempt 2/3 failed with exit 1; next in 0.020s
retry: attempt 3/3 failed with exit 1; giving up: no attempts left"
	f=$(head -n1 log)
	[[ $f =~ ^$TMPDIR/retry-$(id -u)/[0-9]+-[0-9a-f]{16}$ ]]
	one="$f
drwx------"
	# Never there when an attempt starts: the junk was read and removed.
	[ "$(cat log)" = "$one
$one
$one" ]
	[ ! -e "$f" ]
	# The directory stays, for the next run; it holds nothing.
	[ -z "$(ls -A "${f%/*}")" ]
}

@test "RETRY_AFTER_FILE is under \$XDG_RUNTIME_DIR when set, in retry/" {
	export XDG_RUNTIME_DIR=$BATS_TEST_TMPDIR/run
	mkdir -m 700 "$XDG_RUNTIME_DIR"
	run -0 "$RETRY" sh -c 'echo "$RETRY_AFTER_FILE"'
	[[ $output =~ ^$XDG_RUNTIME_DIR/retry/[0-9]+-[0-9a-f]{16}$ ]]
	[ "$(mode_of "$XDG_RUNTIME_DIR/retry")" = 700 ]
}

@test "a hint that no one read is removed however retry ends: success, a signal during the attempt" {
	unset XDG_RUNTIME_DIR
	run -0 "$RETRY" sh -c 'echo 5 >"$RETRY_AFTER_FILE"; echo "$RETRY_AFTER_FILE" >path'
	[ ! -e "$(cat path)" ]
	local sig
	for sig in TERM HUP ALRM USR1 USR2 PROF VTALRM XCPU XFSZ IO; do
		rm -f path
		sigrun -D "$RETRY" -b 20s -j none sh -c '
		    echo 5 >"$RETRY_AFTER_FILE"; echo "$RETRY_AFTER_FILE" >path
		    sleep 20 & wait' 2>err 3>&- &
		echo $! >bg.pid
		wait_for path
		[ -f "$(cat path)" ]
		stop_and_time "$sig" "$(cat bg.pid)"
		[ "$(kill -l "$rc")" = "$sig" ]
		[ ! -e "$(cat path)" ]
	done
	[ -z "$(ls -A "$TMPDIR/retry-$(id -u)")" ]
}

@test "the hint file of a run that was killed is removed by the next run that uses a hint" {
	unset XDG_RUNTIME_DIR
	local dir=$TMPDIR/retry-$(id -u)
	"$RETRY" -n 1 true
	# A run killed after its attempt wrote a hint.
	"$RETRY" -b 20s sh -c 'echo 1 >"$RETRY_AFTER_FILE"; touch wrote; sleep 20' 3>&- &
	local pid=$!
	wait_for wrote
	kill -KILL "$pid"
	wait "$pid" || true
	pkill -f 'sleep 20' || true
	[ "$(ls "$dir" | wc -l)" -eq 1 ]
	# A run with no hint leaves it (it never reads the directory) ...
	"$RETRY" -n 1 true
	[ "$(ls "$dir" | wc -l)" -eq 1 ]
	# ... and one that uses a hint removes it.
	run -0 "$RETRY" -n 2 sh -c '[ "$RETRY_ATTEMPT" = 2 ] || { echo 10ms >"$RETRY_AFTER_FILE"; exit 1; }'
	[ -z "$(ls -A "$dir")" ]
}

# hinted HINT [OPTION ...]: two attempts, the first writes HINT to
# RETRY_AFTER_FILE and fails; sets $ms to the delay that retry announced,
# $note to what follows it in the message, and $took to the run's time.
hinted() {
	local hint=$1 t0
	shift
	t0=$(now_ms)
	run -1 --separate-stderr "$RETRY" -n 2 -j none "$@" sh -c '
		[ "$RETRY_ATTEMPT" = 1 ] && printf "%s" "$1" >"$RETRY_AFTER_FILE"
		exit 1' sh "$hint"
	took=$(($(now_ms) - t0))
	[ "${#stderr_lines[@]}" -eq 2 ]
	[[ ${stderr_lines[0]} =~ ^retry:\ attempt\ 1/2\ failed\ with\ exit\ 1\;\ next\ in\ ([0-9]+)\.([0-9]{3})s(.*)$ ]]
	ms=$((10#${BASH_REMATCH[1]} * 1000 + 10#${BASH_REMATCH[2]}))
	note=${BASH_REMATCH[3]}
	[ "${stderr_lines[1]}" = "retry: attempt 2/2 failed with exit 1; giving up: no attempts left" ]
	echo "hint '$hint': next in $ms ms$note, the run took $took ms"
}

@test "a hint in seconds replaces the backoff: the delay is the hint plus up to 10 %" {
	hinted 0.2 -b 10s
	between "$ms" 200 220
	[ "$note" = " (Retry-After 0.200s)" ]
	between "$took" "$ms" $((ms + 3000))
}

@test "a hint as a DUR, over many draws: each delay within [hint, hint + 10 %], not all the same" {
	run -1 --separate-stderr "$RETRY" -n 10 -b 10s -j none sh -c \
	    'echo 100ms >"$RETRY_AFTER_FILE"; exit 1'
	[ "${#stderr_lines[@]}" -eq 10 ]
	seen=()
	for i in 0 1 2 3 4 5 6 7 8; do
		[[ ${stderr_lines[i]} =~ ^retry:\ attempt\ $((i + 1))/10\ failed\ with\ exit\ 1\;\ next\ in\ 0\.([0-9]{3})s\ \(Retry-After\ 0\.100s\)$ ]]
		between $((10#${BASH_REMATCH[1]})) 100 110
		seen+=("${BASH_REMATCH[1]}")
	done
	echo "delays: ${seen[*]}"
	[ "$(printf '%s\n' "${seen[@]}" | sort -u | wc -l)" -gt 1 ]
	hinted 150ms -b 10s
	between "$ms" 150 165
	[ "$note" = " (Retry-After 0.150s)" ]
}

@test "a hint with white space around it" {
	hinted $' \t 0.2 \r\n\n' -b 10s
	between "$ms" 200 220
	[ "$note" = " (Retry-After 0.200s)" ]
}

@test "a hint as an HTTP-date" {
	# Two seconds from now: UTC as the zone 2 s east of it (POSIX TZ).
	date=$(LC_ALL=C TZ=UTC-0:00:02 date '+%a, %d %b %Y %H:%M:%S GMT')
	hinted "$date" -b 4s -c 5s
	between "$ms" 400 2420
	[[ $note =~ ^\ \(Retry-After\ [0-9]+(\.[0-9]+)?s\)$ ]]
	between "$took" "$ms" $((ms + 3000))
}

@test "a hint beyond the cap is cut to the cap, and the message says so" {
	hinted 5s -b 100ms -c 300ms -D 10s	# the cap; the deadline is further
	[ "$ms" -eq 300 ]
	[ "$note" = " (Retry-After 5.000s, cut to the cap 0.300s)" ]
	between "$took" 300 3300
}

@test "a hint beyond the deadline ends the run at once, as a too-long delay would" {
	t0=$(now_ms)
	run -3 --separate-stderr "$RETRY" -D 5s -b 10ms sh -c \
	    'echo "$RETRY_ATTEMPT" >>count; echo 10 >"$RETRY_AFTER_FILE"; exit 3'
	took=$(($(now_ms) - t0))
	[ "$(cat count)" = 1 ]
	[[ $stderr =~ ^retry:\ attempt\ 1/5\ failed\ with\ exit\ 3\;\ giving\ up:\ a\ delay\ of\ 1[01]\.[0-9]{3}s\ would\ pass\ the\ deadline$ ]]
	between "$took" 0 4000	# neither the hint nor the deadline waited for
	# Also when the cap is shorter: the server will not take it sooner.
	rm -f count
	run -3 --separate-stderr "$RETRY" -D 5s -b 10ms -c 50ms sh -c \
	    'echo "$RETRY_ATTEMPT" >>count; echo 10 >"$RETRY_AFTER_FILE"; exit 3'
	[ "$(cat count)" = 1 ]
	[[ $stderr =~ ^retry:\ attempt\ 1/5\ failed\ with\ exit\ 3\;\ giving\ up:\ a\ delay\ of\ 1[01]\.[0-9]{3}s\ would\ pass\ the\ deadline$ ]]
}

@test "zero, negative, passed, unusable and too long hints give the backoff; -v says why" {
	for case in '0=zero' '0s=zero' '-5=negative' '-1s=negative' \
	    'soon=neither a delay nor an HTTP-date' '1.5x=neither a delay nor an HTTP-date' \
	    'Wed, 21 Oct 2015 07:28:00 GMT=a date that has passed' \
	    "$(printf '%0200d' 1)=too long"; do
		hint=${case%%=*} why=${case#*=}
		run -1 --separate-stderr "$RETRY" -v -n 2 -b 10ms -j none sh -c '
			[ "$RETRY_ATTEMPT" = 1 ] && printf "%s\n" "$1" >"$RETRY_AFTER_FILE"
			exit 1' sh "$hint"
		echo "hint '$hint':"
		printf '%s\n' "$stderr"
		[ "${stderr_lines[1]}" = "retry: Retry-After hint not used: $why" ]
		[ "${stderr_lines[2]}" = "retry: attempt 1/2 failed with exit 1; next in 0.010s" ]
		[ "${stderr_lines[3]}" = "retry: drew 0.010s from [0.010s, 0.010s]: none jitter, step 0.010s" ]
	done
}

@test "an empty hint file, or white space only, is no hint, and -v says nothing of it" {
	for hint in '' ' \n\t'; do
		run -1 --separate-stderr "$RETRY" -v -n 2 -b 10ms -j none sh -c '
			[ "$RETRY_ATTEMPT" = 1 ] && printf "$1" >"$RETRY_AFTER_FILE"
			exit 1' sh "$hint"
		printf '%s\n' "$stderr"
		[ "${#stderr_lines[@]}" -eq 5 ]
		[ "${stderr_lines[1]}" = "retry: attempt 1/2 failed with exit 1; next in 0.010s" ]
		[ "${stderr_lines[2]}" = "retry: drew 0.010s from [0.010s, 0.010s]: none jitter, step 0.010s" ]
	done
}

@test "a hint file of headers, as curl -D writes them through a redirect: the last Retry-After counts" {
	local dump='HTTP/1.1 301 Moved Permanently\r\nLocation: /next\r\nRetry-After: 5\r\n\r\nHTTP/1.1 429 Too Many Requests\r\nretry-after: 0.05\r\nContent-Length: 0\r\n\r\n'
	run -0 --separate-stderr "$RETRY" -n 2 -b 10s sh -c '
		[ "$RETRY_ATTEMPT" = 2 ] || { printf "$1" >"$RETRY_AFTER_FILE"; exit 1; }' sh "$dump"
	matches "${stderr_lines[0]}" '^retry: attempt 1/2 failed with exit 1; next in 0\.05[0-5]s \(Retry-After 0\.050s\)$'
}

@test "values a line each (a wrapper's sed through a redirect): the last that is a hint counts" {
	run -0 --separate-stderr "$RETRY" -n 2 -b 10s sh -c '
		[ "$RETRY_ATTEMPT" = 2 ] || { printf "3\n0.05\nlater\n" >"$RETRY_AFTER_FILE"; exit 1; }'
	matches "${stderr_lines[0]}" '^retry: attempt 1/2 failed with exit 1; next in 0\.05[0-5]s \(Retry-After 0\.050s\)$'
}

@test "headers without a Retry-After are no hint, and -v says so" {
	run -0 --separate-stderr "$RETRY" -v -n 2 -b 10ms -j none sh -c '
		[ "$RETRY_ATTEMPT" = 2 ] || { printf "HTTP/1.1 500 Oops\r\nContent-Type: text/plain\r\n\r\n" >"$RETRY_AFTER_FILE"; exit 1; }'
	[ "${stderr_lines[1]}" = "retry: Retry-After hint not used: no Retry-After header" ]
	[ "${stderr_lines[2]}" = "retry: attempt 1/2 failed with exit 1; next in 0.010s" ]
}

@test "after a hint the backoff keeps counting: the next delay is the schedule's" {
	run -1 --separate-stderr "$RETRY" -n 3 -b 10ms -j none sh -c '
		[ "$RETRY_ATTEMPT" = 1 ] && echo 50ms >"$RETRY_AFTER_FILE"
		exit 1'
	[[ ${stderr_lines[0]} =~ ^retry:\ attempt\ 1/3\ failed\ with\ exit\ 1\;\ next\ in\ 0\.05[0-5]s\ \(Retry-After\ 0\.050s\)$ ]]
	[ "${stderr_lines[1]}" = "retry: attempt 2/3 failed with exit 1; next in 0.020s" ]
}

@test "-v shows a hint that was used, and no drawn delay for it" {
	run -1 --separate-stderr "$RETRY" -v -n 2 -b 10ms -j none sh -c \
	    'echo 20ms >"$RETRY_AFTER_FILE"; exit 1'
	[ "${#stderr_lines[@]}" -eq 4 ]
	[[ ${stderr_lines[0]} == "retry: policy: "* ]]
	[[ ${stderr_lines[1]} =~ ^retry:\ attempt\ 1/2\ failed\ with\ exit\ 1\;\ next\ in\ 0\.02[0-2]s\ \(Retry-After\ 0\.020s\)$ ]]
	[ "${stderr_lines[2]}" = "retry: attempt 2/2 failed with exit 1; giving up: no attempts left" ]
	[[ ${stderr_lines[3]} == "retry: 2 attempts in "* ]]
}

@test "--dry-run is unaffected by RETRY_AFTER_FILE and makes no directory" {
	printf 0.2 >hint
	run -0 --separate-stderr "$RETRY" --dry-run -n 3 -b 1s -j none true
	[ "$output" = $'2\t1.000\t1.000\n3\t2.000\t3.000' ]
	[ "$stderr" = "" ]
	RETRY_AFTER_FILE=$PWD/hint run -0 --separate-stderr "$RETRY" --dry-run \
	    -n 3 -b 1s -j none sh -c 'echo 5 >"$RETRY_AFTER_FILE"'
	[ "$output" = $'2\t1.000\t1.000\n3\t2.000\t3.000' ]
	[ "$stderr" = "" ]
	[ "$(cat hint)" = 0.2 ]
	[ "$(tmp_files)" = "" ]
}

# ---- Output conditions --------------------------------------------------------

@test "--on-output: an attempt that exits 0 but prints a matching line is retried" {
	run -0 --separate-stderr "$RETRY" --on-output 'throttl(ed|ing)' -b 10ms -j none sh -c '
		echo "attempt $RETRY_ATTEMPT"
		[ "$RETRY_ATTEMPT" -lt 3 ] && echo "429: throttled, come back later"
		exit 0'
	[ "$output" = "attempt 1
429: throttled, come back later
attempt 2
429: throttled, come back later
attempt 3" ]
	expect_stderr "retry: attempt 1/5 succeeded; next in 0.010s
retry: attempt 2/5 succeeded; next in 0.020s"
	# Matching every time: the attempts run out, with the last status.
	run -0 --separate-stderr "$RETRY" --on-output throttled -n 2 -b 10ms -j none \
	    echo throttled
	expect_stderr "retry: attempt 1/2 succeeded; next in 0.010s
retry: attempt 2/2 succeeded; giving up: no attempts left"
}

@test "--on-output: stderr lines match too, as POSIX extended regular expressions, line by line" {
	run -0 --separate-stderr "$RETRY" --on-output '^throttl(ed|ing)$' -b 10ms -j none sh -c '
		case $RETRY_ATTEMPT in
		1) echo throttling >&2 ;;
		2) echo throttled >&2 ;;
		3) printf "not\nthrottled" >&2 ;;
		*) echo "throttled now"; echo throttle >&2 ;;
		esac'
	[ "$output" = "throttled now" ]
	expect_stderr "throttling
retry: attempt 1/5 succeeded; next in 0.010s
throttled
retry: attempt 2/5 succeeded; next in 0.020s
not
throttledretry: attempt 3/5 succeeded; next in 0.040s
throttle"
}

# matched SCRIPT: how many attempts retry --on-output throttled makes when
# each runs SCRIPT and exits 0 (2 if the output matched, else 1).
matched() {
	rm -f count
	run -0 "$RETRY" --on-output throttled -n 2 -b 10ms -j none \
	    sh -c 'echo x >>count; eval "$1"' sh "$1"
	wc -l <count
}

@test "--on-output: a line longer than 4096 bytes is matched on its first part only" {
	[ "$(matched 'printf "throttled%05000d\n" 0')" -eq 2 ]
	[ "$(matched 'printf "%05000dthrottled\n" 0')" -eq 1 ]
	[ "$(matched 'printf "%05000dthrottled\n" 0 >&2')" -eq 1 ]
	# The next line is matched again from its start.
	[ "$(matched 'printf "%05000dx\nthrottled\n" 0')" -eq 2 ]
	# A line written in pieces, or with no newline at the end.
	[ "$(matched 'printf thro; sleep 0.05; printf "ttled\n"')" -eq 2 ]
	[ "$(matched 'printf "ok\nthrottled"')" -eq 2 ]
	[ "$(matched 'echo fine')" -eq 1 ]
}

@test "--stop-on-output: a matching line prevents the retry, whatever the status and --on-output" {
	run -1 --separate-stderr "$RETRY" --stop-on-output 'permission denied' -b 10ms \
	    sh -c 'echo "$RETRY_ATTEMPT" >>count; echo "error: permission denied" >&2; exit 1'
	[ "$(cat count)" = 1 ]
	expect_stderr "error: permission denied
retry: attempt 1/5 failed with exit 1; giving up: its output matched --stop-on-output"

	rm count
	run -1 --separate-stderr "$RETRY" --on-output 'denied|later' \
	    --stop-on-output 'permission denied' -o 1 -b 10ms \
	    sh -c 'echo "$RETRY_ATTEMPT" >>count; echo "try later"; echo "permission denied"; exit 1'
	[ "$(cat count)" = 1 ]
	[ "$output" = "try later
permission denied" ]
	expect_stderr "retry: attempt 1/5 failed with exit 1; giving up: its output matched --stop-on-output"

	# An exit-0 attempt that --on-output alone would retry.
	rm count
	run -0 --separate-stderr "$RETRY" --on-output throttled --stop-on-output fatal \
	    -b 10ms sh -c 'echo "$RETRY_ATTEMPT" >>count; echo throttled; echo fatal >&2'
	[ "$(cat count)" = 1 ]
	expect_stderr "fatal
retry: attempt 1/5 succeeded; giving up: its output matched --stop-on-output"

	# No match: retried as usual.
	rm count
	run -1 --separate-stderr "$RETRY" --stop-on-output 'permission denied' \
	    -n 2 -b 10ms -j none sh -c 'echo "$RETRY_ATTEMPT" >>count; echo "no route" >&2; exit 1'
	[ "$(wc -l <count)" -eq 2 ]
}

@test "--on-output and --stop-on-output read the held stdout of --buffer-stdout" {
	run -0 --separate-stderr "$RETRY" -O --on-output throttled -b 10ms -j none \
	    sh -c 'echo "out $RETRY_ATTEMPT"; [ "$RETRY_ATTEMPT" = 1 ] && echo throttled; exit 0'
	[ "$output" = "out 2" ]
	expect_stderr "out 1
throttled
retry: attempt 1/5 succeeded; next in 0.010s"
	run -1 --separate-stderr "$RETRY" -O --stop-on-output denied -b 10ms \
	    sh -c 'echo "out $RETRY_ATTEMPT"; echo denied; exit 1'
	[ "$output" = "out 1
denied" ]
	expect_stderr "retry: attempt 1/5 failed with exit 1; giving up: its output matched --stop-on-output"
}

@test "matched output streams through unchanged, in order within each stream" {
	head -c 300000 /dev/urandom >o
	head -c 200000 /dev/urandom >e
	head -c 100000 o >o1; tail -c +100001 o >o2
	head -c 150000 e >e1; tail -c +150001 e >e2
	rc=0
	"$RETRY" --on-output 'no such line' --stop-on-output 'nor this one' -n 1 sh -c '
		cat o1; cat e1 >&2; cat o2; cat e2 >&2; printf end; printf end2 >&2' \
	    >out 2>err || rc=$?
	[ "$rc" -eq 0 ]
	{ cat o; printf end; } | cmp - out
	{ cat e; printf end2; } | cmp - err
}

@test "matched output is passed on as it comes, not when the attempt ends" {
	"$RETRY" --on-output x -n 1 sh -c 'echo first; echo first-err >&2
		i=0; while [ ! -e go ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		[ -e go ] && echo after-go' >out 2>err 3>&- &
	echo $! >bg.pid
	wait_for_text out first
	wait_for_text err first-err
	touch go
	wait "$(cat bg.pid)"
	[ "$(cat out)" = "first
after-go" ]
	[ "$(cat err)" = first-err ]
}

@test "no deadlock when the child writes 5 MB to both streams at once with matching on" {
	yes 0123456789 | head -c 5000000 >big
	t0=$(now_ms)
	timeout 30 "$RETRY" --on-output x --stop-on-output y -n 1 \
	    sh -c 'cat big & cat big >&2; wait' 2>err | cat >out
	[ "${PIPESTATUS[0]}" -eq 0 ]
	echo "took $(($(now_ms) - t0)) ms"
	cmp big out
	cmp big err
}

@test "matched output to a reader that has gone: the child's pipe closes too" {
	run -0 timeout 10 sh -c '"$1" --on-output x -n 1 yes 2>err | head -n1' sh "$RETRY"
	[ "$output" = y ]
	[ "$(cat err)" = "retry: attempt 1/1 killed by SIGPIPE; giving up: the reader of the output has gone" ]
}

@test "an attempt killed by SIGPIPE because retry's reader has gone is not retried: no one to retry for" {
	run -0 timeout 10 sh -c '"$1" -b 10ms yes 2>err | head -n1' sh "$RETRY"
	[ "$output" = y ]
	[ "$(cat err)" = "retry: attempt 1/5 killed by SIGPIPE; giving up: the reader of the output has gone" ]
	# Also an attempt that says so with status 141, as a shell does.
	run -0 timeout 10 sh -c '"$1" -b 10ms sh -c "yes; exit 141" 2>err | head -n1' sh "$RETRY"
	[ "$(cat err)" = "retry: attempt 1/5 failed with exit 141; giving up: the reader of the output has gone" ]
}

@test "a SIGPIPE from elsewhere (a socket, a pipe of the attempt's own) is still retried" {
	# retry's own output has a reader; the attempt's pipe does not.
	run -141 --separate-stderr "$RETRY" -n 2 -b 10ms -j none sh -c 'kill -PIPE $$'
	[ "${stderr_lines[0]}" = "retry: attempt 1/2 killed by SIGPIPE; next in 0.010s" ]
}

@test "without -O, --on-output and --stop-on-output retry leaves the child's stdin, stdout and stderr alone" {
	echo in >in
	# Expanded before the redirection: the attempt's own fd 1.
	script='rm -f "$1"; for i in 0 1 2; do
		echo "$i $(readlink /proc/$$/fd/$i) $(readlink /proc/$PPID/fd/$i)" >>"$1"; done'
	"$RETRY" -n 1 sh -c "$script" sh fds <in >out 2>err
	[ "$(cat fds)" = "0 $PWD/in $PWD/in
1 $PWD/out $PWD/out
2 $PWD/err $PWD/err" ]
	# Even with -I: a regular file is given as it is.
	"$RETRY" -I -n 1 sh -c "$script" sh fds <in >out 2>err
	[ "$(sed -n 1p fds)" = "0 $PWD/in $PWD/in" ]
	# With matching, pipes.
	"$RETRY" --on-output x -n 1 sh -c "$script" sh fds <in >out 2>err
	[[ $(sed -n 2p fds) =~ ^1\ pipe:\[[0-9]+\]\ $PWD/out$ ]]
	[[ $(sed -n 3p fds) =~ ^2\ pipe:\[[0-9]+\]\ $PWD/err$ ]]
	# With -O, a held file for stdout only.
	"$RETRY" -O -n 1 sh -c "$script" sh fds <in >out 2>err
	[[ $(sed -n 2p fds) =~ ^1\ $TMPDIR/(#[0-9]+|retry\.[A-Za-z0-9]{6})\ \(deleted\)\ $PWD/out$ ]]
	[ "$(sed -n 3p fds)" = "2 $PWD/err $PWD/err" ]
}

# ---- --report ---------------------------------------------------------------

@test "--report: valid JSON with the command, each attempt, the outcome, the exit status and the total time" {
	script='case $RETRY_ATTEMPT in 1) exit 1 ;; 2) echo 10ms >$RETRY_AFTER_FILE; exit 1 ;; esac'
	run -0 --separate-stderr "$RETRY" --report r.json -b 10ms -j none sh -c "$script"
	json_ok r.json
	cat r.json
	[ "$(norm r.json)" = '{
  "command": ["sh", "-c", "'"$script"'"],
  "attempts": [
    {"attempt": 1, "start": T, "duration": T, "status": 1, "signal": null, "timed_out": false, "error": null, "delay": T, "delay_from": "backoff"},
    {"attempt": 2, "start": T, "duration": T, "status": 1, "signal": null, "timed_out": false, "error": null, "delay": T, "delay_from": "hint"},
    {"attempt": 3, "start": T, "duration": T, "status": 0, "signal": null, "timed_out": false, "error": null, "delay": null, "delay_from": null}
  ],
  "outcome": "success",
  "exit_status": 0,
  "signal": null,
  "total_time": T
}' ]
	grep -q '"attempt": 1, .*"delay": 0\.010000, "delay_from": "backoff"' r.json
	grep -q '"attempt": 2, .*"delay": 0\.01[01][0-9]\{3\}, "delay_from": "hint"' r.json
	# Starts increase; the total is at least the last start.
	starts=$(grep -o '"start": [0-9.]*' r.json | cut -d' ' -f2 | tr -d .)
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
	[ "$(wc -l <r.json)" -eq 11 ]
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
	RETRY_DEADLINE=$(($(msclock -r) / 1000 - 10)) run -124 --separate-stderr \
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

# ---- Slow -------------------------------------------------------------------

# bats test_tags=slow
@test "--replay-stdin: 1 GiB reaches every attempt whole with retry's peak RSS under 4 MiB" {
	[ -z "${TEST_SANITIZED:-}" ] || skip "memory is measured without sanitizers"
	rc=0
	head -c 1073741824 /dev/zero | timeout 100 "$RETRY" -I -n 2 -b 10ms -j none sh -c '
		wc -c >>counts
		grep VmHWM "/proc/$PPID/status" >>hwm
		exit 1' 2>err || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(cat counts)" = "1073741824
1073741824" ]
	cat hwm
	while read -r _ kb _; do
		[ "$kb" -lt 4096 ]
	done <hwm
	[ "$(tmp_files)" = "" ]
}
