#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# --ci: each attempt folded in a CI log (GitHub's groups, GitLab's
# sections), and on GitHub one annotation per run, a row of
# $GITHUB_STEP_SUMMARY and $GITHUB_OUTPUT's values.  The log is read as
# GitHub's runner reads it (honored, below): nothing an attempt prints is
# taken for a workflow command.  The suite may itself run under CI: the
# runners' variables are unset here and each test sets what it needs.
load helpers/common

setup() {
	in_test_dir
	unset GITHUB_ACTIONS GITLAB_CI GITHUB_STEP_SUMMARY GITHUB_OUTPUT \
	    GITHUB_ENV
	unset RETRY_ATTEMPT RETRY_MAX_ATTEMPTS RETRY_IDEMPOTENCY_KEY \
	    RETRY_DEADLINE RETRY_AFTER_FILE RETRY_ENV_FILE
	summary=$BATS_TEST_TMPDIR/summary
	outputs=$BATS_TEST_TMPDIR/outputs
	envfile=$BATS_TEST_TMPDIR/env
}

teardown() {
	kill_bg_retry
	kill_later
}

# github: a simulated GitHub job: GITHUB_ACTIONS, and the step's summary
# and outputs files, empty.
github() {
	export GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=$summary \
	    GITHUB_OUTPUT=$outputs
	: >"$summary"
	: >"$outputs"
}

# honored LOG: the workflow commands that GitHub's runner would act on in
# LOG, one a line: a line that starts with "::" once its leading blanks
# are gone, but none between "::stop-commands::TOKEN" and "::TOKEN::".
honored() {
	awk '{ line = $0; sub(/^[ \t]+/, "", line) }
	stop != "" { if (line == "::" stop "::") stop = ""; next }
	index(line, "::stop-commands::") == 1 { stop = substr(line, 18); next }
	index(line, "::") == 1 { print line }' "$1"
}

# tokens: stdin with each group's token as TOKEN and each time as T.
tokens() {
	sed -E 's/[0-9a-f]{32}/TOKEN/g; s/ [0-9]+\.[0-9] s/ T s/g'
}

@test "GitHub: each attempt in a group, commands off to the end but for retry's lines, one warning, a summary row, the outputs" {
	github
	run -0 --separate-stderr "$RETRY" -n 5 -b 1ms -f 1 -j none \
	    sh -c 'echo "err $RETRY_ATTEMPT" >&2; echo out; [ "$RETRY_ATTEMPT" -ge 3 ]'
	[ "$output" = "$(printf 'out\nout\nout')" ]
	[ "$(tokens <<<"$stderr")" = "$(cat <<'EOF'
::group::attempt 1/5
::stop-commands::TOKEN
err 1
::TOKEN::
::endgroup::
::stop-commands::TOKEN
retry: attempt 1/5 failed with exit 1; next in 0.001s
retry: attempt 1 left 4 bytes on standard output; the next attempt's output follows (-O sends only the last attempt's there)
::TOKEN::
::group::attempt 2/5
::stop-commands::TOKEN
err 2
::TOKEN::
::endgroup::
::stop-commands::TOKEN
retry: attempt 2/5 failed with exit 1; next in 0.001s
::TOKEN::
::group::attempt 3/5
::stop-commands::TOKEN
err 3
::TOKEN::
::endgroup::
::warning title=sh -c echo "err $RETRY_ATTEMPT" >&2; echo out; [ "$RETRY_ATTEMPT" -ge 3 ]::passed on attempt 3/5 after T s (exit statuses 1, 1)
::stop-commands::TOKEN
::TOKEN::
EOF
)" ]
	# Each stop is ended by its own token, the next resume, a new one
	# each time: in the groups, the waits, and after the run's end.
	stops=$(grep -o '^::stop-commands::.*' <<<"$stderr" | cut -c18-)
	resumes=$(grep -xE '::[0-9a-f]{32}::' <<<"$stderr" | tr -d :)
	[ "$stops" = "$resumes" ]
	[ "$(sort -u <<<"$stops" | wc -l)" -eq 6 ]
	[ "$(tokens <"$summary")" = "$(cat <<'EOF'
| command | attempts | outcome | time |
| --- | --- | --- | --- |
| sh -c echo "err \$RETRY\_ATTEMPT" \>\&2; echo out; \[ "\$RETRY\_ATTEMPT" -ge 3 \] | 3 | success | T s |
EOF
)" ]
	[ "$(cat "$outputs")" = "$(printf 'attempts=3\nexit-status=0\noutcome=success')" ]
}

