# SPDX-License-Identifier: ISC
# start.awk: a row of figure 9 from pairs.awk's summary (first file) and
# the output of bench/spawn (second).  Needs stats.awk.  -v key, fs and
# tty name the case; with -v sum, "faults_KEY RETRY FLOOR" (the medians
# of the minor page faults, wrapper and child) is appended to that file.

FNR == NR {
	if ($1 == key) {
		ratio = $2
		lo = $3
		hi = $4
	}
	next
}

# Fields 3 to 5 of each run: its time, its peak RSS, its minor faults.
NF == 6 {
	++n[$2]
	for (k = 3; k <= 5; k++)
		x[$2, n[$2], k] = $k
}

# The median of field k over the runs of command c.
function med(k, c,    i, v) {
	for (i = 1; i <= n[c]; i++)
		v[i] = x[c, i, k]
	sortn(v, n[c])
	return median(v, n[c])
}

END {
	pf0 = med(5, 0)
	pf1 = med(5, 1)
	printf "| %s | %s | %s | %s | %.3f [%.3f, %.3f] | %s | %d / %d | %d / %d kB |\n",
	    fs, tty, ms(med(3, 0)), ms(med(3, 1)), ratio, lo, hi,
	    yesno(ratio <= 1.05), pf0, pf1, med(4, 0), med(4, 1)
	if (sum != "")
		printf "faults_%s %d %d\n", substr(key, 7), pf0, pf1 >>sum
}
