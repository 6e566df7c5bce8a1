#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# The delay schedule, seen through --dry-run: its format, exact values
# without jitter, the band of every jittered delay over many draws, no
# overflow however large the numbers, and the seeding of the generator.
load helpers/common

# check_schedule MODE BASE FACTOR CAP < SCHEDULE: fails, printing the bad
# lines, unless every line is "attempt<TAB>delay<TAB>total" with 3 decimals,
# attempts count from 2, totals add up, and every delay lies in its band
# (seconds; retry cuts the printed values to the millisecond, so a printed
# delay d stands for one in [d, d + 0.001)).  The delay after the k-th
# failed attempt, on the line of attempt k+1, comes from
# b_k = min(cap, base * factor^(k-1)):
#   none [b_k, b_k]; full [0, b_k]; equal [b_k/2, b_k];
#   decorrelated [base, min(cap, 3 * previous delay)], the first from base.
# When 100 delays or more below the cap come from bands wider than 50ms,
# also fails unless they are spread over their bands: at least half of them
# distinct, and some in the lowest and some in the highest 30% of their band.
check_schedule() {
	awk -v mode="$1" -v base="$2" -v f="$3" -v cap="$4" '
	function fail(why) {
		printf "line %d: %s: %s\n", NR, why, $0
		bad = 1
	}
	BEGIN { cut = 0.001 + 1e-9; tiny = 1e-6; prev = base; lowest = 1; highest = 0 }
	{
		if ($0 !~ /^[0-9]+\t[0-9]+\.[0-9][0-9][0-9]\t[0-9]+\.[0-9][0-9][0-9]$/)
			fail("not attempt, delay, total")
		if ($1 != NR + 1)
			fail("attempt number is not " NR + 1)
		d = $2 + 0
		# factor^(k-1) by products: an awk without libm (busybox
		# on Debian) has no "^".
		pw = NR == 1 ? 1 : pw * f
		b = base * pw
		if (b > cap)
			b = cap
		if (mode == "none") {
			lo = b; hi = b
		} else if (mode == "full") {
			lo = 0; hi = b
		} else if (mode == "equal") {
			lo = b / 2; hi = b
		} else {
			lo = base; hi = 3 * (prev + cut)
			if (hi > cap)
				hi = cap
		}
		if (d < lo - cut || d > hi + tiny)
			fail("delay outside [" lo ", " hi "]")
		if (d > cap + tiny)
			fail("delay above the cap " cap)
		# Each of the two totals and the delay were cut separately.
		if ($3 - total - d > 2 * cut || total + d - $3 > 2 * cut)
			fail("total is not the sum of the delays")
		# Decorrelated delays often land on the cap itself: not a draw.
		if (hi - lo > 0.05 && d < cap - tiny) {
			wide++
			u = (d - lo) / (hi - lo)
			if (u < lowest) lowest = u
			if (u > highest) highest = u
			if (!(d in seen))
				distinct++
			seen[d] = 1
		}
		total = $3 + 0
		prev = d
	}
	END {
		if (wide >= 100 && distinct < wide / 2) {
			printf "only %d distinct delays in %d\n", distinct, wide
			bad = 1
		}
		if (wide >= 100 && (lowest > 0.3 || highest < 0.7)) {
			printf "draws not spread over their bands: %.3f to %.3f\n",
			    lowest, highest
			bad = 1
		}
		exit bad
	}'
}