@test "GitHub: a run that gives up is one error naming its outcome; a pass at the first attempt, no annotation" {
	github
	run -3 --separate-stderr "$RETRY" -n 2 -b 1ms sh -c 'exit 3'
	[ "$(honored <(echo "$stderr") | grep -v group | tokens)" = \
	    "::error title=sh -c exit 3::gave up after 2 attempts in T s, outcome attempts_exhausted (exit statuses 3, 3)" ]
	[ "$(grep '^retry:' <<<"$stderr" | tail -n 1)" = "retry: attempt 2/2 failed with exit 3; giving up: no attempts left" ]
	# A report to stderr follows the group: in sight when it is folded.
	run -0 --separate-stderr "$RETRY" -q --report - true
	[ "$(tokens <<<"$stderr" | sed -n 1,6p)" = "$(printf '::group::attempt 1/5\n::stop-commands::TOKEN\n::TOKEN::\n::endgroup::\n::stop-commands::TOKEN\n{')" ]
	[ "$(honored <(echo "$stderr") | grep -vc group)" -eq 0 ]
	# A status that is not retried: an error after one attempt.
	run -2 --separate-stderr "$RETRY" -x 2 sh -c 'exit 2'
	[ "$(honored <(echo "$stderr") | grep -c '^::error title=sh -c exit 2::gave up after 1 attempt in [0-9.]* s, outcome not_retryable (exit status 2)$')" -eq 1 ]
	# The outputs and rows of the three runs, in order.
	[ "$(cat "$outputs")" = "$(printf 'attempts=%s\nexit-status=%s\noutcome=%s\n' \
	    2 3 attempts_exhausted 1 0 success 1 2 not_retryable)" ]
	[ "$(cut -d'|' -f3,4 "$summary" | tail -n 3)" = "$(printf ' 2 | attempts_exhausted \n 1 | success \n 1 | not_retryable ')" ]
	[ "$(grep -c '^| command |' "$summary")" -eq 1 ]
}

@test "GitHub: the first few failed statuses are named, the rest are '...'" {
	github
	run -1 --separate-stderr "$RETRY" -n 11 -b 1ms -f 1 -j none \
	    sh -c 'exit $(( RETRY_ATTEMPT < 10 ? RETRY_ATTEMPT : 1 ))'
	[[ $(honored <(echo "$stderr") | grep '^::error') == *'outcome attempts_exhausted (exit statuses 1, 2, 3, 4, 5, 6, 7, 8, ...)' ]]
}

@test "GitHub: what an attempt prints cannot annotate, set an output or end its group" {
	github
	forge='for w in "::error::forged" "::warning::x%0A::error::y" \
	    "::set-output name=attempts::99" "::endgroup::" "  ::error::blank" \
	    "::add-mask::x"; do echo "$w"; echo "$w" >&2; done
	    printf "%s" "::error::unfinished" >&2
	    [ "$RETRY_ATTEMPT" -ge 2 ]'
	# stdout and stderr in one stream, as the runner reads them both.
	run -0 "$RETRY" -n 3 -b 1ms sh -c "$forge"
	honored <(echo "$output") >commands
	cat commands
	[ "$(grep -v '^::warning' commands)" = "$(printf '%s\n' \
	    '::group::attempt 1/3' ::endgroup:: '::group::attempt 2/3' \
	    ::endgroup::)" ]
	[ "$(grep -c '^::warning title=sh -c for w in .*::passed on attempt 2/3 after [0-9.]* s (exit status 1)$' commands)" -eq 1 ]
	[ "$(wc -l <commands)" -eq 5 ]
	# Each forged line sits between its group's stop-commands and token lines.
	awk '/^::stop-commands::/ { t = substr($0, 18); next }
	    t != "" && $0 == "::" t "::" { t = ""; next }
	    /^ *::(error|warning|set-output|add-mask)::/ && t == "" {
		bad = 1; print "outside: " $0 }
	    END { exit bad }' <<<"$output"
	# The unfinished last line did not swallow the token's line.
	grep -q '^::error::unfinished' <<<"$output"
	[ "$(cat "$outputs")" = "$(printf 'attempts=2\nexit-status=0\noutcome=success')" ]
}

