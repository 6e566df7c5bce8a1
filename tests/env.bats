#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# What every attempt finds in its environment: RETRY_ATTEMPT,
# RETRY_MAX_ATTEMPTS, RETRY_IDEMPOTENCY_KEY, RETRY_DEADLINE (also from an
# outer retry), and nothing else changed.
load helpers/common

UUID4='^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'

setup() {
	state=$BATS_TEST_TMPDIR/state
	# Start clean, whatever the shell running the suite has.
	unset RETRY_ATTEMPT RETRY_MAX_ATTEMPTS RETRY_IDEMPOTENCY_KEY RETRY_DEADLINE
}

# Seconds since the epoch, with nanoseconds.
now_s() {
	clock-now -r -s
}

@test "RETRY_ATTEMPT counts the attempts from 1" {
	run -0 --separate-stderr "$RETRY" -q -b 10ms flaky "$state" 2
	[ "$stderr" = "" ]
	[ "$(cut -d' ' -f1 "$state" | tr '\n' ' ')" = "1 2 3 " ]
	rm "$state"
	run -1 "$RETRY" -q -n 4 -b 10ms -c 10ms flaky "$state" 9
	[ "$(cut -d' ' -f1 "$state" | tr '\n' ' ')" = "1 2 3 4 " ]
}

@test "an inherited RETRY_ATTEMPT or RETRY_MAX_ATTEMPTS is replaced" {
	run -0 --separate-stderr env RETRY_ATTEMPT=7 RETRY_MAX_ATTEMPTS=9 \
	    "$RETRY" -n 2 sh -c 'echo "$RETRY_ATTEMPT $RETRY_MAX_ATTEMPTS"'
	[ "$output" = "1 2" ]
	[ "$stderr" = "" ]
}

@test "RETRY_MAX_ATTEMPTS is the -n value, 0 for unlimited" {
	show='echo "$RETRY_MAX_ATTEMPTS"'
	run -0 "$RETRY" sh -c "$show"
	[ "$output" = 5 ]
	run -0 "$RETRY" -n 3 sh -c "$show"
	[ "$output" = 3 ]
	run -0 "$RETRY" --attempts=1 sh -c "$show"
	[ "$output" = 1 ]
	run -0 "$RETRY" -n 0 sh -c "$show"
	[ "$output" = 0 ]
	# The same in every attempt.
	run -0 --separate-stderr "$RETRY" -q -n 0 -b 10ms -c 10ms \
	    sh -c "$show"'; [ "$RETRY_ATTEMPT" -ge 3 ]'
	[ "$output" = "$(printf '0\n0\n0')" ]
}

@test "RETRY_IDEMPOTENCY_KEY is one UUID v4 for all attempts of a run" {
	run -0 "$RETRY" -q -b 10ms flaky "$state" 3
	[ "$(wc -l <"$state")" -eq 4 ]
	[ "$(cut -d' ' -f2 "$state" | sort -u | wc -l)" -eq 1 ]
	key=$(head -n 1 "$state" | cut -d' ' -f2)
	[[ $key =~ $UUID4 ]]
}

@test "RETRY_IDEMPOTENCY_KEY differs between runs" {
	for i in 1 2 3 4 5 6 7 8 9 10; do
		"$RETRY" -n1 sh -c 'echo "$RETRY_IDEMPOTENCY_KEY"'
	done >"$BATS_TEST_TMPDIR/keys"
	[ "$(sort -u "$BATS_TEST_TMPDIR/keys" | wc -l)" -eq 10 ]
	while read -r key; do
		[[ $key =~ $UUID4 ]] || { echo "not a UUID v4: $key"; return 1; }
	done <"$BATS_TEST_TMPDIR/keys"
	# Also for runs started at the same instant.
	for i in 1 2 3 4 5 6; do
		"$RETRY" -n1 sh -c 'echo "$RETRY_IDEMPOTENCY_KEY"' \
		    >"$BATS_TEST_TMPDIR/same-instant$i" 3>&- &
	done
	wait
	[ "$(cat "$BATS_TEST_TMPDIR"/same-instant? | grep -cE "$UUID4")" -eq 6 ]
	[ "$(sort -u "$BATS_TEST_TMPDIR"/same-instant? | wc -l)" -eq 6 ]
}

