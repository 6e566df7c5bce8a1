#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# HTTP answers in a hint (retry(1), The Retry-After hint; retry-formats(5),
# The hint file): the parser's rules as a table (helpers/hint-parse), then
# real curl against a local server (helpers/http-answer): a 4xx ends the
# run, 408, 425, 429 and rate limits are retried after their reset, the
# last response counts, --http-4xx retry, --hint-from-stderr, --circuit.

load helpers/common

# A test that hangs fails instead of stopping the whole file.
BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-120}

# The attempt of most tests: curl writes the headers of every response
# into the hint file, and fails with 22 on a status of 400 or more.
CURL_D='curl -fsS -D "$RETRY_AFTER_FILE" "$1"'

# The last line on 404, the issue's words.
REFUSED_404="giving up: HTTP 404 is not retried; --http-4xx retry to retry it"

setup() {
	in_test_dir
	# The server is on 127.0.0.1: no proxy may stand between.
	unset http_proxy HTTP_PROXY all_proxy ALL_PROXY
}

teardown() {
	kill_later
}

need_curl() {
	command -v curl >/dev/null ||
	    skip "curl is not installed (Debian's curl package)"
}

# serve ANSWER...: helpers/http-answer on 127.0.0.1, killed in teardown,
# answering each connection with the next ANSWER ("429|Retry-After: 1"),
# the last one again once they are used up; each request is a line of
# ./requests; $url is where it listens.
serve() {
	need_curl
	http-answer port requests "$@" 3>&- &
	later $!
	disown $!
	wait_for port
	url=http://127.0.0.1:$(cat port)/
}

# requests: how many requests the server has had.
requests() {
	if [ -e requests ]; then wc -l <requests | tr -d ' '; else echo 0; fi
}

# retry_lines: retry's own lines of $stderr (curl's and the headers aside).
retry_lines() {
	grep '^retry: ' <<<"$stderr" || true
}

# now_s: the Unix time in whole seconds, by the real clock.
now_s() {
	echo $(($(clock-now -r) / 1000))
}

