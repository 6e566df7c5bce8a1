#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The rules of the circuit breaker and the retry budget (breaker.c), as
# tables: a state, a step, and what must come of it.  No record, no store
# and no clock: helpers/breaker-test runs one step of the rules alone.
# Each test is a transition that retry-circuit(7) names; circuit.bats and
# store.bats check that both backends follow the same rules end to end.

load helpers/common

# rules: rows of "STATE | STEP | EXPECTED" on stdin, blank lines and
# '#' lines skipped; every row whose step prints other than EXPECTED is
# shown, and the test fails if there was one.
rules() {
	local given step want got bad=0 rows=0
	while IFS='|' read -r given step want; do
		case $given in '' | '#'*) continue ;; esac
		rows=$((rows + 1))
		# shellcheck disable=SC2086 # words, on purpose
		got=$(breaker-test $given $step 2>&1) || got="failed: $got"
		want=${want# }
		if [ "$got" != "$want" ]; then
			printf 'row: %s|%s\n want: %s\n  got: %s\n' "$given" \
			    "$step" "$want" "$got" >&2
			bad=1
		fi
	done
	[ "$rows" -gt 0 ] && [ "$bad" -eq 0 ]
}

@test "closed: an attempt goes, and nothing changes" {
	rules <<-'EOF'
	closed | admit now=100 | go unchanged: closed failures=0 openings=0
	closed failures=3 | admit now=100 retry | go unchanged: closed failures=3 openings=0
	EOF
}

@test "closed: failures below --trip count; the trip-th opens for a cool-down in [cool/2, cool]" {
	rules <<-'EOF'
	closed | result now=0 failure trip=3 | none changed: closed failures=1 openings=0
	closed failures=1 | result now=0 failure trip=3 | none changed: closed failures=2 openings=0
	closed failures=2 | result now=1000 failure trip=3 cool=400 cap=400 u=0 | opened changed: open failures=3 openings=1 half-open-at=1200
	closed failures=2 | result now=1000 failure trip=3 cool=400 cap=400 u=0.5 | opened changed: open failures=3 openings=1 half-open-at=1300
	closed failures=2 | result now=1000 failure trip=3 cool=400 cap=400 u=0.999 | opened changed: open failures=3 openings=1 half-open-at=1399
	closed | result now=0 failure trip=1 cool=10 cap=10 | opened changed: open failures=1 openings=1 half-open-at=5
	EOF
}

@test "the k-th opening in a row cools for c(k) = min(max(cap, cool), cool * 2^(k-1)), equal jitter" {
	# cool 100, cap 1000: c = 100, 200, 400, 800, then 1000 for good.
	rules <<-'EOF'
	half-open failures=5 openings=1 | result now=0 failure probing cool=100 cap=1000 u=0 | opened changed: open failures=6 openings=2 half-open-at=100
	half-open failures=5 openings=2 | result now=0 failure probing cool=100 cap=1000 u=0 | opened changed: open failures=6 openings=3 half-open-at=200
	half-open failures=5 openings=3 | result now=0 failure probing cool=100 cap=1000 u=0 | opened changed: open failures=6 openings=4 half-open-at=400
	half-open failures=5 openings=4 | result now=0 failure probing cool=100 cap=1000 u=0 | opened changed: open failures=6 openings=5 half-open-at=500
	half-open failures=5 openings=40 | result now=0 failure probing cool=100 cap=1000 u=0 | opened changed: open failures=6 openings=41 half-open-at=500
	# A cap below the first cool-down: the cool-down is the limit.
	half-open failures=5 openings=3 | result now=0 failure probing cool=100 cap=10 u=0.5 | opened changed: open failures=6 openings=4 half-open-at=75
	EOF
}

@test "open: no attempt starts, first attempts included, until the cool-down is over" {
	rules <<-'EOF'
	open failures=5 half-open-at=500 | admit now=100 | wait 400 unchanged: open failures=5 openings=0 half-open-at=500
	open failures=5 half-open-at=500 | admit now=499 retry | wait 1 unchanged: open failures=5 openings=0 half-open-at=500
	EOF
}

@test "due: the run that gets the probe goes, half-open; the others wait for it" {
	rules <<-'EOF'
	open failures=5 openings=1 half-open-at=500 | admit now=500 probe | probe changed: half-open failures=5 openings=1
	open failures=5 openings=1 half-open-at=500 | admit now=900 | wait 0 unchanged: open failures=5 openings=1 half-open-at=500
	half-open failures=5 openings=1 | admit now=900 | wait 0 unchanged: half-open failures=5 openings=1
	# The probe held again (a retry of the probing run): nothing to change.
	half-open failures=5 openings=1 | admit now=900 probe | probe unchanged: half-open failures=5 openings=1
	EOF
}

@test "the probe's failure opens again for longer; its success closes, the counts in a row cleared" {
	rules <<-'EOF'
	half-open failures=5 openings=1 | result now=0 failure probing trip=5 cool=100 cap=1000 | opened changed: open failures=6 openings=2 half-open-at=100
	half-open failures=5 openings=2 | result now=0 success probing | closed changed: closed failures=0 openings=0
	EOF
}