@test "RETRY_IDEMPOTENCY_KEY is --key when given" {
	run -0 "$RETRY" -q -b 10ms --key order-1234 flaky "$state" 2
	[ "$(cat "$state")" = "$(printf '1 order-1234\n2 order-1234\n3 order-1234')" ]
	# Verbatim, whatever it holds, and with the short option.
	run -0 "$RETRY" -n1 -K 'a b=c;$x' sh -c 'printf %s "$RETRY_IDEMPOTENCY_KEY"'
	[ "$output" = 'a b=c;$x' ]
	# --key wins over an inherited key.
	run -0 env RETRY_IDEMPOTENCY_KEY=inherited "$RETRY" -n1 --key=mine \
	    sh -c 'echo "$RETRY_IDEMPOTENCY_KEY"'
	[ "$output" = mine ]
}

UUID8='^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'

# derived KEY ARG...: the key a nested run derives, computed here with
# sha256sum: UUID version 8 of SHA-256(namespace, KEY, each ARG, NUL after each).
derived() {
	local key=$1 hex arg
	shift
	hex=$({
		printf '\x6f\x1c\x0a\x3e\x8d\x2b\x4f\x5e\x9a\x77\x3c\x1e\x2b\x4d\x5a\x60'
		printf '%s\0' "$key"
		for arg in "$@"; do
			printf '%s\0' "$arg"
		done
	} | sha256sum | cut -c 1-32)
	printf '%s-%s-8%s-%x%s-%s\n' "${hex:0:8}" "${hex:8:4}" "${hex:13:3}" \
	    $(((0x${hex:16:1} & 3) | 8)) "${hex:17:3}" "${hex:20:12}"
}

@test "a nested run derives its key from the inherited one and its command line (UUID v8, SHA-256)" {
	# Under an outer retry: it marks its attempts with RETRY_ATTEMPT.
	# -n 2: an inner run makes one attempt unless told (nesting: env.bats).
	run -0 env RETRY_IDEMPOTENCY_KEY=from-outside RETRY_ATTEMPT=2 \
	    "$RETRY" -q -n 2 -b 10ms flaky "$state" 1
	local want
	want=$(derived from-outside flaky "$state" 1)
	[[ $want =~ $UUID8 ]]
	[ "$(cat "$state")" = "$(printf '1 %s\n2 %s' "$want" "$want")" ]
}

@test "nested runs: different inner commands get different keys, the same one the same key in every outer attempt" {
	cd "$BATS_TEST_TMPDIR"
	# An outer run of two attempts, each running three inner runs.
	run -1 "$RETRY" -n 2 -b 10ms sh -c '
		echo "outer $RETRY_IDEMPOTENCY_KEY" >>keys
		for order in 1 2 3; do
			"$0" -n1 sh -c "echo \"order-$order \$RETRY_IDEMPOTENCY_KEY\" >>keys" 
		done
		# Two identical inner commands, told apart with -K.
		"$0" -n1 -K "$RETRY_IDEMPOTENCY_KEY-step2" sh -c "echo \"step2 \$RETRY_IDEMPOTENCY_KEY\" >>keys"
		exit 1' "$RETRY"
	cat keys
	local outer
	outer=$(awk '$1 == "outer" { print $2; exit }' keys)
	[[ $outer =~ $UUID4 ]]
	# Three different keys for three orders, none the outer one.
	[ "$(awk '$1 ~ /^order-/ { print $2 }' keys | sort -u | wc -l)" -eq 3 ]
	! grep -q "^order-[0-9] $outer$" keys || false
	# The same in both outer attempts.
	[ "$(grep -c '^order-1 ' keys)" -eq 2 ]
	[ "$(awk '$1 == "order-1" { print $2 }' keys | sort -u | wc -l)" -eq 1 ]
	[ "$(awk '$1 == "order-1" { print $2; exit }' keys)" = \
	    "$(derived "$outer" sh -c "echo \"order-1 \$RETRY_IDEMPOTENCY_KEY\" >>keys")" ]
	[ "$(awk '$1 == "step2" { print $2; exit }' keys)" = "$outer-step2" ]
}