@test "GitHub: what an attempt leaves running cannot annotate either, in the wait or in a later group" {
	github
	# The first two attempts each leave a writer that forges an error
	# 0.1 s later, in the wait that follows (or, late, in the next
	# group).  No hook: one would read RETRY_LOG, so the output would go
	# through pipes, which what an attempt leaves cannot write to once
	# the attempt has ended.  The log is a file, for the same reason.
	run -1 sh -c '"$0" "$@" >log 2>&1' "$RETRY" -n 3 -b 200ms -f 1 -j none \
	    sh -c '[ "$RETRY_ATTEMPT" -ge 3 ] || { (sleep 0.1
		echo "::error title=forged::x"; : >"left.$RETRY_ATTEMPT") & }; exit 1'
	output=$(cat log)
	[ -e left.1 ] && [ -e left.2 ]
	[ "$(grep -c '^::error title=forged::x$' <<<"$output")" -eq 2 ]
	honored <(echo "$output") >commands
	cat commands
	[ "$(grep -c '^::error' commands)" -eq 1 ]
	grep -q '^::error title=sh -c \[ .*::gave up after 3 attempts' commands
	# Every forged line came while commands were off.
	awk '/^::stop-commands::/ { t = substr($0, 18); next }
	    t != "" && $0 == "::" t "::" { t = ""; next }
	    /^::error title=forged/ && t == "" { bad = 1; print "outside: " NR }
	    END { exit bad }' <<<"$output"
}

@test "GitHub: under -Q the CI lines go to stderr itself: the groups and the annotation of a run that passed, the held attempts after them when it failed" {
	github
	run -0 --separate-stderr "$RETRY" -Q -n 3 -b 1ms sh -c \
	    'echo out; echo err >&2; [ "$RETRY_ATTEMPT" -ge 2 ]'
	[ "$output" = "" ]
	honored <(echo "$stderr") >commands
	[ "$(tokens <commands)" = "$(printf '%s\n' '::group::attempt 1/3' \
	    ::endgroup:: '::group::attempt 2/3' ::endgroup:: \
	    '::warning title=sh -c echo out; echo err >&2; [ "$RETRY_ATTEMPT" -ge 2 ]::passed on attempt 2/3 after T s (exit status 1)')" ]
	# Nothing of the attempts' or of retry's lines: -Q dropped them.
	[ "$(grep -v '^::' <<<"$stderr")" = "" ]
	[ "$(cat "$outputs")" = "$(printf 'attempts=2\nexit-status=0\noutcome=success')" ]
	# Failed: the groups, the annotation, then what -Q held, while
	# commands are off, and commands on again at the end.
	run -1 --separate-stderr "$RETRY" -Q -n 2 -b 1ms sh -c \
	    'echo "::error::forged"; exit 1'
	honored <(echo "$stderr") >commands
	[ "$(tokens <commands)" = "$(printf '%s\n' '::group::attempt 1/2' \
	    ::endgroup:: '::group::attempt 2/2' ::endgroup:: \
	    '::error title=sh -c echo "%3A%3Aerror%3A%3Aforged"; exit 1::gave up after 2 attempts in T s, outcome attempts_exhausted (exit statuses 1, 1)')" ]
	[ "$(grep -c '^::error::forged$' <<<"$stderr")" -eq 2 ]
	[ "$(grep -v '^::' <<<"$stderr" | tail -n 1)" = "retry: attempt 2/2 failed with exit 1; giving up: no attempts left" ]
	[ "$(grep -c '^::stop-commands::' <<<"$stderr")" -eq \
	    "$(grep -cxE '::[0-9a-f]{32}::' <<<"$stderr")" ]
	[ "$(tail -n 1 <<<"$stderr" | tokens)" = ::TOKEN:: ]
}

@test "GitHub: a token's line follows no empty line where the log is a file whose last line ended; to a pipe, one" {
	github
	attempt='case $RETRY_ATTEMPT in 1) echo err >&2 ;; 3) printf partial >&2 ;; esac; exit 1'
	for redirect in '2>log' '2>>log' '>log 2>&1'; do
		rm -f log
		run -1 sh -c "\"\$0\" \"\$@\" $redirect" "$RETRY" -n 3 -b 1ms \
		    sh -c "$attempt"
		[ "$(grep -c '^$' log)" -eq 0 ]
		# An unfinished line is ended, so that the token's is a line.
		[ "$(grep -A 1 '^partial$' log | sed -n 2p | tokens)" = ::TOKEN:: ]
		[ "$(grep -c '^::group::' log)" -eq 3 ]
		[ "$(grep -cxE '::[0-9a-f]{32}::' log)" -eq 6 ]
	done
	# -Q holds the attempts' output: stderr has retry's lines alone, no
	# empty one, and the unfinished line, shown at the end, is ended
	# before retry's last line.
	run -1 --separate-stderr "$RETRY" -Q -n 3 -b 1ms sh -c "$attempt"
	[ "$(grep -c '^$' <<<"$stderr")" -eq 0 ]
	[ "$(grep -A 1 '^partial$' <<<"$stderr" | sed -n 2p)" = \
	    "retry: attempt 3/3 failed with exit 1; giving up: no attempts left" ]
	# A pipe keeps nothing to read back: each token's line after an
	# empty one, but where the unfinished line ends.
	run -1 "$RETRY" -n 3 -b 1ms sh -c "$attempt"
	[ "$(grep -c '^$' <<<"$output")" -eq 5 ]
	[ "$(grep -A 1 '^partial$' <<<"$output" | sed -n 2p | tokens)" = ::TOKEN:: ]
}

