#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The Retry-After hint: where RETRY_AFTER_FILE is and when its file goes,
# what a hint may say (seconds, a duration, an HTTP-date, HTTP headers),
# and how it replaces the backoff within the cap and the deadline.

load helpers/common

# A test that hangs fails instead of stopping the whole file.
BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-120}

setup() {
	in_test_dir
}

# A retry that a failed test left in the background, and a server.
teardown() {
	kill_bg_retry
	kill_later
}

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
		with-signals -D "$RETRY" -b 20s -j none sh -c '
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

# http_server PORTFILE CODE:AFTER...: a server on 127.0.0.1 (killed in
# teardown) that answers each GET with the next CODE and a Retry-After
# header of AFTER, then 200 with "ok"; its port goes to PORTFILE.
http_server() {
	local portfile=$1
	shift
	python3 -c '
import http.server, sys
answers = [a.split(":") for a in sys.argv[2:]]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        code, after = answers.pop(0) if answers else ("200", None)
        self.send_response(int(code))
        if after is not None:
            self.send_header("Retry-After", after)
        self.send_header("Content-Length", "3")
        self.end_headers()
        self.wfile.write(b"ok\n")
    def log_message(self, *args):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1] + ".new", "w") as f:
    f.write("%d\n" % s.server_address[1])
import os; os.rename(sys.argv[1] + ".new", sys.argv[1])
s.serve_forever()' "$portfile" "$@" 3>&- &
	later $!
	disown $!
	wait_for "$portfile"
}

@test "--hint-from-stderr: curl -D /dev/stderr against a server that answers 503 with Retry-After, no shell wrapper" {
	command -v curl >/dev/null || skip "curl is not installed"
	command -v python3 >/dev/null || skip "python3 is not installed"
	http_server port 503:0.3
	t0=$(now_ms)
	run -0 --separate-stderr "$RETRY" --hint-from-stderr -n 2 -b 10s -j none \
	    -- curl -fsS -D /dev/stderr "http://127.0.0.1:$(cat port)/"
	took=$(($(now_ms) - t0))
	printf '%s\n' "$stderr"
	[ "$output" = ok ]
	# The headers pass through; the delay is the hint's, not -b's 10s.
	[[ $stderr == *$'Retry-After: 0.3\r'* ]]
	line=$(grep '^retry:' <<<"$stderr")
	matches "$line" '^retry: attempt 1/2 failed with exit 22; next in 0\.3[0-3][0-9]s \(Retry-After 0\.300s\)$'
	between "$took" 300 5000
}

@test "--hint-from-stderr: the last Retry-After line of the attempt counts, any case, stderr unchanged; the cap and -v as for the file" {
	local headers='HTTP/1.1 301 Moved\r\nRetry-After: 5\r\n\r\nHTTP/1.1 429 Slow down\r\nretry-after: 0.05\r\n\r\n'
	run -0 --separate-stderr "$RETRY" --hint-from-stderr -n 2 -b 10s sh -c '
		[ "$RETRY_ATTEMPT" = 2 ] || { printf "$1" >&2; exit 1; }' sh "$headers"
	[ "$(grep -v '^retry:' <<<"$stderr")" = "$(printf "$headers")" ]
	matches "${stderr_lines[6]}" '^retry: attempt 1/2 failed with exit 1; next in 0\.05[0-5]s \(Retry-After 0\.050s\)$'
	# Cut to the cap, as a hint file's.
	run -1 --separate-stderr "$RETRY" --hint-from-stderr -n 2 -b 10ms -c 300ms \
	    -D 10s sh -c 'echo "Retry-After: 5" >&2; exit 1'
	[ "${stderr_lines[1]}" = "retry: attempt 1/2 failed with exit 1; next in 0.300s (Retry-After 5.000s, cut to the cap 0.300s)" ]
	# One that is no hint: -v says why, and the backoff is used.
	run -1 --separate-stderr "$RETRY" -v --hint-from-stderr -n 2 -b 10ms -j none \
	    sh -c 'echo "Retry-After: soon" >&2; exit 1'
	[ "${stderr_lines[2]}" = "retry: Retry-After hint not used: neither a delay nor an HTTP-date" ]
	[ "${stderr_lines[3]}" = "retry: attempt 1/2 failed with exit 1; next in 0.010s" ]
	# Only the attempt's own: the second attempt's delay is the backoff's.
	run -1 --separate-stderr "$RETRY" --hint-from-stderr -n 3 -b 10ms -j none \
	    sh -c '[ "$RETRY_ATTEMPT" = 1 ] && echo "Retry-After: 0.05" >&2; exit 1'
	[ "${stderr_lines[2]}" = "retry: attempt 2/3 failed with exit 1; next in 0.020s" ]
	# Without the option, stderr is not read.
	run -1 --separate-stderr "$RETRY" -n 2 -b 10ms -j none \
	    sh -c 'echo "Retry-After: 5" >&2; exit 1'
	[ "${stderr_lines[1]}" = "retry: attempt 1/2 failed with exit 1; next in 0.010s" ]
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