@test "a caller's own RETRY_IDEMPOTENCY_KEY, with no outer retry, is every attempt's key as it came" {
	# A CI job that exports its own id: no RETRY_ATTEMPT marks an outer retry.
	run -0 env RETRY_IDEMPOTENCY_KEY=ci-job-4711 "$RETRY" -q -b 10ms \
	    flaky "$state" 1
	[ "$(cat "$state")" = "$(printf '1 ci-job-4711\n2 ci-job-4711')" ]
	# Nor does a RETRY_ATTEMPT that is not an attempt's number.
	: >"$state"
	run -0 env RETRY_IDEMPOTENCY_KEY=ci-job-4711 RETRY_ATTEMPT=x \
	    "$RETRY" -q -b 10ms flaky "$state" 1
	[ "$(cat "$state")" = "$(printf '1 ci-job-4711\n2 ci-job-4711')" ]
}

@test "an empty inherited RETRY_IDEMPOTENCY_KEY gets a new UUID" {
	run -0 env RETRY_IDEMPOTENCY_KEY= "$RETRY" -n1 \
	    sh -c 'echo "$RETRY_IDEMPOTENCY_KEY"'
	[[ $output =~ $UUID4 ]]
}

@test "RETRY_DEADLINE is there only with a deadline" {
	run -0 "$RETRY" -n1 sh -c 'echo "${RETRY_DEADLINE-unset}"'
	[ "$output" = unset ]
	run -0 "$RETRY" -n1 -T 10s sh -c 'echo "${RETRY_DEADLINE-unset}"'
	[ "$output" = unset ]
	run -0 "$RETRY" -n1 -D 10s sh -c 'echo "${RETRY_DEADLINE-unset}"'
	[ "$output" != unset ]
}

@test "RETRY_DEADLINE is Unix seconds with 3 decimals, now + the deadline" {
	before=$(now_s)
	run -0 --separate-stderr "$RETRY" -D 10s sh -c 'echo "$RETRY_DEADLINE"'
	after=$(now_s)
	[[ $output =~ ^[0-9]+\.[0-9]{3}$ ]]
	# Cut or rounded to the millisecond: within 1ms of the true instant.
	awk -v t="$output" -v b="$before" -v a="$after" 'BEGIN {
		if (t < b + 10 - 0.001 || t > a + 10 + 0.001) {
			printf "%s not within [%s, %s] + 10\n", t, b, a
			exit 1
		}
	}'
	before=$(now_s)
	run -0 "$RETRY" --deadline=1m30s sh -c 'echo "$RETRY_DEADLINE"'
	after=$(now_s)
	awk -v t="$output" -v b="$before" -v a="$after" \
	    'BEGIN { exit !(t >= b + 90 - 0.001 && t <= a + 90 + 0.001) }'
}

@test "RETRY_DEADLINE is the same for every attempt" {
	run -0 "$RETRY" -q -D 10s -b 10ms -c 20ms \
	    sh -c 'echo "$RETRY_DEADLINE"; [ "$RETRY_ATTEMPT" -ge 3 ]'
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[1]}" = "${lines[0]}" ]
	[ "${lines[2]}" = "${lines[0]}" ]
}

@test "nested: an outer deadline earlier than the inner one wins" {
	out=$BATS_TEST_TMPDIR/seen
	before=$(now_s)
	start=$(now_ms)
	run -124 "$RETRY" -q -D 0.3 "$RETRY" -q -D 100 \
	    sh -c 'echo "$RETRY_DEADLINE" >"$0"; exec sleep 5' "$out"
	elapsed=$(($(now_ms) - start))
	# 0.3 s and a little; the attempt alone would take 5 s, the inner 100 s.
	[ "$elapsed" -lt 3000 ]
	seen=$(cat "$out")
	[[ $seen =~ ^[0-9]+\.[0-9]{3}$ ]]
	# The outer's now + 0.3s, not the inner's now + 100s.
	awk -v t="$seen" -v b="$before" 'BEGIN {
		if (t < b + 0.3 - 0.001 || t > b + 0.3 + 0.3) {
			printf "innermost saw %s; started at %s\n", t, b
			exit 1
		}
	}'
}

