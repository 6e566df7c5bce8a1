#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# -Q, the cron mode, where cron runs it: env -i PATH=/usr/bin:/bin, no
# terminal, stdin /dev/null.  A run that succeeds prints nothing at all;
# one that fails prints every attempt's output under a header, in the
# order written, then retry's last line.
load helpers/common

setup() {
	in_test_dir
}

teardown() {
	kill_later
}

# cron ARGS...: retry ARGS... as cron runs it, stdout and stderr apart.
cron() {
	run --separate-stderr env -i PATH=/usr/bin:/bin TMPDIR="$TMPDIR" \
	    "$RETRY" "$@" </dev/null
}

# When an attempt started, in its header: UTC, to the second.
WHEN='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z'

# An attempt that writes to both streams, in turns, then fails but the
# third time.
STEPS='echo "out $RETRY_ATTEMPT a"; echo "err $RETRY_ATTEMPT b" >&2; echo "out $RETRY_ATTEMPT c"; [ "$RETRY_ATTEMPT" -ge 3 ]'

@test "-Q: a run that succeeds after failures prints nothing at all, and exits 0" {
	cron -Q -n 5 -b 1ms -v sh -c "$STEPS"
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	[ "$(tmp_files)" = "" ]
}

@test "-Q: a run that fails prints each attempt's header and output in the order written, then the last line" {
	local before after
	before=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	cron -Q -n 2 -b 10ms -j none sh -c "$STEPS"
	after=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	[ "$status" -eq 1 ]
	[ "$output" = "" ]
	[ "${#stderr_lines[@]}" -eq 9 ]
	# Each header says when its attempt started, on the wall clock (UTC).
	matches "${stderr_lines[0]}" '^retry: attempt 1/2, started '"$WHEN"', failed with exit 1 after [0-9]+\.[0-9]{3}s; next in 0\.010s$'
	local started=${stderr_lines[0]#retry: attempt 1/2, started }
	started=${started%%,*}
	[[ ! $started < $before && ! $started > $after ]]
	[ "${stderr_lines[1]}" = "out 1 a" ]
	[ "${stderr_lines[2]}" = "err 1 b" ]
	[ "${stderr_lines[3]}" = "out 1 c" ]
	# The last attempt's end is said once, in the last line.
	matches "${stderr_lines[4]}" '^retry: attempt 2/2, started '"$WHEN"', ran [0-9]+\.[0-9]{3}s$'
	[ "${stderr_lines[5]}" = "out 2 a" ]
	[ "${stderr_lines[6]}" = "err 2 b" ]
	[ "${stderr_lines[7]}" = "out 2 c" ]
	[ "${stderr_lines[8]}" = "retry: attempt 2/2 failed with exit 1; giving up: no attempts left" ]
	[ "$(tmp_files)" = "" ]
}

@test "-Q: a hint's wait and a killed attempt are in their headers; -q keeps the headers and the output only" {
	cron -Q -q -n 2 -b 10ms -j none sh -c 'echo 20ms >"$RETRY_AFTER_FILE"; echo hi; kill -TERM $$'
	[ "$status" -eq 143 ]
	[ "${#stderr_lines[@]}" -eq 4 ]
	matches "${stderr_lines[0]}" '^retry: attempt 1/2, started '"$WHEN"', killed by SIGTERM after [0-9.]+s; next in 0\.02[0-9]s \(Retry-After 0\.020s\)$'
	[ "${stderr_lines[1]}" = hi ]
	matches "${stderr_lines[2]}" '^retry: attempt 2/2, started '"$WHEN"', ran [0-9.]+s$'
	[ "${stderr_lines[3]}" = hi ]
}

@test "-Q: SIGTERM during the run prints what was held, and retry dies of SIGTERM" {
	env -i PATH=/usr/bin:/bin TMPDIR="$TMPDIR" "$RETRY" -Q -n 5 -b 10s \
	    sh -c 'echo "held $RETRY_ATTEMPT"; touch ran; exit 1' \
	    </dev/null >out 2>err 3>&- &
	local pid=$!
	later "$pid"
	wait_for ran
	sleep 0.2	# into the delay of 5 to 10 s
	kill -TERM "$pid"
	local status=0
	wait "$pid" || status=$?
	[ "$status" -eq 143 ]
	cat err
	matches "$(sed -n 1p err)" '^retry: attempt 1/5, started '"$WHEN"', failed with exit 1 after [0-9.]+s; next in [0-9.]+s$'
	[ "$(sed -n 2p err)" = "held 1" ]
	[ "$(sed -n 3p err)" = "retry: attempt 1/5 failed with exit 1; giving up: interrupted by SIGTERM" ]
	[ "$(wc -l <err)" -eq 3 ]
	[ ! -s out ]
}

@test "-Q: hooks and --on-output work as without it; a hook's output is held too" {
	cron -Q -n 3 -b 1ms --on-output RETRYME --on-retry 'echo from-hook' \
	    sh -c '[ "$RETRY_ATTEMPT" = 1 ] && echo RETRYME; exit 0'
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
	cron -Q -n 2 -b 1ms --on-retry 'echo from-hook' false
	[ "$status" -eq 1 ]
	[ "${stderr_lines[1]}" = "from-hook" ]
}

@test "-Q: a run that succeeds prints nothing, its --on-success hook's output included; a hook that fails shows its output and why" {
	cron -Q -n 3 -b 1ms --on-success 'echo ok-out; echo ok-err >&2' \
	    --on-retry 'echo retry-hook' sh -c '[ "$RETRY_ATTEMPT" = 2 ]'
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	cron -Q -n 3 -b 1ms --on-success 'echo ping-body; exit 22' \
	    --on-retry 'echo retry-hook' sh -c '[ "$RETRY_ATTEMPT" = 2 ]'
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
	# The warning at once, on stderr itself; then what the hook printed.
	[ "$stderr" = "retry: --on-success: failed with exit 22
ping-body" ]
	[ "$(tmp_files)" = "" ]
}

@test "-Q: 100 MiB of output is held on disk: retry's memory stays under 4 MiB" {
	[ -z "${TEST_SANITIZED:-}" ] || skip "memory is measured without sanitizers"
	local status=0
	env -i PATH=/usr/bin:/bin TMPDIR="$TMPDIR" "$RETRY" -Q -n 2 -b 1ms \
	    sh -c 'head -c 104857600 /dev/zero
		grep VmHWM "/proc/$PPID/status" | tr -s " " >>"$0/hwm"
		exit 1' "$PWD" </dev/null >out 2>err || status=$?
	[ "$status" -eq 1 ]
	cat hwm
	while read -r _ kb _; do
		[ "$kb" -lt 4096 ]
	done <hwm
	# Both attempts' output came out whole, each after its header.
	[ "$(grep -a -o 'retry: attempt [12]/2, started ' err | wc -l)" -eq 2 ]
	[ "$(tr -d '\000' <err | wc -c)" -lt 1000 ]
	[ "$(wc -c <err)" -gt 209715200 ]
	[ ! -s out ]
}

@test "-Q with an unusable TMPDIR says so once and lets the output through" {
	run --separate-stderr env -i PATH=/usr/bin:/bin TMPDIR=/nonexistent \
	    "$RETRY" -Q -n 2 -b 1ms -j none sh -c 'echo out; exit 1' </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "out
out" ]
	[ "${stderr_lines[0]}" = "retry: -Q: no file in /nonexistent, so output passes through: No such file or directory" ]
	[ "$(grep -c 'no file in' <<<"$stderr")" -eq 1 ]
	[ "${stderr_lines[1]}" = "retry: attempt 1/2 failed with exit 1; next in 0.001s" ]
}

@test "-Q and -O both hold the output: a usage error" {
	run -125 --separate-stderr "$RETRY" -Q -O touch ran
	[ "$stderr" = "retry: -Q and -O both hold the output: choose one (-Q shows it only when the run fails)" ]
	[ ! -e ran ]
}

# ping_server LOG PORTFILE: a server on 127.0.0.1 (killed in teardown)
# that answers every GET with 200 and appends its path to LOG, as a
# heartbeat service would take pings.
ping_server() {
	python3 -c '
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[1], "a") as f:
            f.write(self.path + "\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *args):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[2] + ".new", "w") as f:
    f.write("%d\n" % s.server_address[1])
os.rename(sys.argv[2] + ".new", sys.argv[2])
s.serve_forever()' "$1" "$2" 3>&- &
	later $!
	disown $!
	wait_for "$2"
}

@test "a cron job of 20 runs against a downstream that fails at random: mail only for the failed runs, one ping of the right kind per run, metrics that match the reports" {
	command -v curl >/dev/null || skip "curl is not installed"
	command -v python3 >/dev/null || skip "python3 is not installed"
	ping_server pings port
	local url="http://127.0.0.1:$(cat port)" i status failed=0 passed=0
	mkdir text
	# The downstream: fails two times in three, each attempt.
	printf '%s\n' 'echo "try $RETRY_ATTEMPT"; echo "why $RETRY_ATTEMPT" >&2' \
	    '[ $(od -An -N1 -tu1 /dev/urandom) -lt 86 ]' >downstream
	for i in $(seq 1 20); do
		status=0
		env -i PATH=/usr/bin:/bin TMPDIR="$TMPDIR" "$RETRY" -Q -n 3 \
		    -b 1ms --report "r$i.json" --metrics text/job.prom \
		    --on-success "curl -fsS $url/ok/$i" \
		    --on-giveup "curl -fsS $url/fail/$i" \
		    sh downstream </dev/null >"mail$i" 2>&1 || status=$?
		local attempts
		attempts=$(grep -c '"attempt": ' "r$i.json")
		grep -q "\"exit_status\": $status," "r$i.json"
		if [ "$status" -eq 0 ]; then
			passed=$((passed + 1))
			# No mail for a run that succeeded.
			[ ! -s "mail$i" ]
			grep -qx "/ok/$i" pings
		else
			failed=$((failed + 1))
			# Mail with every attempt's header and output, in order.
			[ "$(grep -c '^retry: attempt [0-9]/3, started ' "mail$i")" -eq "$attempts" ]
			# The last attempt's end is said once, in the last line.
			[ "$(grep -c 'attempt 3/3 failed' "mail$i")" -eq 1 ]
			[ "$(grep -c '^try ' "mail$i")" -eq "$attempts" ]
			[ "$(grep -c '^why ' "mail$i")" -eq "$attempts" ]
			[ "$(tail -n 1 "mail$i")" = "retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
			grep -qx "/fail/$i" pings
		fi
		# One ping per run.
		[ "$(grep -c "/$i\$" pings)" -eq 1 ]
		# The metrics say what the report says.
		grep -qx "retry_exit_status{job=\"job\"} $status" text/job.prom
		grep -qx "retry_attempts{job=\"job\"} $attempts" text/job.prom
		grep -q "^retry_outcome{job=\"job\",outcome=\"$(sed -n 's/^  "outcome": "\(.*\)",$/\1/p' "r$i.json")\"} 1$" text/job.prom
	done
	echo "passed $passed, failed $failed"
	[ "$(wc -l <pings)" -eq 20 ]
	[ "$(tmp_files)" = "" ]
}

@test "-Q: a failed run's 3 MiB of binary output reach a stderr on a file, one opened with >>, and a pipe byte for byte" {
	head -c 3145728 /dev/urandom >big
	# want FILE: the report expected in FILE, its lines of retry's taken
	# from it (their durations vary), after what came before it (prefix).
	want() {
		h1=$(grep -a '^retry: attempt 1/2, started ' "$1")
		h2=$(grep -a '^retry: attempt 2/2, started ' "$1")
		{
			cat prefix
			printf '%s\n' "$h1"; cat big; echo x
			printf '%s\n' "$h2"; cat big; echo x
			echo "retry: attempt 2/2 failed with exit 3; giving up: no attempts left"
		} >want
		cmp want "$1"
	}
	set -- -Q -n 2 -b 1ms -j none sh -c 'cat big; echo x >&2; exit 3'
	: >prefix
	rc=0; "$RETRY" "$@" 2>err >/dev/null || rc=$?
	[ "$rc" -eq 3 ]
	want err
	printf 'before\n' >prefix
	cp prefix err
	rc=0; "$RETRY" "$@" 2>>err >/dev/null || rc=$?
	[ "$rc" -eq 3 ]
	want err
	: >prefix
	{ "$RETRY" "$@" 2>&1 >/dev/null; } | cat >err
	want err
}

# in_small_tmpdir SIZE CMD...: CMD with $TMPDIR a tmpfs of SIZE of its own,
# in a mount namespace of its own, so that the real file systems are left
# alone; skips where that cannot be had.
in_small_tmpdir() {
	[ "$(id -u)" -eq 0 ] || skip "needs root, for a mount namespace"
	command -v unshare >/dev/null || skip "unshare is not installed"
	unshare --mount true 2>/dev/null || skip "no mount namespace here"
	unshare --mount sh -c 'size=$1; shift
		mount -t tmpfs -o "size=$size" tmpfs "$TMPDIR" && exec "$@"' \
	    sh "$@"
}

# -Q's failure line when its file fails, with what it says of the error.
FAILED_OVER='retry: -Q: temporary file: No space left on device; what it held is above, the output passes through from here'

@test "-Q with a TMPDIR that fills during the run: what it held, one line, then the rest pass through; every byte reaches stderr, the status is the command's" {
	head -c 450000 /dev/urandom | base64 >chunk	# 600 kB of lines
	rc=0
	in_small_tmpdir 1m "$RETRY" -Q -n 3 -b 1ms -j none sh -c \
	    'cat chunk; echo "end $RETRY_ATTEMPT" >&2; exit 3' \
	    </dev/null >out 2>err || rc=$?
	[ "$rc" -eq 3 ]
	[ ! -s out ]
	grep -c -F "$FAILED_OVER" err
	[ "$(grep -c -F "$FAILED_OVER" err)" -eq 1 ]
	# Without retry's lines, the three attempts' output, whole, in order.
	python3 - "$FAILED_OVER" <<'PY'
import re, sys
data = open("err", "rb").read()
line = sys.argv[1].encode() + b"\n"
assert data.count(line) == 1
before, after = data.split(line)
# The part held came first: attempt 1 under its header, attempt 2's start.
T = rb"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z"
assert re.match(rb"retry: attempt 1/3, started " + T + rb", failed with exit 3 after [0-9.]+s; next in 0\.001s\n", before), before[:100]
assert re.search(rb"\nretry: attempt 2/3, started " + T + rb"\n", before)
# After the line, retry's own lines pass through as without -Q.
assert b"\nretry: attempt 2/3 failed with exit 3; next in 0.002s\n" in after
assert after.endswith(b"end 3\nretry: attempt 3/3 failed with exit 3; giving up: no attempts left\n"), after[-200:]
held = re.sub(rb"(?m)^retry: [^\n]*\n", b"", before)
passed = re.sub(rb"(?m)^retry: [^\n]*\n", b"", after)
chunk = open("chunk", "rb").read()
want = b"".join(chunk + b"end %d\n" % i for i in (1, 2, 3))
# Where the file filled inside a line, retry ended it, so that its own
# line starts one: that newline is retry's, not the attempt's.
if not want.startswith(held):
    assert held.endswith(b"\n") and want.startswith(held[:-1]), len(held)
    assert want[len(held) - 1:len(held)] != b"\n"
    held = held[:-1]
assert held + passed == want, (len(held + passed), len(want))
PY
}