@test "dry run: tab-separated attempt, delay, total with 3 decimals, no header" {
	run -0 --separate-stderr "$RETRY" --dry-run -j none
	[ "$output" = "$(printf '2\t1.000\t1.000\n3\t2.000\t3.000\n4\t4.000\t7.000\n5\t8.000\t15.000')" ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr "$RETRY" --dry-run
	[ "${#lines[@]}" -eq 4 ]
	check_schedule equal 1 2 30 <<<"$output"
}

@test "dry run: one line per delay, attempts - 1 lines" {
	for n in 1 2 3 7 50; do
		for j in none full equal decorrelated; do
			run -0 --separate-stderr "$RETRY" --dry-run -n "$n" -j "$j" -b 10ms
			[ "$stderr" = "" ]
			if [ "$n" -eq 1 ]; then
				[ "$output" = "" ]
				continue
			fi
			[ "${#lines[@]}" -eq $((n - 1)) ]
			check_schedule "$j" 0.01 2 30 <<<"$output"
		done
	done
}

@test "dry run runs nothing, even when a command is given" {
	run -0 --separate-stderr "$RETRY" --dry-run -n 3 -j none \
	    touch "$BATS_TEST_TMPDIR/ran"
	[ "$output" = "$(printf '2\t1.000\t1.000\n3\t2.000\t3.000')" ]
	[ "$stderr" = "" ]
	[ ! -e "$BATS_TEST_TMPDIR/ran" ]
}

@test "no jitter: the defaults double from 1s and stop at the 30s cap" {
	run -0 "$RETRY" --dry-run -j none -n 10
	[ "$output" = "$(printf '%s\n' \
	    '2	1.000	1.000' \
	    '3	2.000	3.000' \
	    '4	4.000	7.000' \
	    '5	8.000	15.000' \
	    '6	16.000	31.000' \
	    '7	30.000	61.000' \
	    '8	30.000	91.000' \
	    '9	30.000	121.000' \
	    '10	30.000	151.000')" ]
}

@test "no jitter: --base, --factor and --cap set the schedule" {
	run -0 "$RETRY" --dry-run -j none -n 8 -b 100ms -f 3 -c 2s
	[ "$output" = "$(printf '%s\n' \
	    '2	0.100	0.100' \
	    '3	0.300	0.400' \
	    '4	0.900	1.300' \
	    '5	2.000	3.300' \
	    '6	2.000	5.300' \
	    '7	2.000	7.300' \
	    '8	2.000	9.300')" ]
	# A fractional factor, cut to the millisecond for printing.
	run -0 "$RETRY" --dry-run -j none -n 7 -b 250ms -f 1.5 --max-delay 1s
	[ "$output" = "$(printf '%s\n' \
	    '2	0.250	0.250' \
	    '3	0.375	0.625' \
	    '4	0.562	1.187' \
	    '5	0.843	2.031' \
	    '6	1.000	3.031' \
	    '7	1.000	4.031')" ]
	# A base equal to the cap stays there.
	run -0 "$RETRY" --dry-run -j none -n 4 -b 1m30s -c 90s
	[ "$output" = "$(printf '%s\n' \
	    '2	90.000	90.000' \
	    '3	90.000	180.000' \
	    '4	90.000	270.000')" ]
}

@test "no jitter: factor 1 gives a flat schedule" {
	run -0 "$RETRY" --dry-run -j none -n 6 -b 250ms -f 1
	[ "$output" = "$(printf '%s\n' \
	    '2	0.250	0.250' \
	    '3	0.250	0.500' \
	    '4	0.250	0.750' \
	    '5	0.250	1.000' \
	    '6	0.250	1.250')" ]
	run -0 "$RETRY" --dry-run -j none -n 100 -b 20ms -f 1.0
	[ "$(cut -f2 <<<"$output" | sort -u)" = 0.020 ]
}

@test "delays are kept finer than milliseconds; only printing cuts" {
	# 1.5ms each: printed 0.001, but two of them total 3ms, not 2ms.
	run -0 "$RETRY" --dry-run -j none -n 3 -b 1.5ms -f 1
	[ "$output" = "$(printf '2\t0.001\t0.001\n3\t0.001\t0.003')" ]
	run -0 "$RETRY" --dry-run -j none -n 6 -b 0.0004 -f 1
	[ "$output" = "$(printf '%s\n' \
	    '2	0.000	0.000' \
	    '3	0.000	0.000' \
	    '4	0.000	0.001' \
	    '5	0.000	0.001' \
	    '6	0.000	0.002')" ]
}

@test "dry run stops before a delay that would reach the deadline" {
	# 1 + 2 + 4 ends exactly at 7s: that delay is not taken.
	run -0 "$RETRY" --dry-run -j none -n 20 -D 7s
	[ "$output" = "$(printf '2\t1.000\t1.000\n3\t2.000\t3.000')" ]
	run -0 "$RETRY" --dry-run -j none -n 20 -D 7.001s
	[ "$output" = "$(printf '2\t1.000\t1.000\n3\t2.000\t3.000\n4\t4.000\t7.000')" ]
	run -0 --separate-stderr "$RETRY" --dry-run -j none -n 20 -D 1s
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	# Unlimited attempts with a deadline: 1 2 4 8 16 30 30, then 121 > 100.
	run -0 "$RETRY" --dry-run -j none -n 0 -D 100s
	[ "${#lines[@]}" -eq 7 ]
	[ "${lines[6]}" = "$(printf '8\t30.000\t91.000')" ]
	# The attempts stop it first.
	run -0 "$RETRY" --dry-run -j none -n 3 -D 100s
	[ "${#lines[@]}" -eq 2 ]
}

@test "dry run with --min-time stops before a delay after which less than it would be left" {
	# -D 8s --min-time 1s: no attempt starts at 7s or later.
	run -0 "$RETRY" --dry-run -j none -n 20 -D 8s --min-time 1s
	[ "$output" = "$(printf '2\t1.000\t1.000\n3\t2.000\t3.000')" ]
	run -0 "$RETRY" --dry-run -j none -n 20 -D 8.001s --min-time 1s
	[ "${#lines[@]}" -eq 3 ]
	# Less than --min-time in all: not even the first attempt, no delay.
	run -0 --separate-stderr "$RETRY" --dry-run -j none -D 1s --min-time 2s
	[ "$output" = "" ]
	[ "$stderr" = "" ]
}

@test "--min-time: no attempt starts in the deadline's last DUR; the run ends as for a delay that would reach it" {
	starts=$BATS_TEST_TMPDIR/starts
	start=$(now_ms)
	# Attempt 2 starts at 0.2 s; after the next delay, 0.4 s, less than
	# 0.4 s would be left: no attempt 3.  A loaded machine has 0.4 s of
	# slack before the deadline itself would be the reason.
	run -1 --separate-stderr "$RETRY" -D 1s --min-time 400ms -b 200ms \
	    -j none -- sh -c 'clock-now >>"$0"; exit 1' "$starts"
	expect_stderr "retry: attempt 1/5 failed with exit 1; next in 0.200s
retry: attempt 2/5 failed with exit 1; giving up: after a delay of 0.400s, less than 0.400s would be left before the deadline (--min-time)"
	[ "$(wc -l <"$starts")" -eq 2 ]
	awk -v s="$start" '$1 - s >= 600 { print "an attempt at " $1 - s " ms"
	    bad = 1 } END { exit bad }' "$starts"
	# The deadline alone would have let attempt 3 start at 0.6 s.
	rm "$starts"
	run -1 "$RETRY" -q -D 1s -b 200ms -j none -- \
	    sh -c 'clock-now >>"$0"; exit 1' "$starts"
	[ "$(wc -l <"$starts")" -eq 3 ]
}

