#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Output conditions: --on-output retries an attempt that printed a
# matching line, --stop-on-output ends the run on one; stdout and stderr,
# line by line, as POSIX extended regular expressions.

load helpers/common

# A test that hangs fails instead of stopping the whole file.
BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-120}

setup() {
	in_test_dir
}

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
retry: attempt 1 left 42 bytes on standard output; the next attempt's output follows (-O sends only the last attempt's there)
retry: attempt 2/5 succeeded; next in 0.020s"
	# Matching every time: the attempts run out; a run that gives up
	# never exits 0, so the last attempt's 0 gives 1.
	run -1 --separate-stderr "$RETRY" --on-output throttled -n 2 -b 10ms -j none \
	    echo throttled
	expect_stderr "retry: attempt 1/2 succeeded; next in 0.010s
retry: attempt 1 left 10 bytes on standard output; the next attempt's output follows (-O sends only the last attempt's there)
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

	# An exit-0 attempt that --on-output alone would retry: it gave up, 1.
	rm count
	run -1 --separate-stderr "$RETRY" --on-output throttled --stop-on-output fatal \
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

@test "a stream retry cannot write (closed, or /dev/full) is discarded and matching goes on: --stop-on-output still sees FATAL" {
	# Thousands of lines first, so that writes fail before FATAL comes.
	local script='echo "$RETRY_ATTEMPT" >>count; seq 1 100000; echo FATAL; exit 1'
	for out in closed /dev/full; do
		rm -f count
		rc=0
		if [ "$out" = closed ]; then
			"$RETRY" --stop-on-output FATAL -n 3 -b 10ms -j none \
			    sh -c "$script" >&- 2>err || rc=$?
		else
			"$RETRY" --stop-on-output FATAL -n 3 -b 10ms -j none \
			    sh -c "$script" >"$out" 2>err || rc=$?
		fi
		echo "stdout $out: status $rc"
		[ "$rc" -eq 1 ]
		[ "$(cat count)" = 1 ]
		[ "$(cat err)" = "retry: attempt 1/3 failed with exit 1; giving up: its output matched --stop-on-output" ]
	done
	# stderr closed: the attempt's stderr lines are matched all the same
	# (three attempts that exit 0 and match: it gives up with 1).
	rm count
	rc=0
	"$RETRY" --on-output again -n 3 -b 10ms -j none sh -c \
	    'echo "$RETRY_ATTEMPT" >>count; seq 1 100000 >&2; echo again >&2' 2>&- || rc=$?
	[ "$rc" -eq 1 ]
	[ "$(wc -l <count)" -eq 3 ]
}

# ---- Faster matching, the same verdicts (issue 23) --------------------------

# expect_verdict PATTERN FILE hit|miss: whether some line of FILE, written
# at once, matches PATTERN.
expect_verdict() {
	local got=miss
	if "$RETRY" -n 1 --stop-on-output "$1" cat "$2" 2>&1 >/dev/null |
	    grep -q 'matched --stop-on-output'; then
		got=hit
	fi
	if [ "$got" != "$3" ]; then
		echo "$1 on $2: $got, not $3"
		return 1
	fi
}

# after_nul VERDICT: VERDICT where a line is matched past a NUL (glibc's
# REG_STARTEND), miss under musl (make check-musl sets TEST_LIBC), which
# matches a line up to its first NUL.
after_nul() {
	if [ "${TEST_LIBC:-}" = musl ]; then echo miss; else echo "$1"; fi
}

@test "--on-output matches a line with a NUL as grep -a does, the bytes after the NUL too" {
	printf 'first\nab\0ERROR code 7\nx\0\0y\n\0\nlast' >nul
	# Each by itself too: the chunk path and the literal path see one line.
	printf 'ab\0ERROR code 7\n' >one
	for re in ERROR 'ERROR|FATAL' '[E]RROR' 'code [0-9]+$' '^ab' 'x[^a]+y' \
	    '^$' '^[^a-z]$' 'y$' 'last$' 'b[^[:alnum:]]E' '(ERROR|FATAL) code'; do
		for f in nul one; do
			if [ "${TEST_LIBC:-}" = musl ]; then
				# Up to the first NUL of each line, as documented.
				sed 's/\x00.*//' "$f" >cut
				grep -Eqa -- "$re" cut && want=hit || want=miss
			else
				grep -Eqa -- "$re" "$f" && want=hit || want=miss
			fi
			expect_verdict "$re" "$f" "$want"
		done
	done
	# Where grep -a and glibc part: its '.' is any byte but a NUL.
	printf 'a\0b\n' >dot
	expect_verdict 'a[^x]b' dot "$(after_nul hit)"
	expect_verdict 'a.b' dot miss
}

@test "--on-output and --stop-on-output: literals, runs of lines and odd lines give the verdicts of regexec line by line" {
	long=$(head -c 5000 /dev/zero | tr '\0' a)
	printf 'first\nok\nan ERROR here\nfine\nlast\n' >plain
	printf 'first\n%sERROR\nfine\nlast\n' "$long" >long
	printf 'first\n%sx%s\nlast\n' "${long:0:4094}" "$long" >longx
	printf 'first\nab\0ERROR\nfine\nlast\n' >nul
	printf 'first\nab\0x\nERROR\nlast\n' >nulthen
	printf 'first\r\nERROR\r\nlast\r\n' >crlf
	printf 'first\nfine\nlast ERROR' >nofinal
	printf 'first\nxa\nby\n\nlast\n' >split
	printf 'first\nan Error\ntook 123 ms\nlast\n' >mixed
	printf 'first\n\n' >emptylast
	printf 'first\nab\0x\n\n' >nulempty
	expect_verdict 'ERROR|FATAL' plain hit
	expect_verdict '(ERROR|FATAL)' long miss
	expect_verdict '(ERROR|FATAL)' nul "$(after_nul hit)"
	expect_verdict '(ERROR|FATAL)' nulthen hit
	expect_verdict 'ERROR' crlf hit
	expect_verdict '^ERROR$' crlf miss
	expect_verdict '^ERROR.$' crlf hit
	expect_verdict 'ERROR$' nofinal hit
	expect_verdict '[E]RROR' plain hit
	expect_verdict '[E]RROR' long miss
	expect_verdict '[E]RROR' nul "$(after_nul hit)"
	expect_verdict '[E]RROR' nulthen hit
	expect_verdict '^[E]RROR$' crlf miss
	expect_verdict '[x]$' longx hit
	expect_verdict 'x$' longx hit
	expect_verdict '[x]$' long miss
	expect_verdict '[Ee]rror' plain miss
	expect_verdict '[Ee]rror' mixed hit
	expect_verdict '[eE][rR]{2}[oO][rR]' plain hit
	expect_verdict '[0-9]{3} ms' mixed hit
	expect_verdict '[0-9]{3} ms' plain miss
	expect_verdict '^[0-9]+' mixed miss
	expect_verdict '^$' split hit
	expect_verdict '^$' plain miss
	expect_verdict '^$|x{9}' emptylast hit
	expect_verdict '^$|x{9}' nulempty hit
	expect_verdict '^$|x{9}' crlf miss
	expect_verdict 'a.b' split miss
	expect_verdict 'a[[:space:]]b' split miss
	expect_verdict 'a\sb' split miss
	expect_verdict 'a$' split hit
	expect_verdict '^b' split hit
	expect_verdict '(^|x)a$' split hit
	expect_verdict '(fine|ok)$' plain hit
	expect_verdict '(fine|ok)x' plain miss
	expect_verdict '^(an|ok) E' plain hit
}
