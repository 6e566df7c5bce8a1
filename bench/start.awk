# SPDX-License-Identifier: ISC
# start.awk: a row of figure 9 from pairs.awk's summary (first file) and
# the output of bench/spawn (second).  Needs stats.awk.  -v key, fs and
# tty name the case.

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
}

END {
	for (i = 1; i <= n[0]; i++)
		a[i] = t[0, i]
	for (i = 1; i <= n[1]; i++)
		b[i] = t[1, i]
	sortn(a, n[0])
	sortn(b, n[1])
	printf "| %s | %s | %s | %s | %.3f [%.3f, %.3f] | %s |\n", fs, tty,
	    ms(median(a, n[0])), ms(median(b, n[1])), ratio, lo, hi,
	    yesno(ratio <= 1.05)
}