@test "--min-time: a deadline inherited closer than it runs nothing (124); none at all, under an outer retry, and it does nothing, as -v says" {
	# 0.9 s: less than --min-time, and more than a loaded machine takes
	# to start env and retry, so that the deadline has not passed yet.
	when=$(clock-now -r -s | awk '{ printf "%.3f", $1 + 0.9 }')
	run -124 --separate-stderr env RETRY_DEADLINE="$when" "$RETRY" \
	    --min-time 1s --on-retry 'echo retry-hook' \
	    --on-giveup 'echo giveup-hook >&2' -- sh -c 'echo ran'
	[ "$output" = "" ]
	expect_stderr "retry: less than 1.000s left before the deadline; not starting
giveup-hook"
	run -0 --separate-stderr env RETRY_ATTEMPT=1 "$RETRY" -v --min-time 1s \
	    -- true
	[ "${stderr_lines[1]}" = "retry: --min-time 1.000s does nothing: the run has no deadline, own or inherited" ]
	# With a deadline, the policy line shows it.
	run -0 --separate-stderr "$RETRY" -v -D 5s --min-time 1s -- true
	matches "${stderr_lines[0]}" ', deadline 5\.000s \(min-time 1\.000s\), key '
}

@test "dry run with a jitter never reaches the deadline" {
	for j in full equal decorrelated; do
		run -0 "$RETRY" --dry-run -j "$j" -n 0 -b 10ms -c 100ms -D 2s
		[ "${#lines[@]}" -gt 10 ]
		awk '$3 >= 2 { print "past the deadline: " $0; bad = 1 }
		    END { exit bad }' <<<"$output"
		check_schedule "$j" 0.01 2 0.1 <<<"$output"
	done
}