# delay_of LINE: $ms, the delay "next in S.MMMs" of LINE, and $note,
# what follows it.
delay_of() {
	matches "$1" '; next in ([0-9]+)\.([0-9]{3})s(.*)$'
	ms=$((10#${BASH_REMATCH[1]} * 1000 + 10#${BASH_REMATCH[2]}))
	note=${BASH_REMATCH[3]}
	echo "next in $ms ms$note"
}

# rows NOW: rows of "TEXT | EXPECTED" on stdin ('#' lines and blank ones
# skipped), TEXT with printf's backslash escapes; each TEXT read as a
# hint at Unix time NOW must give EXPECTED (see helpers/hint-parse).
rows() {
	local now=$1 text want got bad=0 n=0
	while IFS='|' read -r text want; do
		case $text in '' | '#'*) continue ;; esac
		n=$((n + 1))
		text=${text% }
		want=${want# }
		got=$(hint-parse "$now" "$(printf '%b' "$text")" 2>&1) ||
		    got="failed: $got"
		if [ "$got" != "$want" ]; then
			printf 'row: %s\n want: %s\n  got: %s\n' "$text" "$want" \
			    "$got" >&2
			bad=1
		fi
	done
	[ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
}

@test "the parser: the last response's status, whether it is a rate limit, and its delay or why none" {
	rows 1800000000 <<-'EOF'
	# A value alone, and values a line each, as before: no status.
	5 | 0 - 5.000s Retry-After
	3\n0.05\nlater\n | 0 - 0.050s Retry-After
	\n | 0 - why: empty
	# Status lines: HTTP/1.0, 1.1, 2 (no reason), CRLF or LF.
	HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\n\r\n | 404 - why: no Retry-After header
	HTTP/1.0 401 Unauthorized\n\n | 401 - why: no Retry-After header
	HTTP/2 404\r\n\r\n | 404 - why: no Retry-After header
	HTTP/2 404 | 404 - why: no Retry-After header
	# Only the last response counts: a 100, a redirect's headers forgotten.
	HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\n\r\n | 503 limit 2.000s Retry-After
	HTTP/1.1 301 Moved\r\nRetry-After: 5\r\n\r\nHTTP/1.1 404 Not Found\r\n\r\n | 404 - why: no Retry-After header
	HTTP/1.1 301 Moved\r\nRetry-After: 5\r\n\r\nHTTP/1.1 429 Slow\r\nretry-after: 0.05\r\n\r\n | 429 limit 0.050s Retry-After
	# A rate limit: 429, a Retry-After, a remaining count of 0.
	HTTP/1.1 429 Too Many Requests\r\n\r\n | 429 limit why: no Retry-After header
	HTTP/1.1 404 Not Found\r\nRetry-After: soon\r\n\r\n | 404 limit why: neither a delay nor an HTTP-date
	HTTP/1.1 403 Forbidden\r\nx-ratelimit-remaining: 0\r\nx-ratelimit-reset: 1800000010\r\n\r\n | 403 limit 10.000s X-RateLimit-Reset
	HTTP/1.1 403 Forbidden\r\nRateLimit-Remaining: 00\r\n\r\n | 403 limit why: no Retry-After header
	HTTP/1.1 403 Forbidden\r\nx-ratelimit-remaining: 12\r\nx-ratelimit-reset: 1800000010\r\n\r\n | 403 - why: no Retry-After header
	# Resets: a Unix time (larger than now less a day) or seconds.
	HTTP/2 429\r\nx-ratelimit-reset: 1800000003\r\n\r\n | 429 limit 3.000s X-RateLimit-Reset
	HTTP/1.1 429 Slow\r\nRateLimit-Reset: 30\r\n\r\n | 429 limit 30.000s RateLimit-Reset
	HTTP/1.1 429 Slow\r\nRateLimit-Reset: 1.5\r\n\r\n | 429 limit 1.500s RateLimit-Reset
	HTTP/1.1 429 Slow\r\nX-RateLimit-Reset: 1800000001.25\r\n\r\n | 429 limit 1.250s X-RateLimit-Reset
	HTTP/1.1 429 Slow\r\nX-RateLimit-Reset: 1799999999\r\n\r\n | 429 limit why: a Unix time that has passed
	HTTP/1.1 429 Slow\r\nX-RateLimit-Reset: 1799913601\r\n\r\n | 429 limit why: a Unix time that has passed
	HTTP/1.1 429 Slow\r\nX-RateLimit-Reset: 1799913600\r\n\r\n | 429 limit 1000000000.000s X-RateLimit-Reset
	HTTP/1.1 429 Slow\r\nX-RateLimit-Reset: 0\r\n\r\n | 429 limit why: zero
	HTTP/1.1 429 Slow\r\nX-RateLimit-Reset: -5\r\n\r\n | 429 limit why: negative
	HTTP/1.1 429 Slow\r\nX-RateLimit-Reset: soon\r\n\r\n | 429 limit why: neither seconds nor a Unix time
	# Retry-After wins over a reset, unless it is no hint.
	HTTP/1.1 429 Slow\r\nRetry-After: 2\r\nX-RateLimit-Reset: 1800000009\r\n\r\n | 429 limit 2.000s Retry-After
	HTTP/1.1 429 Slow\r\nRetry-After: soon\r\nX-RateLimit-Reset: 1800000009\r\n\r\n | 429 limit 9.000s X-RateLimit-Reset
	# A reset outside a rate limit is none: GitHub sends it always.
	HTTP/1.1 500 Internal Server Error\r\nX-RateLimit-Remaining: 4\r\nX-RateLimit-Reset: 1800003600\r\n\r\n | 500 - why: no Retry-After header
	HTTP/1.1 503 Service Unavailable\r\nRateLimit-Reset: 30\r\n\r\n | 503 - why: no Retry-After header
	# Headers without a status line: a spent limit all the same.
	x-ratelimit-remaining: 0\nx-ratelimit-reset: 1800000005\n | 0 limit 5.000s X-RateLimit-Reset
	# Not status lines: the headers are read as if there were none.
	HTTP/1.1 abc\r\nRetry-After: 3\r\n | 0 limit 3.000s Retry-After
	HTTP/1.1 4040 Big\r\n | 0 - why: no Retry-After header
	HTTP/1.1 099 Low\r\n | 0 - why: no Retry-After header
	EOF
}

@test "the lines that --hint-from-stderr keeps: a status line, the five headers a hint reads, names in any case" {
	local line want
	while IFS='|' read -r line want; do
		[ "$(hint-parse -l "${line% }")" = "${want# }" ] ||
		    { echo "'$line': $(hint-parse -l "${line% }"), not $want"; return 1; }
	done <<-'EOF'
	HTTP/1.1 404 Not Found | status
	HTTP/2 429 | status
	Retry-After: 1 | header
	retry-after:1 | header
	RateLimit-Reset: 3 | header
	x-ratelimit-reset: 1800000000 | header
	RateLimit-Remaining: 0 | header
	X-RATELIMIT-REMAINING: 0 | header
	Content-Type: text/plain | other
	Retry-After : 1 | other
	Retry-After 1 | other
	HTTP/1.1 abc | other
	curl: (22) The requested URL returned error: 404 | other
	EOF
}

@test "curl -D against a 404: one attempt, status 22, outcome not_retryable, the last line names the status" {
	serve 404
	run -22 --separate-stderr "$RETRY" -v --report r.json -b 10ms \
	    sh -c "$CURL_D" sh "$url"
	printf '%s\n' "$stderr"
	[ "$(requests)" = 1 ]
	[ "$(retry_lines | sed -n 2p)" = "retry: attempt 1/5 failed with exit 22; $REFUSED_404" ]
	[[ $(retry_lines | sed -n 3p) == "retry: 1 attempt in "*"; stopped: HTTP status not retryable" ]]
	[ "$(retry_lines | wc -l)" -eq 3 ]
	grep -q '"outcome": "not_retryable"' r.json
	grep -q '"exit_status": 22,' r.json
}

@test "curl -D against a 401, and a 403 that is no rate limit: one attempt each" {
	local code
	for code in 401 403; do
		mkdir "$code" && cd "$code"	# a server of its own
		serve "$code|X-RateLimit-Remaining: 59|X-RateLimit-Reset: $(($(now_s) + 3600))"
		run -22 --separate-stderr "$RETRY" -b 10ms sh -c "$CURL_D" sh "$url"
		[ "$(requests)" = 1 ]
		[ "$(retry_lines)" = "retry: attempt 1/5 failed with exit 22; giving up: HTTP $code is not retried; --http-4xx retry to retry it" ]
		cd ..
	done
}

@test "a 404 on the last attempt is still named, and a 404 after a 503 ends the run" {
	serve "503" "404"
	run -22 --separate-stderr "$RETRY" -n 2 -b 10ms -j none \
	    sh -c "$CURL_D" sh "$url"
	[ "$(requests)" = 2 ]
	[ "$(retry_lines)" = "retry: attempt 1/2 failed with exit 22; next in 0.010s
retry: attempt 2/2 failed with exit 22; $REFUSED_404" ]
}

@test "headers longer than the 16 KiB read: the last response still counts, a 404 after a long redirect ends the run" {
	# A redirect with a 20 kB header, then the 404, as curl -L -D writes them.
	run -22 --separate-stderr "$RETRY" -n 3 -b 10ms -- sh -c '
		{ printf "HTTP/1.1 302 Found\r\nSet-Cookie: %s\r\n\r\n" \
		    "$(head -c 20000 /dev/zero | tr "\0" x)"
		  printf "HTTP/1.1 404 Not Found\r\nServer: t\r\n\r\n"
		} >"$RETRY_AFTER_FILE"
		echo x >>attempts
		exit 22'
	[ "$(wc -l <attempts)" -eq 1 ]
	[ "$(retry_lines)" = "retry: attempt 1/3 failed with exit 22; $REFUSED_404" ]
	# And one long line at the end is no hint: the backoff.
	rm attempts
	run -1 --separate-stderr "$RETRY" -n 2 -b 10ms -j none -- sh -c '
		head -c 20000 /dev/zero | tr "\0" 7 >"$RETRY_AFTER_FILE"
		echo x >>attempts
		exit 1'
	[ "$(wc -l <attempts)" -eq 2 ]
	[ "$(retry_lines | head -1)" = "retry: attempt 1/2 failed with exit 1; next in 0.010s" ]
}

@test "408, 425 and 429 without a hint are retried after the backoff, as any failure" {
	serve 408 425 429 200
	run -0 --separate-stderr "$RETRY" -b 10ms -j none \
	    sh -c "$CURL_D" sh "$url"
	[ "$output" = ok ]
	[ "$(requests)" = 4 ]
	[ "$(retry_lines)" = "retry: attempt 1/5 failed with exit 22; next in 0.010s
retry: attempt 2/5 failed with exit 22; next in 0.020s
retry: attempt 3/5 failed with exit 22; next in 0.040s" ]
}

# after_unix_reset ANSWER: curl -D against ANSWER, then a 200, where
# ANSWER's X-RateLimit-Reset is a Unix time 1 to 2 s ahead (whole seconds,
# as GitHub sends them): the one retry waits for it, not for the 20 s
# backoff.
after_unix_reset() {
	serve "$1" 200
	t0=$(now_ms)
	run -0 --separate-stderr "$RETRY" -b 20s sh -c "$CURL_D" sh "$url"
	took=$(($(now_ms) - t0))
	[ "$output" = ok ]
	[ "$(requests)" = 2 ]
	[ "$(retry_lines | wc -l)" -eq 1 ]
	delay_of "$(retry_lines)"
	matches "$note" '^ \(X-RateLimit-Reset [0-9]\.[0-9]{3}s\)$'
	# Less the time to start the server, retry and curl: slack for load.
	between "$ms" 200 2200
	between "$took" "$ms" $((ms + 4000))
}

@test "429 with X-RateLimit-Reset a Unix time 1-2 s ahead: waits until then, not the backoff, then retries" {
	after_unix_reset "429|X-RateLimit-Reset: $(($(now_s) + 2))"
}

@test "429 with RateLimit-Reset in seconds: the delay is the reset plus up to 10 %" {
	serve "429|RateLimit-Reset: 1" 200
	t0=$(now_ms)
	run -0 --separate-stderr "$RETRY" -b 20s sh -c "$CURL_D" sh "$url"
	took=$(($(now_ms) - t0))
	[ "$(requests)" = 2 ]
	delay_of "$(retry_lines)"
	between "$ms" 1000 1100
	[ "$note" = " (RateLimit-Reset 1.000s)" ]
	between "$took" 1000 5000
}

@test "403 with x-ratelimit-remaining: 0 (GitHub's spent limit) is retried after x-ratelimit-reset" {
	after_unix_reset "403|x-ratelimit-remaining: 0|x-ratelimit-reset: $(($(now_s) + 2))"
}

@test "a reset beyond the cap is cut to it, as Retry-After is" {
	serve "429|RateLimit-Reset: 60" 200
	run -0 --separate-stderr "$RETRY" -b 100ms -c 300ms -D 5m \
	    sh -c "$CURL_D" sh "$url"
	[ "$(retry_lines)" = "retry: attempt 1/5 failed with exit 22; next in 0.300s (RateLimit-Reset 60.000s, cut to the cap 0.300s)" ]
}

@test "503 with Retry-After is retried after it, as before" {
	serve "503|Retry-After: 0.3" 200
	run -0 --separate-stderr "$RETRY" -b 20s sh -c "$CURL_D" sh "$url"
	[ "$output" = ok ]
	[ "$(requests)" = 2 ]
	delay_of "$(retry_lines)"
	between "$ms" 300 330
	[ "$note" = " (Retry-After 0.300s)" ]
}

@test "500 with X-RateLimit-Reset an hour away and a limit not spent gets the backoff, not the reset" {
	serve "500|X-RateLimit-Remaining: 4999|X-RateLimit-Reset: $(($(now_s) + 3600))" 200
	run -0 --separate-stderr "$RETRY" -v -b 50ms -j none \
	    sh -c "$CURL_D" sh "$url"
	[ "$output" = ok ]
	[ "$(requests)" = 2 ]
	[ "$(retry_lines | sed -n 2,4p)" = "retry: Retry-After hint not used: no Retry-After header
retry: attempt 1/5 failed with exit 22; next in 0.050s
retry: drew 0.050s from [0.050s, 0.050s]: none jitter, step 0.050s" ]
}

@test "--http-4xx retry retries a 404 as any failure" {
	serve 404
	run -22 --separate-stderr "$RETRY" --http-4xx retry -n 3 -b 10ms -j none \
	    sh -c "$CURL_D" sh "$url"
	[ "$(requests)" = 3 ]
	[ "$(retry_lines)" = "retry: attempt 1/3 failed with exit 22; next in 0.010s
retry: attempt 2/3 failed with exit 22; next in 0.020s
retry: attempt 3/3 failed with exit 22; giving up: no attempts left" ]
	# stop is the default, given.
	run -22 --separate-stderr "$RETRY" --http-4xx=stop -n 3 -b 10ms \
	    sh -c "$CURL_D" sh "$url"
	[ "$(requests)" = 4 ]
	[ "$(retry_lines)" = "retry: attempt 1/3 failed with exit 22; $REFUSED_404" ]
}

@test "--http-4xx with another mode, or none, is a usage error: 125, one line, nothing run" {
	local mode
	for mode in bad '' Retry STOP; do
		run -125 --separate-stderr "$RETRY" --http-4xx "$mode" touch ran
		[ "$stderr" = "retry: --http-4xx '$mode': must be stop or retry" ]
		[ "$output" = "" ]
		[ ! -e ran ]
	done
	run -125 --separate-stderr "$RETRY" --http-4xx
	[ "$stderr" = "retry: option '--http-4xx' needs a value" ]
}

@test "--hint-from-stderr with curl -D /dev/stderr: a 404 runs once, a 429 waits for its reset" {
	serve 404
	run -22 --separate-stderr "$RETRY" --hint-from-stderr -b 10ms \
	    -- curl -fsS -D /dev/stderr "$url"
	[ "$(requests)" = 1 ]
	[[ $stderr == *$'HTTP/1.1 404 Not Found\r'* ]]	# passed on
	[ "$(retry_lines)" = "retry: attempt 1/5 failed with exit 22; $REFUSED_404" ]
	mkdir second && cd second	# a server of its own
	serve "429|RateLimit-Reset: 0.5" 200
	run -0 --separate-stderr "$RETRY" --hint-from-stderr -b 20s \
	    -- curl -fsS -D /dev/stderr "$url"
	[ "$output" = ok ]
	[ "$(requests)" = 2 ]
	delay_of "$(retry_lines)"
	between "$ms" 500 550
	[ "$note" = " (RateLimit-Reset 0.500s)" ]
}

@test "--hint-from-stderr: only the last response counts; a long run of headers keeps the newest" {
	# A redirect's Retry-After is forgotten by the 404 after it.
	run -22 --separate-stderr "$RETRY" --hint-from-stderr -b 10ms sh -c '
		printf "HTTP/1.1 301 Moved\r\nRetry-After: 5\r\n\r\nHTTP/1.1 404 Not Found\r\n\r\n" >&2
		exit 22'
	[ "$(retry_lines)" = "retry: attempt 1/5 failed with exit 22; $REFUSED_404" ]
	# Fifty Retry-After headers of 250 bytes: the last one counts.
	run -0 --separate-stderr "$RETRY" --hint-from-stderr -n 2 -b 20s sh -c '
		[ "$RETRY_ATTEMPT" = 2 ] && exit 0
		echo "HTTP/1.1 429 Slow" >&2
		pad=$(printf "%0240d" 0)
		for i in $(seq 50); do echo "Retry-After: $pad" >&2; done
		echo "Retry-After: 0.05" >&2
		exit 22'
	delay_of "$(retry_lines)"
	between "$ms" 50 55
	[ "$note" = " (Retry-After 0.050s)" ]
}

@test "curl -L through a redirect to a 404: judged by the last response" {
	serve "301|Location: /next|Retry-After: 1" 404
	run -22 --separate-stderr "$RETRY" -b 10ms \
	    sh -c 'curl -fsSL -D "$RETRY_AFTER_FILE" "$1"' sh "$url"
	[ "$(requests)" = 2 ]
	[ "$(sed -n 2p requests)" = "GET /next HTTP/1.1" ]
	[ "$(retry_lines)" = "retry: attempt 1/5 failed with exit 22; $REFUSED_404" ]
}

@test "--circuit: a refused 404 counts for nothing, neither a failure nor a success" {
	export RETRY_STATE_DIR=$BATS_TEST_TMPDIR/state
	serve 500 404
	run -22 "$RETRY" --circuit api -n 1 sh -c "$CURL_D" sh "$url"
	run -0 "$RETRY" --circuit-status api
	[ "${lines[2]}" = "failures:  1 in a row" ]
	run -22 --separate-stderr "$RETRY" --circuit api -b 10ms \
	    sh -c "$CURL_D" sh "$url"
	[ "$(retry_lines)" = "retry: attempt 1/5 failed with exit 22; $REFUSED_404" ]
	run -0 "$RETRY" --circuit-status api
	[ "${lines[2]}" = "failures:  1 in a row" ]
	[ "$(requests)" = 2 ]
	# With --http-4xx retry, the 404 is a failure of the downstream.
	run -22 "$RETRY" --circuit api --http-4xx retry -n 1 \
	    sh -c "$CURL_D" sh "$url"
	run -0 "$RETRY" --circuit-status api
	[ "${lines[2]}" = "failures:  2 in a row" ]
}