@test "nested: an inner deadline earlier than the outer one wins" {
	out=$BATS_TEST_TMPDIR/seen
	before=$(now_s)
	start=$(now_ms)
	# -n1: the outer would retry the inner's 124 until its own deadline.
	run -124 "$RETRY" -q -n1 -D 100 "$RETRY" -q -D 0.3 \
	    sh -c 'echo "$RETRY_DEADLINE" >"$0"; exec sleep 5' "$out"
	elapsed=$(($(now_ms) - start))
	[ "$elapsed" -lt 900 ]
	awk -v t="$(cat "$out")" -v b="$before" \
	    'BEGIN { exit !(t >= b + 0.3 - 0.001 && t <= b + 0.3 + 0.3) }'
}

@test "a RETRY_DEADLINE from the environment bounds the run like an outer retry" {
	when=$(now_s | awk '{ printf "%.3f", $1 + 0.5 }')
	start=$(now_ms)
	run -124 env RETRY_DEADLINE="$when" "$RETRY" -q -D 100 \
	    sh -c 'echo "$RETRY_DEADLINE"; exec sleep 5'
	elapsed=$(($(now_ms) - start))
	[ "$output" = "$when" ]
	[ "$elapsed" -lt 1500 ]
}

# ---- One layer retries (retry(1), Nested runs) ----------------------------

@test "nested: an inner run given no -n makes one attempt, and the outer one retries: 3 calls for -n 3, an outer report of 3" {
	report=$BATS_TEST_TMPDIR/report.json
	run -1 "$RETRY" -q -n 3 -b 1ms --report "$report" -- \
	    "$RETRY" -q -b 1ms -- flaky "$state" 99
	[ "$(wc -l <"$state")" -eq 3 ]
	# Each inner run is attempt 1 of 1: RETRY_ATTEMPT is the inner's.
	[ "$(cut -d' ' -f1 "$state" | tr '\n' ' ')" = "1 1 1 " ]
	[ "$(jq '.attempts | length' "$report")" -eq 3 ]
	[ "$(jq -r .outcome "$report")" = attempts_exhausted ]
}

@test "nested: -n on the inner command line is obeyed, 2 x 3 = 6 calls, and -v says what it comes to" {
	report=$BATS_TEST_TMPDIR/report.json
	run -1 --separate-stderr "$RETRY" -q -n 3 -b 1ms --report "$report" -- \
	    "$RETRY" -v -n 2 -b 1ms -j none -- flaky "$state" 99
	[ "$(wc -l <"$state")" -eq 6 ]
	[ "$(jq '.attempts | length' "$report")" -eq 3 ]
	# One policy line per outer attempt, each the same.
	[ "$(grep -c '^retry: policy: ' <<<"$stderr")" -eq 3 ]
	matches "${stderr_lines[0]}" '^retry: policy: 2 attempts under an outer retry.s 3: up to 6, delay 0\.001s '
}

@test "nested: -v of an inner run without -n: 1 attempt, the outer retry retries" {
	run -0 --separate-stderr env RETRY_ATTEMPT=2 RETRY_MAX_ATTEMPTS=4 \
	    "$RETRY" -v -b 10ms true
	matches "${stderr_lines[0]}" '^retry: policy: 1 attempt: the outer retry retries \(-n to retry here too\), delay 0\.010s '
	# An outer run without a limit, and an inner one without: no limit.
	run -0 --separate-stderr env RETRY_ATTEMPT=2 RETRY_MAX_ATTEMPTS=0 \
	    "$RETRY" -v -n 3 true
	matches "${stderr_lines[0]}" '^retry: policy: 3 attempts under an outer retry.s 0: no limit, '
	run -0 --separate-stderr env RETRY_ATTEMPT=2 RETRY_MAX_ATTEMPTS=4 \
	    "$RETRY" -v -n 0 true
	matches "${stderr_lines[0]}" '^retry: policy: 0 attempts under an outer retry.s 4: no limit, '
	# An outer run of one attempt retries nothing.
	run -0 --separate-stderr env RETRY_ATTEMPT=1 RETRY_MAX_ATTEMPTS=1 \
	    "$RETRY" -v true
	matches "${stderr_lines[0]}" '^retry: policy: 1 attempt, and the outer retry makes 1: none is retried \(-n to retry here\), '
	# One that does not say its attempts: no product.
	run -0 --separate-stderr env RETRY_ATTEMPT=2 RETRY_MAX_ATTEMPTS=x \
	    "$RETRY" -v -n 3 true
	matches "${stderr_lines[0]}" '^retry: policy: 3 attempts \(0: no limit\) under an outer retry, '
}