@test "GitHub: retry's own values are escaped, the command in the title and in the summary's cell" {
	github
	mkdir bin
	name=$(printf 'x%%,:y|z\nw')
	printf '#!/bin/sh\nexit 1\n' >"bin/$name"
	chmod +x "bin/$name"
	run -1 --separate-stderr env PATH="$PWD/bin:$PATH" "$RETRY" -n 2 \
	    -b 1ms "$name" '%0A::error::a'
	[ "$(honored <(echo "$stderr") | grep -v group | tokens)" = \
	    '::error title=x%25%2C%3Ay|z\nw %250A%3A%3Aerror%3A%3Aa::gave up after 2 attempts in T s, outcome attempts_exhausted (exit statuses 1, 1)' ]
	# Nothing of it is a line of its own.
	[ "$(grep -c '^w' <<<"$stderr")" -eq 0 ]
	[ "$(tail -n 1 "$summary" | tokens)" = \
	    '| x%,:y\|z\\nw %0A::error::a | 2 | attempts_exhausted | T s |' ]
	[ "$(wc -l <"$summary")" -eq 3 ]
}

@test "a retry under another adds no groups, annotations or files, whatever --ci says, also in a hook" {
	github
	run -1 "$RETRY" -n 2 -b 1ms --on-retry "$RETRY --ci github -n 1 true" \
	    "$RETRY" --ci github -n 2 -b 1ms sh -c 'echo inner; exit 1'
	honored <(echo "$output") >commands
	cat commands
	[ "$(grep -c '^::group::' commands)" -eq 2 ]
	[ "$(grep -c '^::endgroup::$' commands)" -eq 2 ]
	[ "$(grep -c '^::\(error\|warning\)' commands)" -eq 1 ]
	# The inner runs' groups are nowhere, not even inert.
	[ "$(grep -c '::group::' <<<"$output")" -eq 2 ]
	[ "$(grep -c '^| ' "$summary")" -eq 3 ]
	[ "$(cat "$outputs")" = "$(printf 'attempts=2\nexit-status=1\noutcome=attempts_exhausted')" ]
	# A RETRY_ATTEMPT that is not a number from 1 is no outer retry.
	run -0 env RETRY_ATTEMPT=0 "$RETRY" true
	[ "$(grep -c '^::group::attempt 1/5$' <<<"$output")" -eq 1 ]
}

@test "GitLab: each attempt in a collapsed section, nothing else" {
	export GITLAB_CI=true GITHUB_OUTPUT=$outputs
	: >"$outputs"
	t0=$(clock-now -r -s | cut -d. -f1)
	run -1 --separate-stderr "$RETRY" -n 2 -b 1ms -f 1 -j none \
	    sh -c 'echo out >&2; exit 1'
	t1=$(clock-now -r -s | cut -d. -f1)
	e=$(printf '\033[0K') cr=$(printf '\r')
	want="${e}section_start:S:retry_attempt_1[collapsed=true]$cr${e}attempt 1/2
out
${e}section_end:S:retry_attempt_1$cr$e
retry: attempt 1/2 failed with exit 1; next in 0.001s
${e}section_start:S:retry_attempt_2[collapsed=true]$cr${e}attempt 2/2
out
${e}section_end:S:retry_attempt_2$cr$e
retry: attempt 2/2 failed with exit 1; giving up: no attempts left"
	[ "$(sed -E 's/section_(start|end):[0-9]+:/section_\1:S:/' <<<"$stderr")" = "$want" ]
	for s in $(grep -o 'section_[a-z]*:[0-9]*' <<<"$stderr" | cut -d: -f2); do
		between "$s" "$t0" "$t1"
	done
	[ ! -s "$outputs" ]
	# -n 0: "attempt N".
	run -0 --separate-stderr "$RETRY" -n 0 true
	[[ $stderr == *"${cr}${e}attempt 1"$'\n'* ]]
}

