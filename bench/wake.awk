# SPDX-License-Identifier: ISC
# wake.awk: figure 8 (sleep accuracy) from --report files, or from the
# output of bench/oversleep.  Needs stats.awk.  Each file is one run; per delay, woke minus asked is
# start[k+1] - (start[k] + duration[k]) - delay[k], on retry's own
# monotonic clock, to the microsecond.  -v label names the delay, -v key
# the sum entries ("key median p99 max n", in ns).

# bench/oversleep: one error a line, in ns.
/^-?[0-9]+$/ {
	err[++n] = $1
	next
}

/"attempt": / {
	if (FILENAME != file) {
		file = FILENAME
		have = 0
	}
	match($0, /"start": [0-9.]+/)
	start = substr($0, RSTART + 9, RLENGTH - 9) + 0
	match($0, /"duration": [0-9.]+/)
	dur = substr($0, RSTART + 12, RLENGTH - 12) + 0
	delay = -1
	if (match($0, /"delay": [0-9.]+/))
		delay = substr($0, RSTART + 9, RLENGTH - 9) + 0
	if (have)
		err[++n] = (start - pend) * 1e9
	have = delay >= 0
	pend = start + dur + delay
}

END {
	sortn(err, n)
	printf "| %s | %d | %s | %s | %s | %s |\n", label, n,
	    us(median(err, n)), us(pct(err, n, 99)), us(err[n]),
	    yesno(n > 0 && median(err, n) < 500000 && pct(err, n, 99) < 500000)
	printf "%s %.0f %.0f %.0f %d\n", key, median(err, n), pct(err, n, 99),
	    err[n], n >> sum
}