@test "dry run stops at a deadline inherited in RETRY_DEADLINE" {
	# 1 + 2 + 4 = 7 s fit, the next 8 s do not: start-up may take up to 7 s.
	when=$(clock-now -r -s | awk '{ printf "%.3f", $1 + 14 }')
	run -0 --separate-stderr env RETRY_DEADLINE="$when" \
	    "$RETRY" --dry-run -j none -n 20
	[ "$output" = "$(printf '2\t1.000\t1.000\n3\t2.000\t3.000\n4\t4.000\t7.000')" ]
	# The earlier of --deadline and RETRY_DEADLINE counts.
	run -0 env RETRY_DEADLINE="$when" "$RETRY" --dry-run -j none -n 20 -D 5s
	[ "${#lines[@]}" -eq 2 ]
}

@test "full jitter: every delay in [0, b_k] over many draws" {
	run -0 --separate-stderr "$RETRY" --dry-run -j full -n 200 -b 100ms -f 1.05 -c 10s
	[ "${#lines[@]}" -eq 199 ]
	check_schedule full 0.1 1.05 10 <<<"$output"
	run -0 "$RETRY" --dry-run -j full -n 200 -b 10ms -c 1s
	check_schedule full 0.01 2 1 <<<"$output"
}

@test "equal jitter: every delay in [b_k/2, b_k] over many draws" {
	run -0 --separate-stderr "$RETRY" --dry-run -j equal -n 200 -b 100ms -f 1.05 -c 10s
	[ "${#lines[@]}" -eq 199 ]
	check_schedule equal 0.1 1.05 10 <<<"$output"
	run -0 "$RETRY" --dry-run -j equal -n 200 -b 10ms -c 1s
	check_schedule equal 0.01 2 1 <<<"$output"
	# equal is the default
	run -0 "$RETRY" --dry-run -n 200 -b 100ms -f 1.05 -c 10s
	check_schedule equal 0.1 1.05 10 <<<"$output"
}

@test "decorrelated jitter: every delay in [base, min(cap, 3 x previous)]" {
	run -0 --separate-stderr "$RETRY" --dry-run -j decorrelated -n 200 -b 100ms -c 10s
	[ "${#lines[@]}" -eq 199 ]
	check_schedule decorrelated 0.1 2 10 <<<"$output"
	# The factor plays no part.
	run -0 "$RETRY" --dry-run -j decorrelated -n 200 -b 10ms -f 1000 -c 1s
	check_schedule decorrelated 0.01 1000 1 <<<"$output"
}

@test "the first delay, over many seeds, lies in its band for every mode" {
	for j in full equal decorrelated; do
		for seed in {1..40}; do
			"$RETRY" --dry-run -n 2 -j "$j" -b 1s --seed "$seed"
		done >"$BATS_TEST_TMPDIR/first"
		# Each line is the first of its own schedule: number them 2.
		awk -v mode="$j" '
		    { d = $2 + 0 }
		    mode == "full" && (d < 0 || d > 1) ||
		    mode == "equal" && (d < 0.499 || d > 1) ||
		    mode == "decorrelated" && (d < 1 || d > 3.0005) { print; bad = 1 }
		    $1 != 2 || $2 != $3 { print "format: " $0; bad = 1 }
		    { if (!(d in seen)) n++; seen[d] = 1 }
		    END { if (NR != 40 || n < 30) { print NR, n; bad = 1 }; exit bad }
		' "$BATS_TEST_TMPDIR/first"
	done
}