@test "--ci none writes nothing in a GitHub job; github and gitlab write anywhere; auto outside CI, nothing" {
	github
	run -0 --separate-stderr "$RETRY" --ci none -n 2 -b 1ms flaky state 1
	expect_stderr "retry: attempt 1/2 failed with exit 1; next in $(grep -o '0\.[0-9]*s' <<<"$stderr")"
	[ ! -s "$outputs" ] && [ ! -s "$summary" ]
	unset GITHUB_ACTIONS GITHUB_STEP_SUMMARY GITHUB_OUTPUT
	run -0 --separate-stderr "$RETRY" -q true
	expect_stderr ""
	run -0 --separate-stderr "$RETRY" -q --ci github true
	[ "$(tokens <<<"$stderr")" = "$(printf '::group::attempt 1/5\n::stop-commands::TOKEN\n::TOKEN::\n::endgroup::\n::stop-commands::TOKEN\n::TOKEN::')" ]
	run -0 --separate-stderr env GITHUB_ACTIONS=true "$RETRY" -q --ci gitlab true
	[[ $stderr == "$(printf '\033[0Ksection_start:')"* ]]
	[ "$(grep -c 'section_' <<<"$stderr")" -eq 2 ]
	# Of two, the last counts.
	run -0 --separate-stderr env GITLAB_CI=true "$RETRY" -q --ci github \
	    --ci none true
	expect_stderr ""
}

@test "--ci with another value is a usage error, and nothing runs" {
	run -125 --separate-stderr "$RETRY" --ci x touch ran
	expect_stderr "retry: --ci 'x': must be none, github, gitlab or auto"
	[ ! -e ran ]
	run -125 --separate-stderr "$RETRY" --ci= touch ran
	expect_stderr "retry: --ci '': must be none, github, gitlab or auto"
	run -125 --separate-stderr "$RETRY" --ci GitHub touch ran
	expect_stderr "retry: --ci 'GitHub': must be none, github, gitlab or auto"
	[ ! -e ran ]
}

