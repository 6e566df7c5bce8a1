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
	closed failures=2 | result now=1000 failure trip=3 cool=400 cap=400 u=0 | opened(3) changed: open failures=3 openings=1 half-open-at=1200
	closed failures=2 | result now=1000 failure trip=3 cool=400 cap=400 u=0.5 | opened(3) changed: open failures=3 openings=1 half-open-at=1300
	closed failures=2 | result now=1000 failure trip=3 cool=400 cap=400 u=0.999 | opened(3) changed: open failures=3 openings=1 half-open-at=1399
	closed | result now=0 failure trip=1 cool=10 cap=10 | opened(1) changed: open failures=1 openings=1 half-open-at=5
	EOF
}

@test "the k-th opening in a row cools for c(k) = min(max(cap, cool), cool * 2^(k-1)), equal jitter" {
	# cool 100, cap 1000: c = 100, 200, 400, 800, then 1000 for good.
	rules <<-'EOF'
	half-open failures=5 openings=1 | result now=0 failure probing cool=100 cap=1000 u=0 | opened(6) changed: open failures=6 openings=2 half-open-at=100
	half-open failures=5 openings=2 | result now=0 failure probing cool=100 cap=1000 u=0 | opened(6) changed: open failures=6 openings=3 half-open-at=200
	half-open failures=5 openings=3 | result now=0 failure probing cool=100 cap=1000 u=0 | opened(6) changed: open failures=6 openings=4 half-open-at=400
	half-open failures=5 openings=4 | result now=0 failure probing cool=100 cap=1000 u=0 | opened(6) changed: open failures=6 openings=5 half-open-at=500
	half-open failures=5 openings=40 | result now=0 failure probing cool=100 cap=1000 u=0 | opened(6) changed: open failures=6 openings=41 half-open-at=500
	# A cap below the first cool-down: the cool-down is the limit.
	half-open failures=5 openings=3 | result now=0 failure probing cool=100 cap=10 u=0.5 | opened(6) changed: open failures=6 openings=4 half-open-at=75
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
	half-open failures=5 openings=1 | result now=0 failure probing trip=5 cool=100 cap=1000 | opened(6) changed: open failures=6 openings=2 half-open-at=100
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
	half-open failures=1 openings=2147483647 | result now=0 failure probing cool=10 cap=10 | opened(2) changed: open failures=2 openings=2147483647 half-open-at=5
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

@test "--budget P%/DUR: a first attempt that goes is counted in its tenth of the window; one held back by the circuit is not" {
	rules <<-'EOF'
	closed | admit now=150 ask=20%/1000 least=3 | go changed: closed failures=0 openings=0 share=20/3 window=1000 firsts=100:1
	closed share=20/3 window=1000 firsts=100:1 | admit now=199 ask=20%/1000 least=3 | go changed: closed failures=0 openings=0 share=20/3 window=1000 firsts=100:2
	closed share=20/3 window=1000 firsts=100:2 | admit now=200 ask=20%/1000 least=3 | go changed: closed failures=0 openings=0 share=20/3 window=1000 firsts=100:2,200:1
	# The parts that began a window ago or more are dropped.
	closed share=20/3 window=1000 firsts=100:2,200:1 | admit now=1150 ask=20%/1000 least=3 | go changed: closed failures=0 openings=0 share=20/3 window=1000 firsts=200:1,1100:1
	# Held back by the open circuit: not counted.
	open half-open-at=500 share=20/3 window=1000 | admit now=100 ask=20%/1000 least=3 | wait 400 unchanged: open failures=0 openings=0 half-open-at=500 share=20/3 window=1000
	# The probe's first attempt is.
	open half-open-at=500 share=20/3 window=1000 | admit now=600 probe ask=20%/1000 least=3 | probe changed: half-open failures=0 openings=0 share=20/3 window=1000 firsts=600:1
	# A run of --budget N/DUR counts none, and leaves the share.
	closed share=20/3 window=1000 firsts=100:1 | admit now=150 ask=5/1000 | go changed: closed failures=0 openings=0 budget=5/1000 firsts=100:1
	# A window that changed, or a clock gone back: a part that would not
	# come after the last is the last, and the parts stay oldest first.
	closed share=20/3 window=100 firsts=1040:2 | admit now=1050 ask=20%/1000 least=3 | go changed: closed failures=0 openings=0 share=20/3 window=1000 firsts=1040:3
	closed share=20/3 window=1000 firsts=500:1 | admit now=400 ask=20%/1000 least=3 | go changed: closed failures=0 openings=0 share=20/3 window=1000 firsts=500:2
	# A tenth that is no whole number: a part begins at a whole one, the
	# same here and in the store's Lua.
	closed | admit now=1000 ask=20%/999 least=0 | go changed: closed failures=0 openings=0 share=20/0 window=999 firsts=999:1
	EOF
}

@test "--budget P%/DUR: a retry goes while the retries in the window are fewer than P% of its first attempts plus --budget-min" {
	rules <<-'EOF'
	# 10 first attempts: 20% allow 2 retries, a third waits until the oldest leaves the window.
	closed share=20/0 window=1000 firsts=100:10 | admit now=500 retry ask=20%/1000 least=0 | go changed: closed failures=0 openings=0 share=20/0 window=1000 firsts=100:10 retries=500
	closed share=20/0 window=1000 firsts=100:10 retries=400,450 | admit now=500 retry ask=20%/1000 least=0 | budget 900 unchanged: closed failures=0 openings=0 share=20/0 window=1000 firsts=100:10 retries=400,450
	# The floor: 3 more.
	closed share=20/3 window=1000 firsts=100:10 retries=400,450 | admit now=500 retry ask=20%/3000 least=3 | go changed: closed failures=0 openings=0 share=20/3 window=3000 firsts=100:10 retries=400,450,500
	closed share=20/3 window=1000 firsts=100:10 retries=300,400,410,420,450 | admit now=500 retry ask=20%/1000 least=3 | budget 800 unchanged: closed failures=0 openings=0 share=20/3 window=1000 firsts=100:10 retries=300,400,410,420,450
	# No first attempt in the window and no floor: none allowed; it looks again a tenth of the window later.
	closed share=20/0 window=1000 | admit now=500 retry ask=20%/1000 least=0 | budget 100 unchanged: closed failures=0 openings=0 share=20/0 window=1000
	closed share=20/0 window=1000 firsts=100:10 retries=900 | admit now=1150 retry ask=20%/1000 least=0 | budget 100 changed: closed failures=0 openings=0 share=20/0 window=1000 retries=900
	# P up to 1000%: 7 first attempts allow 70 retries.
	closed share=1000/0 window=1000 firsts=100:7 retries=200,201,202 | admit now=500 retry ask=1000%/1000 least=0 | go changed: closed failures=0 openings=0 share=1000/0 window=1000 firsts=100:7 retries=200,201,202,500
	EOF
}

@test "--budget P%/DUR: what --circuit-status counts; the allowance stops at 1000, what a record counts" {
	run -0 breaker-test share=20/3 window=1000 firsts=100:30,600:25 retries=100,700 view now=1150
	[ "$output" = "retries=1 allowed=8 arrived=25 seen=0 failing=0" ]
	run -0 breaker-test share=20/3 window=1000 firsts=100:30,600:25 retries=100,700 view now=1000
	[ "$output" = "retries=2 allowed=14 arrived=55 seen=0 failing=0" ]
	run -0 breaker-test share=1000/1000 window=1000 firsts=100:500 view now=500
	[ "$output" = "retries=0 allowed=1000 arrived=500 seen=0 failing=0" ]
}

@test "--trip P%/M: each end is marked; the circuit opens once M were seen and P% of the last M failed" {
	rules <<-'EOF'
	closed | result now=0 failure trip=30%/5 cool=100 cap=100 | none changed: closed failures=1 openings=0 trip=30/5 marks=1
	closed trip=30/5 marks=0001 | result now=0 failure trip=30%/5 cool=100 cap=100 u=0 | opened(2) changed: open failures=1 openings=1 half-open-at=50 trip=30/5 marks=00011
	# Below P: 1 of 5 is 20%.
	closed trip=30/5 marks=0000 | result now=0 failure trip=30%/5 cool=100 cap=100 | none changed: closed failures=1 openings=0 trip=30/5 marks=00001
	# Fewer than M seen: not even all failed opens it.
	closed failures=2 trip=30/5 marks=11 | result now=0 failure trip=30%/5 cool=100 cap=100 | none changed: closed failures=3 openings=0 trip=30/5 marks=111
	# The last M only.
	closed trip=30/5 marks=1110000 | result now=0 failure trip=30%/5 cool=100 cap=100 | none changed: closed failures=1 openings=0 trip=30/5 marks=11100001
	# A success is marked too, and opens nothing.
	closed trip=30/5 marks=1 | result now=0 success trip=30%/5 | none changed: closed failures=0 openings=0 trip=30/5 marks=10
	# The counts in a row play no part: 9 in a row with --trip 5 in mind.
	closed failures=9 trip=50/10 marks=000000000 | result now=0 failure trip=50%/10 cool=100 cap=100 | none changed: closed failures=10 openings=0 trip=50/10 marks=0000000001
	EOF
	local full
	full=$(printf '0%.0s' $(seq 100))
	run breaker-test "trip=30/5" "marks=$full" result now=0 failure trip=30%/5
	[ "$output" = "none changed: closed failures=1 openings=0 trip=30/5 marks=${full#0}1" ]
}

@test "--trip P%/M: the probe's failure opens again, its success closes and the marks start afresh; a run of --trip N drops them" {
	rules <<-'EOF'
	half-open failures=1 openings=1 trip=30/5 marks=11011 | result now=0 failure probing trip=30%/5 cool=100 cap=1000 u=0 | opened(4) changed: open failures=2 openings=2 half-open-at=100 trip=30/5 marks=110111
	half-open failures=2 openings=1 trip=30/5 marks=11011 | result now=0 success probing trip=30%/5 | closed changed: closed failures=0 openings=0 trip=30/5
	closed trip=30/5 marks=101 | result now=0 failure trip=5 | none changed: closed failures=1 openings=0
	EOF
	run -0 breaker-test trip=40/10 marks=0101010000 view now=0
	[ "$output" = "retries=0 allowed=0 arrived=0 seen=10 failing=3" ]
	run -0 breaker-test trip=40/10 marks=11 view now=0
	[ "$output" = "retries=0 allowed=0 arrived=0 seen=2 failing=2" ]
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