@test "huge factors and attempt counts neither overflow nor print nan or inf" {
	out=$BATS_TEST_TMPDIR/out
	for j in none full equal decorrelated; do
		"$RETRY" --dry-run -j "$j" -f 1000000 -n 2000 >"$out" 2>"$out.err"
		[ ! -s "$out.err" ]
		[ "$(wc -l <"$out")" -eq 1999 ]
		check_schedule "$j" 1 1000000 30 <"$out"
		"$RETRY" --dry-run -j "$j" -n 100000 -b 1ms -c 2ms >"$out" 2>"$out.err"
		[ ! -s "$out.err" ]
		[ "$(wc -l <"$out")" -eq 99999 ]
		check_schedule "$j" 0.001 2 0.002 <"$out"
	done
	"$RETRY" --dry-run -j none -f 1000000 -n 2000 >"$out"
	[ "$(tail -n 1 "$out")" = "$(printf '2000\t30.000\t59941.000')" ]
}

@test "the longest durations and the largest factor do not overflow" {
	run -0 --separate-stderr "$RETRY" --dry-run -j none -n 3 \
	    -b 1000000000s -c 1000000000s -f 99999999999999999999
	[ "$output" = "$(printf '2\t1000000000.000\t1000000000.000\n3\t1000000000.000\t2000000000.000')" ]
	[ "$stderr" = "" ]
	for j in full equal decorrelated; do
		run -0 "$RETRY" --dry-run -j "$j" -n 9 -b 1ms -c 1000000000s \
		    -f 99999999999999999999
		[ "${#lines[@]}" -eq 8 ]
		check_schedule "$j" 0.001 99999999999999999999 1000000000 <<<"$output"
	done
}

@test "a schedule whose total passes 2^63 ns still has attempts - 1 lines" {
	run -0 --separate-stderr "$RETRY" --dry-run -j none -n 13 \
	    -b 1000000000s -c 1000000000s
	[ "${#lines[@]}" -eq 12 ]
	[ "$stderr" = "" ]
}

@test "--seed gives the same schedule from run to run" {
	for j in full equal decorrelated; do
		run -0 "$RETRY" --dry-run -j "$j" -n 50 -b 10ms --seed 42
		first=$output
		run -0 "$RETRY" --dry-run -n 50 --seed=42 -b 10ms --jitter="$j"
		[ "$output" = "$first" ]
		check_schedule "$j" 0.01 2 30 <<<"$output"
	done
	run -0 "$RETRY" --dry-run -j full -n 20 --seed 0
	first=$output
	run -0 "$RETRY" --dry-run -j full -n 20 --seed 0
	[ "$output" = "$first" ]
	run -0 "$RETRY" --dry-run -j full -n 20 --seed 18446744073709551615
	[ "$output" != "$first" ]
}

@test "different seeds give different schedules" {
	for j in full equal decorrelated; do
		run -0 "$RETRY" --dry-run -j "$j" -n 20 --seed 42
		first=$output
		run -0 "$RETRY" --dry-run -j "$j" -n 20 --seed 43
		[ "$output" != "$first" ]
	done
	# And many seeds, many schedules.
	for seed in {1..30}; do
		"$RETRY" --dry-run -j full -n 5 --seed "$seed" | tr '\n' ' '
		echo
	done >"$BATS_TEST_TMPDIR/schedules"
	[ "$(sort -u "$BATS_TEST_TMPDIR/schedules" | wc -l)" -eq 30 ]
}

@test "without --seed, two runs differ" {
	for j in full equal decorrelated; do
		run -0 "$RETRY" --dry-run -j "$j" -n 20
		first=$output
		run -0 "$RETRY" --dry-run -j "$j" -n 20
		[ "$output" != "$first" ]
	done
}

@test "without --seed, runs started at the same instant differ" {
	dir=$BATS_TEST_TMPDIR
	for i in 1 2 3 4 5 6 7 8; do
		"$RETRY" --dry-run -j full -n 10 -b 10ms >"$dir/run$i" 3>&- &
	done
	wait
	for i in 1 2 3 4 5 6 7 8; do
		[ "$(wc -l <"$dir/run$i")" -eq 9 ]
		tr '\n' ' ' <"$dir/run$i"
		echo
	done >"$dir/all"
	[ "$(sort -u "$dir/all" | wc -l)" -eq 8 ]
	# Two forked from one shell in the same instant, the classic case.
	"$RETRY" --dry-run -j equal -n 10 >"$dir/a" 3>&- &
	"$RETRY" --dry-run -j equal -n 10 >"$dir/b" 3>&- &
	wait
	[ -s "$dir/a" ]
	run -1 cmp -s "$dir/a" "$dir/b"
}