@test "any success, in any state, closes; a failure not the probe's while open counts and opens nothing" {
	rules <<-'EOF'
	open failures=5 openings=1 half-open-at=900 | result now=0 success | closed changed: closed failures=0 openings=0
	half-open failures=5 openings=1 | result now=0 success | closed changed: closed failures=0 openings=0
	closed failures=4 | result now=0 success | none changed: closed failures=0 openings=0
	closed | result now=0 success | none unchanged: closed failures=0 openings=0
	open failures=5 openings=1 half-open-at=900 | result now=0 failure trip=5 | none changed: open failures=6 openings=1 half-open-at=900
	half-open failures=5 openings=1 | result now=0 failure trip=1 | none changed: half-open failures=6 openings=1
	EOF
}

@test "counts in a row stop at 2147483647" {
	rules <<-'EOF'
	open failures=2147483647 half-open-at=9 | result now=0 failure | none unchanged: open failures=2147483647 openings=0 half-open-at=9
	half-open failures=1 openings=2147483647 | result now=0 failure probing cool=10 cap=10 | opened changed: open failures=2 openings=2147483647 half-open-at=5
	EOF
}

@test "the budget: a retry takes one; a first attempt is never held back by it" {
	rules <<-'EOF'
	closed | admit now=100 retry ask=2/1000 | go changed: closed failures=0 openings=0 budget=2/1000 retries=100
	closed budget=2/1000 retries=100 | admit now=150 retry ask=2/1000 | go changed: closed failures=0 openings=0 budget=2/1000 retries=100,150
	closed budget=2/1000 retries=100,150 | admit now=200 ask=2/1000 | go unchanged: closed failures=0 openings=0 budget=2/1000 retries=100,150
	EOF
}

@test "the budget spent: a retry waits until enough of the oldest leave the window" {
	rules <<-'EOF'
	closed budget=2/1000 retries=100,150 | admit now=200 retry ask=2/1000 | budget 900 unchanged: closed failures=0 openings=0 budget=2/1000 retries=100,150
	closed budget=2/1000 retries=100,150,160 | admit now=200 retry ask=1/1000 | budget 960 changed: closed failures=0 openings=0 budget=1/1000 retries=100,150,160
	# Retries that left the window are dropped: exactly a window ago is out.
	closed budget=2/1000 retries=100,150 | admit now=1100 retry ask=2/1000 | go changed: closed failures=0 openings=0 budget=2/1000 retries=150,1100
	# A clock that went back: the times stay oldest first.
	closed budget=3/1000 retries=500 | admit now=400 retry ask=3/1000 | go changed: closed failures=0 openings=0 budget=3/1000 retries=500,500
	# The same with times of today in ns, beyond a double's 53 bits: the
	# last time, exact, stays the floor.
	closed budget=3/1000000 retries=1800000000000000145 | admit now=1800000000000000000 retry ask=3/1000000 | go changed: closed failures=0 openings=0 budget=3/1000000 retries=1800000000000000145,1800000000000000256
	EOF
}

@test "the budget spent at the probe: the retry waits and does not take the half-open circuit" {
	rules <<-'EOF'
	open half-open-at=100 budget=1/1000 retries=50 | admit now=200 probe retry ask=1/1000 | budget 850 unchanged: open failures=0 openings=0 half-open-at=100 budget=1/1000 retries=50
	open half-open-at=100 budget=1/1000 retries=50 | admit now=200 probe ask=1/1000 | probe changed: half-open failures=0 openings=0 budget=1/1000 retries=50
	EOF
}

@test "the retries within the window, for --circuit-status" {
	run breaker-test budget=3/1000 retries=100,600,900 count now=1200
	[ "$status" -eq 0 ]
	[ "$output" = 2 ]
	run breaker-test budget=3/1000 retries=100,600,900 count now=5000
	[ "$output" = 0 ]
}

@test "the last 100 runs are kept, oldest first; the flake rate is retried / passed" {
	rules <<-'EOF'
	closed | ended p | ended changed: closed failures=0 openings=0 runs=p
	closed runs=pr | ended f | ended changed: closed failures=0 openings=0 runs=prf
	closed runs=pprf | flakes | at-once=2 retried=1 failed=1 rate=0.333
	closed runs=ff | flakes | at-once=0 retried=0 failed=2 rate=-1.000
	EOF
	local full
	full=r$(printf 'p%.0s' $(seq 99))
	run breaker-test "runs=$full" ended f
	[ "$output" = "ended changed: closed failures=0 openings=0 runs=${full#r}f" ]
}

@test "breaker-test fails a row that does not match, so that the tables can fail" {
	run rules <<-'EOF'
	closed | admit now=0 | probe unchanged: closed failures=0 openings=0
	EOF
	[ "$status" -eq 1 ]
	[[ $output == *"want: probe"* ]]
}
