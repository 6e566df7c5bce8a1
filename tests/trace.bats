#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# --trace FILE: the run and its attempts as OpenTelemetry spans, one line
# of OTLP/JSON appended per run, read back by OpenTelemetry's own protobuf
# definitions (tests/helpers/otlp-check.js); each attempt's TRACEPARENT.

load helpers/common

BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-120}

# A W3C context as a CI runner or otel-cli would pass it.
PARENT_TRACE=0af7651916cd43dd8448eb211c80319c
PARENT_SPAN=b7ad6b7169203331

setup() {
	in_test_dir
}

# otlp FILE: every line of FILE decoded and checked by the real decoder,
# a line per span (otlp-check.js); skips, saying why, where it cannot be
# had (tests/run-bats installs it).
otlp() {
	local mods=$BATS_TEST_DIRNAME/../.deps/node_modules
	command -v node >/dev/null ||
	    skip "node is not installed (Debian's nodejs): spans not decoded"
	[ -d "$mods/@opentelemetry/otlp-transformer" ] ||
	    skip "@opentelemetry/otlp-transformer is not in .deps/ (tests/run-bats installs it): spans not decoded"
	NODE_PATH=$mods node "$BATS_TEST_DIRNAME/helpers/otlp-check.js" "$@"
}

@test "--trace: nested runs under an inherited TRACEPARENT hang together, and the decoder takes every line" {
	inner="$RETRY --trace $PWD/f -n 2 -b 10ms -j none -- false"
	TRACEPARENT=00-$PARENT_TRACE-$PARENT_SPAN-01 run -1 "$RETRY" -q \
	    --trace f -n 3 -b 10ms -j none -- sh -c "$inner"
	[ "$(wc -l <f)" -eq 4 ]
	otlp f "$PARENT_SPAN" >spans
	cat spans
	# Every span is of the inherited trace.
	[ "$(cut -d' ' -f2 spans | sort -u)" = "$PARENT_TRACE" ]
	# The outer run (line 4) is the inherited span's child, its three
	# attempts the outer run's, and each inner run an outer attempt's, in
	# order, with two attempts of its own.
	outer=$(awk '$1 == 4 && $5 == "retry" { print $3 }' spans)
	[ "$(awk '$1 == 4 && $5 == "retry" { print $4, $6, $7 }' spans)" = \
	    "$PARENT_SPAN sh outcome=attempts_exhausted" ]
	awk -v o="$outer" '$1 == 4 && $5 == "attempt" && $4 == o { print $3 }' \
	    spans >outer-attempts
	[ "$(wc -l <outer-attempts)" -eq 3 ]
	awk '$1 < 4 && $5 == "retry" { print $4 }' spans >inner-parents
	diff outer-attempts inner-parents
	for n in 1 2 3; do
		[ "$(awk -v n=$n '$1 == n && $5 == "attempt"' spans | wc -l)" -eq 2 ]
	done
	grep -q '^1 .* attempt 1 exit=1 error=exit_status$' spans
}

@test "--trace: 50 runs appending at once leave 50 whole lines" {
	long=$(printf '%06000d' 0)	# each line well past PIPE_BUF
	pids=
	for i in $(seq 50); do
		"$RETRY" --trace f -n 1 -- true "$long" </dev/null 3>&- &
		pids="$pids $!"
	done
	# Not a bare wait: bats' timeout is a job of this shell too.
	wait $pids
	[ "$(wc -l <f)" -eq 50 ]
	[ "$(wc -c <f)" -gt $((50 * 6000)) ]
	otlp f >spans
	[ "$(awk '$5 == "retry"' spans | wc -l)" -eq 50 ]
	[ "$(cut -d' ' -f2 spans | sort -u | wc -l)" -eq 50 ]
}

