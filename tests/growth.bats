#!/usr/bin/env bats
# SPDX-License-Identifier: ISC
# Costs that stay flat as the work grows (issue 35): over hundreds of
# attempts of a command that prints, retry's memory does not grow and an
# attempt takes no longer late in the run than early.  Generous bounds
# only (loaded machines, sanitizer builds): make bench measures the curves.

load helpers/common

setup() {
	cd "$BATS_TEST_TMPDIR"
}

# One run of many quick attempts, each printing 1 KiB and failing; the
# attempts marked record the clock and retry's VmHWM and VmRSS in probe.
# Fewer attempts under the sanitizers, whose forks are slower; under
# two CPU hogs an attempt waits some 20 ms for a CPU, so few in all.
@test "peak RSS and the time per attempt stay flat over hundreds of attempts that print" {
	[ -r /proc/self/status ] || skip "no /proc/PID/status here"
	local n=300
	[ -z "${TEST_SANITIZED:-}" ] || n=200
	run -1 sh -c '"$@" >out' sh "$RETRY" -q -n "$n" -b 0.000001 \
	    -c 0.000001 -j none -- attempt-probe 1024 probe "1,20,100,$n"
	[ -z "$output" ]
	[ "$(wc -c <out)" -eq $((n * 1024)) ]
	run -0 awk -v n="$n" '
	    { t[$1] = $2; hwm[$1] = $3; rss[$1] = $4 }
	    END {
		if (!(1 in t) || !(20 in t) || !(100 in t) || !(n in t) ||
		    hwm[20] <= 0) {
			print "probe lines missing"
			exit 1
		}
		early = (t[100] - t[1]) / 99
		late = (t[n] - t[100]) / (n - 100)
		printf "per attempt: %.0f us early, %.0f us late; VmHWM %d kB at 20, %d kB at %d; VmRSS %d / %d kB\n",
		    early / 1000, late / 1000, hwm[20], hwm[n], n, rss[20], rss[n]
		# 1 KiB an attempt kept would be 180 kB or more by the end.
		if (hwm[n] > hwm[20] + 128 || rss[n] > rss[20] + 128)
			exit 2
		if (late > 3 * early)
			exit 3
	    }' probe
	echo "$output"
}