@test "GitHub: a file that cannot be written is one warning each, and the exit status is what it was" {
	github
	mkdir dir
	ln -s loop loop	# links as for every file: tests/links.bats
	run -3 --separate-stderr env GITHUB_STEP_SUMMARY="$PWD/dir" \
	    GITHUB_OUTPUT="$PWD/loop" "$RETRY" -q -n 1 sh -c 'exit 3'
	[ "$(grep '^retry:' <<<"$stderr")" = "retry: GITHUB_STEP_SUMMARY '$PWD/dir': Is a directory
retry: GITHUB_OUTPUT '$PWD/loop': more than 40 symbolic links on the way" ]
	[ ! -s "$outputs" ]
	run -0 --separate-stderr env GITHUB_STEP_SUMMARY="$PWD/none/s" \
	    GITHUB_OUTPUT="$PWD/none/o" "$RETRY" -q true
	[ "$(grep '^retry:' <<<"$stderr")" = "retry: GITHUB_STEP_SUMMARY '$PWD/none/s': No such file or directory
retry: GITHUB_OUTPUT '$PWD/none/o': No such file or directory" ]
	# Under -Q too, on a run that passed: a warning is never held.
	run -0 --separate-stderr env GITHUB_STEP_SUMMARY="$PWD/none/s" \
	    GITHUB_OUTPUT="$PWD/none/o" "$RETRY" -Q -n 2 -b 1ms \
	    sh -c '[ "$RETRY_ATTEMPT" = 2 ]'
	[ "$(grep '^retry:' <<<"$stderr")" = "retry: GITHUB_STEP_SUMMARY '$PWD/none/s': No such file or directory
retry: GITHUB_OUTPUT '$PWD/none/o': No such file or directory" ]
	# An empty variable is none: no warning.
	run -0 --separate-stderr env GITHUB_STEP_SUMMARY= GITHUB_OUTPUT= \
	    "$RETRY" -q true
	[ "$(grep -c '^retry:' <<<"$stderr")" -eq 0 ]
	# One too long to be a path.
	run -0 --separate-stderr env GITHUB_OUTPUT="/$(printf '%5000s' | tr ' ' x)" \
	    "$RETRY" -q true
	[[ $(grep "^retry:" <<<"$stderr") == "retry: GITHUB_OUTPUT: "* ]]
	[ "$(grep -c "^retry:" <<<"$stderr")" -eq 1 ]
	# A FIFO with no reader cannot hold retry.
	mkfifo fifo
	run -0 --separate-stderr env GITHUB_OUTPUT="$PWD/fifo" "$RETRY" -q true
	[[ $(grep '^retry:' <<<"$stderr") == "retry: GITHUB_OUTPUT '$PWD/fifo': "* ]]
	[ "$(grep -c '^retry:' <<<"$stderr")" -eq 1 ]
}

@test "GitHub: -O's held output of a retried attempt is inside its group" {
	github
	run -0 --separate-stderr "$RETRY" -O -n 2 -b 1ms sh -c \
	    'echo "held $RETRY_ATTEMPT"; [ "$RETRY_ATTEMPT" -ge 2 ]'
	[ "$output" = "held 2" ]
	[ "$(tokens <<<"$stderr" | sed -n 1,5p)" = "$(printf '%s\n' \
	    '::group::attempt 1/2' '::stop-commands::TOKEN' 'held 1' \
	    '::TOKEN::' '::endgroup::' | head -n 5)" ]
}

@test "in a simulated GitHub job, 10 runs of a step that fails at random: each attempt folded, one annotation per run that needed retries, 10 rows, outputs a later step reads" {
	command -v bash >/dev/null || skip "no bash for \$RANDOM"
	github
	local i rc attempts status outcome
	local row='| bash -c echo "try \$RETRY\_ATTEMPT"; exit \$((RANDOM % 2)) | '
	for i in 1 2 3 4 5 6 7 8 9 10; do
		rc=0
		"$RETRY" -n 3 -b 1ms bash -c 'echo "try $RETRY_ATTEMPT"; exit $((RANDOM % 2))' \
		    >"out.$i" 2>"log.$i" || rc=$?
		echo "$rc" >"rc.$i"
	done
	[ "$(grep -c '^| command | attempts | outcome | time |$' "$summary")" -eq 1 ]
	[ "$(sed -n 2p "$summary")" = "| --- | --- | --- | --- |" ]
	[ "$(wc -l <"$summary")" -eq 12 ]
	[ "$(wc -l <"$outputs")" -eq 30 ]
	for i in 1 2 3 4 5 6 7 8 9 10; do
		rc=$(cat "rc.$i")
		attempts=$(sed -n "$((3 * i - 2))s/^attempts=//p" "$outputs")
		status=$(sed -n "$((3 * i - 1))s/^exit-status=//p" "$outputs")
		outcome=$(sed -n "$((3 * i))s/^outcome=//p" "$outputs")
		echo "run $i: status $rc, $attempts attempts, $outcome"
		[ "$status" = "$rc" ]
		between "$attempts" 1 3
		[ "$(grep -c 'try' "out.$i")" -eq "$attempts" ]
		# Every attempt folded, its output inside, commands on after.
		honored "log.$i" >"commands.$i"
		[ "$(grep -c '^::group::attempt [123]/3$' "commands.$i")" -eq "$attempts" ]
		[ "$(grep -c '^::endgroup::$' "commands.$i")" -eq "$attempts" ]
		# Off in each group and wait and after the end, on at the exit.
		[ "$(grep -c '^::stop-commands::' "log.$i")" -eq "$((2 * attempts))" ]
		# One annotation when it needed retries, none when it did not.
		if [ "$rc" -ne 0 ]; then
			[ "$outcome" = attempts_exhausted ]
			[ "$(grep -c '^::error title=bash -c ' "commands.$i")" -eq 1 ]
		elif [ "$attempts" -gt 1 ]; then
			[ "$outcome" = success ]
			[ "$(grep -c "^::warning title=bash -c .*::passed on attempt $attempts/3 after " "commands.$i")" -eq 1 ]
		else
			[ "$outcome" = success ]
		fi
		[ "$(grep -c '^::\(error\|warning\)' "commands.$i")" -eq \
		    "$([ "$attempts" -gt 1 ] || [ "$rc" -ne 0 ] && echo 1 || echo 0)" ]
		# Its row.
		[[ $(sed -n "$((i + 2))p" "$summary") == "$row$attempts | $outcome | "*" s |" ]]
	done
	# A later step reads the outputs as the runner does: the last value
	# of each name wins.
	declare -A step
	while IFS='=' read -r k v; do step[$k]=$v; done <"$outputs"
	[ "${step[exit-status]}" = "$(cat rc.10)" ]
	[ "${step[attempts]}" = "$(sed -n '28s/^attempts=//p' "$outputs")" ]
	[[ ${step[outcome]} == success || ${step[outcome]} == attempts_exhausted ]]
}

# github_env: github, and the step's GITHUB_ENV file, empty.
github_env() {
	github
	export GITHUB_ENV=$envfile
	: >"$envfile"
}

# step_files: the attempts' files of --ci github left in $TMPDIR.
step_files() {
	(cd "$TMPDIR" && ls -d retry-GITHUB_* 2>/dev/null) || true
}

@test "GitHub: only the last attempt's GITHUB_OUTPUT and GITHUB_ENV lines reach the step's files, then retry's own; the attempts' files are gone" {
	github_env
	echo 'before=0' >"$outputs"
	run -0 --separate-stderr "$RETRY" -q -n 3 -b 1ms sh -c '
	    case $GITHUB_OUTPUT$GITHUB_ENV in
	    "$TMPDIR"/retry-GITHUB_OUTPUT.*"$TMPDIR"/retry-GITHUB_ENV.*) ;;
	    *) echo "not the attempts own: $GITHUB_OUTPUT $GITHUB_ENV"; exit 9 ;;
	    esac
	    if [ "$RETRY_ATTEMPT" = 1 ]; then
	        echo version=1 >>"$GITHUB_OUTPUT"
	        echo TOKEN=old >>"$GITHUB_ENV"
	        exit 1
	    fi
	    [ -s "$GITHUB_OUTPUT" ] && { echo "not emptied"; exit 9; }
	    echo version=2 >>"$GITHUB_OUTPUT"
	    echo TOKEN=new >>"$GITHUB_ENV"'
	[ "$output" = "" ]
	[ "$(cat "$outputs")" = "$(printf '%s\n' before=0 version=2 \
	    attempts=2 exit-status=0 outcome=success)" ]
	[ "$(cat "$envfile")" = "TOKEN=new" ]
	[ "$(step_files)" = "" ]
	# A run that gives up keeps its last attempt's, failed as they are.
	github_env
	run -1 --separate-stderr "$RETRY" -q -n 2 -b 1ms sh -c \
	    'echo "version=$RETRY_ATTEMPT" >>"$GITHUB_OUTPUT"
	    echo "TOKEN=t$RETRY_ATTEMPT" >>"$GITHUB_ENV"; exit 1'
	[ "$(cat "$outputs")" = "$(printf '%s\n' version=2 attempts=2 \
	    exit-status=1 outcome=attempts_exhausted)" ]
	[ "$(cat "$envfile")" = "TOKEN=t2" ]
	[ "$(step_files)" = "" ]
}

@test "GitHub: NAME<<DELIM values pass as they are, an unfinished last line is ended, and a hook writes to the step's files" {
	github_env
	run -0 --separate-stderr "$RETRY" -q -n 3 -b 1ms \
	    --on-retry 'echo "retried=$RETRY_ATTEMPT" >>"$GITHUB_OUTPUT"' \
	    --on-success 'echo "hook=$GITHUB_OUTPUT" >>"$GITHUB_OUTPUT"' \
	    sh -c 'printf "notes<<EOF_%s\n  a = b\r\n\nEOF\nEOF_%s\nlast=%s" \
	        "$RETRY_ATTEMPT" "$RETRY_ATTEMPT" "$RETRY_ATTEMPT" >>"$GITHUB_OUTPUT"
	    printf "MULTI<<X\nline 1\nline 2\nX\n" >>"$GITHUB_ENV"
	    [ "$RETRY_ATTEMPT" = 2 ]'
	# The hooks' lines come first: they are written as they run.
	[ "$(cat "$outputs")" = "$(printf 'retried=1\nnotes<<EOF_2\n  a = b\r\n\nEOF\nEOF_2\nlast=2\nattempts=2\nexit-status=0\noutcome=success\nhook=%s' "$outputs")" ]
	[ "$(cat "$envfile")" = "$(printf 'MULTI<<X\nline 1\nline 2\nX')" ]
}

@test "GitHub: no GITHUB_OUTPUT or GITHUB_ENV, no file for it; a TMPDIR that cannot have them is one warning, and the attempts write to the step's" {
	github
	unset GITHUB_OUTPUT
	export GITHUB_ENV=$envfile
	: >"$envfile"
	run -1 --separate-stderr "$RETRY" -q -n 2 -b 1ms sh -c '
	    echo "${GITHUB_OUTPUT-unset}"; echo "TOKEN=$RETRY_ATTEMPT" >>"$GITHUB_ENV"
	    ls "$TMPDIR" | grep GITHUB_; exit 1'
	# One file, the same for both attempts.
	f=$(sed -n 2p <<<"$output")
	[[ $f == retry-GITHUB_ENV.?????? ]]
	[ "$output" = "$(printf 'unset\n%s\nunset\n%s' "$f" "$f")" ]
	[ "$(cat "$envfile")" = "TOKEN=2" ]
	[ ! -s "$outputs" ]
	[ "$(step_files)" = "" ]
	# Neither: nothing made.
	unset GITHUB_ENV
	run -0 --separate-stderr "$RETRY" -q sh -c \
	    'echo "${GITHUB_OUTPUT-unset} ${GITHUB_ENV-unset}"
	    ls "$TMPDIR" | grep GITHUB_; true'
	[ "$output" = "unset unset" ]
	# TMPDIR missing: the run goes on as before, every line kept.
	github_env
	run -1 --separate-stderr env TMPDIR="$PWD/none" "$RETRY" -q -n 2 \
	    -b 1ms sh -c 'echo "v=$RETRY_ATTEMPT" >>"$GITHUB_OUTPUT"
	    echo "E=$RETRY_ATTEMPT" >>"$GITHUB_ENV"; exit 1'
	[ "$(grep '^retry:' <<<"$stderr")" = "retry: --ci: no file in $PWD/none (No such file or directory), so every attempt writes to GITHUB_OUTPUT and GITHUB_ENV themselves" ]
	[ "$(cat "$outputs")" = "$(printf '%s\n' v=1 v=2 attempts=2 \
	    exit-status=1 outcome=attempts_exhausted)" ]
	[ "$(cat "$envfile")" = "$(printf 'E=1\nE=2')" ]
}

@test "GitHub: a nested run keeps only its last attempt's lines, in its outer attempt's file; the outer run passes on its last" {
	github_env
	run -0 --separate-stderr "$RETRY" -q -n 2 -b 1ms "$RETRY" -q -n 2 -b 1ms sh -c '
	    n=$(($(cat count 2>/dev/null || echo 0) + 1)); echo "$n" >count
	    echo "v=$n" >>"$GITHUB_OUTPUT"; echo "E=$n" >>"$GITHUB_ENV"
	    [ "$n" = 4 ]'
	[ "$(cat count)" = 4 ]
	[ "$(cat "$outputs")" = "$(printf '%s\n' v=4 attempts=2 exit-status=0 \
	    outcome=success)" ]
	[ "$(cat "$envfile")" = "E=4" ]
	[ "$(step_files)" = "" ]
}

@test "GitHub: SIGTERM in the last attempt passes on its lines before retry dies" {
	github_env
	"$RETRY" -q -n 2 -b 1ms sh -c '
	    echo "v=$RETRY_ATTEMPT" >>"$GITHUB_OUTPUT"
	    [ "$RETRY_ATTEMPT" = 1 ] && exit 1
	    touch started; exec sleep 10' 3>&- 2>/dev/null &
	echo $! >bg.pid
	wait_for started
	rc=0
	kill -TERM "$(cat bg.pid)"
	wait "$(cat bg.pid)" || rc=$?
	[ "$rc" -eq 143 ]
	[ "$(cat "$outputs")" = "$(printf '%s\n' v=2 attempts=2 \
	    exit-status=143 outcome=interrupted)" ]
	[ "$(step_files)" = "" ]
}

@test "--ci gitlab, --ci none and a run outside CI leave GITHUB_OUTPUT and GITHUB_ENV to the attempts as they are" {
	for how in GITLAB_CI=true,--ci=auto GITHUB_ACTIONS=true,--ci=gitlab \
	    GITHUB_ACTIONS=true,--ci=none GITHUB_ACTIONS=false,--ci=auto; do
		export GITHUB_OUTPUT=$outputs GITHUB_ENV=$envfile
		: >"$outputs"
		: >"$envfile"
		run -1 --separate-stderr env "${how%,*}" "$RETRY" "${how#*,}" \
		    -q -n 2 -b 1ms sh -c '
		    [ "$GITHUB_OUTPUT $GITHUB_ENV" = "$0 $1" ] || echo wrong
		    echo "v=$RETRY_ATTEMPT" >>"$GITHUB_OUTPUT"
		    echo "E=$RETRY_ATTEMPT" >>"$GITHUB_ENV"; exit 1' \
		    "$outputs" "$envfile"
		[ "$output" = "" ]
		[ "$(cat "$outputs")" = "$(printf 'v=1\nv=2')" ]
		[ "$(cat "$envfile")" = "$(printf 'E=1\nE=2')" ]
		[ "$(step_files)" = "" ]
	done
}

@test "GitHub: SIGKILL leaves the step's files without a failed attempt's line, and the attempts' two files in TMPDIR" {
	github_env
	"$RETRY" -q -n 2 -b 1ms sh -c '
	    echo "v=$RETRY_ATTEMPT" >>"$GITHUB_OUTPUT"
	    echo "E=$RETRY_ATTEMPT" >>"$GITHUB_ENV"
	    [ "$RETRY_ATTEMPT" = 1 ] && exit 1
	    echo $$ >started; exec sleep 10' 3>&- 2>/dev/null &
	echo $! >bg.pid
	wait_for started
	later "$(cat started)"
	kill -KILL "$(cat bg.pid)"
	wait "$(cat bg.pid)" || true
	# The attempt dies with retry on Linux, and an init that reaps at once
	# may have taken it: it is no child of ours to find still there.
	kill -KILL "$(cat started)" 2>/dev/null || true
	[ ! -s "$outputs" ] && [ ! -s "$envfile" ]
	[ "$(step_files | sed 's/\.......$//')" = "$(printf 'retry-GITHUB_ENV\nretry-GITHUB_OUTPUT')" ]
}