@test "--trace: each attempt finds its own span in TRACEPARENT, the hooks the run's, and TRACESTATE passed on" {
	TRACEPARENT=00-$PARENT_TRACE-$PARENT_SPAN-00 TRACESTATE=vendor=x \
	    run -0 "$RETRY" -q --trace f -b 10ms -j none \
	    --on-retry 'echo "hook $TRACEPARENT" >>seen' \
	    sh -c 'echo "attempt $TRACEPARENT $TRACESTATE" >>seen; [ $RETRY_ATTEMPT = 2 ]'
	cat seen
	otlp f "$PARENT_SPAN" >spans
	cat spans
	run_span=$(awk '$5 == "retry" { print $3 }' spans)
	# Sampled 00 is passed on as the caller said.
	[ "$(cat seen)" = "attempt 00-$PARENT_TRACE-$(awk '$6 == "1" { print $3 }' spans)-00 vendor=x
hook 00-$PARENT_TRACE-$run_span-00
attempt 00-$PARENT_TRACE-$(awk '$6 == "2" { print $3 }' spans)-00 vendor=x" ]
	grep -q '"traceState":"vendor=x"' f
}

@test "--trace: without a TRACEPARENT, or with an invalid one (-v says so), the run is a new trace's root and TRACESTATE goes" {
	for tp in '' 00-$PARENT_TRACE-0000000000000000-01 \
	    00-0AF7651916CD43DD8448EB211C80319C-$PARENT_SPAN-01 \
	    ff-$PARENT_TRACE-$PARENT_SPAN-01 00-$PARENT_TRACE-$PARENT_SPAN-01-x; do
		rm -f f seen
		TRACEPARENT=$tp TRACESTATE=vendor=x run -0 --separate-stderr \
		    "$RETRY" -v --trace f -n 1 \
		    sh -c 'echo "$TRACEPARENT ${TRACESTATE-none}" >seen'
		if [ -n "$tp" ]; then
			[ "$(grep TRACEPARENT <<<"$stderr")" = "retry: TRACEPARENT '$tp' is no W3C trace context: the run starts a new trace" ]
		fi
		otlp f >spans
		[ "$(awk '$5 == "retry" { print $4 }' spans)" = - ]
		trace=$(awk '$5 == "retry" { print $2 }' spans)
		[ "$trace" != "$PARENT_TRACE" ]
		matches "$(cat seen)" "^00-$trace-[0-9a-f]{16}-01 none\$"
		run ! grep -q traceState f
	done
	# A later version is read as 00 where a dash follows (W3C level 1).
	rm -f f
	TRACEPARENT=cc-$PARENT_TRACE-$PARENT_SPAN-01-later run -0 \
	    "$RETRY" --trace f -n 1 true
	otlp f "$PARENT_SPAN" >spans
	[ "$(awk '$5 == "retry" { print $2, $4 }' spans)" = "$PARENT_TRACE $PARENT_SPAN" ]
}

@test "--trace: without it, the attempts find TRACEPARENT and TRACESTATE as they were" {
	TRACEPARENT=garbage TRACESTATE=vendor=x run -0 "$RETRY" -n 1 \
	    sh -c 'echo "$TRACEPARENT $TRACESTATE"'
	[ "$output" = "garbage vendor=x" ]
}

@test "--trace: an attempt's span says how it ended: exit status, timeout, signal; the waits are the run's events" {
	script='case $RETRY_ATTEMPT in 1) exit 3 ;; 2) sleep 5 ;; 3) kill -KILL $$ ;; esac'
	run -0 "$RETRY" -q --trace f -T 50ms -b 10ms -j none -- sh -c "$script"
	otlp f >spans
	cat spans
	[ "$(awk '$5 == "attempt" { print $6, $7, $8 }' spans)" = "1 exit=3 error=exit_status
2 exit=124 error=timeout
3 exit=137 error=signal
4 exit=0 error=-" ]
	grep -q '"message":"timed out after 0.050s"' f
	grep -q '{"key":"retry.signal","value":{"stringValue":"SIGKILL"}}' f
	[ "$(grep -o '"name":"retry.wait"' f | wc -l)" -eq 3 ]
	grep -q '"retry.wait.reason","value":{"stringValue":"backoff"}' f
	# The run passed: its span has no error status.
	[ "$(awk '$5 == "retry" { print $7, $8 }' spans)" = "outcome=success status=unset" ]
}

@test "--trace: the service's name, and the store's password masked in the command line" {
	run -0 "$RETRY" -q --trace f --trace-service deploy --circuit api \
	    --store redis://:hunter2@127.0.0.1:1 --store-fail open -n 1 true
	otlp f >/dev/null
	grep -q '{"key":"service.name","value":{"stringValue":"deploy"}}' f
	run ! grep -q hunter2 f
	grep -q '"stringValue":"redis://:\*\*\*@127.0.0.1:1"' f
}

@test "--trace: a file that cannot be written is a usage error before anything runs; one that fails at the end is a warning" {
	run -125 "$RETRY" --trace - true
	[ "$output" = "retry: --trace '-': spans are data, not messages: give a file" ]
	run -125 "$RETRY" --trace no/such/dir/f touch ran
	[ ! -e ran ]
	matches "$output" "^retry: --trace 'no/such/dir/f': "
	run -125 "$RETRY" --trace-service x true
	[ "$output" = "retry: --trace-service needs --trace FILE" ]
	run -125 "$RETRY" --trace f --circuit-status api
	[ "$output" = "retry: --trace and --trace-service go with a run, not --circuit-status" ]
	# A FIFO without a reader at the end: the run's status stands.
	mkfifo fifo
	run -3 "$RETRY" -q --trace fifo -n 1 sh -c 'exit 3'
	[ "$output" = "retry: --trace 'fifo': No such device or address" ]
}

@test "--trace: a long run's line stays short: the first and last 64 attempts' spans, the first 128 events, the rest counted" {
	run -1 "$RETRY" -q --trace f -n 200 -b 1ms -c 1ms -j none false
	[ "$(wc -c <f)" -lt 200000 ]
	otlp f >spans
	awk '$5 == "attempt" { print $6 }' spans >numbers
	[ "$(wc -l <numbers)" -eq 128 ]
	[ "$(sed -n '1p;64p;65p;128p' numbers | tr '\n' ' ')" = "1 64 137 200 " ]
	grep -q '{"key":"retry.attempt_spans_dropped","value":{"intValue":"72"}}' f
	[ "$(grep -o '"name":"retry.wait"' f | wc -l)" -eq 128 ]
	grep -q '"droppedEventsCount":71' f
}