@test "nested: only a RETRY_ATTEMPT of a number from 1 is an outer retry's; otherwise the default 5 stand" {
	local bad
	for bad in '' 0 x -1; do
		rm -f "$state"
		run -1 env RETRY_ATTEMPT="$bad" "$RETRY" -q -b 1ms -c 1ms \
		    flaky "$state" 99
		[ "$(wc -l <"$state")" -eq 5 ]
	done
	# --dry-run of an inner run lists its one attempt: no delay.
	run -0 --separate-stderr env RETRY_ATTEMPT=1 "$RETRY" --dry-run -b 1s
	[ "$output" = "" ]
	run -0 env RETRY_ATTEMPT=1 "$RETRY" --dry-run -n 3 -b 1s -j none
	[ "$output" = "$(printf '2\t1.000\t1.000\n3\t2.000\t3.000')" ]
}

@test "nested: a hook of an outer retry counts as its attempt: a retry there makes one attempt unless -n" {
	run -1 "$RETRY" -q -n 1 --on-giveup "\"$RETRY\" -q -b 1ms flaky '$state' 99" false
	[ "$(wc -l <"$state")" -eq 1 ]
	rm "$state"
	run -1 "$RETRY" -q -n 1 --on-giveup "\"$RETRY\" -q -n 3 -b 1ms flaky '$state' 99" false
	[ "$(wc -l <"$state")" -eq 3 ]
}

# env_of FILE RETRY-ARGS...: the environment the command sees, run through
# retry with RETRY-ARGS (or directly without any), as bash's export -p
# lists it (sorted, values quoted, so a newline in one is no new entry),
# without retry's seven variables and "_".
env_of() {
	local file=$1
	shift
	"$@" bash -c 'export -p' | grep -v -e '^declare -x _=' \
	    -e '^declare -x RETRY_ATTEMPT=' -e '^declare -x RETRY_MAX_ATTEMPTS=' \
	    -e '^declare -x RETRY_IDEMPOTENCY_KEY=' \
	    -e '^declare -x RETRY_DEADLINE=' \
	    -e '^declare -x RETRY_AFTER_FILE=' \
	    -e '^declare -x RETRY_ENV_FILE=' -e '^declare -x RETRY_RUN_ID=' \
	    >"$file"
}

@test "nothing else in the environment changes" {
	dir=$BATS_TEST_TMPDIR
	# Awkward entries must come through as they are.
	export RETRY_TEST_NEWLINE=$'two\nlines' RETRY_TEST_EMPTY= \
	    RETRY_TEST_EQUALS='a=b=c' RETRY_OTHER=kept
	env_of "$dir/direct"
	env_of "$dir/retried" "$RETRY"
	env_of "$dir/deadline" "$RETRY" -q -n 3 -D 10s -T 5s -K key -b 10ms
	[ -s "$dir/direct" ]
	grep -qx 'declare -x RETRY_OTHER="kept"' "$dir/direct"
	cmp "$dir/direct" "$dir/retried"
	cmp "$dir/direct" "$dir/deadline"
	# And retry's own are exactly these.
	run -0 "$RETRY" env
	[ "$(grep -o '^RETRY_[A-Z_]*=' <<<"$output" | grep -v -e OTHER -e TEST | sort |
	    tr '\n' ' ')" = "RETRY_AFTER_FILE= RETRY_ATTEMPT= RETRY_ENV_FILE= RETRY_IDEMPOTENCY_KEY= RETRY_MAX_ATTEMPTS= RETRY_RUN_ID= " ]
	run -0 "$RETRY" -D 10s env
	[ "$(grep -o '^RETRY_[A-Z_]*=' <<<"$output" | grep -v -e OTHER -e TEST | sort |
	    tr '\n' ' ')" = "RETRY_AFTER_FILE= RETRY_ATTEMPT= RETRY_DEADLINE= RETRY_ENV_FILE= RETRY_IDEMPOTENCY_KEY= RETRY_MAX_ATTEMPTS= RETRY_RUN_ID= " ]
}
