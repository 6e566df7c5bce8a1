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

NF == 6 {
	t[$2, ++n[$2]] = $3
	kb[$2, n[$2]] = $4
	pf[$2, n[$2]] = $5
}

# The median of field f (t, kb or pf) of command c.
function med(f, c,    i, v) {
	for (i = 1; i <= n[c]; i++)
		v[i] = f == "kb" ? kb[c, i] : f == "pf" ? pf[c, i] : t[c, i]
	sortn(v, n[c])
	return median(v, n[c])
}

END {
	printf "| %s | %s | %s | %s | %.3f [%.3f, %.3f] | %s | %d / %d | %d / %d kB |\n",
	    fs, tty, ms(med("t", 0)), ms(med("t", 1)), ratio, lo, hi,
	    yesno(ratio <= 1.05), med("pf", 0), med("pf", 1), med("kb", 0),
	    med("kb", 1)
	if (sum != "")
		printf "faults_%s %d %d\n", substr(key, 7), med("pf", 0),
		    med("pf", 1) >>sum
}
